"""Kernels with XLA FFI types whose variadic outputs are stated like their
variadic inputs (`ret:like(xs)` over `ffi::RemainingRets`: no `out=` for
them), end to end on the CPU: tests/e2e/native_like built by the CLI,
called eagerly and under jit, against numpy; and the mistakes begen
refuses at the token."""

import textwrap

import numpy as np
import pytest
from conftest import REPO, import_module, run_begen


@pytest.fixture(scope="module")
def m(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_native_like")
    run_begen("build", REPO / "tests/e2e/native_like", "--out", out, "--quiet")
    return import_module(out, "e2e_native_like")


def inputs():
    rng = np.random.default_rng(0)
    return [
        rng.standard_normal(5).astype(np.float32),
        rng.standard_normal((2, 3)),  # float64: each output takes its own input's type
        rng.standard_normal((4, 1, 2)).astype(np.float32),
    ]


@pytest.mark.parametrize("jit", [False, True])
def test_each_output_like_its_input_without_out(m, jax_cpu, jit):
    xs = inputs()
    f = jax_cpu.jit(m.Doubles) if jit else m.Doubles
    ys = f(xs)
    assert len(ys) == len(xs)
    for x, y in zip(xs, ys):
        assert y.shape == x.shape and y.dtype == x.dtype
        np.testing.assert_allclose(np.asarray(y), 2 * x)
    # One input, and none.
    (y,) = f(xs[:1])
    np.testing.assert_allclose(np.asarray(y), 2 * xs[0])


@pytest.mark.parametrize("jit", [False, True])
def test_a_fixed_output_before_them_takes_out_alone(m, jax_cpu, jit):
    jax = jax_cpu
    xs = [x.astype(np.float32) for x in inputs()]
    count = jax.ShapeDtypeStruct((), np.int32)
    f = jax.jit(m.CountAndNegate, static_argnames=("bias", "out")) if jit else m.CountAndNegate
    n, *ys = f(xs, bias=1.5, out=count)
    assert int(n) == len(xs) and len(ys) == len(xs)
    for x, y in zip(xs, ys):
        assert y.shape == x.shape and y.dtype == np.float32
        np.testing.assert_allclose(np.asarray(y), 1.5 - x)


def scan(tmp_path, annotation, signature):
    d = tmp_path / "kernels"
    d.mkdir()
    (d / "k.cc").write_text(
        '#include "xla/ffi/api/ffi.h"\nnamespace ffi = xla::ffi;\n'
        + textwrap.dedent(f"""\
        // @BE {annotation}
        ffi::Error {signature} {{ return ffi::Error::Success(); }}
        """)
    )
    proc = run_begen("scan", d, check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


def test_a_list_name_that_is_none_gets_the_closest(tmp_path):
    out = scan(tmp_path, "F arg ret:like(x)", "F(ffi::RemainingArgs xs, ffi::RemainingRets ys)")
    assert (
        "`ret:like(x)` names 'x', which is not a list of inputs (`const BE::Tensors`, `ffi::RemainingArgs`) of 'F' "
        "(did you mean `xs`?)"
    ) in out


def test_over_a_result_that_is_not_remaining_rets(tmp_path):
    out = scan(tmp_path, "F arg ret:like(xs)", "F(ffi::RemainingArgs xs, ffi::Result<ffi::AnyBuffer> y)")
    assert "`ret:like(xs)` is written over 'y' of 'F', which is not a list of outputs (`BE::Tensors`" in out


def test_the_stub_returns_a_tuple_of_any_length(m):
    from pathlib import Path

    stub = Path(m.__file__).with_suffix(".pyi").read_text()
    assert "def Doubles(xs: Sequence[ArrayLike], /) -> tuple[jax.Array, ...]:" in stub
