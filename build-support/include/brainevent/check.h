// begen support headers: checks that fail loudly but keep the process alive.
//
// On the host a failed check throws (BE::CheckError, BE::CudaError; both are
// std::runtime_error), which the generated wrapper turns into an
// xla::ffi::Error, so Python sees an exception. In device code there are no
// exceptions: a failed check prints where it failed and traps.
//
//     BE_CHECK(x.ndim() == 2) << "expected a matrix, got rank " << x.ndim();
//     BE_CHECK_ARG(x.ndim() > 0) << "x must be an array";   // INVALID_ARGUMENT
//     BE_CUDA_CHECK(cudaMemsetAsync(p, 0, n, stream));
//     kernel<<<grid, block, 0, stream>>>(...);
//     BE_CHECK_KERNEL_LAUNCH();
#pragma once

#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>

#include "begen/status.h"
#include "brainevent/config.h"

namespace BE {

// The exception types are declared in nvcc's device pass too: host code
// that catches them is still parsed there.

/// Thrown on the host by a failed BE_CHECK (INTERNAL) or one of the
/// variants that choose the code (BE_CHECK_ARG: INVALID_ARGUMENT, ...).
class CheckError : public std::runtime_error, public ::begen::Coded {
public:
    explicit CheckError(const std::string& what, ErrorCode code = ErrorCode::kInternal)
        : std::runtime_error(what), code_(code) {}
    int error_code() const noexcept override { return static_cast<int>(code_); }
    ErrorCode code() const noexcept { return code_; }

private:
    ErrorCode code_;
};

/// Thrown on the host by a failed BE_CUDA_CHECK / BE_CHECK_KERNEL_LAUNCH.
class CudaError : public std::runtime_error {
public:
    explicit CudaError(const std::string& what) : std::runtime_error(what) {}
};

namespace detail {

/// The message of a failed BE_CHECK. Only ever built once a check has
/// failed, so a passing check costs one branch.
class CheckMessage {
public:
    BE_HOST_DEVICE CheckMessage(const char* file, int line, const char* cond)
        : file_(file), line_(line), cond_(cond) {}

    template <typename T>
    BE_HOST_DEVICE CheckMessage& operator<<(const T& value) {
#if !BE_DEVICE_PASS
        text_ << value;
#else
        (void)value;
#endif
        return *this;
    }
    // int8_t/uint8_t values read as numbers, not characters.
    BE_HOST_DEVICE CheckMessage& operator<<(signed char value) { return *this << static_cast<int>(value); }
    BE_HOST_DEVICE CheckMessage& operator<<(unsigned char value) { return *this << static_cast<int>(value); }

    BE_HOST_DEVICE const char* file() const { return file_; }
    BE_HOST_DEVICE int line() const { return line_; }
    BE_HOST_DEVICE const char* cond() const { return cond_; }
#if !BE_DEVICE_PASS
    std::string text() const { return text_.str(); }
#endif

private:
    const char* file_;
    int line_;
    const char* cond_;
#if !BE_DEVICE_PASS
    std::ostringstream text_;
#endif
};

/// Raises a finished CheckMessage. `operator&` binds looser than `<<`, so
/// `CheckRaiser() & msg << a << b` streams everything before raising.
struct CheckRaiser {
    /// The code of the error a host failure raises (an ErrorCode's value).
    int code = static_cast<int>(ErrorCode::kInternal);

    BE_HOST_DEVICE void operator&(const CheckMessage& msg) const {
#if !BE_DEVICE_PASS
        std::string what = std::string(msg.file()) + ":" + std::to_string(msg.line()) +
                           ": check failed: " + msg.cond();
        std::string text = msg.text();
        if (!text.empty()) what += ": " + text;
        throw ::BE::CheckError(what, static_cast<ErrorCode>(code));
#else
        printf("%s:%d: check failed: %s\n", msg.file(), msg.line(), msg.cond());
        __trap();
#endif
    }
};

/// Throws BE::CudaError for a failed CUDA runtime call. Takes plain values so
/// this header needs no CUDA include.
[[noreturn]] inline void raise_cuda_error(int code, const char* name, const char* text,
                                          const char* expr, const char* file, int line) {
    throw ::BE::CudaError(std::string(file) + ":" + std::to_string(line) + ": " + expr +
                          " failed: " + name + " (" + std::to_string(code) + "): " + text);
}

}  // namespace detail
}  // namespace BE

