#!/usr/bin/env bash
# Create or refresh the project-local Python environment `.venv/`.
#
# Installs the pins of scripts/requirements.txt (JAX on the CPU, numpy, pytest,
# and the pip CUDA 13 toolkit with nvcc). A stamp file keyed on the pins and
# the interpreter makes a second run a no-op that takes well under a second.
# Nothing outside the repository is changed; scripts source scripts/env.sh to
# use the environment.
#
# usage: scripts/setup.sh [--force]
#   PYTHON=python3.11 scripts/setup.sh    # pick the interpreter (default python3)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
REQ="$ROOT/scripts/requirements.txt"
STAMP="$VENV/.begen-setup-stamp"
PY="${PYTHON:-python3}"

force=0
for a in "$@"; do
    case "$a" in
        --force) force=1 ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        *) echo "setup.sh: unknown argument '$a'" >&2; exit 2 ;;
    esac
done

if ! command -v "$PY" >/dev/null 2>&1; then
    echo "setup.sh: '$PY' not found; install Python 3.11 or newer, or set PYTHON=/path/to/python3" >&2
    exit 1
fi
if ! "$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
    echo "setup.sh: $("$PY" --version 2>&1) is too old; jax $(grep -m1 '^jax==' "$REQ" | cut -d= -f3) needs Python 3.11 or newer (set PYTHON=...)" >&2
    exit 1
fi

# The stamp records what was installed: the pins and the interpreter.
want="$( (cat "$REQ"; "$PY" -c 'import sys; print(sys.version)') | sha256sum | cut -d' ' -f1)"
if [[ $force == 0 && -x "$VENV/bin/python" && -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; then
    exit 0
fi

start=$SECONDS
if [[ ! -x "$VENV/bin/python" ]]; then
    echo "setup.sh: creating $VENV"
    rm -rf "$VENV"
    "$PY" -m venv "$VENV"
fi
rm -f "$STAMP"

echo "setup.sh: installing scripts/requirements.txt into .venv (JAX, numpy, pytest, CUDA 13 nvcc)"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQ"

SP="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
CU="$SP/nvidia/cu13"

# The pip runtime ships only libcudart.so.13; a linker looking for -lcudart
# wants the unversioned name beside it.
if [[ -e "$CU/lib/libcudart.so.13" && ! -e "$CU/lib/libcudart.so" ]]; then
    ln -s libcudart.so.13 "$CU/lib/libcudart.so"
fi

# Check that what scripts/env.sh will point at is really there.
ffi="$("$VENV/bin/python" -c 'import jax.ffi; print(jax.ffi.include_dir())')"
if [[ "$ffi" != "$SP/jaxlib/include" || ! -f "$ffi/xla/ffi/api/ffi.h" ]]; then
    echo "setup.sh: jax.ffi.include_dir() is '$ffi', not $SP/jaxlib/include with xla/ffi/api/ffi.h; scripts/env.sh needs updating" >&2
    exit 1
fi
if ! "$CU/bin/nvcc" --version >/dev/null; then
    echo "setup.sh: the pip nvcc at $CU/bin/nvcc does not run" >&2
    exit 1
fi

echo "$want" > "$STAMP"
echo "setup.sh: ready in $((SECONDS - start))s: $("$VENV/bin/python" -c 'import jax; print("jax", jax.__version__)'), $("$CU/bin/nvcc" --version | grep -o 'release [0-9.]*')"
