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
# under the floor, jax 0.10.2 (target/venv-jax-*, made by
# scripts/setup-jax.sh), with the cross-version test in between (one build
# with --jax-min 0.10.2, called under 0.10.2, 0.11.2 and .venv's newest); scripts/wheel-check.sh (begen's
# wheel and a kernel project's wheel, each installed into a fresh venv);
# scripts/newcomer-check.sh (README's install as written, `begen new` and
# its next: line, in a fresh venv, with wheel-check's begen wheel).
# pytest over tests/torch (the torch target) under torch 2.15 and 2.11
# (target/venv-torch-*, made by scripts/setup-torch.sh), in a lane of its own
# that starts once the crate's tests are built.
#
# Two lanes share the cores once the crate's tests are built: the cargo
# lane (clippy, the example crate, demo.sh, wheel-check.sh, newcomer-check.sh: much of it one
# rustc, one linker or one pip at a time) runs in the background beside the
# crate's tests and then the pytest lane, whose steps wait on compilers and
# subprocesses; the jax lane (the CPU end-to-end tests under the older jax
# releases) runs beside the run over tests/python. The older jax venvs are
# made in the background while cargo builds. A background step's output goes to its log and is printed when its
# lane ends.
# CI=true (the default here) means a missing JAX, nvcc or network is a test
# failure, not a skip. Every step runs even after a failure; the summary at
# the end lists each step, and the exit status is non-zero when any failed.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 2

export CI="${CI:-true}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
start=$SECONDS
LOGS="$ROOT/target/test-logs"

if ! bash scripts/setup.sh; then
    echo "test.sh: scripts/setup.sh failed; nothing was tested" >&2
    exit 1
fi
# shellcheck source=env.sh
source scripts/env.sh || exit 1
mkdir -p "$LOGS"

declare -a names=() results=()
failed=0

# children_cpu FILE: the CPU seconds (user + system) of the finished
# children of the shell that wrote bash's `times` to FILE.
children_cpu() {
    awk 'NR == 2 { s = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); s += p[1] * 60 + p[2] } printf "%d", s }' "$1"
}

# step NAME CMD...: run one step, keep its log, remember its status, its
# wall and CPU seconds and the runner's closing lines for the summary.
step() {
    local name="$1"; shift
    local log="$LOGS/${name//[^A-Za-z0-9_.-]/_}.log"
    echo
    echo "==== $name: $*"
    local t0=$SECONDS
    # The step runs in a subshell that writes its own children's CPU at its
    # end: this shell's count would also take in a background lane reaped
    # while the step ran.
    rm -f "$log.times"
    ( "$@"; rc=$?; times > "$log.times"; exit $rc ) 2>&1 | tee "$log"
    local rc=${PIPESTATUS[0]}
    local took="$(( SECONDS - t0 ))s, cpu $(children_cpu "$log.times" 2>/dev/null || echo "?")s"
    rm -f "$log.times"
    names+=("$name")
    if [[ $rc == 0 ]]; then
        results+=("ok      $took${lane:+ ($lane lane)}")
    else
        results+=("FAILED  $took${lane:+ ($lane lane)} (exit $rc, log: ${log#"$ROOT"/})")
        failed=1
    fi
    return 0
}

