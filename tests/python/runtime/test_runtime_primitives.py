"""Section `primitives`, on its own: its rules over "kernels" written in jax.numpy
(the FFI call replaced by a function of arrays), against numpy."""

import jax
import numpy as np
import pytest
from begen_runtime import primitives

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane


@pytest.fixture(autouse=True)
def x64(jax_cpu):
    """float64 throughout (the test run's jax, x64 on)."""
    return jax_cpu


def struct(shape):
    return jax.ShapeDtypeStruct(shape, np.float64)


def mv(A, x):
    # y = A x, linear in A and x, with both transposes.
    def t_A(x, ct, out):
        assert out.shape == A.shape
        return jax.numpy.outer(ct, x)

    def t_x(A, ct, out):
        assert out.shape == x.shape
        return A.T @ ct

    return primitives._begen_bind(
        "test.mv", lambda A, x: A @ x, (A, x), (struct(A.shape[:1]),), (0, 1), None, ((0, t_A), (1, t_x)), ("A", "x")
    )


def scale(x, idx):
    # y = 2 sin(x)[idx]: a tangent kernel (not itself linear), an integer input.
    def raw(x, idx):
        return 2 * jax.numpy.sin(x)[idx]

    def tangent(x, idx, t, out):
        assert out.shape == idx.shape
        return 2 * jax.numpy.cos(x)[idx] * t[idx]

    return primitives._begen_bind("test.scale", raw, (x, idx), (struct(idx.shape),), (), tangent, (), ("x", "idx"))


@pytest.fixture
def rng():
    return np.random.default_rng(1)


def test_a_bilinear_kernel(rng):
    A, x, tA, tx = rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=(3, 4)), rng.normal(size=4)
    np.testing.assert_allclose(mv(A, x), A @ x)
    np.testing.assert_allclose(jax.jvp(mv, (A, x), (tA, tx))[1], tA @ x + A @ tx)
    np.testing.assert_allclose(jax.jacrev(mv, argnums=1)(A, x), A)
    np.testing.assert_allclose(jax.grad(lambda a: mv(a, x).sum())(A), np.outer(np.ones(3), x))
    ct = rng.normal(size=3)
    np.testing.assert_allclose(jax.linear_transpose(lambda v: mv(A, v), x)(ct)[0], A.T @ ct)
    xs, ts = rng.normal(size=(2, 4)), rng.normal(size=(2, 4))
    np.testing.assert_allclose(jax.vmap(lambda v, t: jax.jvp(lambda u: mv(A, u), (v,), (t,))[1])(xs, ts), ts @ A.T)
    np.testing.assert_allclose(jax.jvp(jax.vmap(lambda u: mv(A, u)), (xs,), (ts,))[1], ts @ A.T)
    # Batched twice, the matrix unbatched (broadcast) in one of them.
    xss = rng.normal(size=(2, 3, 4))
    np.testing.assert_allclose(jax.vmap(jax.vmap(lambda u: mv(A, u)))(xss), xss @ A.T)
    As = rng.normal(size=(2, 3, 4))
    grads = jax.vmap(lambda a: jax.grad(lambda v: mv(a, v).sum())(x))(As)
    np.testing.assert_allclose(grads, As.sum(1))
    jaxpr = str(jax.make_jaxpr(mv)(A, x))
    assert "test.mv[" in jaxpr and "call=test.mv" in jaxpr, jaxpr


def test_not_linear_in_both_at_once(rng):
    A, x = rng.normal(size=(3, 4)), rng.normal(size=4)
    # A x is not linear in (A, x) together: linearizing it is fine, transposing
    # it as one linear function is refused, naming both.
    with pytest.raises(Exception, match=r"test\.mv: not linear in A, x together"):
        jax.linear_transpose(lambda a, v: mv(a, v), A, x)(np.ones(3))


def test_a_tangent_kernel_and_an_integer_input(rng):
    x, t, idx = rng.normal(size=5), rng.normal(size=5), np.array([4, 0, 0], np.int32)
    y, dy = jax.jvp(lambda v: scale(v, idx), (x,), (t,))
    np.testing.assert_allclose(y, 2 * np.sin(x)[idx])
    np.testing.assert_allclose(dy, 2 * np.cos(x)[idx] * t[idx])
    np.testing.assert_allclose(jax.jacfwd(lambda v: scale(v, idx))(x)[1], 2 * np.cos(x[0]) * np.eye(5)[0])
    # The tangent kernel is no primitive with transposes here: reverse mode
    # runs into the plain jax.numpy tangent, which jax transposes itself.
    np.testing.assert_allclose(jax.grad(lambda v: scale(v, idx).sum())(x), 2 * np.cos(x) * np.bincount(idx, minlength=5))


def test_without_a_rule_the_error_names_the_kernel_and_the_input(rng):
    x = rng.normal(size=3)

    def half(x, w):
        # linear in x only; no transpose given.
        return primitives._begen_bind("test.half", lambda x, w: x * w, (x, w), (struct(x.shape),), (0,), None, (),
                                      ("x", "w"))

    w = rng.normal(size=3)
    np.testing.assert_allclose(jax.jvp(lambda v: half(v, w), (x,), (w,))[1], w * w)
    with pytest.raises(TypeError, match=r"test\.half: no derivative in 'w'"):
        jax.jvp(lambda u: half(x, u), (w,), (w,))
    with pytest.raises(NotImplementedError, match=r"test\.half: no transpose for 'x'"):
        jax.grad(lambda v: half(v, w).sum())(x)
