// Basic CPU kernels: one input, several inputs, several (0-d) outputs,
// 2-d tensors, and a BE_CHECK failure.
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "brainevent/common.h"

// @BE scale
void scale(const BE::Tensor x, BE::Tensor y, float alpha) {
    const float* in = x.data_ptr<const float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = alpha * in[i];
}

// @BE add
void add(const BE::Tensor a, const BE::Tensor b, BE::Tensor out) {
    BE_CHECK(a.numel() == b.numel()) << "add: sizes differ";
    const float* x = a.data_ptr<const float>();
    const float* y = b.data_ptr<const float>();
    float* z = out.data_ptr<float>();
    for (int64_t i = 0; i < a.numel(); ++i) z[i] = x[i] + y[i];
}

// @BE minmax
void minmax(const BE::Tensor x, BE::Tensor lo, BE::Tensor hi) {
    BE_CHECK(x.numel() > 0) << "minmax of an empty array";
    const float* in = x.data_ptr<const float>();
    float mn = in[0], mx = in[0];
    for (int64_t i = 1; i < x.numel(); ++i) {
        mn = std::fmin(mn, in[i]);
        mx = std::fmax(mx, in[i]);
    }
    *lo.data_ptr<float>() = mn;
    *hi.data_ptr<float>() = mx;
}

// @BE transpose
void transpose(const BE::Tensor x, BE::Tensor y) {
    BE_CHECK(x.ndim() == 2) << "transpose needs a matrix, got rank " << x.ndim();
    const int64_t rows = x.shape(0), cols = x.shape(1);
    const float* in = x.data_ptr<const float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) out[j * rows + i] = in[i * cols + j];
}

// @BE checked_sqrt
void checked_sqrt(const BE::Tensor x, BE::Tensor y) {
    const float* in = x.data_ptr<const float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) {
        BE_CHECK(in[i] >= 0.0f) << "negative input " << in[i] << " at index " << i;
        out[i] = std::sqrt(in[i]);
    }
}

// A helper with internal linkage: annotated sources are compiled inside
// their wrapper TU, so static functions work.
static float twice(float v) { return 2.0f * v; }

// @BE double_it
static void double_it(const BE::Tensor x, BE::Tensor y) {
    const float* in = x.data_ptr<const float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = twice(in[i]);
}

// @BE failing_text
void failing_text(BE::Tensor out, int32_t mode) {
    (void)out;
    // A message that must still reach Python as text: cut inside a UTF-8
    // character at the 4 KiB limit (mode 0), or holding invalid UTF-8 (1).
    std::string text = mode == 0 ? std::string(4094, 'a') + "\xc3\xa9\xc3\xa9 end" : std::string("bad \xff\xfe bytes");
    throw std::runtime_error(text);
}
