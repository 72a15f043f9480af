// Macros with short names, defined before and after the include: none may
// reach begen's generated trampolines or its headers.
#define T float
#define p 0
#include <cstdint>

#include "brainevent/common.h"
#define a 3
#define e 2

// @BE add_three
void add_three(const BE::Tensor x, BE::Tensor y, float k) {
    const T* in = x.data_ptr<const T>();
    T* out = y.data_ptr<T>();
    for (int64_t i = p; i < x.numel(); ++i) out[i] = in[i] + a + k * 0;
}
