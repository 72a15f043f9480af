// Hazard: one macro name #undef'd and defined again.
#include <cstdint>
#include "brainevent/common.h"
#define DEF(S) void unary##S(const BE::Tensor x, BE::Tensor y, int64_t stream) {}
// @BE unary_a
DEF(_a)
#undef DEF
#define DEF(S) void binary##S(const BE::Tensor x, const BE::Tensor z, BE::Tensor y, int64_t stream) {}
// @BE binary_b
DEF(_b)
