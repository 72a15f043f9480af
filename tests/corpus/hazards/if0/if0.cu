// Hazard: an annotated function inside #if 0.
#include <cstdint>
#include "brainevent/common.h"
#if 0
// @BE disabled
void disabled(const BE::Tensor x, BE::Tensor y, int64_t stream) {}
#endif
// @BE scale
void scale(const BE::Tensor x, BE::Tensor y, float alpha, int64_t stream) {}
