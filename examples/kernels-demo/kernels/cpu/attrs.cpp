// Attributes beyond float32: a complex factor, a float16 value (raw bits, as
// the arg_spec system prescribes) and an int64 offset.
#include <complex>
#include <cstdint>

#include "brainevent/common.h"

// @BE complex_scale
void complex_scale(const BE::Tensor x, BE::Tensor y, std::complex<float> factor) {
    const auto* in = x.data_ptr<const std::complex<float>>();
    auto* out = y.data_ptr<std::complex<float>>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = factor * in[i];
}

// Fills a float16 tensor with one value given as its raw bits.
// @BE half_fill ret attr.value:float16
void half_fill(BE::Tensor y, uint16_t value) {
    uint16_t* out = y.data_ptr<uint16_t>();
    for (int64_t i = 0; i < y.numel(); ++i) out[i] = value;
}

// @BE shift_i64
void shift_i64(const BE::Tensor x, BE::Tensor y, int64_t offset) {
    const int64_t* in = x.data_ptr<const int64_t>();
    int64_t* out = y.data_ptr<int64_t>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] + offset;
}
