// A macro-generated family: one definition per element type, annotated at
// each invocation. The second macro pastes the name with ##.
#include <cstdint>

#include "brainevent/common.h"

#define DEFINE_AXPY(T, NAME)                                                      \
    void NAME(const BE::Tensor x, const BE::Tensor y, BE::Tensor out, T alpha) {  \
        const T* a = x.data_ptr<const T>();                                       \
        const T* b = y.data_ptr<const T>();                                       \
        T* o = out.data_ptr<T>();                                                 \
        for (int64_t i = 0; i < x.numel(); ++i) o[i] = alpha * a[i] + b[i];       \
    }

// @BE axpy_f32
DEFINE_AXPY(float, axpy_f32)

// @BE axpy_f64
DEFINE_AXPY(double, axpy_f64)

#define DEFINE_NEG(T)                                         \
    void neg_##T(const BE::Tensor x, BE::Tensor y) {          \
        const T* a = x.data_ptr<const T>();                   \
        T* o = y.data_ptr<T>();                               \
        for (int64_t i = 0; i < x.numel(); ++i) o[i] = -a[i]; \
    }

// @BE neg_float
DEFINE_NEG(float)

// @BE neg_int32_t
DEFINE_NEG(int32_t)
