// begen support headers: from XLA FFI element types to BE::DType.
//
// Not part of common.h: this header needs XLA's FFI headers (begen passes
// their directory to every compile), which kernels otherwise never parse.
// Sources that talk to XLA FFI themselves include it next to common.h:
//
//     #include "brainevent/common.h"
//     #include "brainevent/dtypes.h"
//
//     BE::DType t = BE::xla_to_jkb_dtype(buffer.element_type());
//     BE_CHECK(t != BE::DType::Invalid) << "unsupported element type";
//
// The generated code does not use it: the glue maps element types on its
// own (begen/ffi_support.h, begen/trampoline.h).
#pragma once

#include "brainevent/tensor.h"
#include "xla/ffi/api/ffi.h"

namespace BE {

/// The BE::DType of an XLA FFI element type. Types the kernel API has no
/// DType for (the f8 and f4 variants, sub-byte integers, TOKEN, INVALID)
/// give DType::Invalid, whose dtype_size() is 0: check for it before
/// building a Tensor. (The name is brainevent's.)
inline constexpr DType xla_to_jkb_dtype(xla::ffi::DataType t) noexcept {
    using X = xla::ffi::DataType;
    switch (t) {
    case X::PRED: return DType::Bool;
    case X::S8: return DType::Int8;
    case X::S16: return DType::Int16;
    case X::S32: return DType::Int32;
    case X::S64: return DType::Int64;
    case X::U8: return DType::UInt8;
    case X::U16: return DType::UInt16;
    case X::U32: return DType::UInt32;
    case X::U64: return DType::UInt64;
    case X::F16: return DType::Float16;
    case X::BF16: return DType::BFloat16;
    case X::F32: return DType::Float32;
    case X::F64: return DType::Float64;
    case X::C64: return DType::Complex64;
    case X::C128: return DType::Complex128;
    default: return DType::Invalid;
    }
}

}  // namespace BE
