#!/usr/bin/env bash
# Build the example crate and call its kernels from JAX.
#
#   scripts/demo.sh            # CPU kernels: build.rs -> libdemo_cpu.so + demo_cpu.py -> JAX
#   scripts/demo.sh --cuda     # also compile the CUDA kernels with nvcc (they run
#                              # only where JAX sees a GPU)
#
# Installs what it needs first (scripts/setup.sh: .venv with JAX and the pip
# CUDA toolkit). The example is examples/kernels-demo: its build.rs calls
# begen::Build, and run.py imports the generated modules and prints results.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DEMO=examples/kernels-demo

cuda=0
for a in "$@"; do
    case "$a" in
        --cuda) cuda=1 ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        *) echo "demo.sh: unknown argument '$a'" >&2; exit 2 ;;
    esac
done

if [[ ! -f "$DEMO/Cargo.toml" || ! -f "$DEMO/run.py" ]]; then
    echo "demo.sh: the example crate $DEMO (Cargo.toml, build.rs, run.py) is not in this checkout yet;" >&2
    echo "demo.sh: nothing to demonstrate until it lands" >&2
    exit 1
fi

bash scripts/setup.sh
# shellcheck source=env.sh
source scripts/env.sh

features=()
[[ $cuda == 1 ]] && features=(--features cuda)

echo "demo.sh: building $DEMO (its build.rs runs begen)"
# The example is its own workspace; sharing target/ reuses begen's build.
out="$(cargo run --quiet --manifest-path "$DEMO/Cargo.toml" --target-dir "$ROOT/target" "${features[@]}")"
echo "$out"

cpu_dir="$(sed -n 's|^demo_cpu module: *\(.*\)/demo_cpu\.py$|\1|p' <<<"$out")"
cuda_dir="$(sed -n 's|^demo_cuda module: *\(.*\)/demo_cuda\.py$|\1|p' <<<"$out")"
if [[ -z "$cpu_dir" || ! -f "$cpu_dir/demo_cpu.py" ]]; then
    echo "demo.sh: could not find demo_cpu.py in the example's output above" >&2
    exit 1
fi

echo
echo "demo.sh: $BEGEN_PYTHON $DEMO/run.py $cpu_dir${cuda_dir:+ $cuda_dir}"
exec "$BEGEN_PYTHON" "$DEMO/run.py" "$cpu_dir" ${cuda_dir:+"$cuda_dir"}
