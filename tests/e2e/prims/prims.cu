// CUDA kernels of tests/e2e/prims: the CSR matrix-vector product (brainevent's
// pattern: linear in the weights and in the vector) with its transposes, the
// cotangent of the vector accumulated into an output begen zeroes on XLA's
// stream, and a kernel with no stream whose output only begen writes.
// Compiled here by pip's nvcc (no GPU needed).
#include <cuda_runtime.h>
#include <cstdint>

#include "brainevent/common.h"

namespace {

__global__ void csrmv_kernel(const double* data, const int32_t* indices, const int32_t* indptr, const double* v,
                             double* y, int64_t m) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i >= m) return;
    double s = 0.0;
    for (int32_t p = indptr[i]; p < indptr[i + 1]; ++p) s += data[p] * v[indices[p]];
    y[i] = s;
}

__global__ void csrmv_tdata_kernel(const int32_t* indices, const int32_t* indptr, const double* v, const double* ct,
                                   double* ddata, int64_t m) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i >= m) return;
    for (int32_t p = indptr[i]; p < indptr[i + 1]; ++p) ddata[p] = ct[i] * v[indices[p]];
}

__global__ void csrmv_tv_kernel(const double* data, const int32_t* indices, const int32_t* indptr, const double* ct,
                                double* dv, int64_t m) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i >= m) return;
    for (int32_t p = indptr[i]; p < indptr[i + 1]; ++p) atomicAdd(&dv[indices[p]], data[p] * ct[i]);
}

int blocks(int64_t m) { return static_cast<int>((m + 127) / 128); }

}  // namespace

// @BE csrmv_cuda arg:float64[nnz] arg:int32[nnz] arg:int32[r] arg:float64[k] ret:float64[m] attr.m:int64 dim.r stream
void csrmv_cuda(const double* data, const int32_t* indices, const int32_t* indptr, const double* v, double* y,
                int64_t m, int64_t r, int64_t stream) {
    if (m == 0) return;
    csrmv_kernel<<<blocks(m), 128, 0, reinterpret_cast<cudaStream_t>(stream)>>>(data, indices, indptr, v, y,
                                                                               r > m ? m : r - 1);
    BE_CHECK_KERNEL_LAUNCH();
}

// @BE csrmv_cuda_tdata arg:int32[nnz] arg:int32[r] arg:float64[k] arg:float64[m] ret:float64[nnz] dim.r stream
void csrmv_cuda_tdata(const int32_t* indices, const int32_t* indptr, const double* v, const double* ct, double* ddata,
                      int64_t r, int64_t stream) {
    if (r < 2) return;
    csrmv_tdata_kernel<<<blocks(r - 1), 128, 0, reinterpret_cast<cudaStream_t>(stream)>>>(indices, indptr, v, ct,
                                                                                        ddata, r - 1);
    BE_CHECK_KERNEL_LAUNCH();
}

// @BE csrmv_cuda_tv arg:float64[nnz] arg:int32[nnz] arg:int32[r] arg:float64[m] ret:float64[k] dim.r stream
void csrmv_cuda_tv(const double* data, const int32_t* indices, const int32_t* indptr, const double* ct, double* dv,
                   int64_t r, int64_t stream) {
    if (r < 2) return;
    csrmv_tv_kernel<<<blocks(r - 1), 128, 0, reinterpret_cast<cudaStream_t>(stream)>>>(data, indices, indptr, ct, dv,
                                                                                     r - 1);
    BE_CHECK_KERNEL_LAUNCH();
}

// Writes nothing: with `zero_outputs`, its output is zeros (begen binds
// XLA's stream for the memset although the kernel takes none).
// @BE zeros_cuda ret:float32[n] attr.n:int64
void zeros_cuda(float* out, int64_t n) {
    (void)out;
    (void)n;
}
