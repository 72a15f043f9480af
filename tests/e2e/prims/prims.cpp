// CPU kernels of tests/e2e/prims: JAX primitives with their tangent and
// transpose kernels.
#include <cmath>
#include <cstdint>

// y = A x, linear in A and in x; mv_plain is the same kernel without
// options (the primal's HLO is compared with it).
// @BE mv arg:float64[m,n] arg:float64[n] ret:float64[m] dim.m dim.n
void mv(const double* A, const double* x, double* y, int64_t m, int64_t n) {
    for (int64_t i = 0; i < m; ++i) {
        double s = 0.0;
        for (int64_t j = 0; j < n; ++j) s += A[i * n + j] * x[j];
        y[i] = s;
    }
}

// @BE mv_plain arg:float64[m,n] arg:float64[n] ret:float64[m] dim.m dim.n
void mv_plain(const double* A, const double* x, double* y, int64_t m, int64_t n) { mv(A, x, y, m, n); }

// The cotangent of A: ct x^T.
// @BE mv_tA arg:float64[n] arg:float64[m] ret:float64[m,n] dim.m dim.n
void mv_tA(const double* x, const double* ct, double* dA, int64_t m, int64_t n) {
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) dA[i * n + j] = ct[i] * x[j];
}

// The cotangent of x: A^T ct.
// @BE mv_tx arg:float64[m,n] arg:float64[m] ret:float64[n] dim.m dim.n
void mv_tx(const double* A, const double* ct, double* dx, int64_t m, int64_t n) {
    for (int64_t j = 0; j < n; ++j) {
        double s = 0.0;
        for (int64_t i = 0; i < m; ++i) s += A[i * n + j] * ct[i];
        dx[j] = s;
    }
}

// y = s * tanh(x); its tangent s * (1 - tanh(x)^2) dx is linear in dx, and
// its own transpose (a diagonal) is the same product with the cotangent.
// @BE tanh_k arg:float64[n] ret:float64[n] attr.s:float64 dim.n
void tanh_k(const double* x, double* y, double s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = s * std::tanh(x[i]);
}

// @BE tanh_jvp arg:float64[n] arg:float64[n] ret:float64[n] attr.s:float64 dim.n
void tanh_jvp(const double* x, const double* dx, double* dy, double s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        double t = std::tanh(x[i]);
        dy[i] = s * (1.0 - t * t) * dx[i];
    }
}

// @BE tanh_jvp_t arg:float64[n] arg:float64[n] ret:float64[n] attr.s:float64 dim.n
void tanh_jvp_t(const double* x, const double* ct, double* dx, double s, int64_t n) { tanh_jvp(x, ct, dx, s, n); }

// y = M v for the CSR matrix M (data, indices, indptr) of m rows; linear in
// data and in v. The row count is an attribute: y needs no out=.
// @BE csrmv arg:float64[nnz] arg:int32[nnz] arg:int32[r] arg:float64[k] ret:float64[m] attr.m:int64 dim.r
void csrmv(const double* data, const int32_t* indices, const int32_t* indptr, const double* v, double* y, int64_t m,
           int64_t r) {
    for (int64_t i = 0; i < m && i + 1 < r; ++i) {
        double s = 0.0;
        for (int32_t p = indptr[i]; p < indptr[i + 1]; ++p) s += data[p] * v[indices[p]];
        y[i] = s;
    }
}

// The cotangent of data: ct[row] * v[col] per stored entry.
// @BE csrmv_tdata arg:int32[nnz] arg:int32[r] arg:float64[k] arg:float64[m] ret:float64[nnz] dim.r
void csrmv_tdata(const int32_t* indices, const int32_t* indptr, const double* v, const double* ct, double* ddata,
                 int64_t r) {
    for (int64_t i = 0; i + 1 < r; ++i)
        for (int32_t p = indptr[i]; p < indptr[i + 1]; ++p) ddata[p] = ct[i] * v[indices[p]];
}

// The cotangent of v: M^T ct, accumulated into an output the handler zeroes.
// @BE csrmv_tv arg:float64[nnz] arg:int32[nnz] arg:int32[r] arg:float64[m] ret:float64[k] dim.r
void csrmv_tv(const double* data, const int32_t* indices, const int32_t* indptr, const double* ct, double* dv,
              int64_t r) {
    for (int64_t i = 0; i + 1 < r; ++i)
        for (int32_t p = indptr[i]; p < indptr[i + 1]; ++p) dv[indices[p]] += data[p] * ct[i];
}

// Sizes from attributes: out has n elements, n an attribute (no out=).
// @BE fill ret:float32[n] attr.n:int64 attr.v:float32
void fill(float* out, int64_t n, float v) {
    for (int64_t i = 0; i < n; ++i) out[i] = v;
}

// Outputs zeroed by the handler: adds v to every element of what it is handed.
// @BE accumulate ret:float32[n] attr.n:int64 attr.v:float32
void accumulate(float* out, int64_t n, float v) {
    for (int64_t i = 0; i < n; ++i) out[i] += v;
}
