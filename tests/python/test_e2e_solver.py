"""A sparse solver's kernels end to end on the CPU: tests/e2e/solver built by
the CLI and called from JAX. `vmap: {fold: {b: n_rhs}}` makes a vmap over
right-hand sides one custom call with the batch inside the kernel's own
n_rhs dimension (one factorisation), with the numbers of the per-element
path; a vmap that batches an input outside the fold is batched as before."""

import re

import numpy as np
import pytest
from conftest import REPO, import_module, run_begen

N, K, B = 8, 3, 16


@pytest.fixture(scope="module")
def m(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_solver")
    run_begen("build", REPO / "tests/e2e/solver", "--out", out, "--platform", "cpu", "--quiet")
    return import_module(out, "e2e_solver")


@pytest.fixture
def system():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(N, N)) + N * np.eye(N)
    A[0, 3] = A[5, 1] = 0.0  # a sparse pattern, not every entry stored
    Ai, Aj = (i.astype(np.int32) for i in np.nonzero(A))
    return A, Ai, Aj, A[Ai, Aj], rng


def custom_calls(text):
    return re.findall(r"stablehlo\.custom_call @([\w.]+)\(", text)


def test_a_vmap_over_right_hand_sides_is_one_call(m, jax_cpu, system):
    jax = jax_cpu
    A, Ai, Aj, Ax, rng = system
    b = rng.normal(size=(B, N, K))
    f = jax.jit(jax.vmap(m.solve, in_axes=(None, None, None, 0)))
    text = f.lower(Ai, Aj, Ax, b).as_text()
    assert custom_calls(text) == [m.TARGETS["solve"]], text
    assert "stablehlo.while" not in text, "a loop over the batch: the fold did not apply"
    # The one call sees all 16 right-hand sides as n_rhs = 16 * 3.
    call = next(line for line in text.splitlines() if "stablehlo.custom_call" in line)
    assert f"tensor<{N}x{B * K}xf64>" in call, call
    x = f(Ai, Aj, Ax, b)
    # The same numbers as one call per right-hand side, and as the kernel
    # without a fold under vmap (a loop of 16 calls).
    each = np.stack([np.asarray(m.solve(Ai, Aj, Ax, b[i])) for i in range(B)])
    np.testing.assert_array_equal(np.asarray(x), each)
    g = jax.jit(jax.vmap(m.solve_each, in_axes=(None, None, None, 0)))
    assert "stablehlo.while" in g.lower(Ai, Aj, Ax, b).as_text()
    np.testing.assert_array_equal(np.asarray(g(Ai, Aj, Ax, b)), each)
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(A, b), rtol=1e-10)
    # Eagerly too.
    np.testing.assert_array_equal(np.asarray(jax.vmap(m.solve, in_axes=(None, None, None, 0))(Ai, Aj, Ax, b)), each)


def test_the_batch_axis_anywhere_and_nested_vmaps(m, jax_cpu, system):
    jax = jax_cpu
    A, Ai, Aj, Ax, rng = system
    b = rng.normal(size=(N, K, B))
    x = jax.jit(jax.vmap(m.solve, in_axes=(None, None, None, 2), out_axes=1))(Ai, Aj, Ax, b)
    np.testing.assert_allclose(np.asarray(x), np.moveaxis(np.linalg.solve(A, np.moveaxis(b, 2, 0)), 0, 1), rtol=1e-10)
    bb = rng.normal(size=(2, 5, N, K))
    inner = jax.vmap(m.solve, in_axes=(None, None, None, 0))
    f = jax.jit(jax.vmap(inner, in_axes=(None, None, None, 0)))
    text = f.lower(Ai, Aj, Ax, bb).as_text()
    assert len(custom_calls(text)) == 1 and "stablehlo.while" not in text
    np.testing.assert_allclose(np.asarray(f(Ai, Aj, Ax, bb)), np.linalg.solve(A, bb), rtol=1e-10)


def test_a_batched_input_outside_the_fold_is_batched_per_element(m, jax_cpu, system):
    jax = jax_cpu
    A, Ai, Aj, Ax, rng = system
    b = rng.normal(size=(N, K))
    scales = 1.0 + np.arange(4.0)
    f = jax.jit(jax.vmap(m.solve, in_axes=(None, None, 0, None)))
    assert "stablehlo.while" in f.lower(Ai, Aj, Ax[None] * scales[:, None], b).as_text()
    x = f(Ai, Aj, Ax[None] * scales[:, None], b)
    np.testing.assert_allclose(np.asarray(x), np.stack([np.linalg.solve(A * s, b) for s in scales]), rtol=1e-10)


def test_a_folded_product_and_complex_kernels(m, jax_cpu, system):
    jax = jax_cpu
    A, Ai, Aj, Ax, rng = system
    x = rng.normal(size=(B, N, K))
    f = jax.jit(jax.vmap(m.dot, in_axes=(None, None, None, 0)))
    assert len(custom_calls(f.lower(Ai, Aj, Ax, x).as_text())) == 1
    np.testing.assert_allclose(np.asarray(f(Ai, Aj, Ax, x)), A @ x, rtol=1e-12)
    Az = A + 1j * rng.normal(size=A.shape) * (A != 0)
    bz = rng.normal(size=(B, N, K)) + 1j * rng.normal(size=(B, N, K))
    xz = jax.jit(jax.vmap(m.solve_c128, in_axes=(None, None, None, 0)))(Ai, Aj, Az[Ai, Aj], bz)
    np.testing.assert_allclose(np.asarray(xz), np.linalg.solve(Az, bz), rtol=1e-10)


