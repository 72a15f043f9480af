"""begen.testing.check_torch and `python -m begen check-grads --torch OUT`:
every op of a built `<NAME>_torch` module through torch.library.opcheck and,
where it declares `vjp:`, torch.autograd.gradcheck, on inputs drawn from the
contracts that `_begen_ops` carries. A correct tree passes; a wrong backward
kernel fails, by name and draw, with a non-zero exit status."""

import os
import re
import subprocess
import sys
import textwrap

import pytest
from conftest import REPO, build

sys.path.insert(0, str(REPO / "python"))
from begen.testing import OPCHECKS, check_torch, torch_ops

# The forward pairs of test_torch.py (a residual bound by name, and `bad`,
# whose backward kernel says 3 x where the derivative is 2 x), and two
# float32 ones (no float64 instance: gradcheck at float32's tolerance) with
# a boolean attribute, one of whose gradients is wrong for `w` alone.
SOURCE = textwrap.dedent(
    """\
    #include <cstdint>
    // @BE sq arg:float64[n, d] ret:float64[n, d] ret:float64[n, d] dim.n dim.d
    void sq(const double* x, double* y, double* r, int64_t n, int64_t d) {
        for (int64_t i = 0; i < n * d; ++i) { y[i] = x[i] * x[i]; r[i] = 2.0 * x[i]; }
    }
    // @BE sq_bwd arg:float64[n, d] arg:float64[n, d] ret:float64[n, d] dim.n dim.d
    void sq_bwd(const double* r, const double* ct, double* dx, int64_t n, int64_t d) {
        for (int64_t i = 0; i < n * d; ++i) dx[i] = r[i] * ct[i];
    }
    // @BE bad arg:float64[n] ret:float64[n] dim.n
    void bad(const double* x, double* y, int64_t n) { for (int64_t i = 0; i < n; ++i) y[i] = x[i] * x[i]; }
    // @BE bad_bwd arg:float64[n] arg:float64[n] ret:float64[n] dim.n
    void bad_bwd(const double* x, const double* ct, double* dx, int64_t n) {
        for (int64_t i = 0; i < n; ++i) dx[i] = 3.0 * x[i] * ct[i];
    }
    // y = x w, negated when neg.
    // @BE tw arg:float32[n] arg:float32[n] ret:float32[n] attr.neg dim.n
    void tw(const float* x, const float* w, float* y, bool neg, int64_t n) {
        for (int64_t i = 0; i < n; ++i) y[i] = (neg ? -1.0f : 1.0f) * x[i] * w[i];
    }
    // @BE tw_bwd arg:float32[n] arg:float32[n] arg:float32[n] ret:float32[n] ret:float32[n] attr.neg dim.n
    void tw_bwd(const float* x, const float* w, const float* ct, float* dx, float* dw, bool neg, int64_t n) {
        const float s = neg ? -1.0f : 1.0f;
        for (int64_t i = 0; i < n; ++i) { dx[i] = s * w[i] * ct[i]; dw[i] = s * x[i] * ct[i]; }
    }
    // The same, with dw wrong when neg (the sign left out).
    // @BE tw2 arg:float32[n] arg:float32[n] ret:float32[n] attr.neg dim.n
    void tw2(const float* x, const float* w, float* y, bool neg, int64_t n) {
        for (int64_t i = 0; i < n; ++i) y[i] = (neg ? -1.0f : 1.0f) * x[i] * w[i];
    }
    // @BE tw2_bwd arg:float32[n] arg:float32[n] arg:float32[n] ret:float32[n] ret:float32[n] attr.neg dim.n
    void tw2_bwd(const float* x, const float* w, const float* ct, float* dx, float* dw, bool neg, int64_t n) {
        const float s = neg ? -1.0f : 1.0f;
        for (int64_t i = 0; i < n; ++i) { dx[i] = s * w[i] * ct[i]; dw[i] = x[i] * ct[i]; }
    }
    """
)

YAML = (
    "name: t_check\nfunctions:\n"
    "  sq: {vjp: sq_bwd, residuals: [r]}\n  bad: {vjp: bad_bwd}\n  tw: {vjp: tw_bwd}\n  tw2: {vjp: tw2_bwd}\n"
)


