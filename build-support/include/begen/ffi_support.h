// begen support headers: helpers for the glue TU, where begen defines the
// XLA FFI handlers of a library (see abi.h).
//
// Generated code only; kernels never include this. It needs XLA's FFI
// headers and abi.h, nothing from the kernel API and no CUDA header, so the
// glue compiles with the host C++ compiler whatever the kernels include.
//
// The success path of a handler is branch-and-store only: the helpers that
// build an error message (and may allocate) run only when a call fails.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "begen/abi.h"
#include "xla/ffi/api/ffi.h"

namespace begen {
namespace rt {

// The codes of abi.h are XLA's.
static_assert(static_cast<int32_t>(xla::ffi::DataType::PRED) == xla_type::kPred, "PRED");
static_assert(static_cast<int32_t>(xla::ffi::DataType::S8) == xla_type::kS8, "S8");
static_assert(static_cast<int32_t>(xla::ffi::DataType::S16) == xla_type::kS16, "S16");
static_assert(static_cast<int32_t>(xla::ffi::DataType::S32) == xla_type::kS32, "S32");
static_assert(static_cast<int32_t>(xla::ffi::DataType::S64) == xla_type::kS64, "S64");
static_assert(static_cast<int32_t>(xla::ffi::DataType::U8) == xla_type::kU8, "U8");
static_assert(static_cast<int32_t>(xla::ffi::DataType::U16) == xla_type::kU16, "U16");
static_assert(static_cast<int32_t>(xla::ffi::DataType::U32) == xla_type::kU32, "U32");
static_assert(static_cast<int32_t>(xla::ffi::DataType::U64) == xla_type::kU64, "U64");
static_assert(static_cast<int32_t>(xla::ffi::DataType::F16) == xla_type::kF16, "F16");
static_assert(static_cast<int32_t>(xla::ffi::DataType::F32) == xla_type::kF32, "F32");
static_assert(static_cast<int32_t>(xla::ffi::DataType::F64) == xla_type::kF64, "F64");
static_assert(static_cast<int32_t>(xla::ffi::DataType::C64) == xla_type::kC64, "C64");
static_assert(static_cast<int32_t>(xla::ffi::DataType::BF16) == xla_type::kBF16, "BF16");
static_assert(static_cast<int32_t>(xla::ffi::DataType::C128) == xla_type::kC128, "C128");

/// Whether the kernel API has a BE::DType for an XLA element type (not for
/// f8/f4 variants, sub-byte integers, tokens).
BEGEN_HIDDEN inline bool dtype_supported(xla::ffi::DataType t) noexcept {
    using D = xla::ffi::DataType;
    switch (t) {
    case D::PRED:
    case D::S8:
    case D::S16:
    case D::S32:
    case D::S64:
    case D::U8:
    case D::U16:
    case D::U32:
    case D::U64:
    case D::F16:
    case D::BF16:
    case D::F32:
    case D::F64:
    case D::C64:
    case D::C128:
        return true;
    default:
        return false;
    }
}

/// What a trampoline receives for one buffer (checked before): an
/// `AnyBuffer`, or a typed `Buffer<T, R>` of a shape contract (XLA checked
/// its element type, and its rank when the contract gives one).
template <typename Buffer>
BEGEN_HIDDEN inline TensorArg tensor_arg(Buffer& b) noexcept {
    return TensorArg{b.untyped_data(), b.dimensions().begin(),
                     static_cast<int64_t>(b.dimensions().size()),
                     static_cast<int32_t>(b.element_type())};
}

/// Typed buffers of a fixed rank, named without a comma so that they can
/// stand in XLA_FFI_DEFINE_HANDLER_SYMBOL's arguments.
template <xla::ffi::DataType T> using Rank0 = xla::ffi::Buffer<T, 0>;
template <xla::ffi::DataType T> using Rank1 = xla::ffi::Buffer<T, 1>;
template <xla::ffi::DataType T> using Rank2 = xla::ffi::Buffer<T, 2>;
template <xla::ffi::DataType T> using Rank3 = xla::ffi::Buffer<T, 3>;
template <xla::ffi::DataType T> using Rank4 = xla::ffi::Buffer<T, 4>;
template <xla::ffi::DataType T> using Rank5 = xla::ffi::Buffer<T, 5>;
template <xla::ffi::DataType T> using Rank6 = xla::ffi::Buffer<T, 6>;
template <xla::ffi::DataType T> using Rank7 = xla::ffi::Buffer<T, 7>;
template <xla::ffi::DataType T> using Rank8 = xla::ffi::Buffer<T, 8>;

/// Whether a buffer's rank (any or typed) fits in a BE::Tensor view.
template <typename Buffer>
BEGEN_HIDDEN inline bool rank_fits(Buffer& b) noexcept {
    return b.dimensions().size() <= static_cast<size_t>(kMaxRank);
}

/// A variadic list's element: an input's buffer, or an output's result.
BEGEN_HIDDEN inline xla::ffi::AnyBuffer& list_buffer(xla::ffi::AnyBuffer& b) noexcept { return b; }
BEGEN_HIDDEN inline xla::ffi::AnyBuffer& list_buffer(xla::ffi::Result<xla::ffi::AnyBuffer>& r) noexcept {
    return *r;
}

/// The name of element `k` of list `param` in messages: `xs[2]`.
BEGEN_HIDDEN inline std::string list_element(const char* param, size_t k) {
    return std::string(param) + "[" + std::to_string(k) + "]";
}

/// The buffers of a variadic list (`ffi::RemainingArgs` for a kernel's
/// `const BE::Tensors`, `ffi::RemainingRets` for its `BE::Tensors`) as
/// the trampoline receives them, into `out`; each checked as a single
/// tensor is, an error naming the element (`xs[2]`).
template <typename Remaining>
BEGEN_HIDDEN inline xla::ffi::Error list_args(const Remaining& list, const char* function, const char* param,
                                              std::vector<TensorArg>& out);

/// Whether a dimension's value is representable in the integer type `I`.
template <typename I>
BEGEN_HIDDEN inline bool fits(int64_t v) noexcept {
    if (v < 0) return false;
    return static_cast<uint64_t>(v) <= static_cast<uint64_t>(std::numeric_limits<I>::max());
}

/// An extent that differs from its contract's literal.
BEGEN_HIDDEN inline xla::ffi::Error bad_extent(const char* function, const char* param, size_t axis,
                                               int64_t expected, int64_t got) {
    return xla::ffi::Error(xla::ffi::ErrorCode::kInvalidArgument,
                           std::string(function) + ": parameter '" + param + "': dimension " +
                               std::to_string(axis) + " must be " + std::to_string(expected) +
                               ", got " + std::to_string(got));
}

/// Two extents that one named dimension gives different values.
BEGEN_HIDDEN inline xla::ffi::Error dim_mismatch(const char* function, const char* dim, const char* first,
                                                 size_t first_axis, int64_t expected, const char* param,
                                                 size_t axis, int64_t got) {
    return xla::ffi::Error(xla::ffi::ErrorCode::kInvalidArgument,
                           std::string(function) + ": dimension '" + dim + "' is " +
                               std::to_string(expected) + " (parameter '" + first + "', axis " +
                               std::to_string(first_axis) + ") but parameter '" + param + "' has " +
                               std::to_string(got) + " at axis " + std::to_string(axis));
}

/// A dimension too large for the integer parameter that receives it.
BEGEN_HIDDEN inline xla::ffi::Error dim_overflow(const char* function, const char* dim, const char* param,
                                                 const char* type, int64_t value) {
    return xla::ffi::Error(xla::ffi::ErrorCode::kOutOfRange,
                           std::string(function) + ": dimension '" + dim + "' = " + std::to_string(value) +
                               " does not fit parameter '" + param + "' (" + type + ")");
}

/// The product of the first `n` extents: the size of a rest (`[..., k]`).
template <typename Dims>
BEGEN_HIDDEN inline int64_t leading_size(const Dims& d, size_t n) noexcept {
    int64_t p = 1;
    for (size_t i = 0; i < n; ++i) p *= d[i];
    return p;
}

/// Whether two tensors have the same leading extents (`na` of `a`, `nb` of `b`).
template <typename A, typename B>
BEGEN_HIDDEN inline bool same_leading(const A& a, size_t na, const B& b, size_t nb) noexcept {
    if (na != nb) return false;
    for (size_t i = 0; i < na; ++i) {
        if (a[i] != b[i]) return false;
    }
    return true;
}

/// `[3, 4]`: the first `n` extents of `d`.
template <typename Dims>
BEGEN_HIDDEN inline std::string extents_text(const Dims& d, size_t n) {
    std::string s = "[";
    for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "]";
}

/// A tensor of lower rank than its contract's trailing dimensions.
BEGEN_HIDDEN inline xla::ffi::Error rank_too_low(const char* function, const char* param, size_t least,
                                                 size_t got) {
    return xla::ffi::Error(xla::ffi::ErrorCode::kInvalidArgument,
                           std::string(function) + ": parameter '" + param + "': rank " + std::to_string(got) +
                               ", but its shape has " + std::to_string(least) + " trailing dimensions");
}

/// Two tensors whose leading extents one rest gives differently.
template <typename A, typename B>
BEGEN_HIDDEN inline xla::ffi::Error rest_mismatch(const char* function, const char* rest, const char* first,
                                                  const A& a, size_t na, const char* param, const B& b,
                                                  size_t nb) {
    return xla::ffi::Error(xla::ffi::ErrorCode::kInvalidArgument,
                           std::string(function) + ": leading dimensions '" + rest + "' are " +
                               extents_text(a, na) + " (parameter '" + first + "') but parameter '" + param +
                               "' has " + extents_text(b, nb));
}

/// An in-place tensor whose output is not its input's memory.
BEGEN_HIDDEN inline xla::ffi::Error not_aliased(const char* function, const char* param) {
    return xla::ffi::Error(xla::ffi::ErrorCode::kInternal,
                           std::string(function) + ": in-place parameter '" + param +
                               "': XLA did not alias its input and output buffers");
}

/// `<function>: parameter '<param>': unsupported element type (XLA DataType N)`.
BEGEN_HIDDEN inline xla::ffi::Error unsupported_dtype(const char* function, const char* param,
                                         xla::ffi::DataType t) {
    return xla::ffi::Error(xla::ffi::ErrorCode::kInvalidArgument,
                           std::string(function) + ": parameter '" + param +
                               "': element type (XLA DataType " +
                               std::to_string(static_cast<int>(t)) +
                               ") has no BE::DType; use one of bool, int8-64, uint8-64, "
                               "float16, bfloat16, float32, float64, complex64, complex128");
}

/// A buffer of higher rank than a BE::Tensor view holds.
BEGEN_HIDDEN inline xla::ffi::Error rank_too_high(const char* function, const char* param, size_t rank) {
    return xla::ffi::Error(xla::ffi::ErrorCode::kInvalidArgument,
                           std::string(function) + ": parameter '" + param + "': rank " +
                               std::to_string(rank) + " exceeds BE::kMaxDim (" +
                               std::to_string(kMaxRank) + ")");
}

template <typename Remaining>
BEGEN_HIDDEN inline xla::ffi::Error list_args(const Remaining& list, const char* function, const char* param,
                                              std::vector<TensorArg>& out) {
    out.reserve(list.size());
    for (size_t k = 0; k < list.size(); ++k) {
        auto got = list.template get<xla::ffi::AnyBuffer>(k);
        if (!got.has_value()) {
            return xla::ffi::Error(xla::ffi::ErrorCode::kInvalidArgument,
                                   std::string(function) + ": parameter '" + list_element(param, k) +
                                       "': " + got.error().message());
        }
        xla::ffi::AnyBuffer& b = list_buffer(*got);
        if (!dtype_supported(b.element_type())) {
            return unsupported_dtype(function, list_element(param, k).c_str(), b.element_type());
        }
        if (!rank_fits(b)) return rank_too_high(function, list_element(param, k).c_str(), b.dimensions().size());
        out.push_back(tensor_arg(b));
    }
    return xla::ffi::Error::Success();
}

/// A complex attribute must arrive as [real, imag].
BEGEN_HIDDEN inline xla::ffi::Error bad_complex_attr(const char* function, const char* param, size_t n) {
    return xla::ffi::Error(xla::ffi::ErrorCode::kInvalidArgument,
                           std::string(function) + ": attribute '" + param +
                               "': expected a complex number as 2 values [real, imag], got " +
                               std::to_string(n));
}

/// A complex array attribute must arrive as [re0, im0, re1, im1, ...].
BEGEN_HIDDEN inline xla::ffi::Error bad_complex_array(const char* function, const char* param, size_t n) {
    return xla::ffi::Error(xla::ffi::ErrorCode::kInvalidArgument,
                           std::string(function) + ": attribute '" + param +
                               "': expected complex numbers as pairs [real, imag, ...], got " +
                               std::to_string(n) + " values");
}

/// Whether every byte of a bool array attribute (sent as uint8) is 0 or 1.
BEGEN_HIDDEN inline bool all_bools(xla::ffi::Span<const uint8_t> s) noexcept {
    for (uint8_t b : s) {
        if (b > 1) return false;
    }
    return true;
}

/// A bool array attribute with a byte that is neither 0 nor 1.
BEGEN_HIDDEN inline xla::ffi::Error bad_bool_array(const char* function, const char* param) {
    return xla::ffi::Error(xla::ffi::ErrorCode::kInvalidArgument,
                           std::string(function) + ": attribute '" + param +
                               "': a bool array must hold only 0 and 1");
}

/// An array attribute as a trampoline receives it.
template <typename T>
BEGEN_HIDDEN inline ArrayArg array_arg(xla::ffi::Span<const T> s, size_t per_element) noexcept {
    return ArrayArg{s.begin(), static_cast<int64_t>(s.size() / per_element)};
}

/// The kernel failed (threw, or returned an error): the failure its
/// trampoline returned (an error code byte, then the message; see
/// `begen::tr::failed`), the message prefixed with the kernel's name.
BEGEN_HIDDEN inline xla::ffi::Error kernel_failed(const char* function, const char* what) {
    int code = static_cast<int>(xla::ffi::ErrorCode::kInternal);
    if (what != nullptr && what[0] != '\0') {
        code = static_cast<unsigned char>(what[0]);
        ++what;
    }
    if (code <= 0 || code > 16) code = static_cast<int>(xla::ffi::ErrorCode::kInternal);
    return xla::ffi::Error(static_cast<xla::ffi::ErrorCode>(code),
                           std::string(function) + ": " + (what != nullptr ? what : "unknown C++ exception"));
}

/// The stream handle in the form kernels take it (`int64_t stream`).
template <typename Stream>
BEGEN_HIDDEN inline int64_t stream_handle(Stream s) noexcept {
    return static_cast<int64_t>(reinterpret_cast<intptr_t>(s));
}

/// Whether the integer or float `v` is a `To` (a float takes any number;
/// an integer a value in its range; a bool only a bool).
template <typename To, typename From>
inline bool dict_fits(From v) noexcept {
    if constexpr (std::is_floating_point<To>::value || std::is_same<To, From>::value) {
        return true;
    } else if constexpr (std::is_floating_point<From>::value) {
        return false;
    } else if constexpr (std::is_signed<From>::value) {
        if (v < 0) {
            return std::is_signed<To>::value &&
                   static_cast<int64_t>(v) >= static_cast<int64_t>(std::numeric_limits<To>::min());
        }
        return static_cast<uint64_t>(v) <= static_cast<uint64_t>(std::numeric_limits<To>::max());
    } else {
        return static_cast<uint64_t>(v) <= static_cast<uint64_t>(std::numeric_limits<To>::max());
    }
}

/// Reads attribute `key` as the number `To`: its own type first, then (a
/// Python int arrives as int64, a float as float64) any integer a `To`
/// holds, or any number for a float. A bool is only a bool.
template <typename To>
inline int32_t dict_number(const xla::ffi::Dictionary& d, std::string_view key, void* out) {
    int32_t status = dict_status::kWrongType;
    auto attempt = [&](auto tag) {
        using From = decltype(tag);
        if (status != dict_status::kWrongType) return;
        xla::ffi::ErrorOr<From> v = d.get<From>(key);
        if (!v.has_value()) return;
        if (!dict_fits<To>(*v)) {
            status = dict_status::kOutOfRange;
            return;
        }
        *static_cast<To*>(out) = static_cast<To>(*v);
        status = dict_status::kOk;
    };
    attempt(To{});
    // The types a Python number arrives as come first: a failed decode
    // builds XLA's error message.
    if constexpr (std::is_floating_point<To>::value) {
        attempt(double{});
        attempt(float{});
    }
    if constexpr (!std::is_same<To, bool>::value) {
        attempt(int64_t{});
        attempt(int32_t{});
        attempt(int16_t{});
        attempt(int8_t{});
        attempt(uint64_t{});
        attempt(uint32_t{});
        attempt(uint16_t{});
        attempt(uint8_t{});
    }
    return status;
}

/// `DictArg::get` of the glue: one entry of an `xla::ffi::Dictionary`.
inline int32_t dict_get(const void* dict, const char* name, int64_t size, int32_t kind, void* out) {
    const auto& d = *static_cast<const xla::ffi::Dictionary*>(dict);
    const std::string_view key(name, static_cast<size_t>(size));
    if (!d.contains(key)) return dict_status::kMissing;
    switch (kind) {
    case dict_kind::kAny: return dict_status::kOk;
    case dict_kind::kStr: {
        xla::ffi::ErrorOr<std::string_view> v = d.get<std::string_view>(key);
        if (!v.has_value()) return dict_status::kWrongType;
        *static_cast<ArrayArg*>(out) = ArrayArg{v->data(), static_cast<int64_t>(v->size())};
        return dict_status::kOk;
    }
    case xla_type::kPred: return dict_number<bool>(d, key, out);
    case xla_type::kS8: return dict_number<int8_t>(d, key, out);
    case xla_type::kS16: return dict_number<int16_t>(d, key, out);
    case xla_type::kS32: return dict_number<int32_t>(d, key, out);
    case xla_type::kS64: return dict_number<int64_t>(d, key, out);
    case xla_type::kU8: return dict_number<uint8_t>(d, key, out);
    case xla_type::kU16: return dict_number<uint16_t>(d, key, out);
    case xla_type::kU32: return dict_number<uint32_t>(d, key, out);
    case xla_type::kU64: return dict_number<uint64_t>(d, key, out);
    case xla_type::kF32: return dict_number<float>(d, key, out);
    case xla_type::kF64: return dict_number<double>(d, key, out);
    default: return dict_status::kWrongType;
    }
}

/// The dictionary of a call as a trampoline takes it.
inline DictArg dict_arg(const xla::ffi::Dictionary& d) noexcept {
    return DictArg{&d, &dict_get, static_cast<int64_t>(d.size())};
}

}  // namespace rt
}  // namespace begen
