// begen support headers: BE::Tensor views of XLA FFI buffers.
//
// For sources that write their own XLA FFI handlers and hand the buffers on
// to code written against the kernel API:
//
//     #include "brainevent/ffi_compat.h"
//
//     xla::ffi::Error handler(xla::ffi::AnyBuffer x, xla::ffi::Result<xla::ffi::AnyBuffer> y) {
//         BE::Tensor in = BE::internal::buffer_to_tensor(x);
//         BE::Tensor out = BE::internal::result_buffer_to_tensor(y);
//         ...
//     }
//
// Both conversions throw on a buffer the kernel API cannot describe, so
// the handler catches std::exception and returns an xla::ffi::Error. Under
// nvcc the header also includes the CUDA runtime API (cudaStream_t), which
// such handlers use to launch.
//
// begen's generated code does not use it (see begen/ffi_support.h).
#pragma once

#include <stdexcept>
#include <string>

#include "brainevent/dtypes.h"
#include "brainevent/tensor.h"
#include "xla/ffi/api/ffi.h"

#if defined(__CUDACC__)
#include <cuda_runtime_api.h>
#endif

namespace BE {
namespace internal {

/// A view of an XLA FFI buffer: its data, its dimensions (copied into the
/// view) and its element type. Host only. Throws std::invalid_argument for
/// an element type with no BE::DType (see xla_to_jkb_dtype), and
/// std::out_of_range (from the Tensor constructor) for a rank above kMaxDim.
inline Tensor buffer_to_tensor(xla::ffi::AnyBuffer buffer) {
    const xla::ffi::DataType element = buffer.element_type();
    const DType dtype = xla_to_jkb_dtype(element);
    if (dtype == DType::Invalid) {
        throw std::invalid_argument(
            "BE::internal::buffer_to_tensor: XLA FFI element type " +
            std::to_string(static_cast<int>(element)) + " has no BE::DType");
    }
    const auto dims = buffer.dimensions();
    return Tensor(buffer.untyped_data(), dims.begin(), static_cast<int>(dims.size()), dtype);
}

/// buffer_to_tensor for a result (output) buffer; throws the same.
inline Tensor result_buffer_to_tensor(xla::ffi::Result<xla::ffi::AnyBuffer> result) {
    return buffer_to_tensor(*result);
}

}  // namespace internal
}  // namespace BE
