// A kernel of tests/e2e/named exported from begen.yaml's `sources:`.
#include <cmath>
#include <cstdint>

// k[i, j] = scale * exp(-|x_i - y_j|_1)
void gp_laplace(const double* x, const double* y, double* k, double scale, int64_t n, int64_t m, int64_t d) {
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j) {
            double s = 0.0;
            for (int64_t t = 0; t < d; ++t) s += std::fabs(x[i * d + t] - y[j * d + t]);
            k[i * m + j] = scale * std::exp(-s);
        }
}
