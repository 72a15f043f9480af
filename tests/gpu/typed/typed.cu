// Shape contracts on the GPU (tests/gpu/check_typed.py): pointers and
// dimensions, a template instantiated per dtype (CUDA's __half included),
// a tensor updated in place.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include "brainevent/common.h"

template <typename T>
__global__ void scale_kernel(const T* x, T* y, float s, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = static_cast<T>(static_cast<float>(x[i]) * s);
}

// @BE gpu_scale arg:T[n] ret:T[n] attr.s dim.n stream const.T=float32,float16
template <typename T>
void gpu_scale(const T* x, T* y, float s, int64_t n, int64_t stream) {
    const int threads = 256;
    scale_kernel<T><<<static_cast<int>((n + threads - 1) / threads), threads, 0,
                      reinterpret_cast<cudaStream_t>(stream)>>>(x, y, s, n);
    BE_CHECK_KERNEL_LAUNCH();
}

__global__ void accumulate_kernel(float* acc, const float* x, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) acc[i] += x[i];
}

// @BE gpu_accumulate inout:float32[n] arg:float32[n] dim.n stream
void gpu_accumulate(float* acc, const float* x, int64_t n, int64_t stream) {
    const int threads = 256;
    accumulate_kernel<<<static_cast<int>((n + threads - 1) / threads), threads, 0,
                        reinterpret_cast<cudaStream_t>(stream)>>>(acc, x, n);
    BE_CHECK_KERNEL_LAUNCH();
}

__global__ void rowsum_kernel(const float* a, float* y, int64_t m, int64_t k) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i >= m) return;
    float s = 0;
    for (int64_t j = 0; j < k; ++j) s += a[i * k + j];
    y[i] = s;
}

// @BE gpu_rowsum arg:float32[m, k] ret:float32[m] dim.m dim.k:int32 stream
void gpu_rowsum(const BE::Tensor a, BE::Tensor y, int64_t m, int k, int64_t stream) {
    rowsum_kernel<<<static_cast<int>((m + 127) / 128), 128, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
        a.data_ptr<float>(), y.data_ptr<float>(), m, k);
    BE_CHECK_KERNEL_LAUNCH();
}
