#include <cstdint>

#include "brainevent/common.h"

// @BE add
void add(const BE::Tensor a, const BE::Tensor b, BE::Tensor out) {
    const float* x = a.data_ptr<const float>();
    const float* y = b.data_ptr<const float>();
    float* z = out.data_ptr<float>();
    for (int64_t i = 0; i < a.numel(); ++i) z[i] = x[i] + y[i];
}
