// Kernels declared with XLA FFI's own types whose variadic outputs are
// stated like their variadic inputs (`ret:like(xs)` over
// `ffi::RemainingRets`): tests/python/test_e2e_native_like.py.
#include <cstdint>
#include "xla/ffi/api/ffi.h"
namespace ffi = xla::ffi;

// One output per input, each shaped and typed like it (`ret:like(xs)`:
// no `out=`): the k-th is 2 * xs[k], for float32 and float64 inputs.
// @BE Doubles arg ret:like(xs)
ffi::Error Doubles(ffi::RemainingArgs xs, ffi::RemainingRets ys) {
  if (xs.size() != ys.size()) return ffi::Error::InvalidArgument("Doubles: one output per input");
  for (size_t k = 0; k < xs.size(); ++k) {
    auto x = xs.get<ffi::AnyBuffer>(k);
    auto y = ys.get<ffi::AnyBuffer>(k);
    if (x.has_error()) return x.error();
    if (y.has_error()) return y.error();
    if (x->element_type() != (*y)->element_type() || x->element_count() != (*y)->element_count())
      return ffi::Error::InvalidArgument("Doubles: each output is its input's type and size");
    for (size_t i = 0; i < x->element_count(); ++i) {
      if (x->element_type() == ffi::F64)
        (*y)->typed_data<double>()[i] = 2 * x->typed_data<double>()[i];
      else
        (*y)->typed_data<float>()[i] = 2 * x->typed_data<float>()[i];
    }
  }
  return ffi::Error::Success();
}

// A fixed output (the inputs' count) before outputs like the inputs:
// `out=` gives the fixed one's struct alone.
// @BE CountAndNegate arg attr.bias ret ret:like(xs)
ffi::Error CountAndNegate(ffi::RemainingArgs xs, float bias, ffi::ResultBufferR0<ffi::S32> n, ffi::RemainingRets ys) {
  n->typed_data()[0] = static_cast<int32_t>(xs.size());
  for (size_t k = 0; k < xs.size(); ++k) {
    auto x = xs.get<ffi::Buffer<ffi::F32>>(k);
    auto y = ys.get<ffi::Buffer<ffi::F32>>(k);
    if (x.has_error()) return x.error();
    if (y.has_error()) return y.error();
    for (size_t i = 0; i < x->element_count(); ++i) (*y)->typed_data()[i] = bias - x->typed_data()[i];
  }
  return ffi::Error::Success();
}
