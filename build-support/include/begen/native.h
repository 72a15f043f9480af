// begen support headers: the XLA FFI handlers of kernels written against
// XLA FFI's own types (`ffi::Buffer<ffi::F32, 2>`, `ffi::Result<...>`, ...).
//
// Generated code only. Such a handler is generated in the kernel source's
// own translation unit (the source includes XLA's FFI headers already) and
// binds each parameter as the kernel declares it, named through the
// function's type (`param_t`), so any spelling (`ffi::`, `xla::ffi::`, a
// `using`) binds the same; the kernel is called directly, as a hand-written
// `XLA_FFI_DEFINE_HANDLER_SYMBOL` would.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "begen/abi.h"
#include "begen/status.h"
#include "begen/trampoline.h"
#include "xla/ffi/api/ffi.h"

namespace begen {
namespace native {

template <typename F>
struct Params;
template <typename R, typename... A>
struct Params<R (*)(A...)> {
    using type = std::tuple<A...>;
};
template <typename R, typename... A>
struct Params<R (*)(A...) noexcept> {
    using type = std::tuple<A...>;
};

/// The type of parameter `I` of the function pointer type `F`, without
/// `const` or `&` (what XLA decodes).
template <typename F, size_t I>
using param_t = std::decay_t<std::tuple_element_t<I, typename Params<F>::type>>;

template <typename T>
struct ResultOf;
template <typename T>
struct ResultOf<xla::ffi::Result<T>> {
    using type = T;
};

/// What `.Ret<...>()` binds for a `Result<T>` parameter: `T`.
template <typename T>
using result_t = typename ResultOf<T>::type;

/// A returned `BE::Status` as XLA's error (the codes are XLA's).
BEGEN_HIDDEN inline xla::ffi::Error from_status(const BE::Status& s) {
    if (s.ok()) return xla::ffi::Error::Success();
    return xla::ffi::Error(static_cast<xla::ffi::ErrorCode>(static_cast<int>(s.code())), s.message());
}

/// A returned `ErrorOr<T>`: its error; its value is not used.
template <typename T>
BEGEN_HIDDEN inline xla::ffi::Error from_error_or(const xla::ffi::ErrorOr<T>& e) {
    return e.has_error() ? e.error() : xla::ffi::Error::Success();
}

/// An exception escaped the kernel (null: not a std::exception): its
/// message, prefixed with the kernel's name, with its code when it carries
/// one (BE_CHECK_ARG, BE::StatusError), else INTERNAL.
BEGEN_HIDDEN inline xla::ffi::Error failed(const char* function, const std::exception* e) {
    int code = static_cast<int>(BE::ErrorCode::kInternal);
    if (const auto* coded = dynamic_cast<const ::begen::Coded*>(e)) code = coded->error_code();
    if (code <= 0 || code > 16) code = static_cast<int>(BE::ErrorCode::kInternal);
    return xla::ffi::Error(static_cast<xla::ffi::ErrorCode>(code),
                           std::string(function) + ": " + (e != nullptr ? e->what() : "unknown C++ exception"));
}

/// Whether an input buffer and a result are one buffer (an input updated
/// in place, which XLA aliases to its result).
template <typename A, typename R>
BEGEN_HIDDEN inline bool same_buffer(const A& input, const R& result) {
    return input.untyped_data() == result->untyped_data();
}

/// The error of a call that did not alias an input updated in place to its
/// result (a raw `jax.ffi.ffi_call` without `input_output_aliases`).
BEGEN_HIDDEN inline xla::ffi::Error not_aliased(const char* function, const char* input, const char* result) {
    return xla::ffi::Error(xla::ffi::ErrorCode::kInvalidArgument,
                           std::string(function) + ": '" + result + "' is '" + input +
                               "' updated in place, but XLA passed them as two buffers: call it with "
                               "input_output_aliases (the generated function does)");
}

/// The per-executable state of a kernel with XLA FFI's types (`T* state`),
/// one `T` per device. XLA instantiates an executable once and hands its
/// one instance to the calls of every device it runs on (the shards of a
/// `shard_map` or `pmap`) and of every thread at once, so the handler binds
/// this holder and the ordinal of the device the call runs on, and hands
/// the kernel that device's `T`: made by the `instantiate:` function on the
/// device's first call, and made and destroyed with that device current in
/// a CUDA source. The handler holds the device's `turn` across the kernel's
/// call: calls on one device take turns, other devices' calls do not wait.
template <typename T>
class BEGEN_HIDDEN DeviceStates {
public:
    struct Device {
        std::unique_ptr<T> state;
        std::mutex turn;
    };
    DeviceStates() = default;
    DeviceStates(const DeviceStates&) = delete;
    DeviceStates& operator=(const DeviceStates&) = delete;
    ~DeviceStates() {
        for (size_t d = 0; d < devices_.size(); ++d) {
            if (devices_[d] == nullptr) continue;
            const ::begen::tr::DeviceScope freeing(static_cast<int32_t>(d));
            devices_[d].reset();
        }
    }

    /// The state of `device`, made by `make()` (an `ErrorOr<unique_ptr<T>>`
    /// that names `function` in its errors) on the device's first call;
    /// null with the failure in `*failure` if making it failed (a later call
    /// tries again).
    template <typename Make>
    Device* on(int32_t device, Make make, const char* function, xla::ffi::Error* failure) {
        if (device < 0 || device >= 65536) {
            *failure = xla::ffi::Error(xla::ffi::ErrorCode::kInternal,
                                       std::string(function) + ": XLA gave no device ordinal in 0..65535 for this call");
            return nullptr;
        }
        const std::lock_guard<std::mutex> lock(devices_lock_);
        if (devices_.size() <= static_cast<size_t>(device)) devices_.resize(static_cast<size_t>(device) + 1);
        std::unique_ptr<Device>& d = devices_[static_cast<size_t>(device)];
        if (d == nullptr) {
            // What `make()` allocates (cudaMalloc) belongs to the device it is made for.
            const ::begen::tr::DeviceScope making(device);
            if (!making.ok()) {
                *failure = xla::ffi::Error(xla::ffi::ErrorCode::kInternal,
                                           std::string(function) + ": cannot make the state's device current");
                return nullptr;
            }
            xla::ffi::ErrorOr<std::unique_ptr<T>> made = make();
            if (made.has_error()) {
                *failure = made.error();
                return nullptr;
            }
            if (made.value() == nullptr) {
                *failure = xla::ffi::Error(xla::ffi::ErrorCode::kInternal, std::string(function) + "() returned no state");
                return nullptr;
            }
            auto here = std::make_unique<Device>();
            here->state = std::move(made.value());
            d = std::move(here);
        }
        return d.get();
    }

private:
    std::mutex devices_lock_;
    // By device ordinal.
    std::vector<std::unique_ptr<Device>> devices_;
};

}  // namespace native
}  // namespace begen
