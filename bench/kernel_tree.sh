# The generated kernel tree of bench/build_bench.sh and bench/loop_bench.sh,
# sourced by both:
#
#   kernel_tree DIR N CUDA HEAVY
#
# writes N sources k1..kN into DIR, each with one annotated function
# `kernel_<i>` (the i also in its body, so no two sources are the same):
# .cpp sources when CUDA is 0; with CUDA 1, .cu sources with a __global__
# kernel launched on the call's stream; with HEAVY 1 each source
# instantiates its kernel template 12 times (6 block sizes x float/double).

kernel_tree() {
    local dir="$1" n="$2" cuda="$3" heavy="$4" i
    mkdir -p "$dir"
    for i in $(seq 1 "$n"); do
        if [[ $cuda == 1 && $heavy == 1 ]]; then
            cat > "$dir/k$i.cu" <<KERNEL
#include <cuda_runtime.h>
#include <cstdint>
#include "brainevent/common.h"

namespace bench_k$i {
template <int B, typename T>
__global__ void kernel(const T* x, T* y, T a, int64_t n) {
    __shared__ T tile[B];
    const int64_t j = blockIdx.x * static_cast<int64_t>(B) + threadIdx.x;
    tile[threadIdx.x] = j < n ? x[j] : T(0);
    __syncthreads();
    T acc = 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) acc += tile[(threadIdx.x + k) % B] * T($i + k);
    if (j < n) y[j] = a * acc;
}
template <typename T>
void launch(const BE::Tensor& x, BE::Tensor& y, T a, int block, cudaStream_t s) {
    const int64_t n = x.numel();
    const T* in = x.data_ptr<const T>();
    T* out = y.data_ptr<T>();
    switch (block) {
#define CASE(B) case B: kernel<B, T><<<static_cast<int>((n + B - 1) / B), B, 0, s>>>(in, out, a, n); break;
        CASE(32) CASE(64) CASE(128) CASE(256) CASE(512) CASE(1024)
#undef CASE
        default: BE_CHECK(false) << "unsupported block size " << block;
    }
}
}  // namespace bench_k$i

// @BE kernel_$i
void kernel_$i(const BE::Tensor x, BE::Tensor y, float alpha, int32_t block, int64_t stream) {
    auto s = reinterpret_cast<cudaStream_t>(stream);
    if (x.dtype() == BE::DType::Float64) bench_k$i::launch<double>(x, y, alpha, block, s);
    else bench_k$i::launch<float>(x, y, alpha, block, s);
    BE_CHECK_KERNEL_LAUNCH();
}
KERNEL
        elif [[ $cuda == 1 ]]; then
            cat > "$dir/k$i.cu" <<KERNEL
#include <cuda_runtime.h>
#include <cstdint>
#include "brainevent/common.h"

namespace bench_k$i {
__global__ void kernel(const float* x, float* y, float a, int64_t n) {
    const int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (j < n) y[j] = a * tanhf(x[j]) + $i.0f;
}
}  // namespace bench_k$i

// @BE kernel_$i
void kernel_$i(const BE::Tensor x, BE::Tensor y, float alpha, int64_t stream) {
    const int64_t n = x.numel();
    bench_k$i::kernel<<<static_cast<int>((n + 255) / 256), 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
        x.data_ptr<const float>(), y.data_ptr<float>(), alpha, n);
    BE_CHECK_KERNEL_LAUNCH();
}
KERNEL
        elif [[ $heavy == 1 ]]; then
            cat > "$dir/k$i.cpp" <<KERNEL
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <vector>
#include "brainevent/common.h"

namespace bench_k$i {
template <int B, typename T>
void tile(const T* in, T* out, int64_t n, T a) {
    std::map<int64_t, T> seen;
    for (int64_t j = 0; j < n; j += B) {
        std::vector<T> t(in + j, in + std::min<int64_t>(n, j + B));
        std::sort(t.begin(), t.end());
        for (size_t k = 0; k < t.size(); ++k) out[j + k] = a * std::tanh(t[k]) + T($i);
        seen[j] = t.empty() ? T(0) : t.front();
    }
}
template <typename T>
void run(const BE::Tensor& x, BE::Tensor& y, T a, int block) {
    const T* in = x.data_ptr<const T>();
    T* out = y.data_ptr<T>();
    switch (block) {
        case 32: tile<32>(in, out, x.numel(), a); break;
        case 64: tile<64>(in, out, x.numel(), a); break;
        case 128: tile<128>(in, out, x.numel(), a); break;
        case 256: tile<256>(in, out, x.numel(), a); break;
        case 512: tile<512>(in, out, x.numel(), a); break;
        default: tile<1024>(in, out, x.numel(), a); break;
    }
}
}  // namespace bench_k$i

// @BE kernel_$i
void kernel_$i(const BE::Tensor x, BE::Tensor y, float alpha, int32_t block) {
    if (x.dtype() == BE::DType::Float64) bench_k$i::run<double>(x, y, alpha, block);
    else bench_k$i::run<float>(x, y, alpha, block);
}
KERNEL
        else
            cat > "$dir/k$i.cpp" <<KERNEL
#include <cmath>
#include <cstdint>
#include <vector>
#include "brainevent/common.h"

namespace bench_k$i {
template <typename T>
T op(T v) { return std::tanh(v) * T($i); }
}  // namespace bench_k$i

// @BE kernel_$i
void kernel_$i(const BE::Tensor x, BE::Tensor y, float alpha) {
    const float* in = x.data_ptr<const float>();
    float* out = y.data_ptr<float>();
    std::vector<float> tmp(in, in + x.numel());
    for (int64_t j = 0; j < x.numel(); ++j) out[j] = alpha * bench_k$i::op(tmp[j]);
}
KERNEL
        fi
    done
}
