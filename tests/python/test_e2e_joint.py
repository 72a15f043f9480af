"""Groups of inputs linear together, end to end on the CPU: tests/e2e/joint
built by the CLI and called from JAX, against jnp references, eagerly and
under jit — the jvp is the kernel on the group's tangents at once, one
transpose kernel returns a cotangent per input of the group, and what is
not linear (one input of a group with the others fixed, an input declared
nowhere) is refused by name, never a wrong number."""

import numpy as np
import pytest
from conftest import REPO, import_module, run_begen
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


def test_check_grads_of_the_module(m, jax_cpu):
    from begen.testing import check_grads as begen_check_grads

    report = begen_check_grads(m, order=1)
    text = str(report)
    assert "gp      fwd" in text and "gp      rev" in text
    assert "FAIL" not in text and "ERROR" not in text


def test_the_docstring_and_grads_table(m):
    assert "linear in [dt, dc] together" in m.gp.__doc__
    assert "linear in w, [dt, dc] together" in m.wgp.__doc__
    assert m._BEGEN_GRADS["wgp"]["declares"]["linear"] == ("w", ("dt", "dc"))
    assert m._BEGEN_GRADS["gp"]["declares"]["transpose"] == {"dt, dc": "gp_t"}
