// A source tuned over its defines whose kernel takes BE::Tensor (no typed
// contract, as brainevent's kernels): the key dims are read from the
// inputs' extents (`key: {n: "x[0]", m: "x[1]"}` in begen.yaml), and begen
// tune takes its inputs from a generator (tune_any_inputs.py). The
// transpose's speed depends on TILE (TILE=1 walks the output with a stride
// of a whole row); `scratch` is workspace whose contents depend on the
// candidate, so the generator leaves it out of the check.
#include <cstdint>

#include "brainevent/common.h"

#ifndef TILE
#define TILE 1
#endif

// @BE transpose_any
void transpose_any(const BE::Tensor x, BE::Tensor y, BE::Tensor scratch) {
    const int64_t n = x.shape(0), m = x.shape(1);
    const float* a = x.data_ptr<const float>();
    float* b = y.data_ptr<float>();
    for (int64_t i0 = 0; i0 < n; i0 += TILE) {
        for (int64_t j0 = 0; j0 < m; j0 += TILE) {
            const int64_t i1 = i0 + TILE < n ? i0 + TILE : n;
            const int64_t j1 = j0 + TILE < m ? j0 + TILE : m;
            for (int64_t i = i0; i < i1; ++i) {
                for (int64_t j = j0; j < j1; ++j) b[j * n + i] = a[i * m + j];
            }
        }
    }
    scratch.data_ptr<int32_t>()[0] = TILE;
}
