// begen support headers: error codes for kernels.
//
// A kernel may return `BE::Status` instead of `void`: the handler hands a
// failed status to XLA with its code, so Python sees, e.g., an
// INVALID_ARGUMENT error. The codes are XLA FFI's (XLA_FFI_Error_Code, part
// of XLA's stable C API). Exceptions that carry a code (a failed
// `BE_CHECK_ARG`, a thrown `BE::StatusError`) reach Python with it too;
// any other exception is INTERNAL.
//
//     BE::Status my_kernel(const BE::Tensor x, BE::Tensor y) {
//         if (x.ndim() == 0) return BE::Status::InvalidArgument("x must be an array");
//         ...
//         return BE::Status::Ok();
//     }
//
// Plain C++17; no XLA or CUDA header.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace begen {

/// What an exception that carries an error code derives from (with
/// std::exception): the generated wrapper reads the code through it.
class Coded {
public:
    virtual ~Coded() = default;
    virtual int error_code() const noexcept = 0;
};

}  // namespace begen

namespace BE {

/// XLA FFI's error codes.
enum class ErrorCode : int {
    kOk = 0,
    kCancelled = 1,
    kUnknown = 2,
    kInvalidArgument = 3,
    kDeadlineExceeded = 4,
    kNotFound = 5,
    kAlreadyExists = 6,
    kPermissionDenied = 7,
    kResourceExhausted = 8,
    kFailedPrecondition = 9,
    kAborted = 10,
    kOutOfRange = 11,
    kUnimplemented = 12,
    kInternal = 13,
    kUnavailable = 14,
    kDataLoss = 15,
    kUnauthenticated = 16,
};

/// A kernel's outcome: OK, or an error code with a message.
class Status {
public:
    Status() = default;
    Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

    static Status Ok() { return Status(); }
    static Status InvalidArgument(std::string m) { return Status(ErrorCode::kInvalidArgument, std::move(m)); }
    static Status OutOfRange(std::string m) { return Status(ErrorCode::kOutOfRange, std::move(m)); }
    static Status FailedPrecondition(std::string m) {
        return Status(ErrorCode::kFailedPrecondition, std::move(m));
    }
    static Status NotFound(std::string m) { return Status(ErrorCode::kNotFound, std::move(m)); }
    static Status ResourceExhausted(std::string m) { return Status(ErrorCode::kResourceExhausted, std::move(m)); }
    static Status Unimplemented(std::string m) { return Status(ErrorCode::kUnimplemented, std::move(m)); }
    static Status Internal(std::string m) { return Status(ErrorCode::kInternal, std::move(m)); }
    static Status Unknown(std::string m) { return Status(ErrorCode::kUnknown, std::move(m)); }

    bool ok() const noexcept { return code_ == ErrorCode::kOk; }
    ErrorCode code() const noexcept { return code_; }
    const std::string& message() const noexcept { return message_; }

private:
    ErrorCode code_ = ErrorCode::kOk;
    std::string message_;
};

/// An exception with an error code: thrown on the host, it reaches Python
/// with its code (a plain std::exception is INTERNAL).
class StatusError : public std::runtime_error, public ::begen::Coded {
public:
    StatusError(ErrorCode code, const std::string& what) : std::runtime_error(what), code_(code) {}
    explicit StatusError(const Status& s) : std::runtime_error(s.message()), code_(s.code()) {}
    int error_code() const noexcept override { return static_cast<int>(code_); }
    ErrorCode code() const noexcept { return code_; }

private:
    ErrorCode code_;
};

}  // namespace BE
