// begen support headers: every attribute of a call as one dictionary.
//
// A kernel that takes `BE::Attrs attrs` gets every keyword of its Python
// call (XLA FFI's `ffi::Dictionary`) and reads them by key:
//
//     BE::Status my_kernel(const BE::Tensor x, BE::Tensor y, BE::Attrs attrs) {
//         float eps = attrs.get<float>("eps");
//         std::string_view mode = attrs.get_or<std::string_view>("mode", "fast");
//         ...
//     }
//
// A missing key, a value of another kind, or a number out of the type's
// range throws BE::StatusError(kInvalidArgument) naming the key: Python
// sees INVALID_ARGUMENT. Plain C++17; no XLA or CUDA header: the glue reads
// XLA's dictionary (abi.h's DictArg).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "begen/abi.h"
#include "begen/status.h"

namespace BE {

/// The attributes of a call, read by key (a view, valid during the call).
class Attrs {
public:
    explicit Attrs(const ::begen::DictArg& d) noexcept : d_(d) {}

    /// How many attributes the call has.
    size_t size() const noexcept { return static_cast<size_t>(d_.size); }

    /// Whether the call has attribute `key`.
    bool contains(std::string_view key) const {
        return d_.get(d_.dict, key.data(), static_cast<int64_t>(key.size()), ::begen::dict_kind::kAny, nullptr) ==
               ::begen::dict_status::kOk;
    }

    /// Attribute `key` as `T` (bool, an integer of 8 to 64 bits, float,
    /// double, std::string_view); a missing or unreadable one throws
    /// INVALID_ARGUMENT naming the key.
    template <typename T>
    T get(std::string_view key) const {
        T value{};
        const int32_t status = read(key, &value);
        if (status != ::begen::dict_status::kOk) fail(key, status, kind_name<T>());
        return value;
    }

    /// Attribute `key` as `T`, or `fallback` when the call has none; one of
    /// another kind still throws.
    template <typename T>
    T get_or(std::string_view key, T fallback) const {
        T value{};
        const int32_t status = read(key, &value);
        if (status == ::begen::dict_status::kMissing) return fallback;
        if (status != ::begen::dict_status::kOk) fail(key, status, kind_name<T>());
        return value;
    }

private:
    template <typename T>
    int32_t read(std::string_view key, T* value) const {
        const char* k = key.data();
        const int64_t n = static_cast<int64_t>(key.size());
        if constexpr (std::is_same<T, std::string_view>::value) {
            ::begen::ArrayArg bytes{nullptr, 0};
            const int32_t status = d_.get(d_.dict, k, n, ::begen::dict_kind::kStr, &bytes);
            if (status == ::begen::dict_status::kOk) {
                *value = std::string_view(static_cast<const char*>(bytes.data), static_cast<size_t>(bytes.size));
            }
            return status;
        } else {
            return d_.get(d_.dict, k, n, code<T>(), value);
        }
    }

    template <typename T>
    static constexpr int32_t code() {
        namespace t = ::begen::xla_type;
        static_assert(std::is_same<T, bool>::value || std::is_integral<T>::value || std::is_floating_point<T>::value,
                      "BE::Attrs reads bool, integers, float, double and std::string_view");
        static_assert(!std::is_same<T, long double>::value, "BE::Attrs reads float and double, not long double");
        if constexpr (std::is_same<T, bool>::value) return t::kPred;
        else if constexpr (std::is_floating_point<T>::value) return sizeof(T) == 4 ? t::kF32 : t::kF64;
        else if constexpr (std::is_signed<T>::value)
            return sizeof(T) == 1 ? t::kS8 : sizeof(T) == 2 ? t::kS16 : sizeof(T) == 4 ? t::kS32 : t::kS64;
        else return sizeof(T) == 1 ? t::kU8 : sizeof(T) == 2 ? t::kU16 : sizeof(T) == 4 ? t::kU32 : t::kU64;
    }

    template <typename T>
    static const char* kind_name() {
        if constexpr (std::is_same<T, std::string_view>::value) return "a string";
        else if constexpr (std::is_same<T, bool>::value) return "a bool";
        else if constexpr (std::is_floating_point<T>::value) return sizeof(T) == 4 ? "a float32" : "a float64";
        else if constexpr (std::is_signed<T>::value)
            return sizeof(T) == 1 ? "an int8" : sizeof(T) == 2 ? "an int16" : sizeof(T) == 4 ? "an int32" : "an int64";
        else
            return sizeof(T) == 1 ? "a uint8" : sizeof(T) == 2 ? "a uint16" : sizeof(T) == 4 ? "a uint32" : "a uint64";
    }

    [[noreturn]] static void fail(std::string_view key, int32_t status, const char* kind) {
        std::string k(key);
        std::string m;
        if (status == ::begen::dict_status::kMissing) m = "attribute '" + k + "' is missing";
        else if (status == ::begen::dict_status::kOutOfRange) m = "attribute '" + k + "' is out of range for " + kind;
        else m = "attribute '" + k + "' is not " + kind;
        throw StatusError(ErrorCode::kInvalidArgument, m);
    }

    ::begen::DictArg d_;
};

}  // namespace BE
