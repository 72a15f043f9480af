// The simplest kernels: one input and a float attribute, two inputs.
#include <cstdint>

#include "brainevent/common.h"

// @BE scale
void scale(const BE::Tensor x, BE::Tensor y, float factor) {
    const float* in = x.data_ptr<const float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = factor * in[i];
}

// @BE add
void add(const BE::Tensor a, const BE::Tensor b, BE::Tensor out) {
    BE_CHECK(a.numel() == b.numel()) << "add: " << a.numel() << " vs " << b.numel() << " elements";
    const float* x = a.data_ptr<const float>();
    const float* y = b.data_ptr<const float>();
    float* z = out.data_ptr<float>();
    for (int64_t i = 0; i < a.numel(); ++i) z[i] = x[i] + y[i];
}