/// Checks `cond`; when it is false, throws BE::CheckError (host) or traps
/// (device) with the streamed message.
#define BE_CHECK(cond)                                                                  \
    (cond) ? (void)0                                                                    \
           : ::BE::detail::CheckRaiser() & ::BE::detail::CheckMessage(__FILE__, __LINE__, \
                                                                      #cond)

/// BE_CHECK with the code of the error it raises on the host
/// (`BE::ErrorCode::kOutOfRange`, ...); in device code it traps like BE_CHECK.
#define BE_CHECK_CODE(code, cond)                                                       \
    (cond) ? (void)0                                                                    \
           : ::BE::detail::CheckRaiser{static_cast<int>(code)} &                         \
                 ::BE::detail::CheckMessage(__FILE__, __LINE__, #cond)

/// A check of the caller's input: INVALID_ARGUMENT.
#define BE_CHECK_ARG(cond) BE_CHECK_CODE(::BE::ErrorCode::kInvalidArgument, cond)
/// An index or size out of the supported range: OUT_OF_RANGE.
#define BE_CHECK_RANGE(cond) BE_CHECK_CODE(::BE::ErrorCode::kOutOfRange, cond)
/// A state the call needs that does not hold: FAILED_PRECONDITION.
#define BE_CHECK_PRECONDITION(cond) BE_CHECK_CODE(::BE::ErrorCode::kFailedPrecondition, cond)
/// A case the kernel does not implement: UNIMPLEMENTED.
#define BE_CHECK_IMPLEMENTED(cond) BE_CHECK_CODE(::BE::ErrorCode::kUnimplemented, cond)

/// Evaluates a CUDA runtime call once; anything but cudaSuccess throws
/// BE::CudaError (host) or traps (device).
#if BE_DEVICE_PASS
#define BE_CUDA_CHECK(expr)                                                              \
    do {                                                                                 \
        const cudaError_t be_cuda_status_ = (expr);                                      \
        if (be_cuda_status_ != cudaSuccess) {                                            \
            printf("%s:%d: %s failed: CUDA error %d\n", __FILE__, __LINE__, #expr,        \
                   static_cast<int>(be_cuda_status_));                                   \
            __trap();                                                                    \
        }                                                                                \
    } while (0)
#else
#define BE_CUDA_CHECK(expr)                                                              \
    do {                                                                                 \
        const cudaError_t be_cuda_status_ = (expr);                                      \
        if (be_cuda_status_ != cudaSuccess) {                                            \
            ::BE::detail::raise_cuda_error(static_cast<int>(be_cuda_status_),            \
                                           cudaGetErrorName(be_cuda_status_),            \
                                           cudaGetErrorString(be_cuda_status_), #expr,   \
                                           __FILE__, __LINE__);                          \
        }                                                                                \
    } while (0)
#endif

/// After a kernel launch: reports a launch that failed synchronously (bad
/// grid, too much shared memory). Faults inside the kernel surface later.
#define BE_CHECK_KERNEL_LAUNCH() BE_CUDA_CHECK(cudaGetLastError())

/// Like BE_CHECK_KERNEL_LAUNCH but waits for the device, so a fault inside
/// the kernel is reported here. For debugging: it stalls the stream.
#define BE_CHECK_KERNEL_LAUNCH_SYNC()                                                    \
    do {                                                                                 \
        BE_CUDA_CHECK(cudaGetLastError());                                               \
        BE_CUDA_CHECK(cudaDeviceSynchronize());                                          \
    } while (0)
