// CPU kernels for bench/flags_bench.py: the same sources built with
// begen's default host flags and with the flags other build systems use
// (setuptools from Python's sysconfig, CMake's Release), timed side by side.
#include <cmath>
#include <cstdint>

#include "brainevent/common.h"

// y = A x for a CSR matrix A (n rows, nnz entries): indirect loads.
// @BE csr_dot arg:int32[r] arg:int32[nnz] arg:float64[nnz] arg:float64[n] ret:float64[n] dim.r:int64 dim.n:int64
void csr_dot(const int32_t* indptr, const int32_t* indices, const double* data, const double* x, double* y, int64_t r,
             int64_t n) {
    for (int64_t i = 0; i + 1 < r; ++i) {
        double acc = 0.0;
        for (int32_t k = indptr[i]; k < indptr[i + 1]; ++k) acc += data[k] * x[indices[k]];
        y[i] = acc;
    }
    for (int64_t i = r > 0 ? r - 1 : 0; i < n; ++i) y[i] = 0.0;
}

// x = L^-1 b for a dense lower-triangular L (n x n), one column per right-hand side.
// @BE dense_solve arg:float64[n,n] arg:float64[n,k] ret:float64[n,k] dim.n:int64 dim.k:int64
void dense_solve(const double* L, const double* b, double* x, int64_t n, int64_t k) {
    for (int64_t i = 0; i < n; ++i) {
        for (int64_t c = 0; c < k; ++c) {
            double s = b[i * k + c];
            for (int64_t j = 0; j < i; ++j) s -= L[i * n + j] * x[j * k + c];
            x[i * k + c] = s / L[i * n + i];
        }
    }
}

// The sum of squares of x: a reduction.
// @BE sumsq arg:float64[n] ret:float64[] dim.n:int64
void sumsq(const double* x, double* out, int64_t n) {
    double acc = 0.0;
    for (int64_t i = 0; i < n; ++i) acc += x[i] * x[i];
    *out = acc;
}

// An element-wise loop with a transcendental: y = x * exp(-x^2) (vectorisable).
// @BE gauss arg:float32[n] ret:float32[n] dim.n:int64
void gauss(const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * std::exp(-x[i] * x[i]);
}
