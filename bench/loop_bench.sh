#!/usr/bin/env bash
# The edit–build loop: how long a no-op build and a build after editing one
# source take, for two begen binaries side by side in one run (OLD, e.g.
# built from an earlier commit into another target dir, and NEW), and a
# compiler cache's cold against warm clean build (NEW with
# BEGEN_COMPILER_LAUNCHER=ccache, two fresh work directories).
#
#   bench/loop_bench.sh OLD_BEGEN NEW_BEGEN [TREE...]
#
# TREE (default: examples/kernels-demo's cpu and cuda kernels, tests/e2e's
# modules, and bench/kernel_tree.sh's 12 generated sources, as in
# bench/build_bench.sh) is a kernel directory; a cuda tree is skipped
# without nvcc. Each tree is
# copied (edits go to the copy), built clean once per binary into its own
# work directory, then: RUNS no-op builds and EDITS one-source edits (a
# comment appended to the tree's first source), alternating OLD and NEW so
# that both see the same machine load. Prints medians (wall seconds) and
# NEW/OLD ratios. Needs a Python with jax (BEGEN_PYTHON, default
# .venv/bin/python) and, for the cache figure, ccache.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[[ $# -ge 2 ]] || { echo "usage: $0 OLD_BEGEN NEW_BEGEN [TREE...]" >&2; exit 2; }
OLD="$1"; NEW="$2"; shift 2
RUNS="${RUNS:-10}"
EDITS="${EDITS:-3}"
export BEGEN_PYTHON="${BEGEN_PYTHON:-$ROOT/.venv/bin/python}"
# shellcheck disable=SC1091
source "$ROOT/scripts/env.sh" >/dev/null 2>&1 || true

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

trees=("$@")
if [[ ${#trees[@]} -eq 0 ]]; then
    gen="$WORK/generated12"
    # shellcheck source=bench/kernel_tree.sh
    source "$ROOT/bench/kernel_tree.sh"
    kernel_tree "$gen" 12 0 0
    trees=("$ROOT/examples/kernels-demo/kernels/cpu" "$ROOT/examples/kernels-demo/kernels/cuda"
           "$ROOT/tests/e2e/modules" "$gen")
fi

have_nvcc() { "$NEW" doctor 2>/dev/null | grep -q '^nvcc: *[^n]'; }
secs() { local s e; s=$(date +%s.%N); "$@" >"$WORK/last.log" 2>&1 || { cat "$WORK/last.log" >&2; exit 1; }
         e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN { printf "%.4f", e - s }'; }
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

printf '%-22s %-8s %10s %10s %7s\n' "tree" "build" "old (s)" "new (s)" "new/old"
for tree in "${trees[@]}"; do
    name="$(basename "$tree")"
    if [[ "$name" == cuda ]] && ! have_nvcc; then echo "$name: skipped (no nvcc)"; continue; fi
    t="$WORK/trees/$name"
    mkdir -p "$WORK/trees"; rm -rf "$t"; cp -r "$tree" "$t"
    first="$(cd "$t" && find . -name '*.cu' -o -name '*.cpp' -o -name '*.cc' | sort | head -1)"
    build() { "$1" build "$t" --out "$WORK/out-$name-$2" --work-dir "$WORK/work-$name-$2" --quiet; }
    secs build "$OLD" old >/dev/null
    secs build "$NEW" new >/dev/null
    : > "$WORK/noop-old"; : > "$WORK/noop-new"; : > "$WORK/edit-old"; : > "$WORK/edit-new"
    for _ in $(seq 1 "$RUNS"); do
        secs build "$OLD" old >> "$WORK/noop-old"; echo >> "$WORK/noop-old"
        secs build "$NEW" new >> "$WORK/noop-new"; echo >> "$WORK/noop-new"
    done
    for i in $(seq 1 "$EDITS"); do
        printf '\n// edit %s\n' "$i" >> "$t/$first"
        secs build "$OLD" old >> "$WORK/edit-old"; echo >> "$WORK/edit-old"
        secs build "$NEW" new >> "$WORK/edit-new"; echo >> "$WORK/edit-new"
    done
    for kind in noop edit; do
        o=$(median < "$WORK/$kind-old"); n=$(median < "$WORK/$kind-new")
        label=$([[ $kind == noop ]] && echo "no-op" || echo "edit one")
        printf '%-22s %-8s %10.3f %10.3f %7.3f\n' "$name" "$label" "$o" "$n" "$(awk -v o="$o" -v n="$n" 'BEGIN { print n / o }')"
    done
done

if command -v ccache >/dev/null; then
    echo
    printf '%-22s %12s %12s %7s\n' "ccache (new begen)" "cold (s)" "warm (s)" "warm/cold"
    for tree in "${trees[@]}"; do
        name="$(basename "$tree")"
        if [[ "$name" == cuda ]] && ! have_nvcc; then continue; fi
        export CCACHE_DIR="$WORK/ccache-$name"
        cold=$(BEGEN_COMPILER_LAUNCHER=ccache secs "$NEW" build "$tree" --out "$WORK/cc-out-$name-1" --work-dir "$WORK/cc-work-$name-1" --quiet)
        warm=$(BEGEN_COMPILER_LAUNCHER=ccache secs "$NEW" build "$tree" --out "$WORK/cc-out-$name-2" --work-dir "$WORK/cc-work-$name-2" --quiet)
        hits=$(ccache -s 2>/dev/null | awk '/Hits:/ { print $2; exit }')
        printf '%-22s %12.2f %12.2f %7.3f   (%s hits)\n' "$name" "$cold" "$warm" "$(awk -v c="$cold" -v w="$warm" 'BEGIN { print w / c }')" "${hits:-?}"
    done
else
    echo "ccache not installed: no cache figure"
fi
