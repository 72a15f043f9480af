// Hazard: comments inside the parameter list hold commas.
#include <cstdint>
#include "brainevent/common.h"
// @BE scale
void scale(const BE::Tensor x,   // input, any float dtype
           BE::Tensor y,         // output (same shape)
           float alpha,
           int64_t stream) {}
