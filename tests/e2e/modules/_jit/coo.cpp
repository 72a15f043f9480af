#include <cstdint>

#include "brainevent/common.h"

// The same names and signatures as csr.cpp, other bodies: module `jit_coo`.
// @BE scale
void scale(const BE::Tensor x, BE::Tensor y, float alpha) {
    const float* in = x.data_ptr<const float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = alpha * in[i] + 1.0f;
}

// @BE fill
void fill(BE::Tensor out, float value) {
    float* o = out.data_ptr<float>();
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = -value;
}
