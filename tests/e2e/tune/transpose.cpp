// A kernel whose speed depends on a compile-time tile: the tuning tests'
// CPU kernel. BLOCK=1 walks the output with a stride of n floats (one cache
// line per element on a large matrix); a tile of BLOCK x BLOCK reads and
// writes whole cache lines.
#include <cstdint>

#include "brainevent/common.h"

// @BE transpose arg:float32[n,m] ret:float32[m,n] dim.n dim.m const.BLOCK=1,8,32
template <int BLOCK>
void transpose(const float* x, float* y, int64_t n, int64_t m) {
    for (int64_t i0 = 0; i0 < n; i0 += BLOCK) {
        for (int64_t j0 = 0; j0 < m; j0 += BLOCK) {
            const int64_t i1 = i0 + BLOCK < n ? i0 + BLOCK : n;
            const int64_t j1 = j0 + BLOCK < m ? j0 + BLOCK : m;
            for (int64_t i = i0; i < i1; ++i) {
                for (int64_t j = j0; j < j1; ++j) y[j * n + i] = x[i * m + j];
            }
        }
    }
}

// A second tuned kernel, over a bool: whether to scale in two passes.
// @BE scaled arg:float32[n] ret:float32[n] attr.a:float32 dim.n const.TWO_PASS=false,true
template <bool TWO_PASS>
void scaled(const float* x, float* y, float a, int64_t n) {
    if (TWO_PASS) {
        for (int64_t i = 0; i < n; ++i) y[i] = x[i];
        for (int64_t i = 0; i < n; ++i) y[i] *= a;
    } else {
        for (int64_t i = 0; i < n; ++i) y[i] = a * x[i];
    }
}