def test_one_function_over_float64_and_complex128(m, jax_cpu, system):
    jax = jax_cpu
    A, Ai, Aj, Ax, rng = system
    b = rng.normal(size=(N, K))
    Az = A + 1j * rng.normal(size=A.shape) * (A != 0)
    bz = b + 1j * rng.normal(size=b.shape)
    for call in (m.linsolve, jax.jit(m.linsolve)):
        x = call(Ai, Aj, Ax, b)
        assert x.dtype == np.float64
        np.testing.assert_allclose(np.asarray(x), np.linalg.solve(A, b), rtol=1e-10)
        xz = call(Ai, Aj, Az[Ai, Aj], bz)
        assert xz.dtype == np.complex128
        np.testing.assert_allclose(np.asarray(xz), np.linalg.solve(Az, bz), rtol=1e-10)
    # Each dtype's call is its own kernel's custom call.
    f64 = custom_calls(jax.jit(m.matvec).lower(Ai, Aj, Ax, b).as_text())
    c128 = custom_calls(jax.jit(m.matvec).lower(Ai, Aj, Az[Ai, Aj], bz).as_text())
    assert f64 == [m.TARGETS["dot"]] and c128 == [m.TARGETS["dot_c128"]]
    np.testing.assert_allclose(np.asarray(m.matvec(Ai, Aj, Az[Ai, Aj], bz)), Az @ bz, rtol=1e-12)
    # A vmap through the algorithm folds as its implementation does.
    bs = rng.normal(size=(B, N, K))
    g = jax.jit(jax.vmap(m.linsolve, in_axes=(None, None, None, 0)))
    assert len(custom_calls(g.lower(Ai, Aj, Ax, bs).as_text())) == 1
    np.testing.assert_allclose(np.asarray(g(Ai, Aj, Ax, bs)), np.linalg.solve(A, bs), rtol=1e-10)


def test_grad_through_the_float64_implementation(m, jax_cpu, system):
    jax = jax_cpu
    A, Ai, Aj, Ax, rng = system
    x, w = rng.normal(size=(N, K)), rng.normal(size=(N, K))

    def loss(v):
        return (m.matvec(Ai, Aj, Ax, v) * w).sum() + (m.matvec(Ai, Aj, Ax, v) ** 2).sum()

    expected = A.T @ w + 2 * A.T @ (A @ x)
    np.testing.assert_allclose(np.asarray(jax.grad(loss)(x)), expected, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(loss))(x)), expected, rtol=1e-10)
    from jax.test_util import check_grads

    check_grads(lambda v: m.matvec(Ai, Aj, Ax, v), (x,), order=1, modes=("fwd", "rev"))


def test_a_dtype_no_implementation_serves_is_named(m, jax_cpu, system):
    _, Ai, Aj, Ax, rng = system
    b = rng.normal(size=(N, K))
    with pytest.raises(TypeError) as e:
        m.linsolve(Ai, Aj, Ax.astype(np.float32), b.astype(np.float32))
    text = str(e.value)
    assert "e2e_solver.linsolve: parameter 'Ax' is float32" in text, text
    assert "float64, complex128" in text and "('solve_c128')" in text, text


def test_transposes_from_existing_kernels(m, jax_cpu, system):
    # solve's transpose in b is `solve` itself with Ai and Aj swapped
    # (`args: [Aj, Ai, Ax, ct]`), dot_c128's is dot_c128 likewise, and dot's
    # a kernel whose cotangent is named like dot's input, bound by position
    # on purpose (`by_position: true`).
    jax = jax_cpu
    A, Ai, Aj, Ax, rng = system
    b, w = rng.normal(size=(N, K)), rng.normal(size=(N, K))

    def loss(v):
        return (m.solve(Ai, Aj, Ax, v) * w).sum()

    expected = np.linalg.solve(A.T, w)
    np.testing.assert_allclose(np.asarray(jax.grad(loss)(b)), expected, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(loss))(b)), expected, rtol=1e-10)
    from jax.test_util import check_grads

    check_grads(lambda v: m.solve(Ai, Aj, Ax, v), (b,), order=1, modes=("fwd", "rev"))
    (ct,) = jax.linear_transpose(lambda v: m.dot(Ai, Aj, Ax, v), b)(w)
    np.testing.assert_allclose(np.asarray(ct), A.T @ w, rtol=1e-12)
    Az = A + 1j * rng.normal(size=A.shape) * (A != 0)
    wz = w + 1j * rng.normal(size=w.shape)
    (cz,) = jax.linear_transpose(lambda v: m.dot_c128(Ai, Aj, Az[Ai, Aj], v), b.astype(complex))(wz)
    np.testing.assert_allclose(np.asarray(cz), Az.T @ wz, rtol=1e-12)
    # A vmap of the gradient: the transposes fold too.
    ws = rng.normal(size=(B, N, K))
    g = jax.jit(jax.vmap(lambda u: jax.grad(lambda v: (m.solve(Ai, Aj, Ax, v) * u).sum())(b)))
    np.testing.assert_allclose(np.asarray(g(ws)), np.linalg.solve(A.T, ws), rtol=1e-10)
