# Source this (after scripts/setup.sh) to point begen and the tests at .venv/:
#
#   source scripts/env.sh
#
# Sets BEGEN_PYTHON, XLA_FFI_INCLUDE_DIR, NVCC, CUDA_PATH and puts the venv's
# bin/ and the pip CUDA toolkit's bin/ first on PATH. A variable that is already
# set is kept, so a system CUDA or another JAX can be chosen from outside.
# Fails (returns 1) when .venv/ is missing.

BEGEN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export BEGEN_ROOT

_begen_sp=""
for _begen_d in "$BEGEN_ROOT"/.venv/lib/python3*/site-packages; do
    [[ -d "$_begen_d" ]] && _begen_sp="$_begen_d"
done
if [[ ! -x "$BEGEN_ROOT/.venv/bin/python" || -z "$_begen_sp" ]]; then
    echo "scripts/env.sh: $BEGEN_ROOT/.venv is missing; run scripts/setup.sh first" >&2
    unset _begen_sp _begen_d
    return 1 2>/dev/null || exit 1
fi

export BEGEN_PYTHON="${BEGEN_PYTHON:-$BEGEN_ROOT/.venv/bin/python}"
export XLA_FFI_INCLUDE_DIR="${XLA_FFI_INCLUDE_DIR:-$_begen_sp/jaxlib/include}"
if [[ -x "$_begen_sp/nvidia/cu13/bin/nvcc" ]]; then
    export CUDA_PATH="${CUDA_PATH:-$_begen_sp/nvidia/cu13}"
    export NVCC="${NVCC:-$_begen_sp/nvidia/cu13/bin/nvcc}"
    case ":$PATH:" in
        *":$_begen_sp/nvidia/cu13/bin:"*) ;;
        *) PATH="$_begen_sp/nvidia/cu13/bin:$PATH" ;;
    esac
fi
case ":$PATH:" in
    *":$BEGEN_ROOT/.venv/bin:"*) ;;
    *) PATH="$BEGEN_ROOT/.venv/bin:$PATH" ;;
esac
export PATH
unset _begen_sp _begen_d
