#!/usr/bin/env bash
# Run every test of the repository, the way CI does.
#
#   scripts/test.sh                 # setup, then all steps
#   CI=false scripts/test.sh        # let tests skip what the machine lacks
#
# Steps: scripts/setup.sh (.venv with JAX and the pip CUDA toolkit);
# `cargo test --all-targets` (with `-- --include-ignored` under CI=true: the
# compile tests of the generated code) and `cargo test --doc` for the crate;
# `cargo fmt --check` and `cargo clippy --all-targets -- -D warnings` (rustup
# adds the rustfmt/clippy components first when they are missing);
# `cargo test --all-targets` for the example crate examples/kernels-demo
# (`--features cuda` when nvcc is there) and scripts/demo.sh, when it exists;
# pytest over tests/python, when it exists, then its CPU end-to-end tests
# under jax 0.10.2 (Python 3.11) and 0.11.2 (target/venv-jax-*, made by
# scripts/setup-jax.sh), with the cross-version test in between (one build
# with --jax-min 0.10.2, called under all three); scripts/wheel-check.sh (begen's
# wheel and a kernel project's wheel, each installed into a fresh venv).
# CI=true (the default here) means a missing JAX, nvcc or network is a test
# failure, not a skip. Every step runs even after a failure; the summary at
# the end lists each step, and the exit status is non-zero when any failed.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 2

export CI="${CI:-true}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
start=$SECONDS

if ! bash scripts/setup.sh; then
    echo "test.sh: scripts/setup.sh failed; nothing was tested" >&2
    exit 1
fi
# shellcheck source=env.sh
source scripts/env.sh || exit 1

declare -a names=() results=()
failed=0

# step NAME CMD...: run one step, keep its log, remember its status and the
# runner's closing lines for the summary.
step() {
    local name="$1"; shift
    local log="$ROOT/target/test-logs/${name//[^A-Za-z0-9_.-]/_}.log"
    mkdir -p "$(dirname "$log")"
    echo
    echo "==== $name: $*"
    local t0=$SECONDS
    "$@" 2>&1 | tee "$log"
    local rc=${PIPESTATUS[0]}
    names+=("$name")
    if [[ $rc == 0 ]]; then
        results+=("ok      $(( SECONDS - t0 ))s")
    else
        results+=("FAILED  $(( SECONDS - t0 ))s (exit $rc, log: ${log#"$ROOT"/})")
        failed=1
    fi
    return 0
}

# pytest exits 5 when it collected no tests: nothing to run is not a failure.
run_pytest() {
    "$BEGEN_PYTHON" -m pytest -q "$@"
    local rc=$?
    if [[ $rc == 5 ]]; then
        echo "test.sh: pytest collected no tests under $*"
        return 0
    fi
    return $rc
}

# The crate's #[ignore]d tests compile generated code (g++, JAX's XLA headers,
# nvcc): setup.sh has provided all three by now, so CI runs them too.
if [[ $CI == true ]]; then
    step "cargo test" cargo test --all-targets -- --include-ignored
else
    step "cargo test" cargo test --all-targets
fi
if [[ -f src/lib.rs ]]; then
    step "cargo test --doc" cargo test --doc
fi

# The lints: formatting (rustfmt.toml) and clippy, warnings denied
# (clippy.toml bans reading the environment around begen::build::Env).
for component in rustfmt clippy; do
    sub=${component/rustfmt/fmt}
    if ! cargo "$sub" --version >/dev/null 2>&1 && command -v rustup >/dev/null; then
        rustup component add "$component"
    fi
done
step "cargo fmt --check" cargo fmt --check
step "cargo clippy" cargo clippy --all-targets -- -D warnings

demo="examples/kernels-demo"
if [[ -f "$demo/Cargo.toml" ]]; then
        # One target directory for both crates: begen's dependencies build once.
    # With nvcc (the pip toolkit from setup.sh) the CUDA kernels compile too.
    features=()
    [[ -n "${NVCC:-}" ]] && features=(--features cuda)
    step "kernels-demo cargo test" cargo test --all-targets "${features[@]}" \
        --manifest-path "$demo/Cargo.toml" --target-dir "$ROOT/target"
    # README's first command: build the example, call its kernels from JAX.
    step "scripts/demo.sh" bash scripts/demo.sh
else
    echo
    echo "test.sh: $demo/Cargo.toml does not exist yet; the example crate is not tested"
fi

if [[ -d tests/python ]]; then
    # Python tests find the CLI here; build it once so they need not.
    export BEGEN_BIN="${BEGEN_BIN:-$ROOT/target/debug/begen}"
    # The version matrix: the other jax releases begen supports, each in
    # its own venv under target/ (scripts/setup-jax.sh). The cross-version
    # test in the run above builds once with --jax-min 0.10.2 and calls the
    # library under each of them; then the CPU end-to-end tests run under
    # each, begen asking that Python for its jax (not the ruff lints of the
    # generated code: they do not depend on jax, and ruff is .venv's).
    matrix=()
    for v in 0.10.2 0.11.2; do
        if py="$(bash scripts/setup-jax.sh "$v")"; then
            matrix+=("$py")
        else
            names+=("setup-jax.sh $v"); results+=("FAILED"); failed=1
        fi
    done
    BEGEN_JAX_MATRIX="$(IFS=:; echo "${matrix[*]}")"
    export BEGEN_JAX_MATRIX
    step "pytest tests/python" run_pytest tests/python
    cpu_e2e=(tests/python/runtime tests/python/test_e2e_cpu.py tests/python/test_e2e_typed.py
             tests/python/test_e2e_modules.py tests/python/test_e2e_structs.py tests/python/test_e2e_algo.py
             tests/python/test_attr_conversion.py tests/python/test_e2e_versions.py tests/python/test_e2e_sharding.py
             tests/python/test_e2e_multiprocess.py)
    for py in "${matrix[@]}"; do
        v="${py%/bin/python}"; v="${v##*/venv-jax-}"
        step "pytest (jax $v)" env -u BEGEN_JAX_MATRIX -u XLA_FFI_INCLUDE_DIR BEGEN_PYTHON="$py" \
            "$py" -m pytest -q -k "not matrix and not ruff and not name_only_what_they_define" "${cpu_e2e[@]}"
    done
fi

# The pip route: begen's wheel, the example project's wheel, fresh venvs.
step "scripts/wheel-check.sh" bash scripts/wheel-check.sh

echo
echo "==== summary ($(( SECONDS - start ))s, CI=$CI)"
for i in "${!names[@]}"; do
    printf '  %-28s %s\n' "${names[$i]}" "${results[$i]}"
done
if [[ $failed != 0 ]]; then
    echo "test.sh: FAILED"
    exit 1
fi
echo "test.sh: all passed"
