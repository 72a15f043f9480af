// BE_CHECK: a failed check becomes a Python exception, and the process
// (and later calls) carry on.
#include <cmath>
#include <cstdint>

#include "brainevent/common.h"

// @BE safe_log
void safe_log(const BE::Tensor x, BE::Tensor y) {
    const float* in = x.data_ptr<const float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) {
        BE_CHECK(in[i] > 0.0f) << "safe_log: x[" << i << "] = " << in[i] << " is not positive";
        out[i] = std::log(in[i]);
    }
}
