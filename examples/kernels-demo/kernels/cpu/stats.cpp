// Several outputs: the mean and variance of a vector, as 0-d tensors.
#include <cstdint>

#include "brainevent/common.h"

// @BE mean_var
void mean_var(const BE::Tensor x, BE::Tensor mean, BE::Tensor var) {
    const int64_t n = x.numel();
    BE_CHECK(n > 0) << "mean_var of an empty array";
    const float* in = x.data_ptr<const float>();
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i) {
        sum += in[i];
        sq += static_cast<double>(in[i]) * in[i];
    }
    const double m = sum / n;
    *mean.data_ptr<float>() = static_cast<float>(m);
    *var.data_ptr<float>() = static_cast<float>(sq / n - m * m);
}
