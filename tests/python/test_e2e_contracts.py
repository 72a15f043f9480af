"""Contracts between kernels, end to end on the CPU: tests/e2e/contracts
built by the CLI with `--platform cpu` and called from JAX, and small kernel
directories that begen must refuse or warn about (a backward kernel bound
by position to the wrong tensors, inputs that lack `const`)."""

import textwrap

import numpy as np
import pytest
from conftest import REPO, import_module, run_begen


@pytest.fixture(scope="module")
def m(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_contracts")
    run_begen("build", REPO / "tests/e2e/contracts", "--out", out, "--platform", "cpu", "--quiet")
    return import_module(out, "e2e_contracts")


def kernels(tmp_path, source, yaml=None):
    """A kernel directory with one C++ source (and a begen.yaml)."""
    d = tmp_path / "kernels"
    d.mkdir()
    (d / "k.cpp").write_text('#include <cstdint>\n#include "brainevent/common.h"\n' + textwrap.dedent(source))
    if yaml is not None:
        (d / "begen.yaml").write_text(textwrap.dedent(yaml))
    return d


def test_a_float64_input_of_a_kernel_with_a_vjp_is_refused_with_x64_off(m, jax_cpu):
    jax = jax_cpu
    x = np.arange(3, dtype=np.float64)
    jax.config.update("jax_enable_x64", False)
    try:
        # jax.custom_vjp would narrow it to float32 before the kernel's own
        # checks saw it: the refusal runs first.
        with pytest.raises(TypeError, match="scale2: parameter 'x' is float64, but JAX's x64 mode is off"):
            m.scale2(x)
        np.testing.assert_allclose(m.scale2(x.astype(np.float32)), 2 * x)
    finally:
        jax.config.update("jax_enable_x64", True)
    np.testing.assert_allclose(jax.grad(lambda v: m.scale2(v).sum())(np.ones(3, np.float32)), 2.0)


def test_a_backward_kernel_bound_to_the_wrong_tensors_is_refused(tmp_path, jax_cpu):
    # XLA's rms_norm example: its backward takes the residual first. The
    # counts line up with begen's order (inputs, then one cotangent per
    # output), so only the names tell that `res` would receive `x`.
    d = kernels(tmp_path, """
        // @BE rms_norm
        void rms_norm(const BE::Tensor x, BE::Tensor y, BE::Tensor res, float eps) {}
        // @BE rms_norm_bwd
        void rms_norm_bwd(const BE::Tensor res, const BE::Tensor x, const BE::Tensor ct_y, BE::Tensor ct_x) {}
    """, "functions:\n  rms_norm: {vjp: rms_norm_bwd}\n")
    proc = run_begen("build", d, "--out", tmp_path / "out", "--platform", "cpu", check=False)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert ("input 0 ('x' of 'rms_norm') is bound to 'res' of `rms_norm_bwd`, which is named like output 1 of "
            "'rms_norm'") in proc.stderr, proc.stderr
    assert "is bound to 'x' of `rms_norm_bwd`, which is named like input 0" in proc.stderr, proc.stderr


def test_tensors_that_lack_const_are_named(tmp_path):
    d = kernels(tmp_path, """
        // @BE add_one
        void add_one(BE::Tensor x, BE::Tensor y) {}
    """)
    proc = run_begen("scan", d)
    assert "warning: 'add_one' has 2 outputs and no inputs" in proc.stderr, proc.stderr
    assert "'x' is probably an input that lacks `const`" in proc.stderr, proc.stderr
    # Said with tokens, a kernel without inputs is meant.
    d2 = tmp_path / "k2"
    d2.mkdir()
    (d2 / "k.cpp").write_text('#include "brainevent/common.h"\n// @BE two ret ret\nvoid two(BE::Tensor a, BE::Tensor b) {}\n')
    assert "no inputs" not in run_begen("scan", d2).stderr


def reference_rms_norm(x, eps=1e-5, scale=1.0, center=False):
    x = x - x.mean(axis=-1, keepdims=True) if center else x
    return scale * x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps)


