#!/usr/bin/env bash
# Build begen's own distribution, `begen-jax`, as it is released: the
# source distribution, and from it (unpacked, as pip would build it for a
# platform with no wheel) a manylinux2014 wheel (glibc 2.17) of the `begen`
# program and python/begen, linked by zig (maturin --zig) so that it does
# not depend on the build machine's glibc, and checked by auditwheel.
# Building the wheel from the sdist proves the sdist is complete. CI
# (scripts/wheel-check.sh) and the release workflow
# (.github/workflows/release.yml) both call this script, so what CI tests is
# what is published.
#
# usage: scripts/build-wheel.sh [--target TRIPLE] OUTDIR
#   TRIPLE: x86_64-unknown-linux-gnu or aarch64-unknown-linux-gnu; the
#           default is this machine's.
# OUTDIR gets begen_jax-VERSION.tar.gz and the wheel.
# Needs cargo (with TRIPLE's standard library) and Python >= 3.9. The build
# tools (maturin, ziglang, auditwheel: scripts/wheel-requirements.txt) go
# into a venv under target/wheel-tools, kept between runs and keyed on
# their pins; cargo's target/ is kept too, so an unchanged tree relinks in
# seconds. Prints the path of what it built last.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REQ="$ROOT/scripts/wheel-requirements.txt"
TOOLS="$ROOT/target/wheel-tools/venv"
PY="${PYTHON:-python3}"

say() { echo "build-wheel: $*" >&2; }
fail() { echo "build-wheel: FAILED: $*" >&2; exit 1; }

target=""
out=""
while (( $# )); do
    case "$1" in
        --target) target="${2:?--target needs a triple}"; shift ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        -*) fail "unknown option '$1'" ;;
        *) [[ -z "$out" ]] || fail "one OUTDIR, not '$out' and '$1'"; out="$1" ;;
    esac
    shift
done
[[ -n "$out" ]] || fail "no OUTDIR (usage: scripts/build-wheel.sh [--target TRIPLE] OUTDIR)"
[[ -n "$target" ]] || target="$(uname -m)-unknown-linux-gnu"
case "$target" in
    x86_64-unknown-linux-gnu|aarch64-unknown-linux-gnu) ;;
    *) fail "target '$target': begen-jax is released for x86_64-unknown-linux-gnu and aarch64-unknown-linux-gnu" ;;
esac
arch="${target%%-*}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# The tools, pinned; the venv is rebuilt when the pins change.
stamp="$( (cat "$REQ"; "$PY" -c 'import sys; print(sys.version)') | sha256sum | cut -d' ' -f1)"
if [[ "$(cat "$TOOLS/.stamp" 2>/dev/null)" != "$stamp" ]]; then
    rm -rf "$TOOLS"
    "$PY" -m venv "$TOOLS"
    "$TOOLS/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQ"
    echo "$stamp" > "$TOOLS/.stamp"
fi
# maturin finds zig through the ziglang package of the Python on PATH.
export PATH="$TOOLS/bin:$PATH"

# The sdist: what Cargo.toml's `include` names, with pyproject.toml and
# Cargo.lock (the wheel below is built --locked from it).
rm -f "$out"/begen_jax-*.tar.gz
(cd "$ROOT" && maturin sdist --out "$out") 2>&1 | grep -v -e 'manifest has no' -e 'package-metadata' -e '^\s*|\s*$' >&2 || true
tarball="$(ls "$out"/begen_jax-*.tar.gz 2>/dev/null)" || fail "maturin built no sdist"
say "built $(basename "$tarball") ($(du -k "$tarball" | cut -f1) KiB)"
# Unpacked at a fixed place with cargo's target/ shared, so an unchanged
# tree rebuilds only what changed.
src="$ROOT/target/sdist-src"
rm -rf "$src"
mkdir -p "$src"
tar xzf "$tarball" -C "$src" --strip-components=1
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"

# Only this build's wheel is in OUTDIR afterwards (an older version's would
# be ambiguous to whoever picks it up).
rm -f "$out"/begen_jax-*-manylinux*_"$arch".whl
t=$SECONDS
(cd "$src" && maturin build --release --locked --zig --compatibility manylinux2014 --target "$target" \
    --out "$out") 2>&1 | grep -v -e '^\s*Compiling' -e '^\s*Downloaded' -e '^\s*Downloading' >&2 || true
wheel="$(ls "$out"/begen_jax-*-py3-none-manylinux*_"$arch".whl 2>/dev/null)" \
    || fail "maturin built no begen-jax wheel for $target from $(basename "$tarball")"
say "built $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB) from the sdist in $((SECONDS - t))s"

# auditwheel reads the program's symbol versions and libraries: it must
# find nothing newer than glibc 2.17 and no library outside the manylinux
# set (the wheel's tag then tells the truth).
audit="$(auditwheel show "$wheel" 2>&1)" || { echo "$audit" >&2; fail "auditwheel show $wheel"; }
echo "$audit" | sed 's/^/  auditwheel | /' >&2
tr -s ' \n' ' ' <<<"$audit" | grep -q "consistent with the following platform tag: \"manylinux_2_17_$arch\"" \
    || fail "auditwheel does not find $(basename "$wheel") consistent with manylinux_2_17_$arch"

echo "$wheel"
