// A host-side BE_CHECK in a CUDA kernel's launcher.
#include <cuda_runtime.h>
#include <cstdint>

#include "brainevent/common.h"

__global__ void add_kernel(const float* a, const float* b, float* c, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// @BE add_cuda
void add_cuda(const BE::Tensor a, const BE::Tensor b, BE::Tensor c, int64_t stream) {
    BE_CHECK(a.numel() == b.numel()) << "add_cuda: sizes differ (" << a.numel() << " vs " << b.numel() << ")";
    const int64_t n = a.numel();
    add_kernel<<<static_cast<int>((n + 255) / 256), 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
        a.data_ptr<const float>(), b.data_ptr<const float>(), c.data_ptr<float>(), n);
    BE_CHECK_KERNEL_LAUNCH();
}
