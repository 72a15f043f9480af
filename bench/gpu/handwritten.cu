// The reference the benchmark compares begen against: a hand-written XLA FFI
// handler with typed buffers (no dtype dispatch, no tensor views), launching
// the same kernel as kernels/add_one.cu.
#include <cstdint>
#include <cuda_runtime.h>
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

__global__ void hand_add_one_kernel(const float* x, float* y, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}

static ffi::Error hand_add_one_impl(cudaStream_t stream, ffi::Buffer<ffi::F32> x,
                                    ffi::ResultBuffer<ffi::F32> y) {
    int64_t n = static_cast<int64_t>(x.element_count());
    int threads = 256;
    int blocks = static_cast<int>((n + threads - 1) / threads);
    hand_add_one_kernel<<<blocks, threads, 0, stream>>>(x.typed_data(), y->typed_data(), n);
    return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(hand_add_one, hand_add_one_impl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(hand_add_one_graph, hand_add_one_impl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>(),
                              {ffi::Traits::kCmdBufferCompatible});
