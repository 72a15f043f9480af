// CUDA kernels of tests/e2e/sharding (tests/gpu/check_sharding.py and the
// scaling rows of bench/gpu/sharding.py): split across GPUs, each is called
// on its GPU's block, on that GPU's stream. Compiled here by pip's nvcc.
#include <cuda_runtime.h>
#include <cstdint>

#include "brainevent/common.h"

namespace {

int blocks(int64_t n) { return static_cast<int>((n + 255) / 256); }

__global__ void rowscale_kernel(const float* x, float* y, float s, int64_t n, int64_t k) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n * k) y[i] = s * (x[i] + static_cast<float>(i % k));
}

__global__ void rowsum_kernel(const float* x, float* y, int64_t n, int64_t k) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int64_t j = 0; j < k; ++j) acc += x[i * k + j];
    y[i] = acc;
}

__global__ void matvec_kernel(const float* A, const float* x, float* y, int64_t m, int64_t k) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i >= m) return;
    float acc = 0.0f;
    for (int64_t j = 0; j < k; ++j) acc += A[i * k + j] * x[j];
    y[i] = acc;
}

// Block b's rows of a block-row CSR matrix times x: its row pointers are
// local to the block (indptr[b, 0] == 0), its columns global.
__global__ void csr_rows_kernel(const float* data, const int32_t* indices, const int32_t* indptr, const float* x,
                                float* y, int64_t b, int64_t r, int64_t z) {
    const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (t >= b * r) return;
    const int64_t blk = t / r, row = t % r;
    const int32_t* ptr = indptr + blk * (r + 1);
    float acc = 0.0f;
    for (int32_t p = ptr[row]; p < ptr[row + 1]; ++p) acc += data[blk * z + p] * x[indices[blk * z + p]];
    y[t] = acc;
}

__global__ void inc_kernel(const float* x, float* y, int64_t n) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}

}  // namespace

// y = x + 1: the per-call benchmark's kernel (bench/gpu/sharding.py), with
// `shard:` and without.
// @BE inc_cuda arg:float32[n] ret:float32[n] dim.n stream
void inc_cuda(const float* x, float* y, int64_t n, int64_t stream) {
    inc_kernel<<<blocks(n), 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(x, y, n);
}

// @BE inc_cuda_plain arg:float32[n] ret:float32[n] dim.n stream
void inc_cuda_plain(const float* x, float* y, int64_t n, int64_t stream) {
    inc_kernel<<<blocks(n), 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(x, y, n);
}

// @BE rowscale_cuda arg:float32[n, k] ret:float32[n, k] attr.s:float32 dim.n dim.k stream
void rowscale_cuda(const float* x, float* y, float s, int64_t n, int64_t k, int64_t stream) {
    rowscale_kernel<<<blocks(n * k), 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(x, y, s, n, k);
}

// The same kernel without `shard:` (the gather-everything baseline).
// @BE rowscale_cuda_plain arg:float32[n, k] ret:float32[n, k] attr.s:float32 dim.n dim.k stream
void rowscale_cuda_plain(const float* x, float* y, float s, int64_t n, int64_t k, int64_t stream) {
    rowscale_kernel<<<blocks(n * k), 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(x, y, s, n, k);
}

// @BE rowsum_cuda arg:float32[n, k] ret:float32[n] dim.n dim.k stream
void rowsum_cuda(const float* x, float* y, int64_t n, int64_t k, int64_t stream) {
    rowsum_kernel<<<blocks(n), 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(x, y, n, k);
}

// @BE rowsum_cuda_plain arg:float32[n, k] ret:float32[n] dim.n dim.k stream
void rowsum_cuda_plain(const float* x, float* y, int64_t n, int64_t k, int64_t stream) {
    rowsum_kernel<<<blocks(n), 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(x, y, n, k);
}

// @BE matvec_cuda arg:float32[m, k] arg:float32[k] ret:float32[m] dim.m dim.k stream
void matvec_cuda(const float* A, const float* x, float* y, int64_t m, int64_t k, int64_t stream) {
    matvec_kernel<<<blocks(m), 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(A, x, y, m, k);
}

// @BE matvec_cuda_plain arg:float32[m, k] arg:float32[k] ret:float32[m] dim.m dim.k stream
void matvec_cuda_plain(const float* A, const float* x, float* y, int64_t m, int64_t k, int64_t stream) {
    matvec_kernel<<<blocks(m), 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(A, x, y, m, k);
}

// @BE csr_rows_cuda arg:float32[b, z] arg:int32[b, z] arg:int32[b, r1] arg:float32[k] ret:float32[b, r] dim.b dim.r1 dim.z stream
void csr_rows_cuda(const float* data, const int32_t* indices, const int32_t* indptr, const float* x, float* y,
                   int64_t b, int64_t r1, int64_t z, int64_t stream) {
    csr_rows_kernel<<<blocks(b * (r1 - 1)), 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(data, indices, indptr, x,
                                                                                              y, b, r1 - 1, z);
}

// @BE csr_rows_cuda_plain arg:float32[b, z] arg:int32[b, z] arg:int32[b, r1] arg:float32[k] ret:float32[b, r] dim.b dim.r1 dim.z stream
void csr_rows_cuda_plain(const float* data, const int32_t* indices, const int32_t* indptr, const float* x, float* y,
                         int64_t b, int64_t r1, int64_t z, int64_t stream) {
    csr_rows_kernel<<<blocks(b * (r1 - 1)), 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(data, indices, indptr, x,
                                                                                              y, b, r1 - 1, z);
}
