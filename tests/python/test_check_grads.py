"""begen.testing.check_grads and `python -m begen check-grads`: every
declared vjp, jvp, linear and transpose of a built module checked against
finite differences, on inputs built from the typed contracts — passing on
the repository's kernels with derivatives, failing with a table on a
deliberately wrong backward kernel, and second order through a transpose
kernel that is itself declared linear (docs/primitives.md)."""

import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import REPO, import_module, run_begen

sys.path.insert(0, str(REPO / "python"))

from begen.testing import check_grads


def build(src, out, name):
    # Each module under its own name: its targets never meet those another
    # test of this process registered from the same kernels.
    run_begen("build", src, "--out", out, "--name", name, "--platform", "cpu", "--quiet")
    return import_module(out, name)


def rows(report):
    return {(r.kernel, r.mode): r for r in report.rows}


def csr(rng):
    # A 3x4 CSR matrix with two entries per row, and a vector: the row count
    # (attribute m) and indptr's length agree, which no contract states.
    data = rng.normal(size=6)
    indices = np.array([0, 2, 1, 3, 0, 3], np.int32)
    indptr = np.array([0, 2, 4, 6], np.int32)
    return (data, indices, indptr, rng.normal(size=4)), {"m": 3}


def test_the_primitives_pass_in_every_mode_they_declare(jax_cpu, tmp_path):
    m = build(REPO / "tests/e2e/prims", tmp_path, "grads_prims")
    report = check_grads(m, inputs={"csrmv": csr})
    got = rows(report)
    assert report.ok, str(report)
    # mv: linear in A and x, with transposes: both modes, and a second
    # order in forward mode (its jvp is itself); its transposes declare
    # nothing, so reverse mode stops at the first order.
    for mode in ("fwd", "rev", "fwd, order 2"):
        assert got[("mv", mode)].result == "pass", str(report)
        assert got[("mv", mode)].max_error < 1e-6, str(report)
    assert got[("mv", "rev, order 2")].result == "n/a", str(report)
    # tanh_k: a tangent kernel, linear with a transpose: both modes.
    assert got[("tanh_k", "fwd")].result == "pass" and got[("tanh_k", "rev")].result == "pass", str(report)
    # The CUDA kernels: skipped without a GPU (the build is CPU only: absent).
    assert {k for k, _ in got} >= {"mv", "tanh_k", "tanh_jvp", "csrmv"}, str(report)
    table = report.table().splitlines()
    assert table[0].split() == ["kernel", "mode", "max", "error", "result"], table[0]


def test_backward_kernels_pass(jax_cpu, tmp_path):
    m = build(REPO / "tests/e2e/algo", tmp_path, "grads_algo")
    report = check_grads(m, ["square", "mulsum"])
    assert report.ok, str(report)
    got = rows(report)
    assert got[("square", "rev")].result == "pass" and got[("mulsum", "rev")].result == "pass", str(report)
    # A custom_vjp has no forward mode: not applicable, not a failure.
    assert got[("square", "fwd")].result == "n/a", str(report)
    # An untyped kernel: no inputs can be built; the row says what to give.
    untyped = check_grads(m, ["twice"], raise_on_failure=False)
    assert untyped.rows[0].result == "ERROR" and "inputs={'twice': ...}" in untyped.rows[0].note, str(untyped)


WRONG = textwrap.dedent(
    """\
    #include <cstdint>
    // @BE square arg:float64[n] ret:float64[n] attr.scale:float64 dim.n
    void square(const double* x, double* y, double scale, int64_t n) {
        for (int64_t i = 0; i < n; ++i) y[i] = scale * x[i] * x[i];
    }
    // Deliberately wrong: 3 where the derivative has 2.
    // @BE square_bwd arg:float64[n] arg:float64[n] ret:float64[n] attr.scale:float64 dim.n
    void square_bwd(const double* x, const double* dy, double* dx, double scale, int64_t n) {
        for (int64_t i = 0; i < n; ++i) dx[i] = 3.0 * scale * x[i] * dy[i];
    }
    """
)


@pytest.fixture()
def wrong(tmp_path):
    src = tmp_path / "kernels"
    src.mkdir()
    (src / "wrong.cpp").write_text(WRONG)
    (src / "begen.yaml").write_text("platform: cpu\nfunctions:\n  square: {vjp: square_bwd}\n")
    return src


