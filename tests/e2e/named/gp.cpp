// CPU kernels of tests/e2e/named: Gaussian-process covariance kernels
// sharing one named contract.
#include <cmath>
#include <cstdint>

#include "brainevent/common.h"

static double sqdist(const double* a, const double* b, int64_t d) {
    double s = 0.0;
    for (int64_t t = 0; t < d; ++t) s += (a[t] - b[t]) * (a[t] - b[t]);
    return s;
}

// k[i, j] = scale * exp(-|x_i - y_j|^2 / 2)
// @BE gp_rbf contract=gp_pair
void gp_rbf(const double* x, const double* y, double* k, double scale, int64_t n, int64_t m, int64_t d) {
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j) k[i * m + j] = scale * std::exp(-0.5 * sqdist(x + i * d, y + j * d, d));
}

// k[i, j] = scale * <x_i, y_j>
// @BE gp_linear contract=gp_pair
void gp_linear(const double* x, const double* y, double* k, double scale, int64_t n, int64_t m, int64_t d) {
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j) {
            double s = 0.0;
            for (int64_t t = 0; t < d; ++t) s += x[i * d + t] * y[j * d + t];
            k[i * m + j] = scale * s;
        }
}

// y = x + shift: the contract's tokens, then one more.
// @BE shifted contract=unary attr.shift:float32=0.5
void shifted(const float* x, float* y, int64_t n, float shift) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] + shift;
}

// y = a * x, the attribute first: out of the conventional order, its
// warning turned off in begen.yaml.
// @BE scaled_first attr.a:float32 arg:float32[n] ret:float32[n] dim.n
void scaled_first(float a, const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = a * x[i];
}
