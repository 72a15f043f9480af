#!/usr/bin/env bash
# Build-time benchmark: begen's builds (one TU per source with its kernels'
# trampolines, plus one glue TU with every XLA FFI handler) against
# compiling the same kernels as ONE translation unit (what a runtime JIT
# such as kernix does), from clean and after touching one source.
#
#   bench/build_bench.sh [N] [--cuda] [--heavy]
#
# N (default 12) generated kernels, each in its own source with one
# annotated function. With --cuda the kernels are .cu files compiled by
# nvcc for one architecture (sm_90). With --heavy each source instantiates
# its kernel template 12 times (6 block sizes x float/double), closer to
# real kernel libraries, where the kernels' own code dominates the fixed
# per-TU cost (nvcc's passes, the support headers). Needs a Python with jax (BEGEN_PYTHON,
# default .venv/bin/python) and a built begen (BEGEN_BIN, default
# target/release/begen, else target/debug/begen).
#
# Prints one table: wall and CPU seconds for a clean build, a no-op
# rebuild, and a rebuild after touching one source, for begen (-j = number
# of CPUs) and for the single-TU build (which has no no-op rebuild: it
# always recompiles everything).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
N=12
CUDA=0
HEAVY=0
for a in "$@"; do
    case "$a" in
        --cuda) CUDA=1 ;;
        --heavy) HEAVY=1 ;;
        [0-9]*) N="$a" ;;
        *) echo "usage: $0 [N] [--cuda] [--heavy]" >&2; exit 2 ;;
    esac
done

export BEGEN_PYTHON="${BEGEN_PYTHON:-$ROOT/.venv/bin/python}"
[[ -x "$BEGEN_PYTHON" ]] || BEGEN_PYTHON=python3
BEGEN="${BEGEN_BIN:-}"
if [[ -z "$BEGEN" ]]; then
    for b in "$ROOT/target/release/begen" "$ROOT/target/debug/begen"; do
        [[ -x "$b" ]] && { BEGEN="$b"; break; }
    done
fi
[[ -x "${BEGEN:-}" ]] || { echo "build begen first (cargo build --release)" >&2; exit 1; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
KDIR="$WORK/kernels"
mkdir -p "$KDIR"
ext=cpp
[[ $CUDA == 1 ]] && ext=cu

for i in $(seq 1 "$N"); do
    if [[ $CUDA == 1 && $HEAVY == 1 ]]; then
        cat > "$KDIR/k$i.cu" <<KERNEL
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
    elif [[ $CUDA == 1 ]]; then
        cat > "$KDIR/k$i.cu" <<KERNEL
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
    elif [[ $HEAVY == 1 ]]; then
        cat > "$KDIR/k$i.cpp" <<KERNEL
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
        cat > "$KDIR/k$i.cpp" <<KERNEL
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

# secs CMD...: runs CMD, prints "WALL CPU" in seconds (CPU: user + system
# of CMD and its children, i.e. every compiler run). On a shared machine
# CPU seconds are the steadier figure.
secs() {
    local t
    t=$( { TIMEFORMAT='%R %U %S'; time "$@" >"$WORK/last.log" 2>&1; } 2>&1 ) ||
        { cat "$WORK/last.log" >&2; echo "failed: $*" >&2; exit 1; }
    awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%.2f %.2f", a[1], a[2] + a[3] }'
}
touch_one() { printf '\n// touched %s\n' "$RANDOM" >> "$KDIR/k1.$ext"; }

platform=cpu
arch=()
if [[ $CUDA == 1 ]]; then platform=cuda; arch=(--arch sm_90); fi
build() { "$BEGEN" build "$KDIR" --out "$WORK/out" --name bench --platform "$platform" "${arch[@]}" --work-dir "$WORK/work" --quiet; }

b_clean=$(secs build)
b_noop=$(secs build)
touch_one
b_touch=$(secs build)

# The single-TU build: every generated wrapper (each includes its source)
# and the glue (host code only, as in begen's wrappers) in one file,
# compiled and linked by one compiler run, with the same flags begen used
# for the sources.
"$BEGEN" generate "$KDIR" --out "$WORK/gen" --name bench >/dev/null
one="$WORK/one.$( [[ $CUDA == 1 ]] && echo cu || echo cc )"
: > "$one"
for w in "$WORK"/gen/gen/k*.begen.*; do echo "#include \"$w\"" >> "$one"; done
if [[ -f "$WORK/gen/gen/bench.begen.cc" ]]; then
    {
        echo '#if !defined(__CUDA_ARCH__)'
        echo "#include \"$WORK/gen/gen/bench.begen.cc\""
        echo '#endif'
    } >> "$one"
fi
cmd_file=$(ls "$WORK"/work/bench/obj/gen/k1."$ext".begen.*.o.cmd | head -1)
mapfile -t argv < <(grep -v -x -e '-MMD' -e '-MF' -e '-c' -e '-o' "$cmd_file" | grep -v -e '\.o\.d$' -e '\.o$' -e '\.begen\.')
# nvcc links its static runtime by itself.
single() { "${argv[@]}" -shared -o "$WORK/one.so" "$one"; }
s_clean=$(secs single)
touch_one
s_touch=$(secs single)

weight=light
[[ $HEAVY == 1 ]] && weight=heavy
echo "kernels: $N $weight .$ext sources ($platform), $(nproc) CPUs, begen -j$(nproc)"
echo "seconds: wall / CPU (user + sys of every compiler run)"
row() { read -r bw bc <<<"$2"; read -r sw sc <<<"$3"; printf '%-30s %7s %7s   %7s %7s\n' "$1" "$bw" "$bc" "$sw" "$sc"; }
printf '%-30s %15s   %15s\n' "" "begen" "one TU"
row "clean build" "$b_clean" "$s_clean"
row "no-op rebuild" "$b_noop" "- -"
row "rebuild after touching 1" "$b_touch" "$s_touch"
