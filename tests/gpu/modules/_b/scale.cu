#include <cuda_runtime.h>

#include "brainevent/common.h"

#ifndef BIAS
#define BIAS 0
#endif

// Module `b_scale`: y = alpha * x + 1.0f.
__global__ void scale_kernel(const float* x, float* y, float alpha, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = alpha * x[i] + 1.0f;
}

// @BE scale
void scale(const BE::Tensor x, BE::Tensor y, float alpha, int64_t stream) {
    int64_t n = x.numel();
    int threads = 256;
    int blocks = static_cast<int>((n + threads - 1) / threads);
    scale_kernel<<<blocks, threads, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), alpha, n);
    BE_CHECK_KERNEL_LAUNCH();
}
