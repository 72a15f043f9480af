// begen support headers: element-type aliases and dtype dispatch.
//
// A dispatch macro runs its body once with a type alias bound to the C++
// type of a runtime DType; any other DType fails a BE_CHECK naming the macro
// and the dtype. The body runs inside a lambda called on the spot, so
// `return` leaves the dispatch, not the enclosing function.
//
//     BE_DISPATCH_FLOATING(x.dtype(), scalar_t, {
//         scale_kernel<scalar_t><<<grid, block, 0, s>>>(x.data_ptr<const scalar_t>(), n);
//     });
#pragma once

#include <cstdint>

#include "brainevent/check.h"
#include "brainevent/tensor.h"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace BE {

#if defined(__CUDACC__)
/// IEEE half precision: CUDA's `__half` under nvcc.
using float16_t = __half;
/// bfloat16: CUDA's `__nv_bfloat16` under nvcc.
using bfloat16_t = __nv_bfloat16;
#else
/// IEEE half precision, as raw bits: host C++ has no arithmetic type for it.
struct float16_t {
    uint16_t bits;
};
/// bfloat16, as raw bits.
struct bfloat16_t {
    uint16_t bits;
};
#endif

/// A complex64 element: two float32, real part first (NumPy's layout).
struct complex64_t {
    float real;
    float imag;
};

/// A complex128 element: two float64, real part first.
struct complex128_t {
    double real;
    double imag;
};

}  // namespace BE

// One `case` of a dispatch switch: binds VAR to TYPE around the body.
#define BE_DISPATCH_CASE_(ENUMERATOR, TYPE, VAR, ...) \
    case ::BE::DType::ENUMERATOR: {                   \
        using VAR = TYPE;                             \
        __VA_ARGS__                                   \
    } break;

// The shared frame: a lambda called on the spot with a switch over DTYPE.
// DTYPE is evaluated again only to name it in the failure message (a local
// would shadow the one of an enclosing dispatch).
#define BE_DISPATCH_SWITCH_(NAME, DTYPE, CASES)                                          \
    [&] {                                                                                \
        switch (DTYPE) {                                                                 \
            CASES                                                                        \
        default:                                                                         \
            BE_CHECK(false) << NAME ": unsupported dtype " << ::BE::dtype_name(DTYPE);   \
        }                                                                                \
    }()

/// float32, float64.
#define BE_DISPATCH_FLOATING(DTYPE, VAR, ...)                     \
    BE_DISPATCH_SWITCH_("BE_DISPATCH_FLOATING", DTYPE,            \
        BE_DISPATCH_CASE_(Float32, float, VAR, __VA_ARGS__)       \
        BE_DISPATCH_CASE_(Float64, double, VAR, __VA_ARGS__))

/// float32, float64, and under nvcc float16 and bfloat16 (as __half and
/// __nv_bfloat16). Host C++ has no half arithmetic, so there it is
/// BE_DISPATCH_FLOATING.
#if defined(__CUDACC__)
#define BE_DISPATCH_FLOATING_AND_HALF(DTYPE, VAR, ...)                 \
    BE_DISPATCH_SWITCH_("BE_DISPATCH_FLOATING_AND_HALF", DTYPE,        \
        BE_DISPATCH_CASE_(Float16, ::BE::float16_t, VAR, __VA_ARGS__)  \
        BE_DISPATCH_CASE_(BFloat16, ::BE::bfloat16_t, VAR, __VA_ARGS__) \
        BE_DISPATCH_CASE_(Float32, float, VAR, __VA_ARGS__)            \
        BE_DISPATCH_CASE_(Float64, double, VAR, __VA_ARGS__))
#else
#define BE_DISPATCH_FLOATING_AND_HALF(DTYPE, VAR, ...) \
    BE_DISPATCH_FLOATING(DTYPE, VAR, __VA_ARGS__)
#endif

/// bool and every signed and unsigned integer width.
#define BE_DISPATCH_INTEGRAL(DTYPE, VAR, ...)                     \
    BE_DISPATCH_SWITCH_("BE_DISPATCH_INTEGRAL", DTYPE,            \
        BE_DISPATCH_CASE_(Bool, bool, VAR, __VA_ARGS__)           \
        BE_DISPATCH_CASE_(Int8, int8_t, VAR, __VA_ARGS__)         \
        BE_DISPATCH_CASE_(Int16, int16_t, VAR, __VA_ARGS__)       \
        BE_DISPATCH_CASE_(Int32, int32_t, VAR, __VA_ARGS__)       \
        BE_DISPATCH_CASE_(Int64, int64_t, VAR, __VA_ARGS__)       \
        BE_DISPATCH_CASE_(UInt8, uint8_t, VAR, __VA_ARGS__)       \
        BE_DISPATCH_CASE_(UInt16, uint16_t, VAR, __VA_ARGS__)     \
        BE_DISPATCH_CASE_(UInt32, uint32_t, VAR, __VA_ARGS__)     \
        BE_DISPATCH_CASE_(UInt64, uint64_t, VAR, __VA_ARGS__))

/// int32, int64: the index types of sparse structures.
#define BE_DISPATCH_SIGNED_INDEX(DTYPE, VAR, ...)                 \
    BE_DISPATCH_SWITCH_("BE_DISPATCH_SIGNED_INDEX", DTYPE,        \
        BE_DISPATCH_CASE_(Int32, int32_t, VAR, __VA_ARGS__)       \
        BE_DISPATCH_CASE_(Int64, int64_t, VAR, __VA_ARGS__))

