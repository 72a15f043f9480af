// A CPU kernel in a library that also has CUDA kernels.
#include <cstdint>

#include "brainevent/common.h"

// @BE host_negate
void host_negate(const BE::Tensor x, BE::Tensor y) {
    const float* in = x.data_ptr<const float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = -in[i];
}