@pytest.fixture(scope="module")
def checked(torch, tmp_path_factory):
    tree = tmp_path_factory.mktemp("check_src")
    (tree / "check.cpp").write_text(SOURCE)
    (tree / "begen.yaml").write_text(YAML)
    return build(tmp_path_factory, tree, "t_check")


def rows(report, op):
    return {(r.check, r.wrt): r for r in report.rows if r.op == op}


def test_check_torch_passes_a_correct_tree(algo, torch):
    report = check_torch(algo.module)
    assert report.ok, report
    mulsum = rows(report, "mulsum")
    # Every opcheck test, and gradcheck in float64 of both inputs together and each alone.
    assert set(mulsum) == {(c, "-") for c in OPCHECKS} | {("gradcheck", w) for w in ("x, y", "x", "y")}, report
    assert all(r.result == "pass" for r in mulsum.values()), report
    assert mulsum[("gradcheck", "x")].note == "float64"
    # An integer input is drawn (zeros, in bounds) and not differentiated.
    assert set(rows(report, "gather")) == {(c, "-") for c in OPCHECKS} | {("gradcheck", "x")}
    # A backward kernel is an op too, checked without gradcheck (no vjp: of its own).
    assert set(rows(report, "square_bwd")) == {(c, "-") for c in OPCHECKS}
    # The draws: small and large extents, each attribute value.
    assert report.drawn["square"] == ["n=3 scale=0.75", "n=3 scale=-1.25", "n=17 scale=1.5", "n=17 scale=-0.5"]
    assert report.drawn["gather"] == ["n=3 m=4", "n=17 m=33"]
    # A CUDA op without a CUDA device is skipped by name, not passed.
    if not torch.cuda.is_available():
        assert rows(report, "add_cuda")[("-", "-")].result == "skipped"


def test_check_torch_draws_templates_in_float64_and_each_const(typed, torch):
    report = check_torch(typed.module)
    assert report.ok, report
    assert report.drawn["scale"][0] == "n=3 s=0.75 T=float64"
    assert report.drawn["repeat"] == ["n=3 TIMES=1", "n=3 TIMES=2", "n=17 TIMES=3", "n=17 TIMES=1"]
    assert report.drawn["matvec"] == ["m=3 k=4", "m=17 k=33"]
    # out= ops are skipped by name, never passed silently.
    for name in ("tile_out", "untyped_out"):
        row = rows(report, name)[("-", "-")]
        assert row.result == "skipped" and row.note.startswith("an out= op"), report


def test_check_torch_fails_a_wrong_backward_kernel(checked, torch):
    with pytest.raises(AssertionError, match="failed"):
        check_torch(checked.module)
    report = check_torch(checked.module, raise_on_failure=False)
    assert not report.ok
    failed = {(r.op, r.check, r.wrt) for r in report.failures}
    # bad's backward is wrong on every draw: the first (n=3) is named.
    bad = rows(report, "bad")[("gradcheck", "x")]
    assert bad.result == "FAIL" and bad.note.startswith("at n=3:") and "Jacobian mismatch" in bad.note, report
    # tw2's dw is wrong only when neg: with respect to w (alone and with x), at neg=True.
    assert failed == {("bad", "gradcheck", "x"), ("tw2", "gradcheck", "x, w"), ("tw2", "gradcheck", "w")}, report
    tw2_w = rows(report, "tw2")[("gradcheck", "w")].note
    assert tw2_w.startswith("at n=3 neg=True:") and "with respect to 'w'" in tw2_w, report
    # The residual output is left out of what gradcheck differentiates (the typed function's).
    assert rows(report, "sq")[("gradcheck", "x")].result == "pass", report
    # float32 only: checked at float32's tolerance, and the row says so.
    tw = rows(report, "tw")[("gradcheck", "x, w")]
    assert tw.result == "pass" and tw.note == "in float32 (no float64 instance): eps 0.001, atol 0.01, rtol 0.01"
    assert report.drawn["tw"] == ["n=3 neg=False", "n=3 neg=True", "n=17 neg=False", "n=17 neg=True"]
    # Only the ops asked for.
    assert check_torch(checked.module, ["sq", "tw"]).ok


