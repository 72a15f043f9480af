#include <cstdint>

#include "brainevent/common.h"

// zlib's own declaration, so no development header is needed.
extern "C" const char* zlibVersion(void);

// @BE zlib_major
void zlib_major(BE::Tensor out) {
    int32_t* o = out.data_ptr<int32_t>();
    o[0] = zlibVersion()[0] - '0';
}
