// The kernel of the binary-binding benchmark: compiled to a cubin by nvcc at
// bench time (bench/gpu/binary_overhead.py's caller), then bound by begen
// (begen.yaml here) and by a hand-written handler (handwritten_binary.cc).
#include <cstdint>

extern "C" __global__ void add_one(const float* x, float* y, uint64_t n) {
    uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}
