"""The torch target's derivatives beyond `vjp:`, on tests/e2e/joint built for
jax and torch: reverse mode from `linear:` + `transpose:` (an input alone
and a group together), from a `jvp:` tangent kernel linear in its tangents
with a transpose, the gradient with respect to one member of a group alone,
the same numbers as the JAX side (a subprocess of the jax venv), and
forward mode refused by name rather than answered with zeros.
"""

import subprocess
import textwrap

import numpy as np
import pytest
from conftest import REPO, build, jax_python


@pytest.fixture(scope="module")
def joint(torch, tmp_path_factory):
    return build(tmp_path_factory, REPO / "tests" / "e2e" / "joint", "e2e_joint")


def vecs(torch, k, n=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(n, dtype=torch.float64, generator=g, requires_grad=True) for _ in range(k)]


def test_linear_alone_and_group_gradcheck(joint, torch):
    m = joint.module
    w, dt, dc = vecs(torch, 3)
    # wgp: linear in w alone (wgp_tw) and in (dt, dc) together (wgp_t).
    assert torch.autograd.gradcheck(lambda w, dt, dc: m.wgp(w, dt, dc, s=0.7), (w, dt, dc))
    assert torch.autograd.gradcheck(lambda w: m.wgp(w, dt.detach(), dc.detach(), s=0.7), (w,))
    # gp: linear in (dt, dc) together only; one member of the group alone,
    # the other fixed (nonzero), and the group together.
    x = w.detach()
    assert torch.autograd.gradcheck(lambda dt: m.gp(x, dt, dc.detach()), (dt,))
    assert torch.autograd.gradcheck(lambda dc: m.gp(x, dt.detach(), dc), (dc,))
    assert torch.autograd.gradcheck(lambda dt, dc: m.gp(x, dt, dc), (dt, dc))


def test_one_member_of_a_group_runs_only_what_it_needs(joint, torch):
    m = joint.module
    x, dt, dc = vecs(torch, 3)
    (g,) = torch.autograd.grad(m.gp(x.detach(), dt, dc.detach()).sum(), dt)
    np.testing.assert_allclose(g.numpy(), np.sin(x.detach().numpy()), rtol=1e-14)
    # Only the w transpose: dt and dc need none.
    (gw,) = torch.autograd.grad(m.wgp(x, dt.detach(), dc.detach(), s=2.0).sum(), x)
    np.testing.assert_allclose(gw.numpy(), 2.0 * (dt + 2 * dc).detach().numpy(), rtol=1e-14)


def test_jvp_kernel_transposed_for_reverse_mode(joint, torch):
    m = joint.module
    x, a, b = vecs(torch, 3, seed=1)
    assert torch.autograd.gradcheck(m.poly, (x, a, b))
    assert torch.autograd.gradcheck(lambda a: m.poly(x.detach(), a, b.detach()), (a,))
    (gx,) = torch.autograd.grad(m.poly(x, a.detach(), b.detach()).sum(), x)
    np.testing.assert_allclose(gx.numpy(), (2 * x * a).detach().numpy(), rtol=1e-14)


def test_an_input_with_no_derivative_is_refused_by_name(joint, torch):
    m = joint.module
    x, dt, dc = vecs(torch, 3)
    msg = "gp: no derivative in 'x': begen.yaml declares it neither `linear`"
    with pytest.raises(TypeError, match=msg):
        torch.autograd.grad(m.gp(x, dt, dc).sum(), x)


@pytest.mark.parametrize("name,kwargs", [("wgp", {"s": 0.5}), ("gp", {}), ("poly", {})])
def test_opcheck_with_transpose_autograd(joint, torch, name, kwargs):
    args = tuple(vecs(torch, 3))
    if name == "gp":
        args = (args[0].detach(), args[1], args[2])
    op = getattr(torch.ops.e2e_joint, name).default
    result = torch.library.opcheck(op, args, kwargs)
    assert set(result.values()) == {"SUCCESS"}, result


