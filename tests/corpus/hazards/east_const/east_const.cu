// Hazard: an input tensor written with east const (BE::Tensor const).
#include <cstdint>
#include "brainevent/common.h"
// @BE copy
void copy(BE::Tensor const x, BE::Tensor y, int64_t stream) {}