def test_attribute_defaults_give_the_callers_signature(m, jax_cpu):
    import inspect

    x = np.linspace(-1.0, 2.0, 12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_allclose(m.rms_norm(x), reference_rms_norm(x), rtol=1e-5)
    np.testing.assert_allclose(m.rms_norm(x, eps=0.5), reference_rms_norm(x, eps=0.5), rtol=1e-5)
    np.testing.assert_allclose(m.rms_norm(x, scale=2, center=True), reference_rms_norm(x, 1e-5, 2.0, True), rtol=1e-5)
    np.testing.assert_allclose(jax_cpu.jit(m.rms_norm)(x), reference_rms_norm(x), rtol=1e-5)
    sig = inspect.signature(m.rms_norm)
    assert sig.parameters["eps"].default == 1e-5 and sig.parameters["center"].default is False
    assert sig.parameters["eps"].kind is inspect.Parameter.KEYWORD_ONLY
    # Attributes stay keyword-only: two of one type cannot be swapped by position.
    with pytest.raises(TypeError, match="positional"):
        m.rms_norm(x, 0.5)
    xi = np.arange(4, dtype=np.int32)
    np.testing.assert_array_equal(m.shift(xi, times=2), xi * 2 + 3)
    np.testing.assert_array_equal(m.shift(xi, times=2, by=-1), xi * 2 - 1)
    with pytest.raises(TypeError, match="times"):
        m.shift(xi)


def test_a_default_that_does_not_fit_its_type_is_refused(tmp_path):
    d = kernels(tmp_path, """
        // @BE f arg ret attr.n:int8=300 attr.on:bool=2 attr.w:float32=abc
        void f(const BE::Tensor x, BE::Tensor y, int8_t n, bool on, float w) {}
    """)
    proc = run_begen("scan", d, check=False)
    assert proc.returncode != 0
    for text in ("default `300` of attribute 'n'", "default `2` of attribute 'on'", "default `abc` of attribute 'w'"):
        assert text in proc.stderr, proc.stderr


def test_an_output_shaped_like_its_input_needs_no_out(m, jax_cpu):
    jax = jax_cpu
    for shape in [(), (5,), (2, 3, 4)]:
        x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        np.testing.assert_allclose(m.scale_any(x), 2 * x)
        np.testing.assert_allclose(jax.jit(lambda v: m.scale_any(v, s=3.0))(x), 3 * x)
        np.testing.assert_allclose(m.add_same(x, x + 1), 2 * x + 1)
    xs = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_allclose(jax.vmap(m.scale_any)(xs), 2 * xs)
    with pytest.raises(ValueError, match=r"add_same: leading dimensions '\.\.\.' are \(3,\) \(from 'a'\) but "
                                         r"parameter 'b' has \(4,\)"):
        m.add_same(np.ones(3, np.float32), np.ones(4, np.float32))
    with pytest.raises(ValueError, match=r"add_same: leading dimensions '\.\.\.' are \(3,\) \(from 'a'\) but "
                                         r"output 'out' has \(2, 3\)"):
        m.add_same(np.ones(3, np.float32), np.ones(3, np.float32), out=jax.ShapeDtypeStruct((2, 3), np.float32))


def test_leading_dimensions_of_any_rank(m, jax_cpu):
    for shape in [(4,), (3, 4), (2, 3, 4)]:
        x = np.linspace(-1.0, 2.0, int(np.prod(shape)), dtype=np.float32).reshape(shape)
        y, inv = m.rms_last(x)
        assert y.shape == shape and inv.shape == shape[:-1]
        np.testing.assert_allclose(y, reference_rms_norm(x), rtol=1e-5)
        np.testing.assert_allclose(inv, 1 / np.sqrt((x * x).mean(axis=-1) + 1e-5), rtol=1e-5)
    with pytest.raises(ValueError, match=r"rms_last: parameter 'x' must have rank at least 1 \(shape \[rows\.\.\., d\]\), "
                                         r"got shape \(\)"):
        m.rms_last(np.float32(1.0))


def test_the_handler_checks_a_rest_too(m, jax_cpu):
    # A call that bypasses the Python function: the handler refuses it.
    jax = jax_cpu
    m.register()
    call = jax.ffi.ffi_call(m.TARGETS["add_same"], jax.ShapeDtypeStruct((3,), np.float32))
    with pytest.raises(Exception, match=r"add_same: leading dimensions '\.\.\.' are \[3\] \(parameter 'a'\) but "
                                        r"parameter 'b' has \[4\]"):
        np.asarray(call(np.ones(3, np.float32), np.ones(4, np.float32)))
    call = jax.ffi.ffi_call(m.TARGETS["rms_last"], (jax.ShapeDtypeStruct((), np.float32),) * 2)
    with pytest.raises(Exception, match=r"rms_last: parameter 'x': rank 0, but its shape has 1 trailing dimensions"):
        np.asarray(call(np.float32(1.0), eps=np.float32(1e-5))[0])


def test_ambiguous_and_misplaced_rests_are_refused(tmp_path):
    d = kernels(tmp_path, """
        // @BE two arg:float32[a..., n] arg:float32[b..., n] ret:float32[..., n]
        void two(const BE::Tensor x, const BE::Tensor y, BE::Tensor z) {}
        // @BE late arg:float32[n, ...] ret:float32[n]
        void late(const BE::Tensor x, BE::Tensor y) {}
        // @BE clash arg:float32[n..., n] ret:float32[n]
        void clash(const BE::Tensor x, BE::Tensor y) {}
    """)
    proc = run_begen("scan", d, check=False)
    assert proc.returncode != 0
    assert ("the shape of 'z' in 'two' starts with `...`, but 'two' also names its leading dimensions (`a...`): "
            "which ones `...` means is ambiguous") in proc.stderr, proc.stderr
    assert "`...` stands first, for the leading dimensions" in proc.stderr, proc.stderr
    assert "'n' in 'clash' names both leading dimensions (`n...`) and one dimension (`n`)" in proc.stderr, proc.stderr


def rms_grad(x, ct, eps=1e-5):
    r = 1 / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps)
    return r * ct - r**3 / x.shape[-1] * x * (ct * x).sum(axis=-1, keepdims=True)


