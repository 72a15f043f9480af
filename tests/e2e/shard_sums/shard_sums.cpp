// CPU kernels of tests/e2e/shard_sums: RMSNorm, y = x * rstd * w with
// rstd = 1 / sqrt(mean(x^2) + eps) per row, and its backward kernels.
// Split along the rows `n`, each device computes its rows of ct_x and a
// partial ct_w over its rows; `sum:` adds the partial ct_w up.
#include <cmath>
#include <cstdint>

#include "brainevent/common.h"

namespace {
constexpr float kEps = 1e-5f;

float row_rstd(const float* x, int64_t d) {
    float ss = 0.0f;
    for (int64_t j = 0; j < d; ++j) ss += x[j] * x[j];
    return 1.0f / std::sqrt(ss / static_cast<float>(d) + kEps);
}

// ct_x and ct_w (accumulated) of one row, given its rstd.
void row_backward(const float* x, const float* w, float r, const float* ct_y, float* ct_x, float* ct_w, int64_t d) {
    float dot = 0.0f;  // sum_j ct_y[j] w[j] x[j]
    for (int64_t j = 0; j < d; ++j) dot += ct_y[j] * w[j] * x[j];
    const float c = dot * r * r * r / static_cast<float>(d);
    for (int64_t j = 0; j < d; ++j) {
        ct_x[j] = ct_y[j] * w[j] * r - x[j] * c;
        ct_w[j] += ct_y[j] * x[j] * r;
    }
}
}  // namespace

// The backward with the forward's rstd as an input.
// @BE rms_norm_bwd arg:float32[n, d] arg:float32[d] arg:float32[n] arg:float32[n, d] ret:float32[n, d] ret:float32[d] dim.n dim.d
void rms_norm_bwd(const float* x, const float* w, const float* rstd, const float* ct_y, float* ct_x, float* ct_w,
                  int64_t n, int64_t d) {
    for (int64_t j = 0; j < d; ++j) ct_w[j] = 0.0f;
    for (int64_t i = 0; i < n; ++i) row_backward(x + i * d, w, rstd[i], ct_y + i * d, ct_x + i * d, ct_w, d);
}

// @BE rms arg:float32[n, d] arg:float32[d] ret:float32[n, d] dim.n dim.d
void rms(const float* x, const float* w, float* y, int64_t n, int64_t d) {
    for (int64_t i = 0; i < n; ++i) {
        const float r = row_rstd(x + i * d, d);
        for (int64_t j = 0; j < d; ++j) y[i * d + j] = x[i * d + j] * r * w[j];
    }
}

// rms's backward kernel (rstd computed again).
// @BE rms_grad arg:float32[n, d] arg:float32[d] arg:float32[n, d] ret:float32[n, d] ret:float32[d] dim.n dim.d
void rms_grad(const float* x, const float* w, const float* ct_y, float* ct_x, float* ct_w, int64_t n, int64_t d) {
    for (int64_t j = 0; j < d; ++j) ct_w[j] = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
        const float* xi = x + i * d;
        row_backward(xi, w, row_rstd(xi, d), ct_y + i * d, ct_x + i * d, ct_w, d);
    }
}

// The same over any leading dimensions: `rows` is their product, and a
// split of any of them gives each device whole rows.
// @BE rms_rows arg:float32[rows..., d] arg:float32[d] ret:float32[rows..., d] dim.rows dim.d
void rms_rows(const float* x, const float* w, float* y, int64_t rows, int64_t d) { rms(x, w, y, rows, d); }

// @BE rms_rows_grad arg:float32[rows..., d] arg:float32[d] arg:float32[rows..., d] ret:float32[rows..., d] ret:float32[d] dim.rows dim.d
void rms_rows_grad(const float* x, const float* w, const float* ct_y, float* ct_x, float* ct_w, int64_t rows,
                   int64_t d) {
    rms_grad(x, w, ct_y, ct_x, ct_w, rows, d);
}

// docs/typed.md's rms_norm: y and the inverse norm of each row.
// @BE rms_norm arg:float32[rows..., d] ret:float32[rows..., d] ret:float32[rows...] attr.eps=1e-5 dim.rows dim.d
void rms_norm(const float* x, float* y, float* inv, float eps, int64_t rows, int64_t d) {
    for (int64_t i = 0; i < rows; ++i) {
        float ss = 0.0f;
        for (int64_t j = 0; j < d; ++j) ss += x[i * d + j] * x[i * d + j];
        inv[i] = 1.0f / std::sqrt(ss / static_cast<float>(d) + eps);
        for (int64_t j = 0; j < d; ++j) y[i * d + j] = x[i * d + j] * inv[i];
    }
}

// rms_rows without begen.yaml's declarations: split inputs are gathered.
// @BE rms_rows_plain arg:float32[rows..., d] arg:float32[d] ret:float32[rows..., d] dim.rows dim.d
void rms_rows_plain(const float* x, const float* w, float* y, int64_t rows, int64_t d) { rms(x, w, y, rows, d); }
