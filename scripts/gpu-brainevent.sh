#!/usr/bin/env bash
# On the GPU machine (no network): brainevent 0.3.0's whole kernel tree built
# by begen as ONE library, then brainevent's own `cuda_raw` tests run twice,
# with its modules served from that library and with kernix compiling them at
# run time (cold cache), and the pass/fail sets compared.
#
# usage: scripts/gpu-brainevent.sh [BEGEN_BIN] [build|tests-begen|tests-kernix|compare|all|
#                                              bench-first|bench-kernix|bench-per-file]
#   Needs .cache/gpu-brainevent/ carried along: wheels/ (brainevent and its
#   test-only dependencies: `pip download` them elsewhere) and layout/ (made
#   by tests/gpu/brainevent_layout.py). WORK (default /tmp/begen-brainevent)
#   TESTS (default: all of brainevent) narrows the test run to some of its
#   folders, XDIST sets pytest-xdist's workers. WORK also
#   keeps state between the steps, so each step fits one device call; with
#   $OUT set (the device tool's), the test results are copied there, and
#   `scripts/gpu-brainevent.sh BIN compare DIR` compares them anywhere.
#   The bench-* steps (bench/gpu/brainevent_build.py) each fit one device
#   call on a fresh machine: bench-first builds the tree (a clean build,
#   timed) and times import -> first result for begen's library and kernix
#   (cold and warm cache); bench-kernix has kernix compile every module of
#   the library; bench-per-file builds every source with its own `begen build`.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BEGEN="$(realpath "${1:-$ROOT/target/release/begen}")"
STEP="${2:-all}"
PY="${BEGEN_PYTHON:-python3}"
C="$ROOT/.cache/gpu-brainevent"
W="${WORK:-/tmp/begen-brainevent}"
JOBS="${JOBS:-$(nproc)}"
mkdir -p "$W"
export PYTHONPATH="$W/site"
export XLA_PYTHON_CLIENT_PREALLOCATE=false

install() {
    [[ -f "$W/site/.installed" ]] && return 0
    echo "== brainevent and its test dependencies into $W/site (no network: wheels carried)"
    local wheels=(brainevent brainunit saiunit brainstate braintools msgpack array_api_compat)
    "$PY" -c "import opt_einsum" 2>/dev/null || wheels+=(opt_einsum)
    "$PY" -c "import typing_extensions" 2>/dev/null || wheels+=(typing_extensions)
    "$PY" -c "import matplotlib" 2>/dev/null || wheels+=(matplotlib contourpy cycler fonttools kiwisolver pillow pyparsing python_dateutil six)
    local files=()
    for w in "${wheels[@]}"; do files+=("$(ls "$C"/wheels/"$w"-*.whl | head -1)"); done
    "$PY" -m pip install -q --no-deps --no-index --target "$W/site" "${files[@]}" || return 1
    cat "$ROOT/tests/gpu/brainevent_serve.py" >> "$W/site/brainevent/_op/kernix_pipeline.py"
    touch "$W/site/.installed"
}

# The sources that need the toolkit's cuBLAS headers, where it has them.
optional() {
    local cuda_inc
    cuda_inc="$(dirname "$(dirname "$(command -v nvcc)")")/include"
    if [[ -f "$cuda_inc/cublas_v2.h" ]]; then
        while IFS=$'\t' read -r file module; do
            mkdir -p "$(dirname "$W/tree/brainevent/$file")"
            cp "$W/tree/optional/$file" "$W/tree/brainevent/$file"
            sed -i "/^  names:/a\\    \"$file\": \"$module\"" "$W/tree/brainevent/begen.yaml"
            echo "   + $file (cuBLAS headers at $cuda_inc)"
        done < "$W/tree/optional.txt"
        printf 'link:\n  libs: [cublas]\n' >> "$W/tree/brainevent/begen.yaml"
    fi
}

