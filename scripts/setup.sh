#!/usr/bin/env bash
# Create or refresh the project-local Python environment `.venv/`.
#
# Installs the pins of scripts/requirements.txt (JAX on the CPU, numpy, pytest,
# and the pip CUDA 13 toolkit with nvcc) into a Python 3.12 or newer (jax 0.12
# needs it). A stamp file keyed on the pins and the interpreter makes a second
# run a no-op that takes well under a second. Nothing outside the repository is
# changed; scripts source scripts/env.sh to use the environment.
#
# usage: scripts/setup.sh [--force]
#   PYTHON=python3.12 scripts/setup.sh    # pick the interpreter
#   BEGEN_VENV=DIR BEGEN_REQUIREMENTS=FILE BEGEN_PYTHON_MIN=3.11 scripts/setup.sh
#                                         # another environment (scripts/setup-jax.sh)
# Without PYTHON the first of python3.13, python3.12, python3 and pyenv's
# 3.12+ versions that is at least the minimum is taken.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${BEGEN_VENV:-$ROOT/.venv}"
REQ="${BEGEN_REQUIREMENTS:-$ROOT/scripts/requirements.txt}"
STAMP="$VENV/.begen-setup-stamp"
MIN="${BEGEN_PYTHON_MIN:-3.12}"
JAX_PIN="$(grep -m1 '^jax==' "$REQ" | cut -d= -f3)"

force=0
for a in "$@"; do
    case "$a" in
        --force) force=1 ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) echo "setup.sh: unknown argument '$a'" >&2; exit 2 ;;
    esac
done

# Whether "$1" runs and is at least Python $MIN (a pyenv shim for a version
# that is not active fails to run, and counts as missing).
new_enough() {
    "$1" -c "import sys; sys.exit(0 if sys.version_info >= tuple(map(int, '$MIN'.split('.'))) else 1)" >/dev/null 2>&1
}

# The stamp records what was installed: the pins and the interpreter.
stamp_of() { (cat "$REQ"; "$1" -c 'import sys; print(sys.version)') | sha256sum | cut -d' ' -f1; }

# Up to date already (the usual case): done before looking for interpreters,
# which can take seconds (pyenv's shims).
if [[ $force == 0 && -z "${PYTHON:-}" && -x "$VENV/bin/python" && -f "$STAMP" ]] && new_enough "$VENV/bin/python" \
    && [[ "$(cat "$STAMP")" == "$(stamp_of "$VENV/bin/python")" ]]; then
    exit 0
fi

if [[ -n "${PYTHON:-}" ]]; then
    PY="$PYTHON"
    if ! command -v "$PY" >/dev/null 2>&1; then
        echo "setup.sh: PYTHON='$PY' not found; install Python $MIN or newer, or set PYTHON=/path/to/python3" >&2
        exit 1
    fi
    if ! new_enough "$PY"; then
        echo "setup.sh: PYTHON='$PY' ($("$PY" --version 2>&1)) is too old; jax $JAX_PIN needs Python $MIN or newer" >&2
        exit 1
    fi
else
    PY=""
    candidates=(python3.13 python3.12 python3)
    pyenv_root="${PYENV_ROOT:-$HOME/.pyenv}"
    for d in "$pyenv_root"/versions/3.*/bin/python3; do
        [[ -x "$d" ]] && candidates+=("$d")
    done
    for c in "${candidates[@]}"; do
        if command -v "$c" >/dev/null 2>&1 && new_enough "$c"; then
            PY="$c"
            break
        fi
    done
    if [[ -z "$PY" ]]; then
        have="$(python3 --version 2>&1 || echo 'no python3')"
        echo "setup.sh: jax $JAX_PIN needs Python $MIN or newer, and this machine has none" \
             "(tried ${candidates[*]}; python3 is $have). Install Python 3.12 (e.g. 'pyenv install 3.12'" \
             "or your system's python3.12 package), or set PYTHON=/path/to/python3.12." >&2
        exit 1
    fi
fi

want="$(stamp_of "$PY")"
if [[ $force == 0 && -x "$VENV/bin/python" && -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; then
    exit 0
fi

start=$SECONDS
# A venv made by another interpreter (an older .venv on Python 3.11) is made anew.
pyver() { "$1" -c 'import sys; print(sys.version)' 2>/dev/null || true; }
if [[ ! -x "$VENV/bin/python" || "$(pyver "$VENV/bin/python")" != "$(pyver "$PY")" ]]; then
    echo "setup.sh: creating $VENV ($("$PY" --version 2>&1))"
    rm -rf "$VENV"
    "$PY" -m venv "$VENV"
fi
rm -f "$STAMP"

echo "setup.sh: installing ${REQ#"$ROOT"/} into ${VENV#"$ROOT"/}"
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
# Environments without the CUDA toolkit (scripts/setup-jax.sh's) skip its check.
has_nvcc=0
grep -q '^nvidia-cuda-nvcc==' "$REQ" && has_nvcc=1
if [[ $has_nvcc == 1 ]] && ! "$CU/bin/nvcc" --version >/dev/null; then
    echo "setup.sh: the pip nvcc at $CU/bin/nvcc does not run" >&2
    exit 1
fi

echo "$want" > "$STAMP"
what="$("$VENV/bin/python" -c 'import jax, sys; print(f"jax {jax.__version__} on Python {sys.version.split()[0]}")')"
if [[ $has_nvcc == 1 ]]; then
    what="$what, nvcc $("$CU/bin/nvcc" --version | grep -o 'release [0-9.]*')"
fi
echo "setup.sh: ready in $((SECONDS - start))s: $what"
