#include <cstdint>

#include "brainevent/common.h"

// Module `ops` too (a directory entry). `len` is a name the Python
// module uses itself: the typed function is `ops.len_`.
// @BE neg
void neg(const BE::Tensor x, BE::Tensor y) {
    const float* in = x.data_ptr<const float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = -in[i];
}

// @BE len
void len(const BE::Tensor x, BE::Tensor y) {
    const float* in = x.data_ptr<const float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] * in[i];
}
