// A source tuned over its defines: every combination `where:` allows is
// compiled into the library as a candidate. The transpose's speed depends
// on TILE (TILE=1 walks the output with a stride of a whole row, and
// repeats its walk); `probe`
// reports what an inline function, a template and a plain function of this
// source see, so that a test can tell each candidate runs its own copy of
// them (the linker would otherwise keep one body for all candidates).
#include <cstdint>

#ifndef TILE
#define TILE 1
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

inline int64_t tile_seen() { return TILE; }

template <int N>
int64_t unroll_seen() {
    return N * UNROLL;
}

// Not inline, not static: each candidate's copy clashes with the others'.
int64_t both_seen() { return 100 * TILE + UNROLL; }

// @BE transpose arg:float32[n,m] ret:float32[m,n] dim.n dim.m
void transpose(const float* x, float* y, int64_t n, int64_t m) {
    const int64_t tile = tile_seen();
    // The untiled default also walks the whole matrix eight times, so that
    // it is the slowest candidate on any cache hierarchy: a test of `begen
    // tune` can then require a tiled candidate to win.
    const int passes = TILE == 1 ? 8 : 1;
    for (int pass = 0; pass < passes; ++pass) {
        for (int64_t i0 = 0; i0 < n; i0 += tile) {
            for (int64_t j0 = 0; j0 < m; j0 += tile) {
                const int64_t i1 = i0 + tile < n ? i0 + tile : n;
                const int64_t j1 = j0 + tile < m ? j0 + tile : m;
                for (int64_t i = i0; i < i1; ++i) {
                    for (int64_t j = j0; j < j1; ++j) y[j * n + i] = x[i * m + j];
                }
            }
        }
    }
}

// @BE probe arg:float32[n] ret:float32[n] dim.n
void probe(const float* x, float* y, int64_t n) {
    const float seen[3] = {float(tile_seen()), float(unroll_seen<1>()), float(both_seen())};
    for (int64_t i = 0; i < n; ++i) y[i] = i < 3 ? seen[i] : x[i];
}

// A derivative of a tuned source: `scale_by_tile` and its backward kernel
// (begen.yaml's vjp:) scale by a number each candidate spells differently,
// so a backward pass that ran another candidate than its forward call
// would give a gradient the forward's scale does not.
// @BE scale_by_tile arg:float32[n] ret:float32[n] dim.n
void scale_by_tile(const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * float(10 * TILE + UNROLL);
}

// @BE scale_by_tile_bwd arg:float32[n] ret:float32[n] dim.n
void scale_by_tile_bwd(const float* g, float* gx, int64_t n) {
    for (int64_t i = 0; i < n; ++i) gx[i] = g[i] * float(10 * TILE + UNROLL);
}
