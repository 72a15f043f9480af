// The kernel both torch bindings of bench/torch/torch_overhead.py call:
// out = alpha * x over n floats, small enough that a call's cost is the
// binding's own.
#include <cstdint>

// @BE scale arg:float32[n] ret:float32[n] attr.alpha dim.n
void scale(const float* x, float* out, float alpha, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = alpha * x[i];
}