def test_check_torch_names_an_unknown_op(checked, torch):
    with pytest.raises(ValueError, match="no op 'bda'.*did you mean 'bad'"):
        check_torch(checked.module, ["bda"])
    with pytest.raises(TypeError, match="not a torch module begen generated"):
        check_torch(os)


def test_the_metadata_is_the_ops_contracts(checked, algo, typed):
    ops = torch_ops(checked.module)
    assert set(ops) == {"sq", "sq_bwd", "bad", "bad_bwd", "tw", "tw_bwd", "tw2", "tw2_bwd"}
    assert ops["tw"]["args"] == (("x", "float32", ("n",)), ("w", "float32", ("n",)))
    assert ops["tw"]["attrs"] == (("neg", "bool", None),)
    assert (ops["tw"]["differentiable"], ops["tw"]["vjp"]) == (("x", "w"), "tw_bwd")
    assert (ops["tw_bwd"]["differentiable"], ops["tw_bwd"]["vjp"]) == ((), None)
    assert torch_ops(algo.module)["gather"]["differentiable"] == ("x",)
    typed_ops = torch_ops(typed.module)
    assert typed_ops["scale"]["types"] == {"T": ("float32", "float64", "int32")}
    assert typed_ops["repeat"]["consts"] == (("TIMES", "int", (1, 2, 3)),)
    assert typed_ops["accumulate"]["inout"] == ("acc",)


def check_grads_cli(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    return subprocess.run(
        [sys.executable, "-m", "begen", "check-grads", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=False,
    )


def test_check_grads_torch_cli(algo, checked, torch):
    ok = check_grads_cli("--torch", algo.out)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.startswith("torch checks of e2e_algo_torch: all passed"), ok.stdout
    assert re.search(r"^mulsum +gradcheck +x, y +pass: float64$", ok.stdout, re.MULTILINE), ok.stdout
    bad = check_grads_cli("--torch", checked.out, "--name", "t_check")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "3 failed" in bad.stdout and "Jacobian mismatch" in bad.stdout, bad.stdout
    only = check_grads_cli("--torch", checked.out, "--kernels", "sq,tw")
    assert only.returncode == 0, only.stdout + only.stderr


def test_check_grads_torch_cli_usage(checked, torch):
    help_ = check_grads_cli("--help")
    assert help_.returncode == 0
    assert "--torch" in help_.stdout and "torch.library.opcheck" in help_.stdout and "exit status" in help_.stdout
    for args, message in [
        (("--torch", checked.out, "--order", "1"), "--order is the JAX check's"),
        (("--torch", checked.out, "--name", "t_chek"), "did you mean --name t_check?"),
        (("--torch", checked.out, "--kernels", "bda"), "did you mean 'bad'?"),
        (("--torch", checked.out / "nope"), "no such folder"),
    ]:
        p = check_grads_cli(*args)
        assert p.returncode == 2 and message in p.stderr, (args, p.stdout, p.stderr)


def test_check_torch_needs_no_jax(checked, torch):
    # This Python has torch; check_torch imports nothing of jax even where
    # jax is importable.
    code = (
        "import sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]\n"
        "import begen.testing, t_check_torch\n"
        "r = begen.testing.check_torch(t_check_torch, ['sq'])\n"
        "assert r.ok, r\n"
        "assert not [m for m in sys.modules if m == 'jax' or m.startswith('jax.')], 'jax imported'\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code, str(REPO / "python"), str(checked.out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 0, p.stdout + p.stderr


def test_the_jax_check_takes_name_py_beside_name_torch_py(tmp_path):
    # A build for jax and torch holds both modules: check-grads OUT (no
    # --torch, no --name) means NAME.py, --torch NAME_torch.py.
    from begen.testing import _load, _load_torch

    (tmp_path / "lib_x.py").write_text("WHICH = 'jax'\n")
    (tmp_path / "lib_x_torch.py").write_text("WHICH = 'torch'\n")
    try:
        assert _load(tmp_path, None).WHICH == "jax"
        assert _load_torch(tmp_path, None).WHICH == "torch"
        assert _load_torch(tmp_path, "lib_x").WHICH == "torch"
    finally:
        sys.path[:] = [p for p in sys.path if p != str(tmp_path)]
        sys.modules.pop("lib_x", None)
        sys.modules.pop("lib_x_torch", None)