build() {
    echo "== the tree, one library, $JOBS cores"
    rm -rf "$W/tree" "$W/out" && cp -r "$C/layout" "$W/tree"
    optional
    local start=$SECONDS
    "$BEGEN" build "$W/tree/brainevent" --out "$W/out" --platform cuda -I "$W/tree/include" --quiet || return 1
    echo "begen build: $((SECONDS - start)) s wall for $(ls "$W"/tree/brainevent/**/*.cu "$W"/tree/brainevent/*/*/*.cu 2>/dev/null | sort -u | wc -l) sources;" \
         "$(nm -D "$W/out/libbrainevent_aot.so" | grep -c ' T begen_') handlers"
}

# run_tests LABEL [ENV...]: brainevent's cuda_raw tests, results in $W/LABEL.xml.
run_tests() {
    local label="$1"; shift
    echo "== brainevent's cuda_raw tests: $label"
    local start=$SECONDS
    (cd "$W/site" && env "$@" "$PY" -m pytest -q -p no:cacheprovider -n "${XDIST:-8}" -k cuda_raw \
        --junitxml="$W/$label.xml" ${TESTS:-brainevent} 2>&1 | tail -3)
    echo "$label: $((SECONDS - start)) s"
    # The device tool brings $OUT back: the comparison can run elsewhere.
    if [[ -n "${OUT:-}" ]]; then cp "$W/$label.xml" "$OUT/" 2>/dev/null; cp "$W/served.log" "$OUT/" 2>/dev/null; fi
    return 0
}

compare() {
    local dir="${1:-$W}"
    "$PY" - "$dir/begen.xml" "$dir/kernix.xml" "$dir/served.log" <<'PY'
import sys, xml.etree.ElementTree as ET
from collections import Counter
def outcomes(path):
    out = {}
    for case in ET.parse(path).iter("testcase"):
        key = f"{case.get('classname')}::{case.get('name')}"
        kind = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                kind = child.tag
        out[key] = kind
    return out
b, k = outcomes(sys.argv[1]), outcomes(sys.argv[2])
print("begen-served:", dict(Counter(b.values())))
print("kernix:      ", dict(Counter(k.values())))
diff = sorted(t for t in set(b) | set(k) if b.get(t) != k.get(t))
print(f"tests whose outcome differs: {len(diff)}")
for t in diff[:20]:
    print(f"  {t}: begen {b.get(t)}, kernix {k.get(t)}")
try:
    log = open(sys.argv[3]).read().split("\n")
    served = {l.split()[1] for l in log if l.startswith("served ")}
    left = {l.split()[1] for l in log if l.startswith("kernix ")}
    print(f"modules served by begen: {len(served)}; left to kernix: {len(left)} {sorted(left)}")
except OSError:
    pass
PY
}

case "$STEP" in
    build) install && build ;;
    tests-begen) install && rm -f "$W/served.log" && run_tests begen BEGEN_AOT_DIR="$W/out" BEGEN_AOT_LOG="$W/served.log" BRAINEVENT_CACHE_DIR="$W/cache-begen" ;;
    tests-kernix) install && rm -rf "$W/cache-kernix" && run_tests kernix BRAINEVENT_CACHE_DIR="$W/cache-kernix" ;;
    compare) compare "${3:-$W}" ;;
    bench-first) install && build && "$PY" "$ROOT/bench/gpu/brainevent_build.py" "$W" first-result --rounds "${ROUNDS:-3}" ;;
    bench-kernix) install && rm -rf "$W/tree" && cp -r "$C/layout" "$W/tree" && optional \
        && "$PY" "$ROOT/bench/gpu/brainevent_build.py" "$W" kernix-compile --jobs "$JOBS" ;;
    bench-per-file) install && rm -rf "$W/tree" && cp -r "$C/layout" "$W/tree" && optional \
        && "$PY" "$ROOT/bench/gpu/brainevent_build.py" "$W" begen-per-file --begen "$BEGEN" --jobs "$JOBS" ;;
    all) install && build && "$0" "$BEGEN" tests-begen && "$0" "$BEGEN" tests-kernix && compare ;;
    *) echo "unknown step $STEP" >&2; exit 2 ;;
esac
