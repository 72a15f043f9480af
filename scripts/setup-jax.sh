#!/usr/bin/env bash
# Create or refresh target/venv-jax-VERSION: the environment of one older jax
# of the CI matrix (scripts/requirements-jax-VERSION.txt), made by
# scripts/setup.sh with the same stamp, so a second run is a no-op.
#
# usage: scripts/setup-jax.sh VERSION [--force]    # prints the venv's python
#   jax 0.10.2 runs on Python 3.11 or newer, 0.11 and later on 3.12 or newer.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="${1:-}"
shift || true
req="$ROOT/scripts/requirements-jax-$version.txt"
if [[ ! "$version" =~ ^[0-9]+(\.[0-9]+){1,3}$ || ! -f "$req" ]]; then
    echo "setup-jax.sh: no pins for jax '$version'; the matrix has: $(cd "$ROOT/scripts" && ls requirements-jax-*.txt | sed 's/requirements-jax-//; s/\.txt//' | tr '\n' ' ')" >&2
    exit 2
fi
case "$version" in
    0.10.*) min=3.11 ;;
    *) min=3.12 ;;
esac
# jax 0.10 is the Python 3.11 leg of the matrix: a 3.11 is taken when there is one.
if [[ $min == 3.11 && -z "${PYTHON:-}" ]]; then
    for c in python3.11 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.11*/bin/python3; do
        if "$c" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' >/dev/null 2>&1; then
            export PYTHON="$c"
            break
        fi
    done
fi
venv="$ROOT/target/venv-jax-$version"
BEGEN_VENV="$venv" BEGEN_REQUIREMENTS="$req" BEGEN_PYTHON_MIN="$min" bash "$ROOT/scripts/setup.sh" "$@" >&2
echo "$venv/bin/python"
