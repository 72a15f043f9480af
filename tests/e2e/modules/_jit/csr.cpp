#include <cstdint>

#include "brainevent/common.h"

// A variant (begen.yaml) compiles this file again with BIAS defined.
#ifndef BIAS
#define BIAS 0
#endif

// @BE scale
void scale(const BE::Tensor x, BE::Tensor y, float alpha) {
    const float* in = x.data_ptr<const float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = alpha * in[i] + BIAS;
}

// @BE fill
void fill(BE::Tensor out, float value) {
    float* o = out.data_ptr<float>();
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = value;
}
