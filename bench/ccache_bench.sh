#!/usr/bin/env bash
# A compiler cache's cold against warm clean build: with
# BEGEN_COMPILER_LAUNCHER=CCACHE and a fresh, empty CCACHE_DIR, one clean
# `begen build` of TREE into a new work directory and OUT (cold: every
# compile a miss), then another into another new work directory and OUT
# (warm: hits, since begen's commands name no work directory), and, for
# reference, the same clean build without a launcher. Prints each wall
# time, the ratios and ccache's statistics after each cached build.
#
#   bench/ccache_bench.sh TREE BEGEN CCACHE [BUILD ARGS...]
#
# TREE is a kernel directory, BEGEN a begen binary, CCACHE a ccache binary
# (a path, or a name on PATH); BUILD ARGS go to every `begen build` (e.g.
# `--platform cuda`, `-I DIR`). PLAIN=0 skips the build without a
# launcher. Work files go to a fresh folder under BENCH_DIR (default
# TMPDIR, else /tmp), removed at the end unless KEEP=1. Needs a Python
# with jax (BEGEN_PYTHON; without it, the checkout's .venv through
# scripts/env.sh) and, for `.cu` sources, nvcc.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[[ $# -ge 3 ]] || { echo "usage: $0 TREE BEGEN CCACHE [BUILD ARGS...]" >&2; exit 2; }
TREE="$1"; BEGEN="$2"; CCACHE="$3"; shift 3
if [[ -z "${BEGEN_PYTHON:-}" && -x "$ROOT/.venv/bin/python" ]]; then
    # shellcheck disable=SC1091
    source "$ROOT/scripts/env.sh" >/dev/null 2>&1 || true
fi
# The launcher begen runs must be this very binary, whatever PATH holds.
if [[ "$CCACHE" != */* ]]; then
    CCACHE="$(command -v "$CCACHE")" || { echo "$0: ccache \`$3\` not found on PATH" >&2; exit 2; }
fi
"$CCACHE" --version >/dev/null 2>&1 || {
    echo "$0: \`$CCACHE --version\` fails (its libraries: LD_LIBRARY_PATH):" >&2
    "$CCACHE" --version >&2 || true
    exit 2
}

base="${BENCH_DIR:-${TMPDIR:-/tmp}}"
mkdir -p "$base"
WORK="$(mktemp -d "$base/ccache-bench.XXXXXX")"
[[ "${KEEP:-0}" == 1 ]] || trap 'rm -rf "$WORK"' EXIT
export CCACHE_DIR="$WORK/ccache"
mkdir -p "$CCACHE_DIR"

# Wall seconds of one clean build into work directory and OUT `$1`
# (launcher from the environment); its log in `$WORK/$1.log`.
clean_build() {
    local s e
    s=$(date +%s.%N)
    if ! "$BEGEN" build "$TREE" --out "$WORK/$1/out" --work-dir "$WORK/$1/work" --quiet "${@:2}" \
        >"$WORK/$1.log" 2>&1; then
        echo "$0: the $1 build failed:" >&2
        tail -40 "$WORK/$1.log" >&2
        exit 1
    fi
    e=$(date +%s.%N)
    awk -v s="$s" -v e="$e" 'BEGIN { printf "%.2f", e - s }'
}

# ccache's counters since the last zeroing: hits, misses, and the calls it
# could not cache (each reason that occurred), then `ccache -s`.
stats() {
    "$CCACHE" --print-stats | awk '
        /^(direct|preprocessed)_cache_hit\t/ { hits += $2 }
        /^cache_miss\t/ { misses = $2 }
        /^(autoconf_test|bad_|called_for_|compile_failed|compiler_|could_not_|error_|internal_error|missing_cache_file|multiple_source_files|no_input_file|output_to_stdout|preprocessor_error|unsupported_)/ && $2 > 0 {
            other = other " " $1 "=" $2 }
        END { printf "%s: %d hits, %d misses; uncacheable:%s\n", label, hits, misses, (other == "" ? " none" : other) }
    ' label="$1"
    "$CCACHE" -s | sed 's/^/    /'
}

echo "== ccache cold/warm: $TREE, $(nproc) cores, $("$CCACHE" --version | head -1)"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
plain=""
if [[ "${PLAIN:-1}" != 0 ]]; then
    plain=$(BEGEN_COMPILER_LAUNCHER="" clean_build plain "$@")
    echo "no launcher:  ${plain} s"
fi
"$CCACHE" -z >/dev/null
cold=$(BEGEN_COMPILER_LAUNCHER="$CCACHE" clean_build cold "$@")
echo "ccache cold:  ${cold} s"
stats "cold"
"$CCACHE" -z >/dev/null
warm=$(BEGEN_COMPILER_LAUNCHER="$CCACHE" clean_build warm "$@")
echo "ccache warm:  ${warm} s"
stats "warm"
echo "warm/cold $(ratio "$warm" "$cold")${plain:+, cold/plain $(ratio "$cold" "$plain"), warm/plain $(ratio "$warm" "$plain")}"
