// begen support headers: BE::DType and BE::Tensor.
//
// A Tensor is a non-owning view of one XLA buffer: a data pointer, the
// buffer's dimensions (copied inline, up to BE::kMaxDim), the row-major
// strides derived from them, the rank and the element type. Building one
// copies no data and allocates nothing, so the generated wrapper hands XLA's
// buffers to a kernel at the cost of a few stores. Layouts are row-major
// (XLA's default for custom calls).
//
// The view holds its own shape, so it can be kept or passed by value into a
// CUDA kernel; the data it points at is XLA's and lives as long as the call
// that received it.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include <stdexcept>
#include <string>

#include "brainevent/config.h"

namespace BE {

/// The highest rank a Tensor holds. The view stores its dimensions inline, so
/// it can be copied into a kernel's parameters whole.
static constexpr int kMaxDim = 8;

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
/// The view copies the dimensions (at most kMaxDim of them) and keeps the
/// row-major strides beside them, so a Tensor passed by value into a
/// `__global__` function carries its whole shape: `ndim()`, `shape(i)`,
/// `stride(i)` and `numel()` read the same on the device as on the host.
/// Only the data is not copied.
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

    /// A view of `data` with the `ndim` extents read from `shape` (copied:
    /// `shape` need not outlive the view). A rank outside [0, kMaxDim] throws
    /// std::out_of_range on the host and traps in device code.
    BE_HOST_DEVICE Tensor(void* data, const int64_t* shape, int ndim, DType dtype)
        : data_(data), ndim_(ndim), dtype_(dtype) {
        if (ndim < 0 || ndim > kMaxDim) {
#if !BE_DEVICE_PASS
            throw_bad_rank(ndim);
#else
            printf("BE::Tensor: rank %d is outside [0, %d]\n", ndim, kMaxDim);
            __trap();
#endif
        }
        // Unused slots are zero, so a copy of the view is fully initialised.
        int64_t stride = 1;
        for (int d = kMaxDim - 1; d >= 0; --d) {
            if (d < ndim) {
                shape_[d] = shape[d];
                strides_[d] = stride;
                stride *= shape[d];
            } else {
                shape_[d] = 0;
                strides_[d] = 0;
            }
        }
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

    /// Number of dimensions (0 for a scalar), at most kMaxDim.
    BE_HOST_DEVICE int ndim() const noexcept { return ndim_; }

    /// Extent of dimension `i` (0 <= i < ndim()).
    BE_HOST_DEVICE int64_t shape(int i) const noexcept { return shape_[i]; }

    /// Same as shape(i).
    BE_HOST_DEVICE int64_t size(int i) const noexcept { return shape_[i]; }

    /// The dimensions: ndim() extents, then zeros up to kMaxDim.
    BE_HOST_DEVICE const int64_t* shape_ptr() const noexcept { return shape_; }

    /// Distance, in elements, between neighbours along dimension `i`
    /// (0 <= i < ndim()).
    BE_HOST_DEVICE int64_t stride(int i) const noexcept { return strides_[i]; }

    /// The strides: ndim() of them, then zeros up to kMaxDim.
    BE_HOST_DEVICE const int64_t* strides_ptr() const noexcept { return strides_; }

    /// Number of elements: the product of the extents (1 for a scalar).
    BE_HOST_DEVICE int64_t numel() const noexcept {
        int64_t n = 1;
        for (int d = 0; d < ndim_; ++d) n *= shape_[d];
        return n;
    }

    /// numel() as an `int`, for launch arithmetic done in `int`; an element
    /// count above INT_MAX throws std::overflow_error instead of wrapping.
    /// Host only (declared in nvcc's device pass too, where host code is
    /// still parsed).
    int numel_checked_int() const {
        const int64_t n = numel();
        if (n > static_cast<int64_t>(INT_MAX)) throw_too_many_elements(n);
        return static_cast<int>(n);
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
    // Host only, called once a check has failed: the success path builds no
    // message and allocates nothing.
    [[noreturn]] static void throw_bad_rank(int ndim) {
        throw std::out_of_range("BE::Tensor: rank " + std::to_string(ndim) +
                                " is outside [0, " + std::to_string(kMaxDim) +
                                "] (BE::kMaxDim)");
    }
    [[noreturn]] static void throw_too_many_elements(int64_t n) {
        throw std::overflow_error("BE::Tensor::numel_checked_int: " + std::to_string(n) +
                                  " elements do not fit in an int");
    }

    void* data_ = nullptr;
    int64_t shape_[kMaxDim] = {};
    int64_t strides_[kMaxDim] = {};
    int ndim_ = 0;
    DType dtype_ = DType::Invalid;
};

}  // namespace BE
