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
    # Each kernel's and mode's row with respect to all of its inputs (the
    # first), not one alone.
    got = {}
    for r in report.rows:
        got.setdefault((r.kernel, r.mode), r)
    return got


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
    assert table[0].split() == ["kernel", "mode", "wrt", "max", "error", "result"], table[0]
    # Each input alone as well as all together, and what was drawn.
    assert got[("mv", "rev")].wrt == "A, x" and ("mv", "rev") in got, str(report)
    alone = [r for r in report.rows if r.kernel == "mv" and r.mode == "rev"]
    assert [r.wrt for r in alone] == ["A, x", "A", "x"], str(report)
    assert all(r.result == "pass" for r in alone), str(report)
    assert report.drawn["mv"] == ["m=3 n=4", "m=17 n=33"], str(report)
    assert report.drawn["tanh_k"] == ["n=3 s=0.75", "n=3 s=-1.25", "n=17 s=1.5", "n=17 s=-0.5"], str(report)
    assert "drawn (every row of a kernel ran on each of its draws):" in str(report)


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
    assert float(line.split()[3]) > 1e-3, said
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
    # float32 finite differences over every draw (n up to 17): far below
    # bfloat16's noise (its rows below err by 0.1 and more).
    assert got[("sq_t", "rev")].max_error < 1e-2, str(report)
    # bfloat16 only: bfloat16's tolerance, said so; a wrong kernel still fails.
    tolerance = "bfloat16 tolerance (eps 0.125, atol 0.1, rtol 0.1)"
    assert got[("sq_bf16", "rev")].result == "pass" and got[("sq_bf16", "rev")].note == tolerance, str(report)
    wrong = got[("sq_bf16_wrong", "rev")]
    assert wrong.result == "FAIL" and wrong.note.endswith("; " + tolerance), str(report)
    assert tolerance in report.table()
def build_source(tmp_path, name, source, yaml):
    src = tmp_path / "kernels"
    src.mkdir()
    (src / "k.cpp").write_text(textwrap.dedent(source))
    (src / "begen.yaml").write_text("platform: cpu\nfunctions:\n" + yaml)
    return build(src, tmp_path / "out", name)


GROUP = """\
    #include <cmath>
    #include <cstdint>
    // y = sin(x) dt + x dc, linear in dt and dc together.
    // @BE gp arg:float64[n] arg:float64[n] arg:float64[n] ret:float64[n] dim.n
    void gp(const double* x, const double* dt, const double* dc, double* y, int64_t n) {
        for (int64_t i = 0; i < n; ++i) y[i] = std::sin(x[i]) * dt[i] + x[i] * dc[i];
    }
    // Deliberately wrong for dc only: x + 1 where its cotangent has x.
    // @BE gp_t arg:float64[n] arg:float64[n] ret:float64[n] ret:float64[n] dim.n
    void gp_t(const double* x, const double* ct, double* gdt, double* gdc, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
            gdt[i] = std::sin(x[i]) * ct[i];
            gdc[i] = (x[i] + 1.0) * ct[i];
        }
    }
"""


def test_each_input_of_a_group_is_checked_alone(jax_cpu, tmp_path):
    # A transpose wrong for one member of its group: the row of that member
    # alone fails and the other's passes, so the table says which is wrong.
    m = build_source(tmp_path, "grads_group", GROUP, '  gp: {linear: [[dt, dc]], transpose: {"dt, dc": gp_t}}\n')
    report = check_grads(m, order=1, raise_on_failure=False)
    got = {(r.mode, r.wrt): r for r in report.rows}
    assert got[("rev", "dt")].result == "pass", str(report)
    assert got[("rev", "dc")].result == "FAIL" and got[("rev", "dt, dc")].result == "FAIL", str(report)
    assert got[("fwd", "dc")].result == "pass", str(report)
    assert [(r.mode, r.wrt) for r in report.failures] == [("rev", "dt, dc"), ("rev", "dc")], str(report)


