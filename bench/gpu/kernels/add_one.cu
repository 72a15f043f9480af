// A deliberately tiny kernel: the benchmark measures the cost of the binding
// around it, not the kernel.
#include <cuda_runtime.h>
#include "brainevent/common.h"

__global__ void add_one_kernel(const float* x, float* y, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}

static void launch_add_one(const BE::Tensor& x, BE::Tensor& y, int64_t stream) {
    int64_t n = x.numel();
    int threads = 256;
    int blocks = static_cast<int>((n + threads - 1) / threads);
    add_one_kernel<<<blocks, threads, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
        static_cast<const float*>(x.data_ptr()), static_cast<float*>(y.data_ptr()), n);
}

// @BE add_one
void add_one(const BE::Tensor x, BE::Tensor y, int64_t stream) { launch_add_one(x, y, stream); }

// Same kernel, bound with the command-buffer trait (see begen.yaml).
// @BE add_one_graph
void add_one_graph(const BE::Tensor x, BE::Tensor y, int64_t stream) { launch_add_one(x, y, stream); }

// The same kernel with a shape contract: typed buffers decoded by XLA, the
// data as pointers, the length as a dimension.
// @BE add_one_typed arg:float32[n] ret:float32[n] dim.n stream
void add_one_typed(const float* x, float* y, int64_t n, int64_t stream) {
    int threads = 256;
    int blocks = static_cast<int>((n + threads - 1) / threads);
    add_one_kernel<<<blocks, threads, 0, reinterpret_cast<cudaStream_t>(stream)>>>(x, y, n);
}