def test_compiled_backward_through_a_transpose(joint, torch):
    torch._dynamo.reset()
    m = joint.module
    f = torch.compile(lambda w, dt, dc: m.wgp(w, dt, dc, s=1.5).sum(), fullgraph=True, backend="aot_eager")
    w, dt, dc = vecs(torch, 3)
    f(w, dt, dc).backward()
    np.testing.assert_allclose(w.grad.numpy(), 1.5 * (dt + 2 * dc).detach().numpy(), rtol=1e-14)
    np.testing.assert_allclose(dc.grad.numpy(), 3.0 * w.detach().numpy(), rtol=1e-14)


def test_jax_and_torch_give_the_same_gradients(joint, torch, tmp_path):
    rng = np.random.default_rng(3)
    x, y, z, ct = (rng.standard_normal(7) for _ in range(4))
    for k, v in {"x": x, "y": y, "z": z, "ct": ct}.items():
        np.save(tmp_path / f"{k}.npy", v)
    script = textwrap.dedent(
        f"""
        import sys, numpy as np
        import jax
        jax.config.update("jax_enable_x64", True)
        sys.path.insert(0, {str(joint.out)!r})
        import e2e_joint as m
        d = {str(tmp_path)!r}
        x, y, z, ct = (np.load(d + "/" + k + ".npy") for k in ("x", "y", "z", "ct"))
        loss = lambda f: (lambda *a: (f(*a) * ct).sum())
        np.save(d + "/wgp.npy", np.stack(jax.grad(loss(lambda *a: m.wgp(*a, s=0.7)), argnums=(0, 1, 2))(x, y, z)))
        np.save(d + "/gp_dt.npy", np.asarray(jax.grad(loss(lambda dt: m.gp(x, dt, z)))(y)))
        np.save(d + "/poly.npy", np.stack(jax.grad(loss(m.poly), argnums=(0, 1, 2))(x, y, z)))
        np.save(d + "/poly_b.npy", np.asarray(jax.grad(loss(lambda b: m.poly(x, y, b)))(z)))
        """
    )
    proc = subprocess.run([jax_python(), "-c", script], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    m = joint.module
    t = [torch.tensor(v, requires_grad=True) for v in (x, y, z)]
    c = torch.tensor(ct)

    def grads(f, args):
        return np.stack([g.numpy() for g in torch.autograd.grad((f(*args) * c).sum(), args)])

    np.testing.assert_allclose(grads(lambda *a: m.wgp(*a, s=0.7), t), np.load(tmp_path / "wgp.npy"), rtol=1e-13)
    gdt = grads(lambda dt: m.gp(t[0].detach(), dt, t[2].detach()), [t[1]])[0]
    np.testing.assert_allclose(gdt, np.load(tmp_path / "gp_dt.npy"), rtol=1e-13)
    np.testing.assert_allclose(grads(m.poly, t), np.load(tmp_path / "poly.npy"), rtol=1e-13)
    gb = grads(lambda b: m.poly(t[0].detach(), t[1].detach(), b), [t[2]])[0]
    np.testing.assert_allclose(gb, np.load(tmp_path / "poly_b.npy"), rtol=1e-13)


# ---- forward mode -----------------------------------------------------------


def test_forward_mode_is_a_clear_error_not_zeros(joint, torch):
    import torch.autograd.forward_ad as fwAD

    m = joint.module
    x, a, b = (v.detach() for v in vecs(torch, 3))
    msg = "poly: no forward-mode derivative in torch"
    with pytest.raises(NotImplementedError, match=msg):
        torch.func.jvp(m.poly, (x, a, b), (x, a, b))
    with pytest.raises(NotImplementedError, match="escale2: no forward-mode derivative in torch"):
        torch.func.jvp(m.escale2, (x, a), (x, a))
    with fwAD.dual_level(), pytest.raises(NotImplementedError, match=msg):
        m.poly(fwAD.make_dual(x, torch.ones_like(x)), a, b)
    # Inside a dual level but with no tangent on its inputs, the op runs.
    with fwAD.dual_level():
        np.testing.assert_allclose(m.poly(x, a, b).numpy(), (x * x * a + torch.sin(b)).numpy(), rtol=1e-14)
