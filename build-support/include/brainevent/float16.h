// begen support headers: 16-bit floats, BE::bfloat16 and BE::half.
//
// In a CPU source each is 16 bits of storage (the IEEE binary16 or bfloat16
// pattern, `bits`) that converts to and from `float`, rounding to nearest
// even; arithmetic goes through `float`. So one template serves float32,
// bfloat16 and float16 tensors:
//
//     // @BE scale arg:T[n] ret:T[n] attr.s:float32 dim.n const.T=float32,bfloat16,float16
//     template <typename T>
//     void scale(const T* x, T* y, float s, int64_t n) {
//         for (int64_t i = 0; i < n; ++i) y[i] = T(s * float(x[i]));
//     }
//
// begen instantiates it as scale<float>, scale<BE::bfloat16> and
// scale<BE::half>. Under nvcc the names are CUDA's own types (`__half`,
// `__nv_bfloat16`, which begen instantiates CUDA templates with), so a
// kernel written against BE::half compiles for both platforms.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace BE {
using half = __half;
using bfloat16 = __nv_bfloat16;
}  // namespace BE

#else

namespace BE {
namespace internal {

inline uint32_t float_bits(float f) noexcept {
    uint32_t x;
    std::memcpy(&x, &f, sizeof x);
    return x;
}

inline float bits_float(uint32_t x) noexcept {
    float f;
    std::memcpy(&f, &x, sizeof f);
    return f;
}

/// float -> bfloat16 bits, rounded to nearest even; a NaN stays a NaN
/// (its top bits, made quiet where they would read as infinity).
inline uint16_t float_to_bfloat16_bits(float f) noexcept {
    const uint32_t x = float_bits(f);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) {
        uint32_t r = x >> 16;
        if ((r & 0x7Fu) == 0) r |= 0x40u;
        return static_cast<uint16_t>(r);
    }
    return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

inline float bfloat16_bits_to_float(uint16_t h) noexcept { return bits_float(static_cast<uint32_t>(h) << 16); }

/// float -> IEEE binary16 bits, rounded to nearest even: past 65504 to
/// infinity, below 2^-14 to a subnormal (or zero); a NaN stays a NaN.
inline uint16_t float_to_half_bits(float f) noexcept {
    const uint32_t x = float_bits(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t a = x & 0x7FFFFFFFu;
    if (a >= 0x7F800000u) {  // infinity, NaN
        uint32_t m = a > 0x7F800000u ? ((a >> 13) & 0x3FFu) : 0u;
        if (a > 0x7F800000u && m == 0) m = 0x200u;
        return static_cast<uint16_t>(sign | 0x7C00u | m);
    }
    if (a >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // 65520 and above: infinity
    if (a < 0x38800000u) {                                                // below 2^-14: a subnormal
        const uint32_t e = a >> 23;
        if (e < 102) return static_cast<uint16_t>(sign);  // below 2^-25: zero
        const uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
        const uint32_t shift = 126 - e;
        uint32_t r = m >> shift;
        const uint32_t rest = m & ((1u << shift) - 1u), tie = 1u << (shift - 1);
        if (rest > tie || (rest == tie && (r & 1u))) ++r;
        return static_cast<uint16_t>(sign | r);
    }
    uint32_t r = (a - 0x38000000u) >> 13;
    const uint32_t rest = a & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
}

inline float half_bits_to_float(uint16_t h) noexcept {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t e = (h >> 10) & 0x1Fu;
    uint32_t m = h & 0x3FFu;
    if (e == 0x1F) return bits_float(sign | 0x7F800000u | (m << 13));
    if (e != 0) return bits_float(sign | ((e + 112) << 23) | (m << 13));
    if (m == 0) return bits_float(sign);
    uint32_t shift = 0;  // a subnormal: normalized
    while (!(m & 0x400u)) {
        m <<= 1;
        ++shift;
    }
    return bits_float(sign | ((113 - shift) << 23) | ((m & 0x3FFu) << 13));
}

}  // namespace internal

/// bfloat16: 1 sign, 8 exponent and 7 mantissa bits (the top half of a float).
struct bfloat16 {
    uint16_t bits;

    bfloat16() = default;
    bfloat16(float f) noexcept : bits(internal::float_to_bfloat16_bits(f)) {}
    operator float() const noexcept { return internal::bfloat16_bits_to_float(bits); }
    static bfloat16 from_bits(uint16_t b) noexcept {
        bfloat16 h;
        h.bits = b;
        return h;
    }
    bfloat16& operator+=(float o) noexcept { return *this = float(*this) + o; }
    bfloat16& operator-=(float o) noexcept { return *this = float(*this) - o; }
    bfloat16& operator*=(float o) noexcept { return *this = float(*this) * o; }
    bfloat16& operator/=(float o) noexcept { return *this = float(*this) / o; }
};

/// half: IEEE binary16, 1 sign, 5 exponent and 10 mantissa bits.
struct half {
    uint16_t bits;

    half() = default;
    half(float f) noexcept : bits(internal::float_to_half_bits(f)) {}
    operator float() const noexcept { return internal::half_bits_to_float(bits); }
    static half from_bits(uint16_t b) noexcept {
        half h;
        h.bits = b;
        return h;
    }
    half& operator+=(float o) noexcept { return *this = float(*this) + o; }
    half& operator-=(float o) noexcept { return *this = float(*this) - o; }
    half& operator*=(float o) noexcept { return *this = float(*this) * o; }
    half& operator/=(float o) noexcept { return *this = float(*this) / o; }
};

}  // namespace BE

#endif

static_assert(sizeof(BE::bfloat16) == 2, "BE::bfloat16 holds 16 bits");
static_assert(sizeof(BE::half) == 2, "BE::half holds 16 bits");
