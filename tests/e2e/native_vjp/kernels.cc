// A differentiable kernel declared with XLA FFI's own types: untyped
// buffers (`ffi::AnyBuffer`) dispatched on their element type, a float
// attribute, a residual kept for the backward kernel, both batched by
// `vmap_method: broadcast_all` (tests/python/test_e2e_native_vjp.py).
//
// Over the last axis of x (any leading axes, `rows` rows of `d`):
//   scale[r] = 1 / (eps + sum_j x[r, j]^2),   y[r, j] = x[r, j] * scale[r]
// and its vector-Jacobian product:
//   ct_x[r, j] = scale[r] * ct_y[r, j] - 2 * scale[r]^2 * x[r, j] * sum_k ct_y[r, k] * x[r, k]
#include <cstddef>
#include <cstdint>
#include "xla/ffi/api/ffi.h"
namespace ffi = xla::ffi;

namespace {

// The row length (the last extent) and the number of rows of a buffer.
bool rows_of(const ffi::AnyBuffer& x, size_t& rows, size_t& d) {
  auto dims = x.dimensions();
  if (dims.size() == 0 || dims.back() == 0) return false;
  d = static_cast<size_t>(dims.back());
  rows = x.element_count() / d;
  return true;
}

template <typename T>
void forward(const T* x, T* y, T* scale, T eps, size_t rows, size_t d) {
  for (size_t r = 0; r < rows; ++r) {
    T sum = 0;
    for (size_t j = 0; j < d; ++j) sum += x[r * d + j] * x[r * d + j];
    scale[r] = T(1) / (eps + sum);
    for (size_t j = 0; j < d; ++j) y[r * d + j] = x[r * d + j] * scale[r];
  }
}

template <typename T>
void backward(const T* scale, const T* x, const T* ct_y, T* ct_x, size_t rows, size_t d) {
  for (size_t r = 0; r < rows; ++r) {
    T dot = 0;
    for (size_t j = 0; j < d; ++j) dot += ct_y[r * d + j] * x[r * d + j];
    const T s = scale[r];
    for (size_t j = 0; j < d; ++j) ct_x[r * d + j] = s * ct_y[r * d + j] - T(2) * s * s * x[r * d + j] * dot;
  }
}

}  // namespace

// @BE RowScale
ffi::Error RowScale(float eps, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y, ffi::Result<ffi::AnyBuffer> scale) {
  size_t rows = 0, d = 0;
  if (!rows_of(x, rows, d)) return ffi::Error::InvalidArgument("RowScale: x needs a non-empty last axis");
  if (y->element_type() != x.element_type() || scale->element_type() != x.element_type() ||
      y->element_count() != x.element_count() || scale->element_count() != rows)
    return ffi::Error::InvalidArgument("RowScale: y is x's type and size, scale one x-typed value per row");
  switch (x.element_type()) {
    case ffi::F32:
      forward(x.typed_data<float>(), y->typed_data<float>(), scale->typed_data<float>(), eps, rows, d);
      return ffi::Error::Success();
    case ffi::F64:
      forward(x.typed_data<double>(), y->typed_data<double>(), scale->typed_data<double>(), double(eps), rows, d);
      return ffi::Error::Success();
    default:
      return ffi::Error::InvalidArgument("RowScale: x is float32 or float64");
  }
}

// @BE RowScaleBwd
ffi::Error RowScaleBwd(ffi::AnyBuffer scale, ffi::AnyBuffer x, ffi::AnyBuffer ct_y, ffi::Result<ffi::AnyBuffer> ct_x) {
  size_t rows = 0, d = 0;
  if (!rows_of(x, rows, d) || scale.element_count() != rows || ct_y.element_count() != x.element_count() ||
      ct_x->element_count() != x.element_count())
    return ffi::Error::InvalidArgument("RowScaleBwd: scale has one value per row of x; ct_y and ct_x are x's size");
  switch (x.element_type()) {
    case ffi::F32:
      backward(scale.typed_data<float>(), x.typed_data<float>(), ct_y.typed_data<float>(), ct_x->typed_data<float>(),
               rows, d);
      return ffi::Error::Success();
    case ffi::F64:
      backward(scale.typed_data<double>(), x.typed_data<double>(), ct_y.typed_data<double>(),
               ct_x->typed_data<double>(), rows, d);
      return ffi::Error::Success();
    default:
      return ffi::Error::InvalidArgument("RowScaleBwd: x is float32 or float64");
  }
}
