// begen support headers: the handler side of precompiled kernels (begen.yaml
// `binaries:`): launch-dimension arithmetic that reports overflow and
// division by zero instead of wrapping, the host-side checks of a cuTile
// array (or of each element of a cuTile list) against the assumptions its
// kernel was compiled with, and packing values into a kernel's parameter
// buffer.
//
// Generated code only (the binaries TU, with XLA's FFI headers and
// begen/cuda_driver.h). Every failure is a message, never undefined
// behaviour: a launch with an array that breaks an assumption would be.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "begen/abi.h"

namespace begen {
namespace bin {

/// int64 arithmetic for grid, block and shared-memory expressions: the
/// first overflow or division by zero is kept in `error`, and the result is
/// then meaningless (the handler returns the error).
struct Calc {
    const char* error = nullptr;

    int64_t fail(const char* why) {
        if (error == nullptr) error = why;
        return 0;
    }
    int64_t add(int64_t a, int64_t b) {
        int64_t r;
        return __builtin_add_overflow(a, b, &r) ? fail("overflows int64") : r;
    }
    int64_t sub(int64_t a, int64_t b) {
        int64_t r;
        return __builtin_sub_overflow(a, b, &r) ? fail("overflows int64") : r;
    }
    int64_t mul(int64_t a, int64_t b) {
        int64_t r;
        return __builtin_mul_overflow(a, b, &r) ? fail("overflows int64") : r;
    }
    int64_t div(int64_t a, int64_t b) {
        if (b == 0) return fail("divides by zero");
        if (a == std::numeric_limits<int64_t>::min() && b == -1) return fail("overflows int64");
        return a / b;
    }
    int64_t rem(int64_t a, int64_t b) {
        if (b == 0) return fail("divides by zero");
        if (b == -1) return 0;
        return a % b;
    }
    /// Rounded towards +infinity.
    int64_t cdiv(int64_t a, int64_t b) {
        int64_t q = div(a, b);
        if (error != nullptr) return 0;
        return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
    }
    /// A value of any integer type (or bool) as int64.
    template <typename T>
    int64_t of(T v) {
        if (static_cast<uint64_t>(v) > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) && v > 0) {
            return fail("reads a value above 2**63 - 1");
        }
        return static_cast<int64_t>(v);
    }
};

/// The assumptions about one axis of a cuTile array (1 / has_* false: none).
struct AxisRules {
    int64_t shape_divisible_by;
    int64_t stride_divisible_by;
    bool has_stride_constant;
    int64_t stride_constant;
    bool has_stride_lower_bound;
    int64_t stride_lower_bound;
};

/// The assumptions about one cuTile array parameter.
struct ArrayRules {
    int64_t index_min, index_max;
    const char* index_name;
    int64_t base_align;
    const AxisRules* axes;
    size_t rank;
};

/// The extents and row-major strides (elements) of a dense array, XLA's
/// layout: an empty axis counts as 1 in the strides of the axes before it,
/// and a product beyond int64 saturates (then refused by any index type but
/// int64, whose kernels cannot address such an array either).
BEGEN_HIDDEN inline void dense_layout(const int64_t* dims, size_t rank, int64_t* shape, int64_t* strides) noexcept {
    int64_t step = 1;
    bool step_overflow = false;
    for (size_t k = rank; k-- > 0;) {
        shape[k] = dims[k];
        strides[k] = step_overflow ? std::numeric_limits<int64_t>::max() : step;
        if (__builtin_mul_overflow(step, dims[k] > 0 ? dims[k] : 1, &step)) step_overflow = true;
    }
}

/// `arg0[2]`: element `k` of list parameter `param`, as messages name it
/// (the Python expression that reaches it).
BEGEN_HIDDEN inline std::string element_name(const char* param, size_t k) {
    return std::string(param) + "[" + std::to_string(k) + "]";
}

namespace detail {

/// check_array's work for a parameter (`element` < 0) or element
/// `element` of a list parameter; the name is built only for a message.
inline std::string check_array(const char* param, long long element, const void* data, const int64_t* dims,
                               size_t rank, const ArrayRules& r, int64_t* shape, int64_t* strides) {
    auto who = [&]() {
        return std::string("parameter '") +
               (element < 0 ? std::string(param) : element_name(param, static_cast<size_t>(element))) + "'";
    };
    auto where = [&](const char* noun, size_t axis, int64_t value) {
        return who() + ": " + noun + " " + std::to_string(value) + " of axis " + std::to_string(axis);
    };
    if (rank != r.rank) {
        return who() + " has rank " + std::to_string(rank) + "; the kernel takes rank " + std::to_string(r.rank);
    }
    dense_layout(dims, rank, shape, strides);
    for (int pass = 0; pass < 2; ++pass) {
        const int64_t* values = pass == 0 ? shape : strides;
        for (size_t k = 0; k < rank; ++k) {
            if (values[k] < r.index_min || values[k] > r.index_max) {
                return where(pass == 0 ? "extent" : "stride", k, values[k]) + " does not fit the kernel's " +
                       r.index_name + " index type (export it with index_dtype=ct.int64)";
            }
        }
    }
    for (size_t k = 0; k < rank; ++k) {
        const AxisRules& a = r.axes[k];
        if (shape[k] % a.shape_divisible_by != 0) {
            return where("extent", k, shape[k]) + " is not a multiple of " + std::to_string(a.shape_divisible_by) +
                   ", as the kernel assumes";
        }
        if (a.has_stride_constant && strides[k] != a.stride_constant) {
            return where("stride", k, strides[k]) + " is not " + std::to_string(a.stride_constant) +
                   ", as the kernel assumes";
        }
        if (strides[k] % a.stride_divisible_by != 0) {
            return where("stride", k, strides[k]) + " is not a multiple of " + std::to_string(a.stride_divisible_by) +
                   ", as the kernel assumes";
        }
        if (a.has_stride_lower_bound && strides[k] < a.stride_lower_bound) {
            return where("stride", k, strides[k]) + " is below " + std::to_string(a.stride_lower_bound) +
                   ", the kernel's lower bound";
        }
    }
    const auto address = reinterpret_cast<uintptr_t>(data);
    if (address % static_cast<uintptr_t>(r.base_align) != 0) {
        return who() + ": data address " + std::to_string(address) + " is not a multiple of " +
               std::to_string(r.base_align) + " bytes, as the kernel assumes";
    }
    return {};
}

}  // namespace detail

/// Checks a dense row-major array (XLA's buffers) against its kernel's
/// assumptions, index overflow first, and fills its extents and strides
/// (elements). Empty on success, else why, naming the parameter.
BEGEN_HIDDEN inline std::string check_array(const char* param, const void* data, const int64_t* dims, size_t rank,
                                            const ArrayRules& r, int64_t* shape, int64_t* strides) {
    return detail::check_array(param, -1, data, dims, rank, r, shape, strides);
}

/// check_array for element `k` of a list parameter (cuTile's
/// `ListConstraint`: every element has the element's assumptions); the
/// message names `param[k]`.
BEGEN_HIDDEN inline std::string check_element(const char* param, size_t k, const void* data, const int64_t* dims,
                                              size_t rank, const ArrayRules& r, int64_t* shape, int64_t* strides) {
    return detail::check_array(param, static_cast<long long>(k), data, dims, rank, r, shape, strides);
}

/// The name of an XLA element type (abi.h's codes), as begen.yaml writes it.
BEGEN_HIDDEN inline std::string xla_type_name(int32_t code) {
    switch (code) {
    case xla_type::kPred: return "bool";
    case xla_type::kS8: return "int8";
    case xla_type::kS16: return "int16";
    case xla_type::kS32: return "int32";
    case xla_type::kS64: return "int64";
    case xla_type::kU8: return "uint8";
    case xla_type::kU16: return "uint16";
    case xla_type::kU32: return "uint32";
    case xla_type::kU64: return "uint64";
    case xla_type::kF16: return "float16";
    case xla_type::kF32: return "float32";
    case xla_type::kF64: return "float64";
    case xla_type::kC64: return "complex64";
    case xla_type::kBF16: return "bfloat16";
    case xla_type::kC128: return "complex128";
    default: return "XLA DataType " + std::to_string(code);
    }
}

/// Element `k` of a list parameter against the list's element type and
/// rank (before its extents are read). Empty on success.
BEGEN_HIDDEN inline std::string check_element_type(const char* param, size_t k, int32_t type, int32_t want,
                                                   size_t rank, size_t want_rank) {
    if (type != want) {
        return "parameter '" + element_name(param, k) + "' is " + xla_type_name(type) + "; the kernel takes " +
               xla_type_name(want);
    }
    if (rank != want_rank) {
        return "parameter '" + element_name(param, k) + "' has rank " + std::to_string(rank) +
               "; the kernel takes rank " + std::to_string(want_rank);
    }
    return {};
}

/// Where a list parameter's elements are among XLA's remaining arguments:
/// its length is its word buffer's (`bytes` long, `element_words` 64-bit
/// words per element), its first element at `at` of `available`. At least
/// one element, and at most INT32_MAX (cuTile passes the length as an
/// `int32_t`). Empty on success, the length in `len`.
BEGEN_HIDDEN inline std::string list_span(const char* param, int64_t bytes, size_t element_words, size_t at,
                                          size_t available, size_t* len) {
    const int64_t per = static_cast<int64_t>(element_words) * 8;
    if (bytes < 0 || bytes % per != 0) {
        return "list parameter '" + std::string(param) + "': its word buffer holds " + std::to_string(bytes) +
               " bytes, not a multiple of " + std::to_string(per) + " (the generated Python function sizes it)";
    }
    const int64_t n = bytes / per;
    if (n == 0) {
        return "parameter '" + std::string(param) + "' is an empty list; the kernel takes at least one array";
    }
    if (n > std::numeric_limits<int32_t>::max()) {
        return "parameter '" + std::string(param) + "' lists " + std::to_string(n) +
               " arrays; the kernel's length is an int32";
    }
    if (at > available || static_cast<uint64_t>(n) > available - at) {
        return "parameter '" + std::string(param) + "' lists " + std::to_string(n) + " arrays, but XLA passed " +
               std::to_string(available > at ? available - at : 0) + " after the earlier ones";
    }
    *len = static_cast<size_t>(n);
    return {};
}

/// Writes `value` as a `T` at `offset` of the parameter buffer.
template <typename T>
BEGEN_HIDDEN inline void put(unsigned char* buffer, size_t offset, T value) noexcept {
    std::memcpy(buffer + offset, &value, sizeof(T));
}

/// Whether an int64 fits `T` (the index type of a cuTile shape or stride,
/// checked before).
template <typename T>
BEGEN_HIDDEN inline T narrow(int64_t v) noexcept {
    return static_cast<T>(v);
}

/// A launch extent within [0, max], stored in `out`; false (and `out`
/// unchanged) when it is not. No string on the way: the handler builds the
/// message with `extent` only when this fails.
BEGEN_HIDDEN inline bool fits_extent(int64_t v, int64_t max, unsigned* out) noexcept {
    if (v < 0 || v > max) return false;
    *out = static_cast<unsigned>(v);
    return true;
}

/// A launch extent: `what` names it in the message.
BEGEN_HIDDEN inline std::string extent(int64_t v, int64_t max, const char* what, unsigned* out) {
    if (v < 0 || v > max) {
        return std::string(what) + " is " + std::to_string(v) + ", outside [0, " + std::to_string(max) + "]";
    }
    *out = static_cast<unsigned>(v);
    return {};
}

}  // namespace bin
}  // namespace begen
