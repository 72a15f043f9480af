#!/usr/bin/env bash
# Create or refresh target/venv-torch-VERSION: PyTorch on the CPU for the
# torch target's tests (tests/torch), from the pins of
# scripts/requirements-torch-VERSION.txt, installed with --no-deps (the pins
# are the whole set). No jax in it. PyPI's torch is a CUDA build whose
# libraries must be there for `import torch`: those of
# scripts/requirements-torch-cuda.txt go once into target/torch-cuda/ (2.8 GB),
# which every venv of the matrix links as its site-packages/nvidia, so a
# second torch costs only its own 1.4 GB. Nothing goes into pip's cache (a
# torch and its CUDA set are 2 GB of wheels, and a fresh machine never reads
# them again). A stamp keyed on the pins and the interpreter makes a second
# run a no-op; two runs at once share the CUDA set (a lock).
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
cuda_req="$ROOT/scripts/requirements-torch-cuda.txt"
cuda="$ROOT/target/torch-cuda"

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
want="$( (cat "$req" "$cuda_req"; "$PY" -c 'import sys; print(sys.version)') | sha256sum | cut -d' ' -f1)"
cuda_want="$(sha256sum < "$cuda_req" | cut -d' ' -f1)"
if [[ $force == 0 && -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    echo "$venv/bin/python"
    exit 0
fi

# free_gb DIR: the gigabytes free on DIR's file system.
free_gb() { df -Pk "$1" | awk 'NR == 2 { printf "%d", $4 / 1048576 }'; }
# need GB WHAT: fail with the reason before pip would, half-way, with ENOSPC.
need() {
    local have
    have="$(free_gb "$ROOT/target")"
    if (( have < $1 )); then
        echo "setup-torch.sh: $2 needs about $1 GB free under target/; its file system has $have GB" >&2
        exit 1
    fi
}
pip_install() {
    PIP_ROOT_USER_ACTION=ignore "$@" --quiet --disable-pip-version-check --no-deps --no-cache-dir
}

start=$SECONDS
mkdir -p "$ROOT/target"
# The CUDA set, once for all the venvs: made into a temporary folder and
# renamed, so a run stopped half-way leaves no half set behind.
(
    flock 9
    if [[ $force == 0 && -f "$cuda/.begen-setup-stamp" && "$(cat "$cuda/.begen-setup-stamp")" == "$cuda_want" ]]; then
        exit 0
    fi
    need 5 "the CUDA libraries torch loads (2.8 GB installed, their wheels downloaded beside them)"
    echo "setup-torch.sh: installing ${cuda_req#"$ROOT"/} into ${cuda#"$ROOT"/}" >&2
    rm -rf "$cuda" "$cuda.partial"
    pip_install "$PY" -m pip install --target "$cuda.partial" -r "$cuda_req" >&2
    echo "$cuda_want" > "$cuda.partial/.begen-setup-stamp"
    mv "$cuda.partial" "$cuda"
) 9> "$ROOT/target/torch-cuda.lock"

need 2 "torch $version (1.4 GB installed, its wheel downloaded beside it)"
rm -rf "$venv"
"$PY" -m venv "$venv"
echo "setup-torch.sh: installing ${req#"$ROOT"/} into ${venv#"$ROOT"/}" >&2
pip_install "$venv/bin/python" -m pip install -r "$req" >&2
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"
# torch finds its CUDA libraries under site-packages/nvidia (the RUNPATH of
# its libraries, then a search of sys.path).
ln -s "$cuda/nvidia" "$site/nvidia"
got="$("$venv/bin/python" -c 'import torch; print(torch.__version__.split("+")[0])')"
if [[ "$got" != "$version".* && "$got" != "$version" ]]; then
    echo "setup-torch.sh: ${venv#"$ROOT"/} has torch $got, not $version" >&2
    exit 1
fi
echo "$want" > "$stamp"
echo "setup-torch.sh: torch $got ready in $((SECONDS - start))s ($(du -sh "$venv" | cut -f1), and the shared $(du -sh "$cuda" | cut -f1) of ${cuda#"$ROOT"/})" >&2
echo "$venv/bin/python"
