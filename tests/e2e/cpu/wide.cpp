// 64-bit dtypes (need jax_enable_x64 on the Python side).
#include <cstdint>

#include "brainevent/common.h"

// @BE add_i64
void add_i64(const BE::Tensor a, const BE::Tensor b, BE::Tensor out) {
    const int64_t* x = a.data_ptr<const int64_t>();
    const int64_t* y = b.data_ptr<const int64_t>();
    int64_t* z = out.data_ptr<int64_t>();
    for (int64_t i = 0; i < a.numel(); ++i) z[i] = x[i] + y[i];
}

// @BE scale_f64
void scale_f64(const BE::Tensor x, BE::Tensor y, double alpha, int64_t shift) {
    const double* in = x.data_ptr<const double>();
    double* out = y.data_ptr<double>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = alpha * in[i] + static_cast<double>(shift);
}
