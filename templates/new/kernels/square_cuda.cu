// {{package}}'s CUDA kernels: the same computation as square.cpp on the GPU.
// `stream` is the CUDA stream XLA runs the call on.
#include <cuda_runtime.h>
#include <cstdint>

#include "brainevent/common.h"

__global__ void square_kernel(const double* x, double* y, double scale, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = scale * x[i] * x[i];
}

__global__ void square_bwd_kernel(const double* x, const double* dy, double* dx, double scale, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) dx[i] = 2.0 * scale * x[i] * dy[i];
}

// @BE square_cuda arg:float64[n] ret:float64[n] attr.scale:float64 dim.n stream
void square_cuda(const double* x, double* y, double scale, int64_t n, int64_t stream) {
    square_kernel<<<static_cast<int>((n + 255) / 256), 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
        x, y, scale, n);
    BE_CHECK_KERNEL_LAUNCH();
}

// @BE square_cuda_bwd arg:float64[n] arg:float64[n] ret:float64[n] attr.scale:float64 dim.n stream
void square_cuda_bwd(const double* x, const double* dy, double* dx, double scale, int64_t n, int64_t stream) {
    square_bwd_kernel<<<static_cast<int>((n + 255) / 256), 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
        x, dy, dx, scale, n);
    BE_CHECK_KERNEL_LAUNCH();
}
