// Hazard: the generating macro is defined in a local header.
#include <cstdint>
#include "brainevent/common.h"
#include "defs.cuh"
// @BE neg_f32
DEFINE_NEG(_f32, float)
