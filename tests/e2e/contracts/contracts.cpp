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
