// The CUDA kernel both torch bindings of bench/torch/torch_overhead.py
// call: out = alpha * x over n floats, on the stream it is given.
#include <cuda_runtime.h>

#include <cstdint>

#include "brainevent/common.h"

namespace {

__global__ void scale_kernel(const float* x, float* out, float alpha, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) out[i] = alpha * x[i];
}

}  // namespace

// @BE scale arg:float32[n] ret:float32[n] attr.alpha dim.n stream
void scale(const float* x, float* out, float alpha, int64_t n, int64_t stream) {
    scale_kernel<<<static_cast<int>((n + 255) / 256), 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(x, out, alpha, n);
    BE_CHECK_KERNEL_LAUNCH();
}
