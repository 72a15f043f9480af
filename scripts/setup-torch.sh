#!/usr/bin/env bash
# Create or refresh target/venv-torch-VERSION: PyTorch on the CPU for the
# torch target's tests (tests/torch), from the pins of
# scripts/requirements-torch-VERSION.txt, installed with --no-deps (the pins
# are the whole set: PyPI's torch is a CUDA build, and only the CUDA wheels
# its libraries need at load time are there). No jax in it. A stamp keyed on
# the pins and the interpreter makes a second run a no-op.
#
# usage: scripts/setup-torch.sh VERSION [--force]    # prints the venv's python
#   PYTHON=python3.12 scripts/setup-torch.sh 2.15      # pick the interpreter
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="${1:-}"
shift || true
req="$ROOT/scripts/requirements-torch-$version.txt"
if [[ ! "$version" =~ ^[0-9]+(\.[0-9]+){1,3}$ || ! -f "$req" ]]; then
    echo "setup-torch.sh: no pins for torch '$version'; the matrix has: $(cd "$ROOT/scripts" && ls requirements-torch-*.txt | sed 's/requirements-torch-//; s/\.txt//' | tr '\n' ' ')" >&2
    exit 2
fi
force=0
for a in "$@"; do
    case "$a" in
        --force) force=1 ;;
        *) echo "setup-torch.sh: unknown argument '$a'" >&2; exit 2 ;;
    esac
done
venv="$ROOT/target/venv-torch-$version"
stamp="$venv/.begen-setup-stamp"

# Python 3.12 or newer (torch 2.11 and 2.15 have wheels for 3.10 to 3.14;
# 3.12 is what the rest of the tests use).
new_enough() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; }
PY="${PYTHON:-}"
if [[ -z "$PY" ]]; then
    for c in python3.13 python3.12 python3 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[2-9]*/bin/python3; do
        if command -v "$c" >/dev/null 2>&1 && new_enough "$c"; then
            PY="$c"
            break
        fi
    done
fi
if [[ -z "$PY" ]] || ! new_enough "$PY"; then
    echo "setup-torch.sh: needs Python 3.12 or newer (set PYTHON=/path/to/python3.12)" >&2
    exit 1
fi
want="$( (cat "$req"; "$PY" -c 'import sys; print(sys.version)') | sha256sum | cut -d' ' -f1)"
if [[ $force == 0 && -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    echo "$venv/bin/python"
    exit 0
fi

start=$SECONDS
rm -rf "$venv"
"$PY" -m venv "$venv"
echo "setup-torch.sh: installing ${req#"$ROOT"/} into ${venv#"$ROOT"/}" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$req" >&2
got="$("$venv/bin/python" -c 'import torch; print(torch.__version__.split("+")[0])')"
if [[ "$got" != "$version".* && "$got" != "$version" ]]; then
    echo "setup-torch.sh: ${venv#"$ROOT"/} has torch $got, not $version" >&2
    exit 1
fi
echo "$want" > "$stamp"
echo "setup-torch.sh: torch $got ready in $((SECONDS - start))s ($(du -sh "$venv" | cut -f1))" >&2
echo "$venv/bin/python"