def test_a_subset_not_declared_where_all_inputs_run_is_an_error():
    # A derivative JAX refuses as not declared with respect to one input,
    # while the one with respect to every input runs, took other rules than
    # the passing rows checked (such as a group's zeros): an error, never
    # `n/a`; so is one that runs on one draw and is refused on another.
    from begen.testing import GradRow, _merged

    ok = GradRow("k", "rev", 1e-12, "pass", wrt="x, c")
    refused = GradRow("k", "rev", None, "n/a", "not declared (k: not linear in dc with dx fixed)", wrt="c")
    ran = {("rev", "x, c"): [("n=3", ok)], ("rev", "c"): [("n=3", refused)]}
    row = _merged("k", "rev", "c", ran[("rev", "c")], "x, c", ran)
    assert row.result == "ERROR" and row.note.startswith("at n=3: fails with respect to c alone"), row
    assert "not linear in dc with dx fixed" in row.note, row
    # Refused for all inputs together as well: not declared, n/a.
    none = GradRow("k", "rev", None, "n/a", "not declared (...)", wrt="x, c")
    ran = {("rev", "x, c"): [("n=3", none)], ("rev", "c"): [("n=3", refused)]}
    assert _merged("k", "rev", "c", ran[("rev", "c")], "x, c", ran).result == "n/a"
    # Passing on one draw, refused on another.
    ran = {("rev", "x, c"): [("n=3", ok), ("n=17", none)]}
    row = _merged("k", "rev", "x, c", ran[("rev", "x, c")], "x, c", ran)
    assert row.result == "ERROR" and row.note.startswith("at n=17: fails on this draw"), row
    # A failure names its draw; the error column is the largest over draws.
    bad = GradRow("k", "rev", 0.5, "FAIL", "Not equal to tolerance", wrt="x, c")
    row = _merged("k", "rev", "x, c", [("n=3", ok), ("n=17 neg=True", bad)], "x, c", {})
    assert (row.result, row.max_error, row.note) == ("FAIL", 0.5, "at n=17 neg=True: Not equal to tolerance"), row


NEG = """\
    #include <cstdint>
    // y = 2x, or -2x with neg.
    // @BE twice arg:float64[n] ret:float64[n] attr.neg:bool dim.n
    void twice(const double* x, double* y, bool neg, int64_t n) {
        for (int64_t i = 0; i < n; ++i) y[i] = (neg ? -2.0 : 2.0) * x[i];
    }
    // The same, refusing neg = true (begen.yaml: unsupported).
    // @BE twice_pos arg:float64[n] ret:float64[n] attr.neg:bool dim.n
    void twice_pos(const double* x, double* y, bool neg, int64_t n) { twice(x, y, neg, n); }
    // Deliberately wrong when neg is true: it ignores neg.
    // @BE twice_bwd arg:float64[n] arg:float64[n] ret:float64[n] attr.neg:bool dim.n
    void twice_bwd(const double* x, const double* ct, double* dx, bool neg, int64_t n) {
        for (int64_t i = 0; i < n; ++i) dx[i] = 2.0 * ct[i];
    }
"""

PAST8 = """\
    #include <cstdint>
    // y = x^2.
    // @BE square arg:float64[n] ret:float64[n] dim.n
    void square(const double* x, double* y, int64_t n) {
        for (int64_t i = 0; i < n; ++i) y[i] = x[i] * x[i];
    }
    // Deliberately wrong past element 8 (a small kernel's threshold): 3 for 2.
    // @BE square_bwd arg:float64[n] arg:float64[n] ret:float64[n] dim.n
    void square_bwd(const double* x, const double* ct, double* dx, int64_t n) {
        for (int64_t i = 0; i < n; ++i) dx[i] = (i < 8 ? 2.0 : 3.0) * x[i] * ct[i];
    }
"""


