"""Groups of inputs linear together, and `vjp:` beside `linear:`, end to end
on the CPU: tests/e2e/joint built by the CLI and called from JAX, against
jnp references, eagerly and under jit — the jvp is the kernel on the
group's tangents at once, one transpose kernel returns a cotangent per
input of the group, a backward kernel differentiates the inputs that are
not linear in reverse mode, and what is not declared (one input of a group
with the others fixed, an input declared nowhere, forward mode through a
backward kernel) is refused by name, never a wrong number."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO, import_module, run_begen

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane
from jax.test_util import check_grads


@pytest.fixture(scope="module")
def built(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_joint")
    run_begen("build", REPO / "tests/e2e/joint", "--out", out, "--platform", "cpu", "--quiet")
    return out


@pytest.fixture(scope="module")
def m(built):
    return import_module(built, "e2e_joint")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12)


def gp_ref(x, dt, dc):
    import jax.numpy as jnp

    return jnp.sin(x) * dt + x * dc


@pytest.mark.parametrize("jit", [False, True])
def test_a_kernel_linear_in_a_group_together(m, jax_cpu, rng, jit):
    jax = jax_cpu
    wrap = jax.jit if jit else (lambda f: f)
    x, dt, dc, t1, t2, ct = (rng.normal(size=5) for _ in range(6))
    close(wrap(m.gp)(x, dt, dc), gp_ref(x, dt, dc))
    # jvp: the kernel on both tangents at once (zeros where one has none).
    jvp = wrap(lambda a, b, u, v: jax.jvp(lambda p, q: m.gp(x, p, q), (a, b), (u, v)))
    y, t = jvp(dt, dc, t1, t2)
    close(y, gp_ref(x, dt, dc))
    close(t, gp_ref(x, t1, t2))
    _, t = wrap(lambda a, u: jax.jvp(lambda p: m.gp(x, p, dc), (a,), (u,)))(dt, t1)
    close(t, np.sin(x) * t1)
    # Reverse mode through the one transpose kernel, w.r.t. both or either.
    g = wrap(jax.grad(lambda a, b: (m.gp(x, a, b) ** 2).sum(), argnums=(0, 1)))(dt, dc)
    y = gp_ref(x, dt, dc)
    close(g[0], 2 * y * np.sin(x))
    close(g[1], 2 * y * x)
    close(wrap(jax.grad(lambda b: m.gp(x, dt, b).sum()))(dc), x)
    close(wrap(jax.grad(lambda a: m.gp(x, a, dc).sum()))(dt), np.sin(x))
    _, vjp = jax.vjp(lambda a, b: m.gp(x, a, b), dt, dc)
    gdt, gdc = vjp(ct)
    close(gdt, np.sin(x) * ct)
    close(gdc, x * ct)
    # jax.linear_transpose over the whole group.
    gdt, gdc = wrap(lambda c: jax.linear_transpose(lambda a, b: m.gp(x, a, b), dt, dc)(c))(ct)
    close(gdt, np.sin(x) * ct)
    close(gdc, x * ct)
    # vmap of a grad, and a grad of a vmap.
    dts, dcs = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    gs = jax.vmap(jax.grad(lambda a, b: m.gp(x, a, b).sum()))(dts, dcs)
    close(gs, np.tile(np.sin(x), (3, 1)))
    gs = jax.grad(lambda b: jax.vmap(lambda a, c: m.gp(x, a, c))(dts, b).sum())(dcs)
    close(gs, np.tile(x, (3, 1)))
    check_grads(lambda a, b: m.gp(x, a, b), (dt, dc), order=1, modes=("fwd", "rev"))


def test_linear_alone_and_in_a_group(m, jax_cpu, rng):
    jax = jax_cpu
    w, dt, dc, tw, t1, t2 = (rng.normal(size=4) for _ in range(6))

    def f(a, b, c):
        return m.wgp(a, b, c, s=0.5)

    close(f(w, dt, dc), 0.5 * w * (dt + 2 * dc))
    _, t = jax.jit(lambda *a: jax.jvp(f, a[:3], a[3:]))(w, dt, dc, tw, t1, t2)
    close(t, 0.5 * (tw * (dt + 2 * dc) + w * (t1 + 2 * t2)))
    g = jax.grad(lambda *a: (f(*a) ** 2).sum(), argnums=(0, 1, 2))(w, dt, dc)
    y = 0.5 * w * (dt + 2 * dc)
    close(g[0], 2 * y * 0.5 * (dt + 2 * dc))
    close(g[1], 2 * y * 0.5 * w)
    close(g[2], 2 * y * w)
    check_grads(f, (w, dt, dc), order=1, modes=("fwd", "rev"))


def test_what_is_not_linear_is_refused_by_name(m, jax_cpu, rng):
    jax = jax_cpu
    x, dt, dc, ct = (rng.normal(size=5) for _ in range(4))
    # One input of the group with the other fixed is affine, not linear.
    with pytest.raises(NotImplementedError, match=r"e2e_joint\.gp: not linear in dt with dc fixed"):
        jax.linear_transpose(lambda a: m.gp(x, a, dc), dt)(ct)
    # x is in no group and the kernel has no jvp.
    with pytest.raises(TypeError, match=r"e2e_joint\.gp: no derivative in 'x'"):
        jax.jvp(lambda a: m.gp(a, dt, dc), (x,), (ct,))
    with pytest.raises(TypeError, match=r"no derivative in 'x'"):
        jax.grad(lambda a: m.gp(a, dt, dc).sum())(x)
    # Linear in w alone and in (dt, dc) together, not in w and dt together.
    with pytest.raises(NotImplementedError, match=r"not linear in w, dt together"):
        jax.linear_transpose(lambda a, b: m.wgp(a, b, dc, s=1.0), dt, dt)(ct)


def escale_ref(x, y):
    import jax.numpy as jnp

    return 0.5 * jnp.exp(x) * y


def escale2_ref(x, y):
    return x * x * y


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("which", ["escale", "escale2"])
def test_a_backward_kernel_beside_linear(m, jax_cpu, rng, jit, which):
    # escale has a transpose kernel for y; escale2's y is transposed by its
    # backward kernel (with y zero: the kernel is linear in it).
    jax = jax_cpu
    wrap = jax.jit if jit else (lambda f: f)
    f, ref = {"escale": (lambda a, b: m.escale(a, b, s=0.5), escale_ref), "escale2": (m.escale2, escale2_ref)}[which]
    x, y, ty, ct = (rng.normal(size=5) for _ in range(4))
    close(wrap(f)(x, y), ref(x, y))
    # Reverse mode in any input: x through the backward kernel, y through
    # the transpose (or the backward kernel).
    for argnums in (0, 1, (0, 1)):
        got = wrap(jax.grad(lambda a, b: (f(a, b) ** 2).sum(), argnums=argnums))(x, y)
        want = jax.grad(lambda a, b: (ref(a, b) ** 2).sum(), argnums=argnums)(x, y)
        for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
            close(g, w)
    _, vjp = jax.vjp(f, x, y)
    _, vjp_ref = jax.vjp(ref, x, y)
    for g, w in zip(vjp(ct), vjp_ref(ct)):
        close(g, w)
    # Forward mode and the linear transpose in y, the linear input.
    _, t = wrap(lambda b, u: jax.jvp(lambda v: f(x, v), (b,), (u,)))(y, ty)
    close(t, ref(x, ty))
    (cy,) = wrap(lambda c: jax.linear_transpose(lambda v: f(x, v), y)(c))(ct)
    close(cy, jax.vjp(lambda v: ref(x, v), y)[1](ct)[0])
    # vmap of a grad.
    xs, ys = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    gs = jax.vmap(jax.grad(lambda a, b: f(a, b).sum()))(xs, ys)
    close(gs, jax.vmap(jax.grad(lambda a, b: ref(a, b).sum()))(xs, ys))
    check_grads(f, (x, y), order=1, modes=("rev",))
    check_grads(lambda v: f(x, v), (y,), order=1, modes=("fwd", "rev"))
    # Forward mode in x has no rule: refused by name, eagerly, under jit and
    # for jax.hessian (forward over reverse).
    with pytest.raises(TypeError, match=rf"e2e_joint\.{which}: no forward mode in 'x'"):
        wrap(lambda a, u: jax.jvp(lambda v: f(v, y), (a,), (u,)))(x, ty)
    with pytest.raises(TypeError, match=r"no forward mode in 'x'"):
        jax.hessian(lambda a: f(a, y).sum())(x)


@pytest.mark.parametrize("jit", [False, True])
def test_a_group_beside_a_backward_kernel(m, jax_cpu, rng, jit):
    # gpx: linear in (dt, dc) together, no transpose kernel (the backward
    # kernel transposes the group), differentiable in x in reverse mode.
    jax = jax_cpu
    wrap = jax.jit if jit else (lambda f: f)
    x, dt, dc, t1, t2, ct = (rng.normal(size=5) for _ in range(6))
    close(wrap(m.gpx)(x, dt, dc), gp_ref(x, dt, dc))
    for argnums in (0, 1, (1, 2), (0, 1, 2)):
        got = wrap(jax.grad(lambda *a: (m.gpx(*a) ** 2).sum(), argnums=argnums))(x, dt, dc)
        want = jax.grad(lambda *a: (gp_ref(*a) ** 2).sum(), argnums=argnums)(x, dt, dc)
        for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
            close(g, w)
    _, t = wrap(lambda a, b, u, v: jax.jvp(lambda p, q: m.gpx(x, p, q), (a, b), (u, v)))(dt, dc, t1, t2)
    close(t, gp_ref(x, t1, t2))
    gdt, gdc = wrap(lambda c: jax.linear_transpose(lambda a, b: m.gpx(x, a, b), dt, dc)(c))(ct)
    close(gdt, np.sin(x) * ct)
    close(gdc, x * ct)
    with pytest.raises(NotImplementedError, match=r"e2e_joint\.gpx: not linear in dc with dt fixed"):
        jax.linear_transpose(lambda b: m.gpx(x, dt, b), dc)(ct)
    with pytest.raises(TypeError, match=r"e2e_joint\.gpx: no forward mode in 'x'"):
        jax.jvp(lambda a: m.gpx(a, dt, dc), (x,), (t1,))
    check_grads(m.gpx, (x, dt, dc), order=1, modes=("rev",))


def poly_ref(x, a, b):
    import jax.numpy as jnp

    return x * x * a + jnp.sin(b)


SUBSETS = [(0,), (1,), (2,), (0, 1), (0, 2), (1, 2), (0, 1, 2)]


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("wrt", SUBSETS, ids=lambda w: "-".join("xab"[k] for k in w))
def test_a_tangent_kernel_linear_in_a_group_differentiates_any_subset(m, jax_cpu, rng, jit, wrt):
    # The tangent kernel runs with zeros for the inputs not differentiated;
    # its group's transpose drops their cotangents: reverse mode in any
    # subset of x, a, b agrees with jnp, and so do forward mode and a
    # Hessian-vector product through the same path.
    jax = jax_cpu
    wrap = jax.jit if jit else (lambda f: f)
    args = [rng.normal(size=5) for _ in range(3)]

    def loss(fn):
        def go(*diff):
            full = list(args)
            for k, v in zip(wrt, diff):
                full[k] = v
            return (fn(*full) ** 2).sum()

        return go

    picked = [args[k] for k in wrt]
    argnums = tuple(range(len(wrt)))
    got = wrap(jax.grad(loss(m.poly), argnums=argnums))(*picked)
    want = jax.grad(loss(poly_ref), argnums=argnums)(*picked)
    for g, w in zip(got, want):
        close(g, w)
    tangents = tuple(rng.normal(size=5) for _ in wrt)
    _, t = wrap(lambda *p: jax.jvp(loss(m.poly), p, tangents))(*picked)
    _, tw = jax.jvp(loss(poly_ref), tuple(picked), tangents)
    close(t, tw)
    _, vjp = jax.vjp(lambda *p: m.poly(*[dict(zip(wrt, p)).get(k, args[k]) for k in range(3)]), *picked)
    ct = rng.normal(size=5)
    _, vjp_ref = jax.vjp(lambda *p: poly_ref(*[dict(zip(wrt, p)).get(k, args[k]) for k in range(3)]), *picked)
    for g, w in zip(vjp(ct), vjp_ref(ct)):
        close(g, w)


RACE = """
import sys, threading
sys.path.insert(0, sys.argv[1])
import jax, numpy as np
jax.config.update("jax_enable_x64", True)
import e2e_joint as m
x = np.linspace(0.1, 1.0, 5); dt = np.cos(x); dc = np.sin(x)
barrier = threading.Barrier(8)
errors = []

