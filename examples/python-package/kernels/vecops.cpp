// CPU kernels of the example package: begen builds them into
// vecops/lib_kernels.so and the module vecops/_kernels.py (see pyproject.toml).
#include <cmath>
#include <cstdint>

#include "brainevent/common.h"

// out = alpha * x + y
// @BE axpy
void axpy(const BE::Tensor x, const BE::Tensor y, BE::Tensor out, float alpha) {
    BE_CHECK(x.numel() == y.numel()) << "axpy: x has " << x.numel() << " elements, y " << y.numel();
    const float* a = x.data_ptr<const float>();
    const float* b = y.data_ptr<const float>();
    float* o = out.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = alpha * a[i] + b[i];
}

// Running sum along the whole array (row-major order).
// @BE cumsum
void cumsum(const BE::Tensor x, BE::Tensor out) {
    const float* a = x.data_ptr<const float>();
    float* o = out.data_ptr<float>();
    float total = 0.0f;
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = (total += a[i]);
}

// The Euclidean norm, a 0-d result.
// @BE norm
void norm(const BE::Tensor x, BE::Tensor out) {
    const float* a = x.data_ptr<const float>();
    double sum = 0.0;
    for (int64_t i = 0; i < x.numel(); ++i) sum += double(a[i]) * a[i];
    *out.data_ptr<float>() = float(std::sqrt(sum));
}
