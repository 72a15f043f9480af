// begen support headers: the call between a library's glue TU and its
// trampolines.
//
// Generated code only; kernels never include this. begen compiles each
// annotated source in a TU of its own (with the source's compiler: nvcc for
// `.cu`) that ends in one `extern "C"` trampoline per kernel. The XLA FFI
// handlers of the whole library live in one glue TU compiled by the host C++
// compiler; each handler checks its buffers, packs them into TensorArg values
// and calls the kernel's trampoline, which builds the BE::Tensor views and
// calls the kernel. So XLA's FFI headers are parsed once per library, not
// once per source. This header is all the two sides share: plain C++, no
// XLA, no kernel API.
#pragma once

#include <cstdint>

namespace begen {

/// One buffer, as the glue hands it to a trampoline: the data, the
/// extents (XLA's own array, valid for the call), the rank, and the XLA FFI
/// element type (one of the codes below; the glue has already rejected the
/// rest).
struct TensorArg {
    void* data;
    const int64_t* dims;
    int64_t ndim;
    int32_t dtype;
};

/// A variable number of buffers (a kernel's `BE::Tensors`), as the glue
/// hands them to a trampoline: `size` TensorArgs, valid for the call.
struct TensorList {
    const TensorArg* items;
    int64_t size;
};

/// An array attribute, as the glue hands it to a trampoline: its
/// elements (XLA's, host memory valid for the call) and their number.
struct ArrayArg {
    const void* data;
    int64_t size;
};

/// Every attribute of a call, as the glue hands it to a trampoline (a
/// kernel's `BE::Attrs`): XLA's dictionary, opaque here, and the glue's
/// function that reads one entry of it. `get` reads attribute `name`
/// (`size` bytes) as `kind` (an `xla_type` code, `dict_kind::kStr` or
/// `dict_kind::kAny`) into `out` (a value of the kind's C++ type; an
/// `ArrayArg` of the UTF-8 bytes for a string; nothing for `kAny`) and
/// returns a `dict_status`.
struct DictArg {
    const void* dict;
    int32_t (*get)(const void* dict, const char* name, int64_t size, int32_t kind, void* out);
    int64_t size;
};

namespace dict_kind {
constexpr int32_t kAny = 0;   // only whether the key is there
constexpr int32_t kStr = -1;  // a string
}  // namespace dict_kind

namespace dict_status {
constexpr int32_t kOk = 0;
constexpr int32_t kMissing = 1;
constexpr int32_t kWrongType = 2;
constexpr int32_t kOutOfRange = 3;
}  // namespace dict_status

/// The highest rank the glue passes on: the dimensions a BE::Tensor view
/// holds (BE::kMaxDim).
constexpr int64_t kMaxRank = 8;

/// XLA FFI element types (XLA_FFI_DataType, part of XLA's stable C API)
/// that have a BE::DType. The glue checks them against xla::ffi::DataType.
namespace xla_type {
constexpr int32_t kPred = 1;
constexpr int32_t kS8 = 2;
constexpr int32_t kS16 = 3;
constexpr int32_t kS32 = 4;
constexpr int32_t kS64 = 5;
constexpr int32_t kU8 = 6;
constexpr int32_t kU16 = 7;
constexpr int32_t kU32 = 8;
constexpr int32_t kU64 = 9;
constexpr int32_t kF16 = 10;
constexpr int32_t kF32 = 11;
constexpr int32_t kF64 = 12;
constexpr int32_t kC64 = 15;
constexpr int32_t kBF16 = 16;
constexpr int32_t kC128 = 18;
}  // namespace xla_type

}  // namespace begen

/// Trampolines and begen's helpers are internal to the library: hidden, so
/// they never bind to another begen library loaded into the same process
/// (nor export a thread-local buffer as a unique symbol).
#if defined(__GNUC__) || defined(__clang__)
#define BEGEN_HIDDEN __attribute__((visibility("hidden")))
#else
#define BEGEN_HIDDEN
#endif
#define BEGEN_TRAMPOLINE extern "C" BEGEN_HIDDEN
