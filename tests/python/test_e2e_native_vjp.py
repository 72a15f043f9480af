"""A differentiable kernel declared with XLA FFI's own types, end to end on
the CPU: tests/e2e/native_vjp built by the CLI. `RowScale` takes untyped
buffers (`ffi::AnyBuffer`, float32 or float64), a float attribute and
`out=`; begen.yaml gives it a backward kernel bound by name with a
residual (`vjp:` and `residuals: [scale]`) and `vmap_method:
broadcast_all`."""

import numpy as np
import pytest
from conftest import REPO, import_module, run_begen

EPS = 0.5


@pytest.fixture(scope="module")
def m(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_native_vjp")
    run_begen("build", REPO / "tests/e2e/native_vjp", "--out", out, "--quiet")
    return import_module(out, "e2e_native_vjp")


def shapes(jax, x):
    """`out=`: y like x, the residual one value per row."""
    return (jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct(x.shape[:-1], x.dtype))


def row_scale(m, jax, x):
    return m.RowScale(x, eps=EPS, out=shapes(jax, x))


def reference(jnp, x):
    """The same function in jax.numpy, for values and gradients."""
    return x / (EPS + (x * x).sum(axis=-1, keepdims=True))


def sample(dtype, shape=(3, 4)):
    return (np.arange(np.prod(shape), dtype=dtype).reshape(shape) - 5) / 7


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward_returns_y_only_for_either_dtype(m, jax_cpu, dtype):
    import jax.numpy as jnp

    x = sample(dtype)
    y = row_scale(m, jax_cpu, x)
    # The residual is kept for the backward kernel: one array comes back.
    assert not isinstance(y, (tuple, list))
    assert y.dtype == dtype and y.shape == x.shape
    np.testing.assert_allclose(y, reference(jnp, x), rtol=1e-6)
    np.testing.assert_allclose(jax_cpu.jit(lambda v: row_scale(m, jax_cpu, v))(x), reference(jnp, x), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradient_comes_from_the_backward_kernel(m, jax_cpu, dtype):
    import jax.numpy as jnp

    x = sample(dtype)
    w = np.linspace(-1, 2, x.size, dtype=dtype).reshape(x.shape)
    ours = jax_cpu.grad(lambda v: (row_scale(m, jax_cpu, v) * w).sum())
    theirs = jax_cpu.grad(lambda v: (reference(jnp, v) * w).sum())
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(ours(x), theirs(x), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(jax_cpu.jit(ours)(x), theirs(x), rtol=rtol, atol=rtol)
    # The backward is begen's kernel: its target is in the lowered gradient.
    hlo = jax_cpu.jit(ours).lower(x).as_text()
    assert "@e2e_native_vjp.RowScaleBwd(" in hlo and "@e2e_native_vjp.RowScale(" in hlo


def test_vmap_broadcasts_into_one_call(m, jax_cpu):
    import jax.numpy as jnp

    x = sample(np.float64, (2, 3, 4))
    f = jax_cpu.vmap(lambda v: row_scale(m, jax_cpu, v))
    np.testing.assert_allclose(f(x), reference(jnp, x), rtol=1e-12)
    # broadcast_all: one call of the kernel over the batch, not a loop of calls.
    hlo = jax_cpu.jit(f).lower(x).as_text()
    assert hlo.count("@e2e_native_vjp.RowScale(") == 1 and "while" not in hlo
    w = np.ones_like(x)
    g = jax_cpu.vmap(jax_cpu.grad(lambda v, w: (row_scale(m, jax_cpu, v) * w).sum()))(x, w)
    expected = jax_cpu.vmap(jax_cpu.grad(lambda v, w: (reference(jnp, v) * w).sum()))(x, w)
    np.testing.assert_allclose(g, expected, rtol=1e-12, atol=1e-12)


def test_the_kernels_own_error_reaches_python(m, jax_cpu):
    x = np.arange(4, dtype=np.int32).reshape(2, 2)
    with pytest.raises(Exception, match="RowScale: x is float32 or float64"):
        np.asarray(row_scale(m, jax_cpu, x))