/// Two nested BE_DISPATCH_SIGNED_INDEX: indices and offsets.
#define BE_DISPATCH_SIGNED_INDEX_PAIR(INDEX_DTYPE, OFFSET_DTYPE, INDEX_VAR, OFFSET_VAR, ...) \
    BE_DISPATCH_SIGNED_INDEX(INDEX_DTYPE, INDEX_VAR, {                                       \
        BE_DISPATCH_SIGNED_INDEX(OFFSET_DTYPE, OFFSET_VAR, __VA_ARGS__);                     \
    })

/// int32, int64: the row-pointer (indptr) types of a CSR matrix.
#define BE_DISPATCH_CSR_INDPTR(DTYPE, VAR, ...)                   \
    BE_DISPATCH_SWITCH_("BE_DISPATCH_CSR_INDPTR", DTYPE,          \
        BE_DISPATCH_CASE_(Int32, int32_t, VAR, __VA_ARGS__)       \
        BE_DISPATCH_CASE_(Int64, int64_t, VAR, __VA_ARGS__))

/// Fails unless TENSOR holds int32 (CSR column indices).
#define BE_CHECK_CSR_INDICES_INT32(TENSOR)                                           \
    BE_CHECK((TENSOR).dtype() == ::BE::DType::Int32)                                 \
        << "CSR column indices must be int32, got " << ::BE::dtype_name((TENSOR).dtype())

/// complex64, complex128 (as BE::complex64_t / BE::complex128_t).
#define BE_DISPATCH_COMPLEX(DTYPE, VAR, ...)                                \
    BE_DISPATCH_SWITCH_("BE_DISPATCH_COMPLEX", DTYPE,                       \
        BE_DISPATCH_CASE_(Complex64, ::BE::complex64_t, VAR, __VA_ARGS__)   \
        BE_DISPATCH_CASE_(Complex128, ::BE::complex128_t, VAR, __VA_ARGS__))

/// Every real type: float32, float64, bool and the integers.
#define BE_DISPATCH_ALL_TYPES(DTYPE, VAR, ...)                    \
    BE_DISPATCH_SWITCH_("BE_DISPATCH_ALL_TYPES", DTYPE,           \
        BE_DISPATCH_CASE_(Float32, float, VAR, __VA_ARGS__)       \
        BE_DISPATCH_CASE_(Float64, double, VAR, __VA_ARGS__)      \
        BE_DISPATCH_CASE_(Bool, bool, VAR, __VA_ARGS__)           \
        BE_DISPATCH_CASE_(Int8, int8_t, VAR, __VA_ARGS__)         \
        BE_DISPATCH_CASE_(Int16, int16_t, VAR, __VA_ARGS__)       \
        BE_DISPATCH_CASE_(Int32, int32_t, VAR, __VA_ARGS__)       \
        BE_DISPATCH_CASE_(Int64, int64_t, VAR, __VA_ARGS__)       \
        BE_DISPATCH_CASE_(UInt8, uint8_t, VAR, __VA_ARGS__)       \
        BE_DISPATCH_CASE_(UInt16, uint16_t, VAR, __VA_ARGS__)     \
        BE_DISPATCH_CASE_(UInt32, uint32_t, VAR, __VA_ARGS__)     \
        BE_DISPATCH_CASE_(UInt64, uint64_t, VAR, __VA_ARGS__))

/// Every type: the real ones, complex, float16 and bfloat16 (CUDA types under
/// nvcc, raw-bit structs in host C++).
#define BE_DISPATCH_ALL(DTYPE, VAR, ...)                                     \
    BE_DISPATCH_SWITCH_("BE_DISPATCH_ALL", DTYPE,                            \
        BE_DISPATCH_CASE_(Float16, ::BE::float16_t, VAR, __VA_ARGS__)        \
        BE_DISPATCH_CASE_(BFloat16, ::BE::bfloat16_t, VAR, __VA_ARGS__)      \
        BE_DISPATCH_CASE_(Float32, float, VAR, __VA_ARGS__)                  \
        BE_DISPATCH_CASE_(Float64, double, VAR, __VA_ARGS__)                 \
        BE_DISPATCH_CASE_(Bool, bool, VAR, __VA_ARGS__)                      \
        BE_DISPATCH_CASE_(Int8, int8_t, VAR, __VA_ARGS__)                    \
        BE_DISPATCH_CASE_(Int16, int16_t, VAR, __VA_ARGS__)                  \
        BE_DISPATCH_CASE_(Int32, int32_t, VAR, __VA_ARGS__)                  \
        BE_DISPATCH_CASE_(Int64, int64_t, VAR, __VA_ARGS__)                  \
        BE_DISPATCH_CASE_(UInt8, uint8_t, VAR, __VA_ARGS__)                  \
        BE_DISPATCH_CASE_(UInt16, uint16_t, VAR, __VA_ARGS__)                \
        BE_DISPATCH_CASE_(UInt32, uint32_t, VAR, __VA_ARGS__)                \
        BE_DISPATCH_CASE_(UInt64, uint64_t, VAR, __VA_ARGS__)                \
        BE_DISPATCH_CASE_(Complex64, ::BE::complex64_t, VAR, __VA_ARGS__)    \
        BE_DISPATCH_CASE_(Complex128, ::BE::complex128_t, VAR, __VA_ARGS__))