# start_lane NAME FUNCTION: run FUNCTION's steps in the background, their
# output in target/test-logs/lane-NAME.log; end_lane prints that log and
# adds the lane's steps to the summary.
lane=""
declare -A lane_pid=()
start_lane() {
    local name="$1" fn="$2"
    rm -f "$LOGS/lane-$name.results"
    (
        lane="$name"; names=(); results=(); failed=0
        "$fn"
        for i in "${!names[@]}"; do
            printf '%s\t%s\n' "${names[$i]}" "${results[$i]}"
        done > "$LOGS/lane-$name.results"
    ) > "$LOGS/lane-$name.log" 2>&1 < /dev/null &
    lane_pid[$name]=$!
}
end_lane() {
    local name="$1"
    wait "${lane_pid[$name]}"
    unset "lane_pid[$name]"
    echo
    echo "==== the $name lane (ran in the background; log: ${LOGS#"$ROOT"/}/lane-$name.log)"
    cat "$LOGS/lane-$name.log"
    if [[ ! -f "$LOGS/lane-$name.results" ]]; then
        names+=("$name lane"); results+=("FAILED  (it ended before its summary)"); failed=1
        return
    fi
    local n r
    while IFS=$'\t' read -r n r; do
        names+=("$n"); results+=("$r")
        [[ $r == ok* ]] || failed=1
    done < "$LOGS/lane-$name.results"
}
# A stopped run stops its background work too, and still stops.
declare -A jax_setup_pid=() torch_setup_pid=()
stop_background() {
    local p
    for p in "${lane_pid[@]}" "${jax_setup_pid[@]}" "${torch_setup_pid[@]}"; do
        kill "$p" 2>/dev/null
    done
}
trap 'stop_background; exit 130' INT
trap 'stop_background; exit 143' TERM

# pytest runs its test files in parallel processes (pytest-xdist, one file
# per process: a file's module-scoped builds stay shared). Most of a test's
# time is waiting (on compilers, subprocesses, JAX's start-up), so three
# processes keep two cores busy. PYTEST_WORKERS=0 runs them in one process.
workers=(-n "${PYTEST_WORKERS:-3}" --dist loadfile)
[[ ${PYTEST_WORKERS:-3} == 0 ]] && workers=()

# pytest exits 5 when it collected no tests: nothing to run is not a failure.
run_pytest() {
    "$BEGEN_PYTHON" -m pytest -q --durations=15 "${workers[@]}" "$@"
    local rc=$?
    if [[ $rc == 5 ]]; then
        echo "test.sh: pytest collected no tests under $*"
        return 0
    fi
    return $rc
}

# The version matrix: the other jax releases begen supports, each in its own
# venv under target/ (scripts/setup-jax.sh). pip mostly downloads and
# unpacks, so both are made in the background while cargo compiles.
jax_versions=(0.10.2 0.11.2)
if [[ -d tests/python ]]; then
    for v in "${jax_versions[@]}"; do
        bash scripts/setup-jax.sh "$v" > "$LOGS/setup-jax-$v.out" 2> "$LOGS/setup-jax-$v.log" < /dev/null &
        jax_setup_pid[$v]=$!
    done
fi

# The torch matrix: the torch target's tests under the newest torch and the
# floor (scripts/setup-torch.sh), venvs made in the background too.
torch_versions=(2.15 2.11)
if [[ -d tests/torch ]]; then
    for v in "${torch_versions[@]}"; do
        # Its exit status goes to a file: the torch lane, a subshell, cannot
        # `wait` for its parent's children.
        rm -f "$LOGS/setup-torch-$v.rc"
        (
            bash scripts/setup-torch.sh "$v" > "$LOGS/setup-torch-$v.out" 2> "$LOGS/setup-torch-$v.log" < /dev/null
            echo $? > "$LOGS/setup-torch-$v.rc"
        ) &
        torch_setup_pid[$v]=$!
    done
fi

