// begen support headers: BE::Span, a view of an array attribute.
//
// A kernel takes a 1-D array attribute (`attr.w:float32[]`) as
//
//     void scale_rows(const BE::Tensor x, BE::Tensor y, BE::Span<const float> w);
//
// and reads `w.size()` elements `w[0]`, ... The elements are XLA's, in host
// memory, valid for the duration of the call: copy them (to the device, or
// into a kernel's parameters by value) before the call returns. A kernel may
// take `xla::ffi::Span<const T>` (with XLA's own header included) or a
// `std::vector<T>` (a copy) instead.
#pragma once

#include <cstddef>

#include "brainevent/config.h"

namespace BE {

/// A non-owning view of `size()` contiguous elements of type `T`.
template <typename T>
class Span {
public:
    BE_HOST_DEVICE constexpr Span() noexcept : data_(nullptr), size_(0) {}
    BE_HOST_DEVICE constexpr Span(T* data, size_t size) noexcept : data_(data), size_(size) {}

    BE_HOST_DEVICE constexpr T* data() const noexcept { return data_; }
    BE_HOST_DEVICE constexpr size_t size() const noexcept { return size_; }
    BE_HOST_DEVICE constexpr bool empty() const noexcept { return size_ == 0; }
    BE_HOST_DEVICE constexpr T& operator[](size_t i) const noexcept { return data_[i]; }
    BE_HOST_DEVICE constexpr T* begin() const noexcept { return data_; }
    BE_HOST_DEVICE constexpr T* end() const noexcept { return data_ + size_; }

private:
    T* data_;
    size_t size_;
};

}  // namespace BE
