// CUDA kernels called from PyTorch through begen's torch target: a kernel
// with a backward kernel, one whose backward reads a residual, and a slow
// kernel whose result a torch op on the same stream reads at once (it is
// wrong unless the kernel ran on torch's current stream).
#include <cuda_runtime.h>

#include <cstdint>

#include "brainevent/common.h"

namespace {

__global__ void square_kernel(const float* x, float* y, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = x[i] * x[i];
}

__global__ void square_bwd_kernel(const float* x, const float* ct, float* dx, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) dx[i] = 2.0f * x[i] * ct[i];
}

__global__ void expo_kernel(const float* x, float* y, float* saved, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) {
        y[i] = expf(x[i]);
        saved[i] = y[i];
    }
}

__global__ void expo_bwd_kernel(const float* saved, const float* ct, float* dx, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) dx[i] = saved[i] * ct[i];
}

// Spins for about `cycles` clock cycles per thread before it writes, so
// that a reader on another stream would see the output unwritten.
__global__ void slow_inc_kernel(const float* x, float* y, int64_t n, long long cycles) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    long long start = clock64();
    while (clock64() - start < cycles) {
    }
    if (i < n) y[i] = x[i] + 1.0f;
}

int blocks(int64_t n) { return static_cast<int>((n + 255) / 256); }

cudaStream_t as_stream(int64_t stream) { return reinterpret_cast<cudaStream_t>(stream); }

}  // namespace

// @BE square arg:float32[n] ret:float32[n] dim.n stream
void square(const float* x, float* y, int64_t n, int64_t stream) {
    square_kernel<<<blocks(n), 256, 0, as_stream(stream)>>>(x, y, n);
    BE_CHECK_KERNEL_LAUNCH();
}

// @BE square_bwd arg:float32[n] arg:float32[n] ret:float32[n] dim.n stream
void square_bwd(const float* x, const float* ct, float* dx, int64_t n, int64_t stream) {
    square_bwd_kernel<<<blocks(n), 256, 0, as_stream(stream)>>>(x, ct, dx, n);
    BE_CHECK_KERNEL_LAUNCH();
}

// @BE expo arg:float32[n] ret:float32[n] ret:float32[n] dim.n stream
void expo(const float* x, float* y, float* saved, int64_t n, int64_t stream) {
    expo_kernel<<<blocks(n), 256, 0, as_stream(stream)>>>(x, y, saved, n);
    BE_CHECK_KERNEL_LAUNCH();
}

// @BE expo_bwd arg:float32[n] arg:float32[n] ret:float32[n] dim.n stream
void expo_bwd(const float* saved, const float* ct, float* dx, int64_t n, int64_t stream) {
    expo_bwd_kernel<<<blocks(n), 256, 0, as_stream(stream)>>>(saved, ct, dx, n);
    BE_CHECK_KERNEL_LAUNCH();
}

// @BE slow_inc arg:float32[n] ret:float32[n] attr.cycles:int64 dim.n stream
void slow_inc(const float* x, float* y, int64_t cycles, int64_t n, int64_t stream) {
    slow_inc_kernel<<<blocks(n), 256, 0, as_stream(stream)>>>(x, y, n, cycles);
    BE_CHECK_KERNEL_LAUNCH();
}