# The cargo lane: clippy, the example crate, the wheels. target/debug/begen,
# which the pytest lane runs, is not rebuilt by any of them (clippy only
# checks; the example builds begen's library as a build-dependency).
cargo_lane() {
    # clippy, warnings denied (clippy.toml bans reading the environment
    # around begen::build::Env).
    step "cargo clippy" cargo clippy --all-targets -- -D warnings

    demo="examples/kernels-demo"
    if [[ -f "$demo/Cargo.toml" ]]; then
        # One target directory for both crates: begen's dependencies build
        # once. The example resolves with begen's own Cargo.lock (its lock
        # file is not tracked), so it gets the same versions and needs no
        # registry index; its build-dependencies (begen and all of begen's)
        # are built with debug = false, as Cargo.toml's
        # [profile.dev.package."*"] builds begen's dependencies, so they are
        # the units `cargo test` built (begen's library itself builds again:
        # without the `cli` feature). With nvcc (the pip toolkit from
        # setup.sh) the CUDA kernels compile too.
        cp Cargo.lock "$demo/Cargo.lock"
        export CARGO_PROFILE_DEV_BUILD_OVERRIDE_DEBUG=false
        local features=()
        [[ -n "${NVCC:-}" ]] && features=(--features cuda)
        step "kernels-demo cargo test" cargo test --all-targets "${features[@]}" \
            --manifest-path "$demo/Cargo.toml" --target-dir "$ROOT/target"
        # README's first command: build the example, call its kernels from JAX.
        step "scripts/demo.sh" bash scripts/demo.sh
    else
        echo
        echo "test.sh: $demo/Cargo.toml does not exist yet; the example crate is not tested"
    fi

    # The pip route: begen's wheel, the example project's wheel, fresh venvs.
    step "scripts/wheel-check.sh" bash scripts/wheel-check.sh
    # README's install as written, `begen new` and its next: line, in a
    # fresh venv: the begen wheel wheel-check built stands for README's
    # `pip wheel .` (the same wheel; minutes saved).
    local built
    built="$(ls target/wheel-check/dist/begen_jax-*.whl | head -1)"
    step "scripts/newcomer-check.sh" env NEWCOMER_WHEEL="$ROOT/$built" bash scripts/newcomer-check.sh
}

# The torch target under each torch: its own venv (no jax there), begen
# building with .venv's jax beside it (BEGEN_PYTHON). A lane of its own
# from the moment the crate's tests are built (it needs only
# target/debug/begen and the venvs, made in the background): one process
# per torch, no pytest workers.
# wait_torch_setup VERSION: until setup-torch.sh VERSION has ended (a file
# tells: the lane cannot `wait` for its parent's children).
wait_torch_setup() {
    while [[ ! -f "$LOGS/setup-torch-$1.rc" ]] && kill -0 "${torch_setup_pid[$1]}" 2>/dev/null; do
        sleep 2
    done
}
torch_lane() {
    local v py
    for v in "${torch_versions[@]}"; do
        wait_torch_setup "$v"
        if [[ "$(cat "$LOGS/setup-torch-$v.rc" 2>/dev/null)" == 0 ]]; then
            cat "$LOGS/setup-torch-$v.log"
            py="$(cat "$LOGS/setup-torch-$v.out")"
            step "pytest tests/torch (torch $v)" env BEGEN_BIN="${BEGEN_BIN:-$ROOT/target/debug/begen}" \
                "$py" -m pytest -q --durations=5 tests/torch
        else
            cat "$LOGS/setup-torch-$v.log"
            names+=("setup-torch.sh $v"); results+=("FAILED  (log: ${LOGS#"$ROOT"/}/setup-torch-$v.log)"); failed=1
        fi
    done
}

# The lints need their components; rustup adds them before the lane starts.
for component in rustfmt clippy; do
    sub=${component/rustfmt/fmt}
    if ! cargo "$sub" --version >/dev/null 2>&1 && command -v rustup >/dev/null; then
        rustup component add "$component"
    fi
done

# The crate's tests are built first; the cargo lane then runs beside them
# (it needs nothing they build, and cargo holds no lock while tests run).
# The #[ignore]d tests compile generated code (g++, JAX's XLA headers,
# nvcc): setup.sh has provided all three by now, so CI runs them too.
step "cargo test --no-run" cargo test --all-targets --no-run
# Tests of the crate and of tests/python build torch ops with the newest
# torch's venv (target/venv-torch-2.15): it must be whole before they start.
[[ -d tests/torch ]] && wait_torch_setup "${torch_versions[0]}"
start_lane cargo cargo_lane
[[ -d tests/torch ]] && start_lane torch torch_lane
if [[ $CI == true ]]; then
    step "cargo test" cargo test --all-targets --no-fail-fast -- --include-ignored
