// A sparse solve: a COO matrix (rows Ai, columns Aj, values Ax;
// duplicates summed) assembled dense beside one right-hand side, solved
// by Gauss-Jordan elimination with partial pivoting. Its derivative is
// begen.yaml's `python_vjp:` rule.
#include <cmath>
#include <cstdint>
#include <vector>

#include "brainevent/common.h"

namespace {

void coo_solve(const int32_t* Ai, const int32_t* Aj, const double* Ax, const double* b, double* x, int64_t nnz,
               int64_t n) {
    // The augmented matrix [A | b], n rows of n + 1.
    const int64_t w = n + 1;
    std::vector<double> m(n * w, 0.0);
    for (int64_t e = 0; e < nnz; ++e) {
        BE_CHECK(Ai[e] >= 0 && Ai[e] < n && Aj[e] >= 0 && Aj[e] < n) << "entry " << e << " is outside the matrix";
        m[Ai[e] * w + Aj[e]] += Ax[e];
    }
    for (int64_t r = 0; r < n; ++r) m[r * w + n] = b[r];
    // Gauss-Jordan: each column's largest entry swapped up, divided out,
    // then eliminated from every other row.
    for (int64_t col = 0; col < n; ++col) {
        int64_t best = col;
        for (int64_t r = col + 1; r < n; ++r)
            if (std::abs(m[r * w + col]) > std::abs(m[best * w + col])) best = r;
        BE_CHECK(std::abs(m[best * w + col]) > 0.0) << "the matrix is singular";
        for (int64_t c = 0; c < w; ++c) std::swap(m[col * w + c], m[best * w + c]);
        const double pivot = m[col * w + col];
        for (int64_t c = col; c < w; ++c) m[col * w + c] /= pivot;
        for (int64_t r = 0; r < n; ++r) {
            const double f = m[r * w + col];
            if (r == col || f == 0.0) continue;
            for (int64_t c = col; c < w; ++c) m[r * w + c] -= f * m[col * w + c];
        }
    }
    for (int64_t r = 0; r < n; ++r) x[r] = m[r * w + n];
}

}  // namespace

// x = A^-1 b
// @BE solve arg:int32[nnz] arg:int32[nnz] arg:float64[nnz] arg:float64[n] ret:float64[n] dim.nnz:int64 dim.n:int64
void solve(const int32_t* Ai, const int32_t* Aj, const double* Ax, const double* b, double* x, int64_t nnz, int64_t n) {
    coo_solve(Ai, Aj, Ax, b, x, nnz, n);
}

// The same solve, under a rule that returns a wrong shape.
// @BE solve_wrong arg:int32[nnz] arg:int32[nnz] arg:float64[nnz] arg:float64[n] ret:float64[n] dim.nnz:int64 dim.n:int64
void solve_wrong(const int32_t* Ai, const int32_t* Aj, const double* Ax, const double* b, double* x, int64_t nnz,
                 int64_t n) {
    coo_solve(Ai, Aj, Ax, b, x, nnz, n);
}

// The solve that also returns r = 2 x: a residual (begen.yaml
// `residuals: [r]`) its rule is handed and the Python function does not
// return.
// @BE solve_res arg:int32[nnz] arg:int32[nnz] arg:float64[nnz] arg:float64[n] ret:float64[n] ret:float64[n] dim.nnz:int64 dim.n:int64
void solve_res(const int32_t* Ai, const int32_t* Aj, const double* Ax, const double* b, double* x, double* r,
               int64_t nnz, int64_t n) {
    coo_solve(Ai, Aj, Ax, b, x, nnz, n);
    for (int64_t i = 0; i < n; ++i) r[i] = 2.0 * x[i];
}
