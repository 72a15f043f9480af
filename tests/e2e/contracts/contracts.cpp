// CPU kernels of tests/e2e/contracts.
#include <cmath>
#include <cstdint>

#include "brainevent/common.h"

// y = 2 x, with a backward kernel: a float64 input with x64 off is refused
// before jax.custom_vjp could narrow it.
// @BE scale2 arg:float32[n] ret:float32[n] dim.n
void scale2(const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = 2.0f * x[i];
}

// @BE scale2_bwd arg:float32[n] arg:float32[n] ret:float32[n] dim.n
void scale2_bwd(const float* x, const float* dy, float* dx, int64_t n) {
    (void)x;
    for (int64_t i = 0; i < n; ++i) dx[i] = 2.0f * dy[i];
}

// Attribute defaults: the caller's own signature, rms_norm(x, eps=1e-5).
// @BE rms_norm arg:float32[n,d] ret:float32[n,d] attr.eps=1e-5 attr.scale:float64=1 attr.center:bool=false dim.n dim.d
void rms_norm(const float* x, float* y, float eps, double scale, bool center, int64_t n, int64_t d) {
    for (int64_t i = 0; i < n; ++i) {
        const float* row = x + i * d;
        float mean = 0.0f;
        if (center) {
            for (int64_t j = 0; j < d; ++j) mean += row[j];
            mean /= static_cast<float>(d);
        }
        float ss = 0.0f;
        for (int64_t j = 0; j < d; ++j) ss += (row[j] - mean) * (row[j] - mean);
        const float r = 1.0f / std::sqrt(ss / static_cast<float>(d) + eps);
        for (int64_t j = 0; j < d; ++j) y[i * d + j] = static_cast<float>(scale) * (row[j] - mean) * r;
    }
}

// An integer default, and a required attribute beside it.
// @BE shift arg:int32[n] ret:int32[n] attr.by:int32=3 attr.times:int32 dim.n
void shift(const int32_t* x, int32_t* y, int32_t by, int32_t times, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * times + by;
}

// Shaped like the input, any rank: `n...` names all of x's extents, and
// `dim.n` receives their product (the element count).
// @BE scale_any arg:float32[n...] ret:float32[n...] attr.s:float32=2 dim.n
void scale_any(const float* x, float* y, float s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = s * x[i];
}

// Two inputs of one shape, whatever it is (`...` is one shape per kernel),
// taken as views.
// @BE add_same arg:float32[...] arg:float32[...] ret:float32[...]
void add_same(const BE::Tensor a, const BE::Tensor b, BE::Tensor out) {
    const float* pa = a.data_ptr<const float>();
    const float* pb = b.data_ptr<const float>();
    float* po = out.data_ptr<float>();
    for (int64_t i = 0; i < a.numel(); ++i) po[i] = pa[i] + pb[i];
}

// Normalised over the last axis, any leading ones: `rows` is their
// product; the second output has the leading extents only.
// @BE rms_last arg:float32[rows..., d] ret:float32[rows..., d] ret:float32[rows...] attr.eps=1e-5 dim.rows dim.d
void rms_last(const float* x, float* y, float* inv, float eps, int64_t rows, int64_t d) {
    for (int64_t i = 0; i < rows; ++i) {
        float ss = 0.0f;
        for (int64_t j = 0; j < d; ++j) ss += x[i * d + j] * x[i * d + j];
        inv[i] = 1.0f / std::sqrt(ss / static_cast<float>(d) + eps);
        for (int64_t j = 0; j < d; ++j) y[i * d + j] = x[i * d + j] * inv[i];
    }
}

// Residuals: the forward returns `inv` for its backward kernel only
// (`residuals: [inv]`), and the backward takes it first, as XLA's own
// rms_norm_bwd does: its inputs are bound by name.
// @BE rms_res arg:float32[rows..., d] ret:float32[rows..., d] ret:float32[rows...] attr.eps=1e-5 dim.rows dim.d
void rms_res(const float* x, float* y, float* inv, float eps, int64_t rows, int64_t d) {
    rms_last(x, y, inv, eps, rows, d);
}

// @BE rms_res_bwd arg:float32[rows...] arg:float32[rows..., d] arg:float32[rows..., d] ret:float32[rows..., d] dim.rows dim.d
void rms_res_bwd(const float* inv, const float* x, const float* ct_y, float* ct_x, int64_t rows, int64_t d) {
    for (int64_t i = 0; i < rows; ++i) {
        const float r = inv[i];
        float dot = 0.0f;
        for (int64_t j = 0; j < d; ++j) dot += ct_y[i * d + j] * x[i * d + j];
        for (int64_t j = 0; j < d; ++j) {
            ct_x[i * d + j] = r * ct_y[i * d + j] - r * r * r / static_cast<float>(d) * x[i * d + j] * dot;
        }
    }
}
