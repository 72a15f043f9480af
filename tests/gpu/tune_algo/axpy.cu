// Two CUDA implementations of one algorithm, `axpy` (out = x + alpha * y),
// that really differ in speed on a GPU: `axpy_one_block` walks the arrays
// with a single block of 256 threads (one SM busy), `axpy_grid` launches a
// thread per element. The slow one has the higher priority, so the priority
// order runs it and `begen tune` has a faster implementation to find. Both
// compute the same values. Run by scripts/gpu-check.sh step `tune-algo`.
#include <cuda_runtime.h>
#include <cstdint>

namespace {

__global__ void axpy_kernel(const float* x, const float* y, float* out, float alpha, int64_t n) {
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
        out[i] = x[i] + alpha * y[i];
}

}  // namespace

// @BE axpy_one_block arg:float32[n] arg:float32[n] ret:float32[n] attr.alpha dim.n stream
void axpy_one_block(const float* x, const float* y, float* out, float alpha, int64_t n, int64_t stream) {
    axpy_kernel<<<1, 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(x, y, out, alpha, n);
}

// @BE axpy_grid arg:float32[m] arg:float32[m] ret:float32[m] attr.alpha dim.m stream
void axpy_grid(const float* x, const float* y, float* out, float alpha, int64_t m, int64_t stream) {
    const int blocks = static_cast<int>((m + 255) / 256);
    axpy_kernel<<<blocks > 0 ? blocks : 1, 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(x, y, out, alpha, m);
}
