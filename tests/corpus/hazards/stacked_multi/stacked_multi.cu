// Hazard: stacked annotations over one macro that defines two functions.
#include <cstdint>
#include "brainevent/common.h"
#define DEFINE_PAIR(SUFFIX, T)                                                 \
void fill##SUFFIX(BE::Tensor y, T value, int64_t stream) {}                    \
void axpy##SUFFIX(const BE::Tensor x, BE::Tensor y, T a, int64_t stream) {}
// @BE fill_f32
// @BE axpy_f32
DEFINE_PAIR(_f32, float)
