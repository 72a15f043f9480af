// CPU kernels of tests/e2e/algo: implementations of one algorithm, forward
// kernels with their backward kernels, a kernel with a side effect, and one
// elementwise kernel per vmap method.
#include <atomic>
#include <cstdint>

#include "brainevent/common.h"

// out = x + alpha * y, three ways (the CUDA one is in algo.cu).
// @BE add_fast arg:float32[n] arg:float32[n] ret:float32[n] attr.alpha dim.n
void add_fast(const float* x, const float* y, float* out, float alpha, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = x[i] + alpha * y[i];
}

// @BE add_cpu arg:float32[m] arg:float32[m] ret:float32[m] attr.alpha
void add_cpu(const BE::Tensor x, const BE::Tensor y, BE::Tensor out, float alpha) {
    for (int64_t i = 0; i < x.numel(); ++i)
        out.data_ptr<float>()[i] = x.data_ptr<float>()[i] + alpha * y.data_ptr<float>()[i];
}

// out = k * x; the fast one refuses k = 0 and the algorithm does not fall back.
// @BE mul_fast arg:float32[n] ret:float32[n] attr.k:int32 dim.n
void mul_fast(const float* x, float* out, int32_t k, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(k) * x[i];
}

// @BE mul_cpu arg:float32[n] ret:float32[n] attr.k:int32 dim.n
void mul_cpu(const float* x, float* out, int32_t k, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(k) * x[i];
}

// y = scale * x^2; dx = 2 * scale * x * dy.
// @BE square arg:float64[n] ret:float64[n] attr.scale:float64 dim.n
void square(const double* x, double* y, double scale, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = scale * x[i] * x[i];
}

// @BE square_bwd arg:float64[n] arg:float64[n] ret:float64[n] attr.scale:float64 dim.n
void square_bwd(const double* x, const double* dy, double* dx, double scale, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dx[i] = 2.0 * scale * x[i] * dy[i];
}

// Two inputs, two outputs: (x * y, x + y).
// @BE mulsum arg:float64[n] arg:float64[n] ret:float64[n] ret:float64[n] dim.n
void mulsum(const double* x, const double* y, double* p, double* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        p[i] = x[i] * y[i];
        s[i] = x[i] + y[i];
    }
}

// @BE mulsum_bwd arg:float64[n] arg:float64[n] arg:float64[n] arg:float64[n] ret:float64[n] ret:float64[n] dim.n
void mulsum_bwd(const double* x, const double* y, const double* dp, const double* ds, double* dx, double* dy,
                int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        dx[i] = dp[i] * y[i] + ds[i];
        dy[i] = dp[i] * x[i] + ds[i];
    }
}

// An integer input gets no cotangent: y[i] = x[idx[i]].
// @BE gather arg:float64[n] arg:int32[m] ret:float64[m] dim.n dim.m
void gather(const double* x, const int32_t* idx, double* y, int64_t n, int64_t m) {
    for (int64_t i = 0; i < m; ++i) y[i] = (idx[i] >= 0 && idx[i] < n) ? x[idx[i]] : 0.0;
}

// @BE gather_bwd arg:float64[n] arg:int32[m] arg:float64[m] ret:float64[n] ret:int32[m] dim.n dim.m
void gather_bwd(const double* x, const int32_t* idx, const double* dy, double* dx, int32_t* didx, int64_t n,
                int64_t m) {
    (void)x;
    for (int64_t i = 0; i < n; ++i) dx[i] = 0.0;
    for (int64_t i = 0; i < m; ++i) {
        if (idx[i] >= 0 && idx[i] < n) dx[idx[i]] += dy[i];
        didx[i] = 0;
    }
}

// Untyped: out= is required, and the backward kernel gets its out= from
// the forward's inputs.
// @BE twice
void twice(const BE::Tensor x, BE::Tensor y) {
    for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<double>()[i] = 2.0 * x.data_ptr<double>()[i];
}

// @BE twice_bwd
void twice_bwd(const BE::Tensor x, const BE::Tensor dy, BE::Tensor dx) {
    (void)x;
    for (int64_t i = 0; i < dy.numel(); ++i) dx.data_ptr<double>()[i] = 2.0 * dy.data_ptr<double>()[i];
}

// A side effect: every call counts; `peek` reads the count.
static std::atomic<int64_t> calls{0};

// @BE bump arg:float32[n] ret:float32[n] dim.n
void bump(const float* x, float* y, int64_t n) {
    calls.fetch_add(1);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i];
}

// @BE peek arg:float32[] ret:int64[]
void peek(const float* unused, int64_t* count) {
    (void)unused;
    *count = calls.load();
}

// y = 2 * x + 1 over every element, whatever the shape: right under every
// vmap method (a batched call sees a batched shape).
#define ELEMENTWISE(name)                                                          \
    void name(const BE::Tensor x, BE::Tensor y) {                                  \
        for (int64_t i = 0; i < x.numel(); ++i)                                    \
            y.data_ptr<float>()[i] = 2.0f * x.data_ptr<float>()[i] + 1.0f;         \
    }

// @BE ew_seq
ELEMENTWISE(ew_seq)
// @BE ew_unrolled
ELEMENTWISE(ew_unrolled)
// @BE ew_expand
ELEMENTWISE(ew_expand)
// @BE ew_bcast
ELEMENTWISE(ew_bcast)
// @BE ew_legacy
ELEMENTWISE(ew_legacy)
