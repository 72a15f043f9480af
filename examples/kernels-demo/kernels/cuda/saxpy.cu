// A CUDA kernel launched with <<<>>> on the stream XLA hands over.
#include <cuda_runtime.h>
#include <cstdint>

#include "brainevent/common.h"

__global__ void saxpy_kernel(const float* x, const float* y, float* out, float a, int64_t n) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}

// @BE saxpy
void saxpy(const BE::Tensor x, const BE::Tensor y, BE::Tensor out, float a, int64_t stream) {
    BE_CHECK(x.numel() == y.numel()) << "saxpy: x and y differ in size";
    const int64_t n = x.numel();
    const int threads = 256;
    const int blocks = static_cast<int>((n + threads - 1) / threads);
    saxpy_kernel<<<blocks, threads, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
        x.data_ptr<const float>(), y.data_ptr<const float>(), out.data_ptr<float>(), a, n);
    BE_CHECK_KERNEL_LAUNCH();
}
