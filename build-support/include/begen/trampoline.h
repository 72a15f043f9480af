// begen support headers: what a kernel's trampoline needs (see abi.h).
//
// Generated code only; kernels never include this. It relies on nothing but
// the public kernel API (BE::Tensor, BE::DType), so the trampolines also
// compile when brainevent's own include directory comes first, and it pulls
// in no XLA header: a source's TU stays as cheap as the source itself.
//
// The success path allocates nothing: a view is a few stores, and a failure
// message is copied into a fixed thread-local buffer only when a kernel
// throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include <exception>
#include <optional>
#include <string>

#include "begen/abi.h"
#include "begen/attrs.h"
#include "begen/status.h"
#include "begen/tensors.h"
#include "brainevent/common.h"

namespace begen {
namespace tr {

/// The view of one buffer (the extents are copied into the view).
BEGEN_HIDDEN inline BE::Tensor view(const TensorArg& t) { return view_of(t); }

/// An attribute the glue passed by address, read as its C++ type.
template <typename T>
BEGEN_HIDDEN inline T attr(const void* p) noexcept {
    return *static_cast<const T*>(p);
}

/// Bytes of a failure message kept, terminating NUL included; longer
/// messages are cut.
constexpr size_t kMessageBytes = 4096;

/// Zeroes an output before its kernel runs (begen.yaml's `zero_outputs`):
/// XLA hands outputs over uninitialised. In a CUDA source, on XLA's stream
/// (asynchronous and graph-safe); else on the host.
BEGEN_HIDDEN inline void zero_output(const TensorArg& t, int64_t stream) {
    const size_t bytes = view(t).nbytes();
    if (bytes == 0) return;
#if defined(__CUDACC__)
    const cudaError_t e = cudaMemsetAsync(t.data, 0, bytes, reinterpret_cast<cudaStream_t>(stream));
    if (e != cudaSuccess) throw std::runtime_error(cudaGetErrorString(e));
#else
    (void)stream;
    std::memset(t.data, 0, bytes);
#endif
}

/// In a CUDA source, makes `device` the current device for its scope and
/// then the device current before it again; elsewhere it does nothing. A
/// per-executable state is made and destroyed inside one, so what it
/// allocates and frees (cudaMalloc, cudaFree) is its own device's memory.
class BEGEN_HIDDEN DeviceScope {
public:
    explicit DeviceScope(int32_t device) noexcept {
#if defined(__CUDACC__)
        switched_ = cudaGetDevice(&previous_) == cudaSuccess && cudaSetDevice(device) == cudaSuccess;
#else
        (void)device;
#endif
    }
    DeviceScope(const DeviceScope&) = delete;
    DeviceScope& operator=(const DeviceScope&) = delete;
    ~DeviceScope() {
#if defined(__CUDACC__)
        if (switched_) (void)cudaSetDevice(previous_);
#endif
    }
    /// Whether `device` is current (always outside CUDA sources).
    bool ok() const noexcept {
#if defined(__CUDACC__)
        return switched_;
#else
        return true;
#endif
    }

private:
#if defined(__CUDACC__)
    int previous_ = 0;
    bool switched_ = false;
#endif
};

/// Zeroes every output of a variadic list (`zero_outputs`).
BEGEN_HIDDEN inline void zero_outputs(const TensorList& l, int64_t stream) {
    for (int64_t k = 0; k < l.size; ++k) zero_output(l.items[k], stream);
}

/// Copies a kernel's failure message (null: not a std::exception) into
/// this thread's buffer after one byte that holds its XLA error code, and
/// returns the buffer; the glue reads it before the thread calls another
/// kernel (`begen::rt::kernel_failed`).
/// The message reaches Python as text: it is made valid UTF-8 here (a
/// byte that starts no valid sequence becomes `?`) and cut only between
/// characters.
BEGEN_HIDDEN inline const char* failed(const char* what, int code) noexcept {
    static thread_local char message[kMessageBytes];
    const auto* text = reinterpret_cast<const unsigned char*>(what != nullptr ? what : "unknown C++ exception");
    if (code <= 0 || code > 127) code = static_cast<int>(BE::ErrorCode::kInternal);
    message[0] = static_cast<char>(code);
    size_t in = 0, out = 1;
    while (text[in] != '\0') {
        const unsigned char b = text[in];
        size_t len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
        for (size_t k = 1; k < len; ++k) {
            if ((text[in + k] & 0xC0) != 0x80) len = 0;  // also stops at the NUL
        }
        const size_t take = len == 0 ? 1 : len;
        if (out + take + 1 > kMessageBytes) break;  // whole characters only
        if (len == 0) {
            message[out++] = '?';
        } else {
            for (size_t k = 0; k < len; ++k) message[out++] = static_cast<char>(text[in + k]);
        }
        in += take;
    }
    message[out] = '\0';
    return message;
}

/// The code of the exception being handled (called inside a `catch`): the
/// code of one that carries it (BE::CheckError of a BE_CHECK_ARG,
/// BE::StatusError), else INTERNAL. Failure path only: it rethrows.
BEGEN_HIDDEN inline int current_code() noexcept {
    int code = static_cast<int>(BE::ErrorCode::kInternal);
    const std::exception_ptr e = std::current_exception();
    if (!e) return code;
    try {
        std::rethrow_exception(e);
    } catch (const ::begen::Coded& c) {
        code = c.error_code();
    } catch (...) {
    }
    return code;
}

/// A caught exception's message (null: not a std::exception), with the
/// code of the exception being handled.
BEGEN_HIDDEN inline const char* failed(const char* what) noexcept {
    return failed(what, current_code());
}

/// What a kernel returned: null for success, else its failure. For
/// `BE::Status`.
BEGEN_HIDDEN inline const char* returned_status(const BE::Status& s) noexcept {
    return s.ok() ? nullptr : failed(s.message().c_str(), static_cast<int>(s.code()));
}

/// An `xla::ffi::Error`'s code, which XLA's headers give as the code or
/// as an optional one, depending on their version.
template <typename Code>
BEGEN_HIDDEN inline int code_value(const std::optional<Code>& c) noexcept {
    return c.has_value() ? static_cast<int>(*c) : static_cast<int>(BE::ErrorCode::kInternal);
}
template <typename Code>
BEGEN_HIDDEN inline int code_value(const Code& c) noexcept {
    return static_cast<int>(c);
}

/// For `xla::ffi::Error` (a template: this header includes no XLA header;
/// the source that returns one has).
template <typename Error>
BEGEN_HIDDEN inline const char* returned_error(const Error& e) {
    if (e.success()) return nullptr;
    const std::string text = e.message();
    return failed(text.c_str(), code_value(e.errc()));
}

/// For `xla::ffi::ErrorOr<T>`: its error; its value is not used.
template <typename ErrorOr>
BEGEN_HIDDEN inline const char* returned_error_or(const ErrorOr& e) {
    return e.has_error() ? returned_error(e.error()) : nullptr;
}

}  // namespace tr
}  // namespace begen
