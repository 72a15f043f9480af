// One impl function with XLA FFI's own types, bound twice in one library:
// by begen (`// @BE`) and by a hand-written XLA_FFI_DEFINE_HANDLER_SYMBOL
// (bench/ffi_native/native_overhead.py times the two side by side).
#include <cstdint>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

// @BE AddOne
ffi::Error AddOne(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  const float* in = x.typed_data();
  float* out = y->typed_data();
  for (size_t i = 0; i < x.element_count(); ++i) out[i] = in[i] + 1.0f;
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(hand_add_one, AddOne,
                              ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());
