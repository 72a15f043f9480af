// CPU kernels of tests/e2e/sharding. Each is an ordinary kernel: split
// across devices, it is called on each device's block, with `dim.`
// parameters the block's extents.
#include <cmath>
#include <cstdint>

#include "brainevent/common.h"

// @BE rowscale arg:float32[n, k] ret:float32[n, k] attr.s:float32 dim.n dim.k
void rowscale(const float* x, float* y, float s, int64_t n, int64_t k) {
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < k; ++j) y[i * k + j] = s * (x[i * k + j] + static_cast<float>(j));
}

// @BE rowsum arg:float32[n, k] ret:float32[n] dim.n dim.k
void rowsum(const float* x, float* y, int64_t n, int64_t k) {
    for (int64_t i = 0; i < n; ++i) {
        float acc = 0.0f;
        for (int64_t j = 0; j < k; ++j) acc += x[i * k + j];
        y[i] = acc;
    }
}

// y = A x.
// @BE matvec arg:float32[m, k] arg:float32[k] ret:float32[m] dim.m dim.k
void matvec(const float* A, const float* x, float* y, int64_t m, int64_t k) {
    for (int64_t i = 0; i < m; ++i) {
        float acc = 0.0f;
        for (int64_t j = 0; j < k; ++j) acc += A[i * k + j] * x[j];
        y[i] = acc;
    }
}

// The same kernel without `shard:`: split inputs are gathered.
// @BE matvec_plain arg:float32[m, k] arg:float32[k] ret:float32[m] dim.m dim.k
void matvec_plain(const float* A, const float* x, float* y, int64_t m, int64_t k) {
    matvec(A, x, y, m, k);
}

// How many elements are positive.
// @BE count_pos arg:float32[n] ret:int32[] dim.n
void count_pos(const float* x, int32_t* out, int64_t n) {
    int32_t c = 0;
    for (int64_t i = 0; i < n; ++i) c += x[i] > 0.0f;
    *out = c;
}

// @BE scale_t arg:T[n] ret:T[n] attr.s:float64 dim.n const.T=float32,float64
template <typename T>
void scale_t(const T* x, T* y, double s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(s * x[i]);
}

// Two implementations of one algorithm: x * 3 + 1.
// @BE ew_fast arg:float32[n] ret:float32[n] dim.n
void ew_fast(const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * 3.0f + 1.0f;
}

// @BE ew_cpu arg:float32[n] ret:float32[n] dim.n
void ew_cpu(const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = 1.0f + 3.0f * x[i];
}

// y = x^2, dx = 2 x dy.
// @BE square arg:float64[n] ret:float64[n] dim.n
void square(const double* x, double* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * x[i];
}

// @BE square_bwd arg:float64[n] arg:float64[n] ret:float64[n] dim.n
void square_bwd(const double* x, const double* dy, double* dx, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dx[i] = 2.0 * x[i] * dy[i];
}

// y = A x, linear in A and in x; its transposes: ct_A = ct x^T, ct_x = A^T ct.
// @BE mv arg:float64[m, k] arg:float64[k] ret:float64[m] dim.m dim.k
void mv(const double* A, const double* x, double* y, int64_t m, int64_t k) {
    for (int64_t i = 0; i < m; ++i) {
        double acc = 0.0;
        for (int64_t j = 0; j < k; ++j) acc += A[i * k + j] * x[j];
        y[i] = acc;
    }
}

// @BE mv_tA arg:float64[k] arg:float64[m] ret:float64[m, k] dim.m dim.k
void mv_tA(const double* x, const double* ct, double* ctA, int64_t m, int64_t k) {
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < k; ++j) ctA[i * k + j] = ct[i] * x[j];
}

// @BE mv_tx arg:float64[m, k] arg:float64[m] ret:float64[k] dim.m dim.k
void mv_tx(const double* A, const double* ct, double* ctx, int64_t m, int64_t k) {
    for (int64_t j = 0; j < k; ++j) ctx[j] = 0.0;
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < k; ++j) ctx[j] += A[i * k + j] * ct[i];
}

// y = tanh(x); its tangent kernel dy = (1 - tanh(x)^2) dx, linear in dx
// and its own transpose.
// @BE tanh_k arg:float64[n] ret:float64[n] dim.n
void tanh_k(const double* x, double* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
}

// @BE tanh_jvp arg:float64[n] arg:float64[n] ret:float64[n] dim.n
void tanh_jvp(const double* x, const double* dx, double* dy, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        const double t = std::tanh(x[i]);
        dy[i] = (1.0 - t * t) * dx[i];
    }
}

// @BE tanh_jvp_t arg:float64[n] arg:float64[n] ret:float64[n] dim.n
void tanh_jvp_t(const double* x, const double* ct, double* dx, int64_t n) {
    tanh_jvp(x, ct, dx, n);
}

// y = a + b: two inputs of one dimension, split alike.
// @BE add arg:float32[n] arg:float32[n] ret:float32[n] dim.n
void add(const float* a, const float* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

// A block-row CSR matrix times x: b blocks of r rows, each block its own
// CSR matrix (r + 1 row pointers, z non-zeros, padded) over x's columns.
// Split along b, each device multiplies its blocks; x is whole.
// @BE csr_rows arg:float32[b, z] arg:int32[b, z] arg:int32[b, r1] arg:float32[k] ret:float32[b, r] dim.b dim.r1 dim.z
void csr_rows(const float* data, const int32_t* indices, const int32_t* indptr, const float* x, float* y, int64_t b,
              int64_t r1, int64_t z) {
    const int64_t r = r1 - 1;
    for (int64_t blk = 0; blk < b; ++blk) {
        const int32_t* ptr = indptr + blk * r1;
        for (int64_t row = 0; row < r; ++row) {
            float acc = 0.0f;
            for (int32_t p = ptr[row]; p < ptr[row + 1]; ++p) acc += data[blk * z + p] * x[indices[blk * z + p]];
            y[blk * r + row] = acc;
        }
    }
}
