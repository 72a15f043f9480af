// Kernels declared with XLA FFI's own types that take a variable number
// of inputs or outputs (`ffi::RemainingArgs`, `ffi::RemainingRets`), and
// inputs updated in place (`inout` over the buffer and its result):
// tests/python/test_e2e_native_rest.py.
#include <cstdint>
#include "xla/ffi/api/ffi.h"
namespace ffi = xla::ffi;

// The sum of any number of float32 arrays of y's size.
// @BE SumAll
ffi::Error SumAll(ffi::RemainingArgs xs, ffi::Result<ffi::AnyBuffer> y) {
  float* out = y->typed_data<float>();
  for (size_t i = 0; i < y->element_count(); ++i) out[i] = 0;
  for (size_t k = 0; k < xs.size(); ++k) {
    ffi::ErrorOr<ffi::AnyBuffer> x = xs.get<ffi::AnyBuffer>(k);
    if (x.has_error()) return x.error();
    if (x->element_type() != ffi::F32 || x->element_count() != y->element_count())
      return ffi::Error::InvalidArgument("SumAll: every input is float32 of the output's size");
    for (size_t i = 0; i < y->element_count(); ++i) out[i] += x->typed_data<float>()[i];
  }
  return ffi::Error::Success();
}

// A fixed input and an attribute before the remaining inputs:
// scale * (first + every one of rest).
// @BE ScaledSum
ffi::Error ScaledSum(float scale, ffi::Buffer<ffi::F32> first, ffi::RemainingArgs rest,
                     ffi::ResultBuffer<ffi::F32> y) {
  for (size_t i = 0; i < first.element_count(); ++i) y->typed_data()[i] = first.typed_data()[i];
  for (size_t k = 0; k < rest.size(); ++k) {
    auto x = rest.get<ffi::Buffer<ffi::F32>>(k);
    if (x.has_error()) return x.error();
    for (size_t i = 0; i < first.element_count(); ++i) y->typed_data()[i] += x->typed_data()[i];
  }
  for (size_t i = 0; i < first.element_count(); ++i) y->typed_data()[i] *= scale;
  return ffi::Error::Success();
}

// Any number of outputs: the k-th is x + k.
// @BE Ramp
ffi::Error Ramp(ffi::Buffer<ffi::F32> x, ffi::RemainingRets ys) {
  for (size_t k = 0; k < ys.size(); ++k) {
    ffi::ErrorOr<ffi::Result<ffi::AnyBuffer>> y = ys.get<ffi::AnyBuffer>(k);
    if (y.has_error()) return y.error();
    if ((*y)->element_count() != x.element_count()) return ffi::Error::InvalidArgument("Ramp: outputs are x's size");
    float* out = (*y)->typed_data<float>();
    for (size_t i = 0; i < x.element_count(); ++i) out[i] = x.typed_data()[i] + static_cast<float>(k);
  }
  return ffi::Error::Success();
}

// A fixed output before the remaining ones: their count, then x * (k + 1).
// @BE Copies
ffi::Error Copies(ffi::Buffer<ffi::F32> x, ffi::ResultBufferR0<ffi::S32> n, ffi::RemainingRets ys) {
  n->typed_data()[0] = static_cast<int32_t>(ys.size());
  for (size_t k = 0; k < ys.size(); ++k) {
    auto y = ys.get<ffi::Buffer<ffi::F32>>(k);
    if (y.has_error()) return y.error();
    for (size_t i = 0; i < x.element_count(); ++i) (*y)->typed_data()[i] = x.typed_data()[i] * (k + 1);
  }
  return ffi::Error::Success();
}

// The output is the input's own buffer (`inout` over both): the kernel
// writes nothing and only checks that XLA handed it one buffer of one type
// and size, the way jax's aliasing example does (same name and signature).
// @BE AliasingImpl inout inout
ffi::Error AliasingImpl(ffi::AnyBuffer input, ffi::Result<ffi::AnyBuffer> output) {
  if (input.untyped_data() != output->untyped_data())
    return ffi::Error::InvalidArgument("AliasingImpl: output is not input's buffer");
  if (input.element_type() != output->element_type() || input.element_count() != output->element_count())
    return ffi::Error::InvalidArgument("AliasingImpl: output differs from input in type or size");
  return ffi::Error::Success();
}

// An accumulator updated in place, between another input and another
// output: acc += x; count is the number of elements.
// @BE Accumulate inout arg ret inout
ffi::Error Accumulate(ffi::Buffer<ffi::F32> acc, ffi::Buffer<ffi::F32> x, ffi::ResultBufferR0<ffi::S32> count,
                      ffi::ResultBuffer<ffi::F32> acc_out) {
  for (size_t i = 0; i < acc.element_count(); ++i) acc_out->typed_data()[i] = acc.typed_data()[i] + x.typed_data()[i];
  count->typed_data()[0] = static_cast<int32_t>(acc.element_count());
  return ffi::Error::Success();
}

// Both at once: an accumulator updated in place by any number of arrays.
// @BE AddAll inout arg inout
ffi::Error AddAll(ffi::Buffer<ffi::F32> acc, ffi::RemainingArgs xs, ffi::ResultBuffer<ffi::F32> acc_out) {
  for (size_t k = 0; k < xs.size(); ++k) {
    auto x = xs.get<ffi::Buffer<ffi::F32>>(k);
    if (x.has_error()) return x.error();
    for (size_t i = 0; i < acc.element_count(); ++i) acc_out->typed_data()[i] += x->typed_data()[i];
  }
  return ffi::Error::Success();
}
