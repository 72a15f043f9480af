// Hazard: an annotation inside a block comment is not an annotation.
#include <cstdint>
#include "brainevent/common.h"
/* Old entry point, kept for reference:
// @BE old_scale
*/
// @BE scale
void scale(const BE::Tensor x, BE::Tensor y, float alpha, int64_t stream) {}
