// A macro-generated family: one clamp per element type, each annotated at
// its macro invocation.
#include <cstdint>

#include "brainevent/common.h"

#define DEFINE_CLAMP(T, SUFFIX)                                                   \
    void clamp_##SUFFIX(const BE::Tensor x, BE::Tensor y, T lo, T hi) {           \
        const T* in = x.data_ptr<const T>();                                      \
        T* out = y.data_ptr<T>();                                                 \
        for (int64_t i = 0; i < x.numel(); ++i)                                   \
            out[i] = in[i] < lo ? lo : (in[i] > hi ? hi : in[i]);                 \
    }

// @BE clamp_f32
DEFINE_CLAMP(float, f32)

// @BE clamp_i32
DEFINE_CLAMP(int32_t, i32)
