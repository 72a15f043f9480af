// Every attribute as one dictionary (`BE::Attrs`): the Python function
// takes free keywords, the kernel reads them by key:
// tests/python/test_e2e_vocab.py.
#include <string_view>

#include "brainevent/common.h"

// y = x * scale + shift (shift 0 when not given); mode "abs" takes |y|.
// @BE Affine
void Affine(const BE::Tensor x, BE::Tensor y, BE::Attrs attrs) {
  const float scale = attrs.get<float>("scale");
  const double shift = attrs.get_or<double>("shift", 0.0);
  const std::string_view mode = attrs.get_or<std::string_view>("mode", "plain");
  const float* in = static_cast<const float*>(x.data_ptr());
  float* out = static_cast<float*>(y.data_ptr());
  for (int64_t i = 0; i < x.numel(); ++i) {
    float v = in[i] * scale + static_cast<float>(shift);
    out[i] = (mode == "abs" && v < 0) ? -v : v;
  }
}

// Typed pointers with a dictionary stated beside tokens (it takes none):
// y[i] = x[i] + repeat * the count of attributes; repeat is an int8.
// @BE CountAttrs arg:float32[n] ret:float32[n] dim.n
void CountAttrs(const float* x, float* y, BE::Attrs attrs, int64_t n) {
  const int8_t repeat = attrs.get<int8_t>("repeat");
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] + static_cast<float>(repeat) * static_cast<float>(attrs.size());
}
