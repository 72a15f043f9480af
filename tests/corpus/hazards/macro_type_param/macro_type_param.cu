// Hazard: a macro parameter used as a parameter type.
#include <cstdint>
#include "brainevent/common.h"
#define DEFINE_SCALE(SUFFIX, T)                                                \
void scale##SUFFIX(const BE::Tensor x, BE::Tensor y, T alpha, int64_t stream) {}
// @BE scale_f32
DEFINE_SCALE(_f32, float)
// @BE scale_f64
DEFINE_SCALE(_f64, double)
