// Hazard: annotation-like text inside a string literal.
#include <cstdint>
#include "brainevent/common.h"
static const char* kUsage = "annotate with // @BE name";
// @BE scale
void scale(const BE::Tensor x, BE::Tensor y, float alpha, int64_t stream) {}
