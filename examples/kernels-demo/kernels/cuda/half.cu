// float16 tensors and a float16 attribute (raw bits) with cuda_fp16.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cstdint>

#include "brainevent/common.h"

__global__ void leaky_relu_kernel(const __half* x, __half* y, __half slope, int64_t n) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = __hgt(x[i], __float2half(0.0f)) ? x[i] : __hmul(x[i], slope);
}

// @BE leaky_relu_f16 arg ret attr.slope:float16 stream
void leaky_relu_f16(const BE::Tensor x, BE::Tensor y, uint16_t slope, int64_t stream) {
    __half_raw raw;
    raw.x = slope;
    const int64_t n = x.numel();
    leaky_relu_kernel<<<static_cast<int>((n + 255) / 256), 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
        x.data_ptr<const __half>(), y.data_ptr<__half>(), __half(raw), n);
    BE_CHECK_KERNEL_LAUNCH();
}

#define DEFINE_IOTA(T, NAME)                                                           \
    __global__ void NAME##_kernel(T* y, T start, int64_t n) {                          \
        const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; \
        if (i < n) y[i] = start + static_cast<T>(i);                                   \
    }                                                                                  \
    void NAME(BE::Tensor y, T start, int64_t stream) {                                 \
        const int64_t n = y.numel();                                                   \
        NAME##_kernel<<<static_cast<int>((n + 255) / 256), 256, 0,                     \
                        reinterpret_cast<cudaStream_t>(stream)>>>(y.data_ptr<T>(), start, n); \
        BE_CHECK_KERNEL_LAUNCH();                                                      \
    }

// @BE iota_f32
DEFINE_IOTA(float, iota_f32)

// @BE iota_i32
DEFINE_IOTA(int32_t, iota_i32)
