#!/usr/bin/env bash
# On a machine with an NVIDIA GPU, nvcc and JAX with CUDA: build the CUDA
# example kernels with begen, run them from JAX against numpy, then run the
# per-call overhead benchmark (bench/gpu) against a hand-written handler.
#
# usage: scripts/gpu-check.sh [BEGEN_BIN]     (default target/release/begen)
#   BEGEN_PYTHON (default python3) must import jax with a GPU backend.
#   SKIP_BENCH=1 skips the benchmark.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BEGEN="${1:-$ROOT/target/release/begen}"
PY="${BEGEN_PYTHON:-python3}"
WORK="${GPU_CHECK_DIR:-$(mktemp -d)}"

echo "== toolchain"
"$BEGEN" doctor || true
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader

echo "== build examples/kernels-demo/kernels/cuda"
"$BEGEN" build examples/kernels-demo/kernels/cuda --out "$WORK/demo" --name demo_cuda --platform cuda
nm -D "$WORK/demo/libdemo_cuda.so" | grep ' T begen_' || { echo "no handler symbols" >&2; exit 1; }

echo "== run them from JAX"
"$PY" tests/gpu/check_cuda.py "$WORK/demo"

if [[ "${SKIP_BENCH:-0}" != 1 ]]; then
    echo "== per-call overhead benchmark"
    "$BEGEN" build bench/gpu/kernels --out "$WORK/ovh" --name ovh --platform cuda
    xla_inc="$("$PY" -c 'import jax.ffi; print(jax.ffi.include_dir())')"
    cap="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)"
    "${NVCC:-nvcc}" -std=c++17 -O3 -arch="sm_$cap" -Xcompiler -fPIC -shared \
        -isystem "$xla_inc" bench/gpu/handwritten.cu -o "$WORK/hand.so"
    "$PY" bench/gpu/ffi_overhead.py "$WORK/ovh" "$WORK/hand.so" --rounds "${ROUNDS:-300}"
fi
