// One impl function with XLA FFI's own types, bound twice in one library:
// by begen (`// @BE`) and by a hand-written XLA_FFI_DEFINE_HANDLER_SYMBOL
// (bench/ffi_native/native_overhead.py --platform cuda).
#include <cstdint>

#include <cuda_runtime.h>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

__global__ void add_one_kernel(const float* x, float* y, size_t n) {
  size_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + 1.0f;
}

// @BE AddOne
ffi::Error AddOne(cudaStream_t stream, ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  const size_t n = x.element_count();
  add_one_kernel<<<(n + 255) / 256, 256, 0, stream>>>(x.typed_data(), y->typed_data(), n);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return ffi::Error::Internal(cudaGetErrorString(e));
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(hand_add_one, AddOne,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());