def test_a_backward_kernel_wrong_only_for_a_true_bool_fails(jax_cpu, tmp_path):
    yaml = "  twice: {vjp: twice_bwd}\n  twice_pos: {vjp: twice_bwd, unsupported: {neg: [true]}}\n"
    m = build_source(tmp_path, "grads_neg", NEG, yaml)
    report = check_grads(m, raise_on_failure=False)
    rev = next(r for r in report.rows if r.kernel == "twice" and r.mode == "rev")
    assert rev.result == "FAIL" and "neg=True" in rev.note, str(report)
    # Values a kernel does not support are not drawn, and the table says so:
    # twice_pos passes on the draws it runs.
    pos = next(r for r in report.rows if r.kernel == "twice_pos" and r.mode == "rev")
    assert pos.result == "pass", str(report)
    assert report.drawn["twice_pos"][:2] == ["n=3 neg=False", "n=17 neg=False"], str(report)
    assert "(refused: n=3 neg=True: twice_pos does not support neg=True" in report.drawn["twice_pos"][2], str(report)
    # Both values were drawn, and the table says so.
    assert report.drawn["twice"] == ["n=3 neg=False", "n=3 neg=True", "n=17 neg=False", "n=17 neg=True"], str(report)
    assert "n=3 neg=False | n=3 neg=True" in str(report), str(report)


def test_a_backward_kernel_wrong_only_past_element_8_fails(jax_cpu, tmp_path):
    m = build_source(tmp_path, "grads_past8", PAST8, "  square: {vjp: square_bwd}\n")
    report = check_grads(m, raise_on_failure=False)
    rev = next(r for r in report.rows if r.mode == "rev")
    assert rev.result == "FAIL" and rev.note.startswith("at n=17:"), str(report)
    assert report.drawn["square"] == ["n=3", "n=17"], str(report)


GENERATOR = """\
import jax
import numpy as np


def inputs(kernel, rng):
    # twice has no typed contract: the arrays, and out= among the keywords.
    x = rng.normal(size=6)
    return (x,), {"out": jax.ShapeDtypeStruct(x.shape, x.dtype)}
"""


def test_the_command_line_takes_a_generator_and_names_the_module(jax_cpu, tmp_path):
    # A kernel without a typed contract (algo's twice) checked from the
    # command line through --inputs module:function, out= in its keywords.
    out = tmp_path / "out"
    run_begen("build", REPO / "tests/e2e/algo", "--out", out, "--name", "grads_algo_cli", "--platform", "cpu", "--quiet")
    gens = tmp_path / "gens"
    gens.mkdir()
    (gens / "mygens.py").write_text(GENERATOR)
    env = {**os.environ, "PYTHONPATH": str(REPO / "python"), "JAX_PLATFORMS": "cpu"}
    cmd = [sys.executable, "-m", "begen", "check-grads", str(out), "--kernels", "twice"]

    def run(*extra):
        return subprocess.run([*cmd, *extra], capture_output=True, text=True, env=env, cwd=gens, check=False)

    ok = run("--inputs", "mygens:inputs", "--order", "1")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "all passed" in ok.stdout and "given: shapes (6,)" in ok.stdout, ok.stdout
    line = next(x for x in ok.stdout.splitlines() if x.startswith("twice") and " rev " in x)
    assert line.split()[-1] == "pass", ok.stdout
    # Without it: the row says what to give.
    bare = run()
    assert bare.returncode == 1 and "has no typed contract" in bare.stdout, bare.stdout + bare.stderr
    # Mistakes are one line each, exit status 2, never a traceback.
    for extra, said in [
        (("--name", "../x"), "--name '../x' is not a module name"),
        (("--name", "grads_algo_clj"), "no module 'grads_algo_clj' in "),
        (("--inputs", "mygens"), "give module:function"),
        (("--inputs", "nogens:inputs"), "no module 'nogens'"),
        (("--inputs", "mygens:input"), "module 'mygens' has no 'input'"),
        (("--inputs", "../mygens.py:inputs"), "not paths"),
    ]:
        bad = run(*extra)
        assert bad.returncode == 2 and said in bad.stderr, (extra, bad.stderr)
        assert "Traceback" not in bad.stderr, bad.stderr
    near = run("--name", "grads_algo_clj")
    assert "did you mean 'grads_algo_cli'?" in near.stderr, near.stderr
    # An installed package's folder holds __init__.py beside the module:
    # the module alone is found; two modules need --name.
    (out / "__init__.py").write_text("")
    assert run("--inputs", "mygens:inputs", "--order", "1").returncode == 0
    (out / "other.py").write_text("")
    two = run()
    assert two.returncode == 2 and "name one with --name" in two.stderr, two.stderr
