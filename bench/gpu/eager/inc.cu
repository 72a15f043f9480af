// y = x + 1 on the GPU, bound five ways for bench/gpu/eager_overhead.py: the
// benchmark measures the Python and dispatch cost around the launch.
#include <cuda_runtime.h>

#include <cstdint>

#include "brainevent/common.h"

namespace {

__global__ void inc_kernel(const float* x, float* y, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}

__global__ void copy_kernel(const float* x, float* y, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = x[i];
}

void launch(const float* x, float* y, int64_t n, int threads, int64_t stream, bool copy) {
    if (n == 0) return;
    const int blocks = static_cast<int>((n + threads - 1) / threads);
    auto s = reinterpret_cast<cudaStream_t>(stream);
    if (copy) {
        copy_kernel<<<blocks, threads, 0, s>>>(x, y, n);
    } else {
        inc_kernel<<<blocks, threads, 0, s>>>(x, y, n);
    }
    BE_CHECK_KERNEL_LAUNCH();
}

}  // namespace

// Untyped: BE::Tensor, out= given.
// @BE inc_plain
void inc_plain(const BE::Tensor x, BE::Tensor y, int64_t stream) {
    launch(static_cast<const float*>(x.data_ptr()), static_cast<float*>(y.data_ptr()), x.numel(), 256, stream, false);
}

// @BE inc_typed arg:float32[n] ret:float32[n] dim.n stream
void inc_typed(const float* x, float* y, int64_t n, int64_t stream) { launch(x, y, n, 256, stream, false); }

// @BE inc_vjp arg:float32[n] ret:float32[n] dim.n stream
void inc_vjp(const float* x, float* y, int64_t n, int64_t stream) { launch(x, y, n, 256, stream, false); }

// The cotangent passes through.
// @BE inc_bwd arg:float32[n] arg:float32[n] ret:float32[n] dim.n stream
void inc_bwd(const float* x, const float* ct, float* dx, int64_t n, int64_t stream) {
    (void)x;
    launch(ct, dx, n, 256, stream, true);
}

// @BE inc_p arg:float32[n] ret:float32[n] dim.n stream
void inc_p(const float* x, float* y, int64_t n, int64_t stream) { launch(x, y, n, 256, stream, false); }

// The tangent of x + 1 is the tangent itself.
// @BE inc_jvp arg:float32[n] arg:float32[n] ret:float32[n] dim.n stream
void inc_jvp(const float* x, const float* dx, float* dy, int64_t n, int64_t stream) {
    (void)x;
    launch(dx, dy, n, 256, stream, true);
}

// @BE inc_tuned arg:float32[n] ret:float32[n] dim.n stream const.THREADS=128,256
template <int THREADS>
void inc_tuned(const float* x, float* y, int64_t n, int64_t stream) {
    launch(x, y, n, THREADS, stream, false);
}
