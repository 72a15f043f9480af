// CPU kernels of tests/e2e/lowp: one template per operation serving
// float32, bfloat16 and float16 (BE::bfloat16, BE::half: arithmetic in
// float, rounded to nearest even when stored), and the conversions of
// brainevent/float16.h on raw bits.
#include <cmath>
#include <cstdint>

#include "brainevent/common.h"

// y = s * x + 1, computed in float.
// @BE axpb arg:T[n] ret:T[n] attr.s:float32 dim.n const.T=float32,bfloat16,float16
template <typename T>
void axpb(const T* x, T* y, float s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = T(s * float(x[i]) + 1.0f);
}

// Row sums, accumulated in float; and an in-place style `+=` on T.
// @BE rowsum arg:T[n, k] ret:T[n] ret:T[n] dim.n dim.k const.T=float32,bfloat16,float16
template <typename T>
void rowsum(const T* x, T* y, T* z, int64_t n, int64_t k) {
    for (int64_t i = 0; i < n; ++i) {
        float acc = 0.0f;
        T naive = T(0.0f);
        for (int64_t j = 0; j < k; ++j) {
            acc += x[i * k + j];
            naive += x[i * k + j];  // rounded to T at every step
        }
        y[i] = acc;
        z[i] = naive;
    }
}

// A plain (not template) kernel over BE::bfloat16 pointers: sqrt through float.
// @BE bf16_sqrt arg:bfloat16[n] ret:bfloat16[n] dim.n
void bf16_sqrt(const BE::bfloat16* x, BE::bfloat16* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = std::sqrt(x[i]);
}

// The header's conversions, bit for bit: float -> 16 bits, 16 bits -> float.
// @BE to_bf16 arg:float32[n] ret:uint16[n] dim.n
void to_bf16(const float* x, uint16_t* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = BE::bfloat16(x[i]).bits;
}

// @BE to_half arg:float32[n] ret:uint16[n] dim.n
void to_half(const float* x, uint16_t* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = BE::half(x[i]).bits;
}

// @BE from_bf16 arg:uint16[n] ret:float32[n] dim.n
void from_bf16(const uint16_t* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = BE::bfloat16::from_bits(x[i]);
}

// @BE from_half arg:uint16[n] ret:float32[n] dim.n
void from_half(const uint16_t* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = BE::half::from_bits(x[i]);
}

// y = x^2 and its backward kernel dx = 2 x dy, over bfloat16 or float32
// (bfloat16 first: check-grads draws its inputs in it).
// @BE sq_t arg:T[n] ret:T[n] dim.n const.T=bfloat16,float32
template <typename T>
void sq_t(const T* x, T* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = float(x[i]) * float(x[i]);
}

// @BE sq_t_bwd arg:T[n] arg:T[n] ret:T[n] dim.n const.T=bfloat16,float32
template <typename T>
void sq_t_bwd(const T* x, const T* ct, T* dx, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dx[i] = 2.0f * float(x[i]) * float(ct[i]);
}

// The same in bfloat16 only: no float32 instance to check it in.
// @BE sq_bf16 arg:bfloat16[n] ret:bfloat16[n] dim.n
void sq_bf16(const BE::bfloat16* x, BE::bfloat16* y, int64_t n) { sq_t(x, y, n); }

// @BE sq_bf16_bwd arg:bfloat16[n] arg:bfloat16[n] ret:bfloat16[n] dim.n
void sq_bf16_bwd(const BE::bfloat16* x, const BE::bfloat16* ct, BE::bfloat16* dx, int64_t n) { sq_t_bwd(x, ct, dx, n); }

// A wrong backward kernel in bfloat16 (a sign error: -2 x dy): the
// per-dtype tolerance still catches it.
// @BE sq_bf16_wrong arg:bfloat16[n] ret:bfloat16[n] dim.n
void sq_bf16_wrong(const BE::bfloat16* x, BE::bfloat16* y, int64_t n) { sq_t(x, y, n); }

// @BE sq_bf16_wrong_bwd arg:bfloat16[n] arg:bfloat16[n] ret:bfloat16[n] dim.n
void sq_bf16_wrong_bwd(const BE::bfloat16* x, const BE::bfloat16* ct, BE::bfloat16* dx, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dx[i] = -2.0f * float(x[i]) * float(ct[i]);
}
