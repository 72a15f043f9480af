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
ext=cpp
[[ $CUDA == 1 ]] && ext=cu

# shellcheck source=bench/kernel_tree.sh
source "$ROOT/bench/kernel_tree.sh"
kernel_tree "$KDIR" "$N" "$CUDA" "$HEAVY"

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
# Run where begen ran it: its include paths (the support headers) are
# relative to the work directory. nvcc links its static runtime by itself.
single() { (cd "$WORK/work/bench" && "${argv[@]}" -shared -o "$WORK/one.so" "$one"); }
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
