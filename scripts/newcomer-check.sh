#!/usr/bin/env bash
# A newcomer's first hour, as README.md tells it: in a fresh venv and a
# fresh home folder, run README's "Install" commands exactly as written (the
# `$ ` lines of its first console block, in one shell), then `begen new
# mykernels`, then the `next:` line it prints, verbatim (which builds the
# scaffold's wheel in an isolated build, installs it and runs its tests).
#
# usage: scripts/newcomer-check.sh
#   NEWCOMER_WHEEL=PATH  a begen-jax wheel already built (scripts/test.sh
#                        passes scripts/wheel-check.sh's): README's
#                        `pip wheel . --no-deps -w ~/begen-wheels` is then
#                        replaced by copying it into ~/begen-wheels, which
#                        is what that command leaves there (minutes saved).
# Needs PyPI (the pip cache is used) and a C++ compiler. Work goes to
# target/newcomer-check/; the repository is not written to (but for
# README's `pip wheel .`, which builds in target/ as cargo does).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="$ROOT/target/newcomer-check"
# The interpreter scripts/setup.sh chose for .venv (jax 0.12 needs 3.12),
# else python3, as README's `python3`.
PY="${PYTHON:-$("$ROOT/.venv/bin/python" -c 'import sys; print(sys._base_executable)' 2>/dev/null || echo python3)}"
start=$SECONDS

say() { echo "newcomer-check: $*"; }
fail() { echo "newcomer-check: FAILED: $*" >&2; exit 1; }

# The pip cache of the caller, before HOME moves (JAX is not downloaded again).
PIP_CACHE_DIR="${PIP_CACHE_DIR:-$("$PY" -m pip cache dir 2>/dev/null || echo "$HOME/.cache/pip")}"
export PIP_CACHE_DIR
# The machine's Rust toolchain (README's `pip wheel .` needs it), found
# where the caller's rustup and cargo keep it.
export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"

# Nothing of the caller's leaks in: not env.sh's variables, not .venv on
# PATH, not the caller's home (README's `~` is a fresh folder).
unset BEGEN_PYTHON BEGEN_BIN XLA_FFI_INCLUDE_DIR NVCC CUDA_PATH CUDA_HOME VIRTUAL_ENV PYTHONPATH CXX \
    PIP_FIND_LINKS PIP_CONFIG_FILE XDG_CACHE_HOME XDG_CONFIG_HOME
rm -rf "$WORK"
mkdir -p "$WORK/home" "$WORK/projects" "$WORK/bin"
ln -s "$PY" "$WORK/bin/python3"
export PATH="$WORK/bin:$(printf '%s' "$PATH" | tr ':' '\n' | grep -v -e "^$ROOT/" | paste -sd: -)"
export HOME="$WORK/home"
export PIP_DISABLE_PIP_VERSION_CHECK=1

# README's install commands: the `$ ` lines of the first console block
# after "## Install", their trailing comments cut.
commands="$(awk '
    /^## Install/ { inside = 1; next }
    inside && /^```console/ { block = 1; next }
    block && /^```/ { exit }
    block && /^\$ / { sub(/^\$ /, ""); sub(/  +#.*$/, ""); print }
' "$ROOT/README.md")"
[[ -n "$commands" ]] || fail "README.md has no console block under \"## Install\""
if [[ -n "${NEWCOMER_WHEEL:-}" ]]; then
    [[ -f "$NEWCOMER_WHEEL" ]] || fail "NEWCOMER_WHEEL=$NEWCOMER_WHEEL is no file"
    build='pip wheel . --no-deps -w ~/begen-wheels'
    grep -qxF "$build" <<<"$commands" || fail "README.md no longer says \`$build\`: NEWCOMER_WHEEL cannot stand for it"
    copy="mkdir -p ~/begen-wheels \&\& cp '$NEWCOMER_WHEEL' ~/begen-wheels/"
    commands="$(sed "s|^pip wheel \. --no-deps -w ~/begen-wheels\$|$copy|" <<<"$commands")"
fi

{
    echo 'set -eo pipefail'
    echo "cd '$ROOT'"
    echo "$commands"
    echo "cd '$WORK/projects'"
    echo "begen new mykernels 2> '$WORK/new.log'"
    echo "cat '$WORK/new.log'"
    # The `next:` line as begen printed it.
    echo "next=\"\$(sed -n 's/^next: //p' '$WORK/new.log')\""
    echo '[[ -n "$next" ]] || { echo "begen new printed no next: line" >&2; exit 1; }'
    echo 'echo "+ $next"'
    echo 'eval "$next"'
} > "$WORK/first-hour.sh"
say "running, in a fresh venv and home ($HOME):"
sed -n '3,$p' "$WORK/first-hour.sh" | sed 's/^/    /'
bash -x "$WORK/first-hour.sh" > "$WORK/first-hour.log" 2>&1 \
    || { tail -40 "$WORK/first-hour.log" >&2; fail "a command failed (log: $WORK/first-hour.log)"; }
grep -q "passed" "$WORK/first-hour.log" || fail "the scaffold's tests did not run (log: $WORK/first-hour.log)"
say "README's install, begen new and its next: line passed in $((SECONDS - start))s"
