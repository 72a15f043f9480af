// A sparse-solver library's kernels, shaped like a KLU wrapper's: a COO
// matrix (rows Ai, columns Aj, values Ax; duplicates summed) times a block
// of right-hand sides, and a solve of the same matrix for a block of
// right-hand sides (one factorisation per call, every column solved with
// it), each over float64 and complex128.
#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

#include "brainevent/common.h"

namespace {

template <typename T>
void coo_dot(const int32_t* Ai, const int32_t* Aj, const T* Ax, const T* x, T* y, int64_t nnz, int64_t n,
             int64_t k) {
    for (int64_t i = 0; i < n * k; ++i) y[i] = T(0);
    for (int64_t e = 0; e < nnz; ++e) {
        BE_CHECK(Ai[e] >= 0 && Ai[e] < n && Aj[e] >= 0 && Aj[e] < n) << "entry " << e << " is outside the matrix";
        const T a = Ax[e];
        const T* xr = x + int64_t(Aj[e]) * k;
        T* yr = y + int64_t(Ai[e]) * k;
        for (int64_t c = 0; c < k; ++c) yr[c] += a * xr[c];
    }
}

// x = A^-1 b: A assembled dense, LU with partial pivoting once, then every
// column of b forward and back substituted.
template <typename T>
void coo_solve(const int32_t* Ai, const int32_t* Aj, const T* Ax, const T* b, T* x, int64_t nnz, int64_t n,
               int64_t k) {
    std::vector<T> lu(n * n, T(0));
    for (int64_t e = 0; e < nnz; ++e) {
        BE_CHECK(Ai[e] >= 0 && Ai[e] < n && Aj[e] >= 0 && Aj[e] < n) << "entry " << e << " is outside the matrix";
        lu[int64_t(Ai[e]) * n + Aj[e]] += Ax[e];
    }
    std::vector<int64_t> piv(n);
    for (int64_t j = 0; j < n; ++j) {
        int64_t p = j;
        for (int64_t i = j + 1; i < n; ++i)
            if (std::abs(lu[i * n + j]) > std::abs(lu[p * n + j])) p = i;
        BE_CHECK(std::abs(lu[p * n + j]) > 0.0) << "the matrix is singular";
        piv[j] = p;
        if (p != j)
            for (int64_t c = 0; c < n; ++c) std::swap(lu[j * n + c], lu[p * n + c]);
        for (int64_t i = j + 1; i < n; ++i) {
            const T f = lu[i * n + j] / lu[j * n + j];
            lu[i * n + j] = f;
            for (int64_t c = j + 1; c < n; ++c) lu[i * n + c] -= f * lu[j * n + c];
        }
    }
    for (int64_t i = 0; i < n * k; ++i) x[i] = b[i];
    for (int64_t j = 0; j < n; ++j)
        if (piv[j] != j)
            for (int64_t c = 0; c < k; ++c) std::swap(x[j * k + c], x[piv[j] * k + c]);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < i; ++j)
            for (int64_t c = 0; c < k; ++c) x[i * k + c] -= lu[i * n + j] * x[j * k + c];
    for (int64_t i = n - 1; i >= 0; --i) {
        for (int64_t j = i + 1; j < n; ++j)
            for (int64_t c = 0; c < k; ++c) x[i * k + c] -= lu[i * n + j] * x[j * k + c];
        for (int64_t c = 0; c < k; ++c) x[i * k + c] /= lu[i * n + i];
    }
}

}  // namespace

using c128 = std::complex<double>;

// y = A x
// @BE dot arg:int32[nnz] arg:int32[nnz] arg:float64[nnz] arg:float64[n,n_rhs] ret:float64[n,n_rhs] dim.nnz:int64 dim.n:int64 dim.n_rhs:int64
void dot(const int32_t* Ai, const int32_t* Aj, const double* Ax, const double* x, double* y, int64_t nnz, int64_t n,
         int64_t n_rhs) {
    coo_dot(Ai, Aj, Ax, x, y, nnz, n, n_rhs);
}

// @BE dot_c128 arg:int32[nnz] arg:int32[nnz] arg:complex128[nnz] arg:complex128[n,n_rhs] ret:complex128[n,n_rhs] dim.nnz:int64 dim.n:int64 dim.n_rhs:int64
void dot_c128(const int32_t* Ai, const int32_t* Aj, const c128* Ax, const c128* x, c128* y, int64_t nnz, int64_t n,
              int64_t n_rhs) {
    coo_dot(Ai, Aj, Ax, x, y, nnz, n, n_rhs);
}

// x = A^-1 b
// @BE solve arg:int32[nnz] arg:int32[nnz] arg:float64[nnz] arg:float64[n,n_rhs] ret:float64[n,n_rhs] dim.nnz:int64 dim.n:int64 dim.n_rhs:int64
void solve(const int32_t* Ai, const int32_t* Aj, const double* Ax, const double* b, double* x, int64_t nnz, int64_t n,
           int64_t n_rhs) {
    coo_solve(Ai, Aj, Ax, b, x, nnz, n, n_rhs);
}

// @BE solve_c128 arg:int32[nnz] arg:int32[nnz] arg:complex128[nnz] arg:complex128[n,n_rhs] ret:complex128[n,n_rhs] dim.nnz:int64 dim.n:int64 dim.n_rhs:int64
void solve_c128(const int32_t* Ai, const int32_t* Aj, const c128* Ax, const c128* b, c128* x, int64_t nnz, int64_t n,
                int64_t n_rhs) {
    coo_solve(Ai, Aj, Ax, b, x, nnz, n, n_rhs);
}

// The same solve without a folding rule: a vmap calls it once per example.
// @BE solve_each arg:int32[nnz] arg:int32[nnz] arg:float64[nnz] arg:float64[n,n_rhs] ret:float64[n,n_rhs] dim.nnz:int64 dim.n:int64 dim.n_rhs:int64
void solve_each(const int32_t* Ai, const int32_t* Aj, const double* Ax, const double* b, double* x, int64_t nnz,
                int64_t n, int64_t n_rhs) {
    coo_solve(Ai, Aj, Ax, b, x, nnz, n, n_rhs);
}

// The transpose of `dot` in x: A^T x, the product with rows and columns
// swapped. Its cotangent parameter is named `x`, like dot's input: bound by
// position on purpose (`by_position: true`).
// @BE dot_tx arg:int32[nnz] arg:int32[nnz] arg:float64[nnz] arg:float64[n,n_rhs] ret:float64[n,n_rhs] dim.nnz:int64 dim.n:int64 dim.n_rhs:int64
void dot_tx(const int32_t* Ai, const int32_t* Aj, const double* Ax, const double* x, double* y, int64_t nnz, int64_t n,
            int64_t n_rhs) {
    coo_dot(Aj, Ai, Ax, x, y, nnz, n, n_rhs);
}