else
    step "cargo test" cargo test --all-targets --no-fail-fast
fi
if [[ -f src/lib.rs ]]; then
    step "cargo test --doc" cargo test --doc
fi
# Formatting (rustfmt.toml).
step "cargo fmt --check" cargo fmt --check

if [[ -d tests/python ]]; then
    # Python tests find the CLI here; build it once so they need not.
    export BEGEN_BIN="${BEGEN_BIN:-$ROOT/target/debug/begen}"
    # The cross-version test in the run over tests/python builds once with
    # --jax-min 0.10.2 and calls the library under each older jax; then the
    # CPU end-to-end tests run under each, begen asking that Python for its
    # jax (not the ruff lints of the generated code: they do not depend on
    # jax, and ruff is .venv's).
    matrix=()
    for v in "${jax_versions[@]}"; do
        if wait "${jax_setup_pid[$v]}"; then
            matrix+=("$(cat "$LOGS/setup-jax-$v.out")")
            cat "$LOGS/setup-jax-$v.log"
        else
            cat "$LOGS/setup-jax-$v.log"
            names+=("setup-jax.sh $v"); results+=("FAILED  (log: ${LOGS#"$ROOT"/}/setup-jax-$v.log)"); failed=1
        fi
        unset "jax_setup_pid[$v]"
    done
    BEGEN_JAX_MATRIX="$(IFS=:; echo "${matrix[*]}")"
    export BEGEN_JAX_MATRIX
    # The files of the jax lane say so themselves, with a module-level
    # `pytestmark = pytest.mark.jax_lane` (tests/python/conftest.py): only
    # those are collected (the others are not imported under an older jax),
    # and `-m jax_lane` runs their tests.
    mapfile -t cpu_e2e < <(grep -rlE --include='test_*.py' '^pytestmark = .*pytest\.mark\.jax_lane' tests/python | sort)
    # The floor's run is a lane of its own, beside the run over
    # tests/python: it needs only the built begen and its venv. Releases
    # between the floor and .venv's newest load and call a floor build in
    # the cross-version test only (0.11.2 is also the GPU image's jax, under
    # which scripts/gpu-check.sh runs every step), not the whole CPU
    # end-to-end set again.
    jax_lane() {
        local py v
        for py in "${matrix[0]}"; do
            v="${py%/bin/python}"; v="${v##*/venv-jax-}"
            step "pytest (jax $v)" env -u BEGEN_JAX_MATRIX -u XLA_FFI_INCLUDE_DIR BEGEN_PYTHON="$py" \
                "$py" -m pytest -q "${workers[@]}" -m jax_lane -k "not matrix and not ruff and not name_only_what_they_define" "${cpu_e2e[@]}"
        done
    }
    start_lane jax jax_lane
    step "pytest tests/python" run_pytest tests/python
fi

end_lane cargo
[[ -n "${lane_pid[jax]:-}" ]] && end_lane jax
[[ -n "${lane_pid[torch]:-}" ]] && end_lane torch

times > "$LOGS/total.times"
echo
echo "==== summary ($(( SECONDS - start ))s, cpu $(children_cpu "$LOGS/total.times")s on $(nproc) cores, CI=$CI)"
for i in "${!names[@]}"; do
    printf '  %-28s %s\n' "${names[$i]}" "${results[$i]}"
done
# What the run left on disk: a machine with little of it fails in pip or the
# linker, and this line says how much a run needs.
size() { local s; s="$(du -sh "$1" 2>/dev/null | cut -f1)"; echo "${s:-0}"; }
echo "  disk: target/ $(size target), .venv $(size .venv), pip's cache $(size "${PIP_CACHE_DIR:-$HOME/.cache/pip}"); $(df -Ph . | awk 'NR == 2 { print $4 }') free"
if [[ $failed != 0 ]]; then
    echo "test.sh: FAILED"
    exit 1
fi
echo "test.sh: all passed"
