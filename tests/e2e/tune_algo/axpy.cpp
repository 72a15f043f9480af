// Two CPU implementations of one algorithm, `axpy` (out = x + alpha * y),
// that really differ in speed: `axpy_passes` makes PASSES full passes over
// the arrays, each behind a compiler barrier so that none is merged or
// dropped, and keeps the last; `axpy_once` makes one. The slow one has the
// higher priority, so the priority order runs it and `begen tune` has a
// faster implementation to find. Both compute the same values.
#include <cstdint>

namespace {
constexpr int PASSES = 32;
}

// @BE axpy_passes arg:float32[n] arg:float32[n] ret:float32[n] attr.alpha dim.n
void axpy_passes(const float* x, const float* y, float* out, float alpha, int64_t n) {
    for (int pass = 0; pass < PASSES; ++pass) {
        // The barrier: the compiler must assume memory changed, so every
        // pass reads and writes the arrays again.
        asm volatile("" ::: "memory");
        for (int64_t i = 0; i < n; ++i) out[i] = x[i] + alpha * y[i];
    }
}

// The same with its dimension named otherwise: implementations agree up to
// a renaming, and the tuning key follows the algorithm's signature.
// @BE axpy_once arg:float32[m] arg:float32[m] ret:float32[m] attr.alpha dim.m
void axpy_once(const float* x, const float* y, float* out, float alpha, int64_t m) {
    for (int64_t i = 0; i < m; ++i) out[i] = x[i] + alpha * y[i];
}
