// String attributes of kernels in begen's own vocabulary: a
// `std::string_view` parameter is a Python `str` keyword, passed to XLA as a
// string attribute: tests/python/test_e2e_vocab.py.
#include <string_view>

#include <string>

#include "brainevent/common.h"

// y = x * 2 ("double"), x * x ("square") or -x ("negate"); any other mode is
// INVALID_ARGUMENT.
// @BE Apply
BE::Status Apply(const BE::Tensor x, BE::Tensor y, std::string_view mode) {
  const float* in = static_cast<const float*>(x.data_ptr());
  float* out = static_cast<float*>(y.data_ptr());
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (mode == "double") out[i] = in[i] * 2;
    else if (mode == "square") out[i] = in[i] * in[i];
    else if (mode == "negate") out[i] = -in[i];
    else return BE::Status::InvalidArgument("unknown mode '" + std::string(mode) + "'");
  }
  return BE::Status::Ok();
}

// Typed pointers with a string between scalars, stated by tokens: the
// string's UTF-8 byte count times scale, added to x.
// @BE AddLength arg:float32[n] ret:float32[n] attr.word:str attr.scale dim.n
void AddLength(const float* x, float* y, std::string_view word, float scale, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] + scale * static_cast<float>(word.size());
}
