"""A derivative rule in Python, end to end on the CPU: tests/e2e/solver_rules
built by the CLI, its solve kernel differentiated by begen.yaml's
`python_vjp: rules:solve_vjp`, a function of the generated module's own
functions (the cotangent of a solve is another solve), against a dense
jnp reference and finite differences, with respect to the matrix's
entries and the right-hand side alone and together, to the second order;
begen.testing's check_grads passes on it; a rule returning a cotangent of the wrong shape
is refused naming the rule and the input."""

import sys

import numpy as np
import pytest
from conftest import REPO, import_module, run_begen

sys.path.insert(0, str(REPO / "python"))

from begen.testing import check_grads

N = 6


@pytest.fixture(scope="module")
def m(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_solver_rules")
    run_begen("build", REPO / "tests/e2e/solver_rules", "--out", out, "--platform", "cpu", "--quiet")
    return import_module(out, "e2e_solver_rules")


def system(rng):
    A = rng.normal(size=(N, N)) + N * np.eye(N)
    A[0, 3] = A[4, 1] = 0.0  # a sparse pattern, not every entry stored
    Ai, Aj = (i.astype(np.int32) for i in np.nonzero(A))
    return Ai, Aj, A[Ai, Aj], rng.normal(size=N)


def dense_solve(jnp, Ai, Aj, Ax, b):
    A = jnp.zeros((N, N), Ax.dtype).at[Ai, Aj].add(Ax)
    return jnp.linalg.solve(A, b)


def losses(jnp, m, seed):
    """A system and (w . x)^2 of its solution as a function of (Ax, b),
    through the kernel and through the dense reference."""
    Ai, Aj, Ax, b = system(np.random.default_rng(seed))
    w = np.random.default_rng(seed + 1).normal(size=N)

    def loss(solve):
        return lambda Ax, b: jnp.dot(w, solve(Ai, Aj, Ax, b)) ** 2

    return (Ai, Aj, Ax, b), loss(m.solve), loss(lambda *a: dense_solve(jnp, *a))


def test_the_rule_gives_the_gradients_of_a_dense_solve(m, jax_cpu):
    jax, jnp = jax_cpu, jax_cpu.numpy
    (Ai, Aj, Ax, b), ours, dense = losses(jnp, m, 0)
    np.testing.assert_allclose(np.asarray(m.solve(Ai, Aj, Ax, b)), dense_solve(jnp, Ai, Aj, Ax, b), rtol=1e-12)
    # With respect to Ax and b alone and together, eagerly and under jit.
    for argnums in (0, 1, (0, 1)):
        want = jax.grad(dense, argnums)(Ax, b)
        for got in (jax.grad(ours, argnums)(Ax, b), jax.jit(jax.grad(ours, argnums))(Ax, b)):
            for g, d in zip(*(x if isinstance(argnums, tuple) else (x,) for x in (got, want))):
                np.testing.assert_allclose(np.asarray(g), np.asarray(d), rtol=1e-9, atol=1e-12)
    # Against central finite differences, one entry of Ax and one of b.
    g_ax, g_b = jax.grad(ours, (0, 1))(Ax, b)
    eps = 1e-6
    for k in (0, len(Ax) - 1):
        e = np.zeros_like(Ax)
        e[k] = eps
        fd = (ours(Ax + e, b) - ours(Ax - e, b)) / (2 * eps)
        np.testing.assert_allclose(float(g_ax[k]), float(fd), rtol=1e-6)
    e = np.zeros_like(b)
    e[2] = eps
    np.testing.assert_allclose(float(g_b[2]), float((ours(Ax, b + e) - ours(Ax, b - e)) / (2 * eps)), rtol=1e-6)


def test_check_grads_passes_on_the_rule(m, jax_cpu):
    report = check_grads(m, ["solve"], inputs={"solve": system})
    assert report.ok, str(report)
    got = {(r.mode, r.wrt): r.result for r in report.rows}
    for wrt in ("Ax, b", "Ax", "b"):
        assert got[("rev", wrt)] == "pass", str(report)
    # A second order runs the rule again, on outputs it differentiates
    # through the same rule; forward mode is a custom_vjp's: none.
    assert got[("rev, order 2", "Ax, b")] == "pass", str(report)
    assert got[("fwd", "Ax, b")].startswith("n/a"), str(report)


def test_a_second_derivative_through_the_rule(m, jax_cpu):
    jax, jnp = jax_cpu, jax_cpu.numpy
    (_, _, Ax, b), ours, dense = losses(jnp, m, 4)
    for argnums in (0, 1):
        want = jax.jacrev(jax.grad(dense, argnums), argnums)(Ax, b)
        got = jax.jit(jax.jacrev(jax.grad(ours, argnums), argnums))(Ax, b)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-8, atol=1e-10)


def test_a_cotangent_of_the_wrong_shape_names_the_rule_and_the_input(m, jax_cpu):
    jax = jax_cpu
    Ai, Aj, Ax, b = system(np.random.default_rng(3))
    with pytest.raises(TypeError) as e:
        jax.grad(lambda Ax: m.solve_wrong(Ai, Aj, Ax, b).sum())(Ax)
    text = str(e.value)
    assert "solve_wrong: its python_vjp rule `rules:wrong_vjp`" in text, text
    assert f"input 'Ax' of shape ({N},)" in text and f"its input's ({len(Ax)},)" in text, text


def test_a_residual_reaches_the_rule_and_is_not_returned(m, jax_cpu):
    jax, jnp = jax_cpu, jax_cpu.numpy
    Ai, Aj, Ax, b = system(np.random.default_rng(6))
    x = m.solve_res(Ai, Aj, Ax, b)
    assert x.shape == (N,), "the residual is returned"
    w = np.random.default_rng(7).normal(size=N)

    def ours(Ax, b):
        return jnp.dot(w, m.solve_res(Ai, Aj, Ax, b)) ** 2

    def dense(Ax, b):
        return jnp.dot(w, dense_solve(jnp, Ai, Aj, Ax, b)) ** 2

    for got, want in zip(jax.grad(ours, (0, 1))(Ax, b), jax.grad(dense, (0, 1))(Ax, b)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-9, atol=1e-12)


def test_the_docstring_names_the_rule(m):
    assert "backward pass is the Python function `rules:solve_vjp`" in m.solve.__doc__