def test_a_wrong_backward_kernel_fails_with_a_table(jax_cpu, wrong, tmp_path):
    m = build(wrong, tmp_path / "out", "grads_wrong")
    with pytest.raises(AssertionError) as e:
        check_grads(m)
    said = str(e.value)
    assert "gradient checks of grads_wrong: 1 failed" in said, said
    line = next(x for x in said.splitlines() if x.startswith("square") and " rev " in x)
    assert "FAIL" in line, said
    # The error column: the backward kernel is off by half of the gradient.
    assert float(line.split()[2]) > 1e-3, said
    report = check_grads(m, raise_on_failure=False)
    assert not report.ok and [r.mode for r in report.failures] == ["rev"]


def test_the_command_line_prints_the_table_and_fails(jax_cpu, wrong, tmp_path):
    out = tmp_path / "out"
    run_begen("build", wrong, "--out", out, "--name", "grads_cli", "--platform", "cpu", "--quiet")
    env = {**os.environ, "PYTHONPATH": str(REPO / "python"), "JAX_PLATFORMS": "cpu"}
    cmd = [sys.executable, "-m", "begen", "check-grads", str(out)]
    failed = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "kernel" in failed.stdout and "FAIL" in failed.stdout, failed.stdout + failed.stderr
    unknown = subprocess.run([*cmd, "--kernels", "sqare"], capture_output=True, text=True, env=env, check=False)
    assert unknown.returncode == 2 and "did you mean 'square'?" in unknown.stderr, unknown.stderr


HESSIAN_YAML = textwrap.dedent(
    """\
    platform: cpu
    functions:
      mv: {linear: [A, x], transpose: {A: mv_tA, x: mv_tx}}
      # The transpose kernel is itself linear in its cotangent, and its own
      # transpose is mv: reverse mode twice (hessians) works.
      mv_tx: {linear: [ct], transpose: {ct: mv}}
    """
)


def test_a_linear_transpose_gives_second_order(jax_cpu, tmp_path):
    jax = jax_cpu
    src = tmp_path / "kernels"
    src.mkdir()
    shutil.copy(REPO / "tests/e2e/prims/prims.cpp", src)
    (src / "begen.yaml").write_text(HESSIAN_YAML)
    m = build(src, tmp_path / "out", "grads_hessian")
    rng = np.random.default_rng(0)
    A, x = rng.normal(size=(3, 4)), rng.normal(size=4)
    h = jax.hessian(lambda v: (m.mv(A, v) ** 2).sum())(x)
    np.testing.assert_allclose(h, 2 * A.T @ A, rtol=1e-10)
    report = check_grads(m, ["mv_tx"])
    assert report.ok, str(report)
    assert rows(report)[("mv_tx", "rev, order 2")].result == "pass", str(report)


def test_inputs_from_a_generator(jax_cpu, tmp_path):
    m = build(REPO / "tests/e2e/prims", tmp_path, "grads_gen")
    # The generator as one callable of (kernel, rng).
    report = check_grads(m, ["csrmv"], inputs=lambda kernel, rng: csr(rng))
    assert report.ok and rows(report)[("csrmv", "rev")].max_error > 0, str(report)
    with pytest.raises(ValueError, match="did you mean 'csrmv'"):
        check_grads(m, ["csrm"])


def test_low_precision_kernels_are_checked_in_float32_or_at_their_tolerance(jax_cpu, tmp_path):
    # Finite differences in bfloat16 at float32's step are noise: jax's own
    # check_grads fails the correct bfloat16 backward kernel.
    import ml_dtypes
    from jax.test_util import check_grads as jax_check_grads

    m = build(REPO / "tests/e2e/lowp", tmp_path, "grads_lowp")
    x = np.random.default_rng(0).standard_normal(3).astype(ml_dtypes.bfloat16)
    with pytest.raises(AssertionError):
        jax_check_grads(m.sq_bf16, (x,), 1, modes=["rev"])
    report = check_grads(m, raise_on_failure=False)
    got = rows(report)
    # A template with a float32 instance: checked there, and said so.
    assert got[("sq_t", "rev")].result == "pass", str(report)
    assert got[("sq_t", "rev")].note == "checked in float32, its float32 instance (bfloat16 inputs cast)"
    assert got[("sq_t", "rev")].max_error < 1e-3, str(report)
    # bfloat16 only: bfloat16's tolerance, said so; a wrong kernel still fails.
    tolerance = "bfloat16 tolerance (eps 0.125, atol 0.1, rtol 0.1)"
    assert got[("sq_bf16", "rev")].result == "pass" and got[("sq_bf16", "rev")].note == tolerance, str(report)
    wrong = got[("sq_bf16_wrong", "rev")]
    assert wrong.result == "FAIL" and wrong.note.endswith("; " + tolerance), str(report)
    assert tolerance in report.table()
