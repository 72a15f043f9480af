// CUDA kernels: <<<>>> launches on XLA's stream, a __half attribute, and a
// macro-generated family.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cstdint>

#include "brainevent/common.h"

__global__ void scale_kernel(const float* x, float* y, float a, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}

// @BE scale_cuda
void scale_cuda(const BE::Tensor x, BE::Tensor y, float alpha, int64_t stream) {
    const int64_t n = x.numel();
    const int threads = 256;
    const int blocks = static_cast<int>((n + threads - 1) / threads);
    scale_kernel<<<blocks, threads, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
        x.data_ptr<const float>(), y.data_ptr<float>(), alpha, n);
    BE_CHECK_KERNEL_LAUNCH();
}

__global__ void half_scale_kernel(const __half* x, __half* y, __half a, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = __hmul(x[i], a);
}

// The seed's way: a float16 attribute arrives as its raw bits.
// @BE half_scale arg ret attr.alpha:float16 stream
void half_scale(const BE::Tensor x, BE::Tensor y, uint16_t alpha, int64_t stream) {
    __half_raw raw;
    raw.x = alpha;
    const __half a(raw);
    const int64_t n = x.numel();
    const int blocks = static_cast<int>((n + 255) / 256);
    half_scale_kernel<<<blocks, 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
        x.data_ptr<const __half>(), y.data_ptr<__half>(), a, n);
    BE_CHECK_KERNEL_LAUNCH();
}

#define DEFINE_FILL(T, NAME)                                                        \
    __global__ void NAME##_kernel(T* y, T v, int64_t n) {                           \
        int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;    \
        if (i < n) y[i] = v;                                                        \
    }                                                                               \
    void NAME(BE::Tensor y, T value, int64_t stream) {                              \
        const int64_t n = y.numel();                                                \
        const int blocks = static_cast<int>((n + 255) / 256);                       \
        NAME##_kernel<<<blocks, 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(  \
            y.data_ptr<T>(), value, n);                                             \
        BE_CHECK_KERNEL_LAUNCH();                                                   \
    }

// @BE fill_f32
DEFINE_FILL(float, fill_f32)

// @BE fill_i32
DEFINE_FILL(int32_t, fill_i32)