def first():
    barrier.wait()
    try:
        np.testing.assert_allclose(jax.grad(lambda a: m.gp(x, a, dc).sum())(dt), np.sin(x), rtol=1e-12)
        np.testing.assert_allclose(jax.grad(lambda c: m.gpx(c, dt, dc).sum())(x), np.cos(x) * dt + dc, rtol=1e-12)
    except Exception as e:
        errors.append(repr(e))

threads = [threading.Thread(target=first) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("errors:", errors)
np.testing.assert_allclose(jax.grad(lambda b: m.gp(x, dt, b).sum())(dc), x, rtol=1e-12)
np.testing.assert_allclose(jax.grad(lambda a: (m.poly(a, dt, dc) ** 2).sum())(x),
                           2 * (x * x * dt + np.sin(dc)) * 2 * x * dt, rtol=1e-12)
print("after: ok")
"""


def test_first_calls_on_eight_threads_register_the_rules_once(built):
    # The first grads of a joint-group kernel (and of one with a backward
    # kernel beside `linear:`), made on eight threads at once in a fresh
    # process: each is right, and so is every grad after them (a primitive
    # is published only with its rules).
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    for _ in range(3):
        proc = subprocess.run(
            [sys.executable, "-c", RACE, str(built)], capture_output=True, text=True, env=env, check=False
        )
        assert proc.returncode == 0 and "errors: []" in proc.stdout, proc.stdout + proc.stderr
        assert "after: ok" in proc.stdout, proc.stdout + proc.stderr


def test_check_grads_of_the_module(m, jax_cpu):
    if str(REPO / "python") not in sys.path:
        sys.path.insert(0, str(REPO / "python"))
    from begen.testing import check_grads as begen_check_grads

    report = begen_check_grads(m, order=1)
    text = str(report)
    for kernel, mode in [("gp", "fwd"), ("gp", "rev"), ("wgp", "fwd"), ("wgp", "rev"), ("escale", "rev")]:
        assert re.search(rf"^{kernel} +{mode} +[\w, ]+ +\S+ +pass$", text, re.MULTILINE), text
    # Each input alone as well as all together: the tangent kernel linear in
    # a group runs for each of poly's inputs alone.
    got = {(r.kernel, r.mode, r.wrt): r.result for r in report.rows}
    for wrt in ("x, a, b", "x", "a", "b"):
        assert got[("poly", "rev", wrt)] == "pass", text
        assert got[("gpx", "rev", wrt.replace("a", "dt").replace("b", "dc"))] == "pass", text
    assert "FAIL" not in text and "ERROR" not in text
    assert "n/a: not declared (e2e_joint.escale: no forward mode in 'x'" in text


def test_the_docstring_and_grads_table(m):
    assert "linear in [dt, dc] together" in m.gp.__doc__
    assert "linear in w, [dt, dc] together" in m.wgp.__doc__
    assert m._BEGEN_GRADS["wgp"]["declares"]["linear"] == ("w", ("dt", "dc"))
    assert m._BEGEN_GRADS["gp"]["declares"]["transpose"] == {"dt, dc": "gp_t"}
    assert "through backward kernel `escale_bwd`" in m.escale.__doc__
    assert "custom_vjp" not in m.escale.__doc__