def test_a_backward_kernel_takes_residuals_by_name(m, jax_cpu):
    jax = jax_cpu
    x = np.linspace(-1.0, 2.0, 24, dtype=np.float32).reshape(2, 3, 4)
    # `inv` is a residual: the function returns y only.
    y = m.rms_res(x)
    assert not isinstance(y, (tuple, list)) and y.shape == x.shape
    np.testing.assert_allclose(y, reference_rms_norm(x), rtol=1e-5)
    ct = np.cos(np.arange(24, dtype=np.float32)).reshape(2, 3, 4)
    g = jax.grad(lambda v: (m.rms_res(v) * ct).sum())(x)
    np.testing.assert_allclose(g, rms_grad(x, ct), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(jax.jit(jax.grad(lambda v: (m.rms_res(v) * ct).sum()))(x), g, rtol=1e-6)
    from jax.test_util import check_grads

    check_grads(lambda v: m.rms_res(v, eps=0.1), (x.astype(np.float32),), order=1, modes=["rev"],
                atol=1e-2, rtol=1e-2)


def test_residuals_that_do_not_fit_are_refused(tmp_path):
    d = kernels(tmp_path, """
        // @BE f arg:float32[n] ret:float32[n] ret:float32[n] dim.n
        void f(const float* x, float* y, float* res, int64_t n) {}
        // @BE f_bwd arg:float32[n] arg:float32[n] ret:float32[n] dim.n
        void f_bwd(const float* res, const float* x, float* ct_x, int64_t n) {}
        // @BE g arg:float32[n] ret:float32[n] ret:float32[n] dim.n
        void g(const float* x, float* y, float* res, int64_t n) {}
    """, "functions:\n  f: {vjp: f_bwd, residuals: [res]}\n  g: {residuals: [rez]}\n")
    proc = run_begen("scan", d, check=False)
    assert proc.returncode != 0
    assert ("the backward kernel `f_bwd` of 'f' takes 0 cotangent(s) beside the residual(s) 'res', but 'f' returns "
            "1 output(s)") in proc.stderr, proc.stderr
    assert "`residuals:` of 'g' keeps outputs for a backward kernel, but 'g' has no `vjp:`" in proc.stderr, proc.stderr
    assert "residual 'rez' is not an output (`ret`) of 'g' (did you mean `res`?)" in proc.stderr, proc.stderr
