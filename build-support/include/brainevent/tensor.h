// begen support headers: BE::DType and BE::Tensor.
//
// A Tensor is a non-owning view of one XLA buffer: a data pointer, a pointer
// to the buffer's dimensions, the rank and the element type. Building one
// copies nothing, so the generated wrapper can hand XLA's buffers to a kernel
// at the cost of a few stores. Layouts are row-major (XLA's default for
// custom calls), so strides are derived from the dimensions.
//
// The view is valid for the duration of the call that received it: it points
// at the dimensions XLA passed in, so do not keep it past the call.
#pragma once

#include <cstddef>
#include <cstdint>

#include <stdexcept>

#include "brainevent/config.h"

namespace BE {

/// Element type of a tensor. The enumerators name the JAX/NumPy dtypes; their
/// numeric values are begen's own and carry no meaning outside this header.
enum class DType : uint8_t {
    Float16,
    Float32,
    Float64,
    BFloat16,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Bool,
    Complex64,
    Complex128,
    /// No element type: a default-constructed Tensor.
    Invalid = 0xff,
};

/// Bytes per element; 0 for DType::Invalid.
BE_HOST_DEVICE inline constexpr size_t dtype_size(DType t) noexcept {
    switch (t) {
    case DType::Bool:
    case DType::Int8:
    case DType::UInt8:
        return 1;
    case DType::Float16:
    case DType::BFloat16:
    case DType::Int16:
    case DType::UInt16:
        return 2;
    case DType::Float32:
    case DType::Int32:
    case DType::UInt32:
        return 4;
    case DType::Float64:
    case DType::Int64:
    case DType::UInt64:
    case DType::Complex64:
        return 8;
    case DType::Complex128:
        return 16;
    case DType::Invalid:
        break;
    }
    return 0;
}

/// The NumPy spelling of a dtype ("float32", "bfloat16", ...), for messages.
BE_HOST_DEVICE inline constexpr const char* dtype_name(DType t) noexcept {
    switch (t) {
    case DType::Float16: return "float16";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::BFloat16: return "bfloat16";
    case DType::Int8: return "int8";
    case DType::Int16: return "int16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::UInt8: return "uint8";
    case DType::UInt16: return "uint16";
    case DType::UInt32: return "uint32";
    case DType::UInt64: return "uint64";
    case DType::Bool: return "bool";
    case DType::Complex64: return "complex64";
    case DType::Complex128: return "complex128";
    case DType::Invalid: break;
    }
    return "invalid";
}

/// Non-owning view of a row-major buffer.
///
///     void scale(const BE::Tensor x, BE::Tensor y, float a) {
///         const float* in = x.data_ptr<const float>();
///         float* out = y.data_ptr<float>();
///         for (int64_t i = 0; i < x.numel(); ++i) out[i] = a * in[i];
///     }
class Tensor {
public:
    /// An empty view: no data, rank 0, DType::Invalid.
    constexpr Tensor() noexcept = default;

    /// A view of `data` with `ndim` dimensions read from `shape` (which must
    /// outlive the view). A negative rank throws std::invalid_argument.
    BE_HOST_DEVICE Tensor(void* data, const int64_t* shape, int ndim, DType dtype)
        : data_(data), shape_(shape), ndim_(ndim), dtype_(dtype) {
#if !BE_DEVICE_PASS
        if (ndim < 0) {
            throw std::invalid_argument("BE::Tensor: negative number of dimensions");
        }
#endif
    }

    /// The data pointer, untyped.
    BE_HOST_DEVICE void* data_ptr() const noexcept { return data_; }

    /// The data pointer as `T*`; the caller picks T to match dtype().
    template <typename T>
    BE_HOST_DEVICE T* data_ptr() const noexcept {
        return static_cast<T*>(data_);
    }

    /// Same as data_ptr().
    BE_HOST_DEVICE void* data() const noexcept { return data_; }

    /// Number of dimensions (0 for a scalar).
    BE_HOST_DEVICE int ndim() const noexcept { return ndim_; }

    /// Extent of dimension `i` (0 <= i < ndim()).
    BE_HOST_DEVICE int64_t shape(int i) const noexcept { return shape_[i]; }

    /// Same as shape(i).
    BE_HOST_DEVICE int64_t size(int i) const noexcept { return shape_[i]; }

    /// The dimensions as an array of ndim() extents.
    BE_HOST_DEVICE const int64_t* shape_ptr() const noexcept { return shape_; }

    /// Distance, in elements, between neighbours along dimension `i`.
    BE_HOST_DEVICE int64_t stride(int i) const noexcept {
        int64_t s = 1;
        for (int d = ndim_ - 1; d > i; --d) s *= shape_[d];
        return s;
    }

    /// Number of elements: the product of the extents (1 for a scalar).
    BE_HOST_DEVICE int64_t numel() const noexcept {
        int64_t n = 1;
        for (int d = 0; d < ndim_; ++d) n *= shape_[d];
        return n;
    }

    /// Element type.
    BE_HOST_DEVICE DType dtype() const noexcept { return dtype_; }

    /// Bytes per element.
    BE_HOST_DEVICE size_t element_size() const noexcept { return dtype_size(dtype_); }

    /// Bytes in the whole buffer.
    BE_HOST_DEVICE size_t nbytes() const noexcept {
        return static_cast<size_t>(numel()) * element_size();
    }

    /// Always true: views are row-major by construction.
    BE_HOST_DEVICE bool is_contiguous() const noexcept { return true; }

private:
    void* data_ = nullptr;
    const int64_t* shape_ = nullptr;
    int ndim_ = 0;
    DType dtype_ = DType::Invalid;
};

}  // namespace BE
