// Hazard: a comment above the function mentions an older signature.
#include <cstdint>
#include "brainevent/common.h"
// Replaces the old void scale(const BE::Tensor x, BE::Tensor y) entry point.
// @BE scale
void scale(const BE::Tensor x, BE::Tensor y, float alpha, int64_t stream) {}
