// begen support headers: helpers for the XLA FFI wrappers begen generates.
//
// Generated code only; kernels never include this. It relies on nothing but
// the public kernel API (BE::Tensor, BE::DType), so the wrappers also compile
// when brainevent's own include directory comes first.
//
// The success path of a handler is branch-and-store only: the helpers that
// build an error message (and may allocate) run only when a call fails.
#pragma once

#include <cstddef>
#include <string>

#include "brainevent/common.h"
#include "xla/ffi/api/ffi.h"

namespace begen {
namespace rt {

/// The BE::DType of an XLA element type; false for types the kernel API has
/// no name for (f8/f4 variants, sub-byte integers, tokens).
inline bool dtype_from_xla(xla::ffi::DataType t, BE::DType& out) noexcept {
    using D = xla::ffi::DataType;
    switch (t) {
    case D::PRED: out = BE::DType::Bool; return true;
    case D::S8: out = BE::DType::Int8; return true;
    case D::S16: out = BE::DType::Int16; return true;
    case D::S32: out = BE::DType::Int32; return true;
    case D::S64: out = BE::DType::Int64; return true;
    case D::U8: out = BE::DType::UInt8; return true;
    case D::U16: out = BE::DType::UInt16; return true;
    case D::U32: out = BE::DType::UInt32; return true;
    case D::U64: out = BE::DType::UInt64; return true;
    case D::F16: out = BE::DType::Float16; return true;
    case D::BF16: out = BE::DType::BFloat16; return true;
    case D::F32: out = BE::DType::Float32; return true;
    case D::F64: out = BE::DType::Float64; return true;
    case D::C64: out = BE::DType::Complex64; return true;
    case D::C128: out = BE::DType::Complex128; return true;
    default: return false;
    }
}

/// `<function>: parameter '<param>': unsupported element type (XLA DataType N)`.
inline xla::ffi::Error unsupported_dtype(const char* function, const char* param,
                                         xla::ffi::DataType t) {
    return xla::ffi::Error(xla::ffi::ErrorCode::kInvalidArgument,
                           std::string(function) + ": parameter '" + param +
                               "': element type (XLA DataType " +
                               std::to_string(static_cast<int>(t)) +
                               ") has no BE::DType; use one of bool, int8-64, uint8-64, "
                               "float16, bfloat16, float32, float64, complex64, complex128");
}

/// A buffer of higher rank than a BE::Tensor view holds.
inline xla::ffi::Error rank_too_high(const char* function, const char* param, size_t rank) {
    return xla::ffi::Error(xla::ffi::ErrorCode::kInvalidArgument,
                           std::string(function) + ": parameter '" + param + "': rank " +
                               std::to_string(rank) + " exceeds BE::kMaxDim (" +
                               std::to_string(BE::kMaxDim) + ")");
}

/// A complex attribute must arrive as [real, imag].
inline xla::ffi::Error bad_complex_attr(const char* function, const char* param, size_t n) {
    return xla::ffi::Error(xla::ffi::ErrorCode::kInvalidArgument,
                           std::string(function) + ": attribute '" + param +
                               "': expected a complex number as 2 values [real, imag], got " +
                               std::to_string(n));
}

/// A C++ exception escaped the kernel: its message, prefixed with the
/// kernel's name. `what` is null for an exception not derived from
/// std::exception.
inline xla::ffi::Error kernel_failed(const char* function, const char* what) {
    return xla::ffi::Error(xla::ffi::ErrorCode::kInternal,
                           std::string(function) + ": " +
                               (what != nullptr ? what : "unknown C++ exception"));
}

/// The stream handle in the form kernels take it (`int64_t stream`).
template <typename Stream>
inline int64_t stream_handle(Stream s) noexcept {
    return static_cast<int64_t>(reinterpret_cast<intptr_t>(s));
}

}  // namespace rt
}  // namespace begen
