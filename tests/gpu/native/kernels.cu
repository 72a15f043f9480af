// CUDA kernels declared with XLA FFI's own types, bound by begen as
// declared (tests/gpu/check_native.py).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

constexpr int kThreads = 256;

unsigned blocks(size_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

ffi::Error last_launch(const char* what) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return ffi::Error::Internal(std::string(what) + ": " + cudaGetErrorString(e));
  return ffi::Error::Success();
}

__global__ void axpby_kernel(float a, const float* x, const float* y, float* out, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}

__global__ void fma_kernel(const float* a, const float* b, const float* c, float* out, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = a[i] * b[i] + c[i];
}

__global__ void negate_f64_kernel(const double* x, double* y, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = -x[i];
}

__global__ void negate_f32_kernel(const float* x, float* y, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = -x[i];
}

__global__ void set_flag(int32_t* out, int32_t value) { *out = value; }

__global__ void read_and_advance(int32_t* counter, int32_t* out) {
  *out = *counter;
  *counter += 1;
}

}  // namespace

// out = a * x + y; the stream is XLA's (`cudaStream_t`, no token needed).
// @BE NativeAxpby
ffi::Error NativeAxpby(cudaStream_t stream, float a, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> y,
                       ffi::ResultBuffer<ffi::F32> out) {
  const size_t n = x.element_count();
  if (y.element_count() != n) return ffi::Error::InvalidArgument("NativeAxpby: x and y differ in size");
  axpby_kernel<<<blocks(n), kThreads, 0, stream>>>(a, x.typed_data(), y.typed_data(), out->typed_data(), n);
  return last_launch("NativeAxpby");
}

// out = a * b + c, where `c` is declared as a result but bound as an input
// by its token (as a hand-written `.Arg<>()` may bind it), and `n`, the
// element count, is a `size_t` attribute.
// @BE NativeFma stream arg arg arg ret attr.n
ffi::Error NativeFma(cudaStream_t stream, ffi::Buffer<ffi::F32> a, ffi::Buffer<ffi::F32> b,
                     ffi::ResultBuffer<ffi::F32> c, ffi::ResultBuffer<ffi::F32> out, size_t n) {
  if (a.element_count() != n) return ffi::Error::InvalidArgument("NativeFma: n is not a's element count");
  fma_kernel<<<blocks(n), kThreads, 0, stream>>>(a.typed_data(), b.typed_data(), c->typed_data(), out->typed_data(),
                                                 n);
  return last_launch("NativeFma");
}

// y = -x for float32 or float64 (`ffi::AnyBuffer`, dispatched on its type).
// @BE NativeNegate
ffi::Error NativeNegate(cudaStream_t stream, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y) {
  const size_t n = x.element_count();
  if (y->element_type() != x.element_type() || y->element_count() != n)
    return ffi::Error::InvalidArgument("NativeNegate: y is x's type and size");
  switch (x.element_type()) {
    case ffi::F32:
      negate_f32_kernel<<<blocks(n), kThreads, 0, stream>>>(x.typed_data<float>(), y->typed_data<float>(), n);
      return last_launch("NativeNegate");
    case ffi::F64:
      negate_f64_kernel<<<blocks(n), kThreads, 0, stream>>>(x.typed_data<double>(), y->typed_data<double>(), n);
      return last_launch("NativeNegate");
    default:
      return ffi::Error::InvalidArgument("NativeNegate: x is float32 or float64");
  }
}

// Per-executable state in XLA FFI's own form (a type with a `TypeId`, which
// begen leaves unused, made by a function returning
// `ffi::ErrorOr<std::unique_ptr<T>>`): one int32 in device memory from 42,
// made on the first call of each device that runs the executable.
struct DeviceOffset {
  static xla::ffi::TypeId id;
  int32_t* value = nullptr;
  DeviceOffset() = default;
  DeviceOffset(const DeviceOffset&) = delete;
  DeviceOffset& operator=(const DeviceOffset&) = delete;
  // At process exit the CUDA runtime may be gone already: the result is of no use then.
  ~DeviceOffset() {
    if (value != nullptr) (void)cudaFree(value);
  }
};
xla::ffi::TypeId DeviceOffset::id = {};

static ffi::ErrorOr<std::unique_ptr<DeviceOffset>> MakeDeviceOffset() {
  auto state = std::make_unique<DeviceOffset>();
  if (cudaMalloc(&state->value, sizeof(int32_t)) != cudaSuccess)
    return ffi::Error::Internal("MakeDeviceOffset: cudaMalloc failed");
  const int32_t start = 42;
  if (cudaMemcpy(state->value, &start, sizeof(int32_t), cudaMemcpyHostToDevice) != cudaSuccess)
    return ffi::Error::Internal("MakeDeviceOffset: cudaMemcpy failed");
  // Spelled out: jaxlib 0.11's ErrorOr takes no implicit move from a local.
  return ffi::ErrorOr<std::unique_ptr<DeviceOffset>>(std::move(state));
}

// out = the executable's count, from 42, advanced on the device per call.
// @BE NativeReadOffset
ffi::Error NativeReadOffset(cudaStream_t stream, DeviceOffset* state, ffi::ResultBufferR0<ffi::S32> out) {
  read_and_advance<<<1, 1, 0, stream>>>(state->value, out->typed_data());
  return last_launch("NativeReadOffset");
}

// 1 when XLA runs it while it records a CUDA graph (stream capture), else 0:
// with `command_buffer: true` (begen.yaml) the handler carries
// kCmdBufferCompatible, so XLA may record it.
// @BE NativeCaptureProbe
ffi::Error NativeCaptureProbe(cudaStream_t stream, ffi::ResultBufferR0<ffi::S32> out) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) status = cudaStreamCaptureStatusNone;
  set_flag<<<1, 1, 0, stream>>>(out->typed_data(), status == cudaStreamCaptureStatusActive ? 1 : 0);
  return last_launch("NativeCaptureProbe");
}
