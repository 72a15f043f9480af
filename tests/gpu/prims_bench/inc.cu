// x + 1, four times over: as a plain binding, as a primitive (with a tangent
// kernel), each also CUDA-graph compatible. bench/gpu/prims_overhead.py.
#include <cuda_runtime.h>
#include <cstdint>

#include "brainevent/common.h"

namespace {

__global__ void inc_kernel(const float* x, float* y, int64_t n) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}

__global__ void copy_kernel(const float* x, float* y, int64_t n) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = x[i];
}

void launch_inc(const float* x, float* y, int64_t n, int64_t stream) {
    if (n == 0) return;
    inc_kernel<<<static_cast<int>((n + 255) / 256), 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(x, y, n);
    BE_CHECK_KERNEL_LAUNCH();
}

}  // namespace

// @BE inc arg:float32[n] ret:float32[n] dim.n stream
void inc(const float* x, float* y, int64_t n, int64_t stream) { launch_inc(x, y, n, stream); }

// @BE inc_p arg:float32[n] ret:float32[n] dim.n stream
void inc_p(const float* x, float* y, int64_t n, int64_t stream) { launch_inc(x, y, n, stream); }

// @BE inc_graph arg:float32[n] ret:float32[n] dim.n stream
void inc_graph(const float* x, float* y, int64_t n, int64_t stream) { launch_inc(x, y, n, stream); }

// @BE inc_p_graph arg:float32[n] ret:float32[n] dim.n stream
void inc_p_graph(const float* x, float* y, int64_t n, int64_t stream) { launch_inc(x, y, n, stream); }

// The tangent of x + 1 is the tangent itself.
// @BE inc_jvp arg:float32[n] arg:float32[n] ret:float32[n] dim.n stream
void inc_jvp(const float* x, const float* dx, float* dy, int64_t n, int64_t stream) {
    (void)x;
    if (n == 0) return;
    copy_kernel<<<static_cast<int>((n + 255) / 256), 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(dx, dy, n);
    BE_CHECK_KERNEL_LAUNCH();
}
