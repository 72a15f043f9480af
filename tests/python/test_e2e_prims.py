"""Kernels as JAX primitives, end to end on the CPU: tests/e2e/prims built by
the CLI and called from JAX under every transformation, against numpy — a
bilinear kernel with its transposes, a nonlinear kernel with a linear
tangent kernel, a CSR matrix-vector product linear in its weights and its
vector; export in a fresh process; sizes from attributes; zeroed outputs."""

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import REPO, import_module, missing, run_begen
from jax.test_util import check_grads


@pytest.fixture(scope="module")
def built(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_prims")
    run_begen("build", REPO / "tests/e2e/prims", "--out", out, "--platform", "cpu", "--quiet")
    return out


@pytest.fixture(scope="module")
def m(built):
    return import_module(built, "e2e_prims")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12)


def test_a_bilinear_kernel_under_every_transformation(m, jax_cpu, rng):
    jax = jax_cpu
    A, x = rng.normal(size=(3, 4)), rng.normal(size=4)
    tA, tx = rng.normal(size=(3, 4)), rng.normal(size=4)
    close(m.mv(A, x), A @ x)
    y, t = jax.jvp(m.mv, (A, x), (tA, tx))
    close(y, A @ x)
    close(t, tA @ x + A @ tx)
    close(jax.jacfwd(m.mv, argnums=1)(A, x), A)
    close(jax.jacrev(m.mv, argnums=1)(A, x), A)
    close(jax.jacfwd(m.mv, argnums=0)(A, x), np.einsum("ij,k->ijk", np.eye(3), x))
    gA, gx = jax.grad(lambda a, b: (m.mv(a, b) ** 2).sum(), argnums=(0, 1))(A, x)
    close(gA, np.outer(2 * A @ x, x))
    close(gx, A.T @ (2 * A @ x))
    ct = rng.normal(size=3)
    (cx,) = jax.linear_transpose(lambda v: m.mv(A, v), x)(ct)
    close(cx, A.T @ ct)
    (cA,) = jax.linear_transpose(lambda a: m.mv(a, x), A)(ct)
    close(cA, np.outer(ct, x))
    jit_jvp = jax.jit(lambda a, b, c, d: jax.jvp(m.mv, (a, b), (c, d))[1])
    close(jit_jvp(A, x, tA, tx), tA @ x + A @ tx)
    xs, txs = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    ys, ts = jax.vmap(lambda v, t: jax.jvp(lambda u: m.mv(A, u), (v,), (t,)))(xs, txs)
    close(ys, xs @ A.T)
    close(ts, txs @ A.T)
    # The other order: the batched primitive's own jvp and transpose rules.
    _, ts = jax.jvp(jax.vmap(lambda u: m.mv(A, u)), (xs,), (txs,))
    close(ts, txs @ A.T)
    close(jax.grad(lambda v: jax.vmap(lambda u: m.mv(A, u))(v).sum())(xs), np.tile(A.sum(0), (5, 1)))
    # vmap over the transposes, with the matrix batched too.
    As = rng.normal(size=(5, 3, 4))
    close(jax.vmap(lambda a, v: jax.grad(lambda u: m.mv(a, u).sum())(v))(As, xs), As.sum(1))
    check_grads(m.mv, (A, x), order=1, modes=("fwd", "rev"))


def test_a_nonlinear_kernel_with_a_linear_tangent_kernel(m, jax_cpu, rng):
    jax = jax_cpu
    x, t = rng.normal(size=6), rng.normal(size=6)

    def f(v):
        return m.tanh_k(v, s=1.5)

    d = 1.5 * (1 - np.tanh(x) ** 2)
    close(f(x), 1.5 * np.tanh(x))
    close(jax.jvp(f, (x,), (t,))[1], d * t)
    close(jax.jacfwd(f)(x), np.diag(d))
    close(jax.jacrev(f)(x), np.diag(d))
    close(jax.grad(lambda v: f(v).sum())(x), d)
    close(jax.jit(lambda v, w: jax.jvp(f, (v,), (w,)))(x, t)[1], d * t)
    xs, ts = rng.normal(size=(3, 6)), rng.normal(size=(3, 6))
    close(jax.vmap(lambda v, w: jax.jvp(f, (v,), (w,))[1])(xs, ts), 1.5 * (1 - np.tanh(xs) ** 2) * ts)
    (ct,) = jax.linear_transpose(lambda w: jax.jvp(f, (x,), (w,))[1], t)(t)
    close(ct, d * t)
    check_grads(f, (x,), order=1, modes=("fwd", "rev"))
    # Reverse mode runs the tangent kernel's transpose: no backward kernel.
    jaxpr = str(jax.make_jaxpr(jax.grad(lambda v: f(v).sum()))(x))
    assert "e2e_prims.tanh_jvp_t" in jaxpr and "e2e_prims.tanh_k" in jaxpr, jaxpr
    # A bad attribute is refused when the function is called, not when its
    # primitive is lowered.
    with pytest.raises(TypeError, match=r"tanh_k: attribute 's' \(float64\) takes a number"):
        jax.jit(lambda v: m.tanh_k(v, s="bad")).trace(x)
    # The tangent kernel is linear in dx only: a tangent of x is refused, by name.
    with pytest.raises(TypeError, match=r"e2e_prims\.tanh_jvp: no derivative in 'x'"):
        jax.jvp(lambda v: m.tanh_jvp(v, t, s=1.0), (x,), (t,))


def test_the_primal_is_the_same_custom_call(m, jax_cpu, rng):
    jax = jax_cpu
    A, x = rng.normal(size=(3, 4)), rng.normal(size=4)

    def hlo(fn):
        text = jax.jit(fn).lower(A, x).as_text()
        return re.sub(r"@jit_\w+", "@jit", text)

    prim = hlo(m.mv)
    plain = hlo(m.mv_plain).replace("e2e_prims.mv_plain", "e2e_prims.mv")
    assert prim == plain, prim + "\n" + plain
    assert prim.count("stablehlo.custom_call") == 1, prim


def csr(rng, rows=4, cols=5):
    dense = rng.normal(size=(rows, cols)) * (rng.random((rows, cols)) < 0.5)
    r, c = np.nonzero(dense)
    indptr = np.searchsorted(r, np.arange(rows + 1)).astype(np.int32)
    return dense, dense[r, c], c.astype(np.int32), indptr, r


def test_a_csr_product_linear_in_weights_and_vector(m, jax_cpu, rng):
    jax = jax_cpu
    dense, data, indices, indptr, rows = csr(rng)
    v = rng.normal(size=5)

    def f(d, vv):
        return m.csrmv(d, indices, indptr, vv, m=4)

    y = dense @ v
    close(f(data, v), y)
    gd, gv = jax.grad(lambda d, vv: (f(d, vv) ** 2).sum(), argnums=(0, 1))(data, v)
    close(gv, dense.T @ (2 * y))
    close(gd, (2 * y)[rows] * v[indices])
    close(jax.jacrev(lambda vv: f(data, vv))(v), dense)
    close(jax.jacfwd(lambda vv: f(data, vv))(v), dense)
    ct = rng.normal(size=4)
    close(jax.linear_transpose(lambda vv: f(data, vv), v)(ct)[0], dense.T @ ct)
    close(jax.linear_transpose(lambda d: f(d, v), data)(ct)[0], ct[rows] * v[indices])
    close(jax.vmap(lambda vv: f(data, vv))(np.stack([v, 2 * v])), np.stack([y, 2 * y]))
    check_grads(f, (data, v), order=1, modes=("fwd", "rev"))


def test_export_of_jit_jvp_round_trips_in_a_fresh_process(m, built, jax_cpu, tmp_path, rng):
    jax = jax_cpu
    from jax import export

    x, t = np.linspace(-1.0, 1.0, 5), np.linspace(0.5, 1.5, 5)
    fn = jax.jit(lambda v, w: jax.jvp(lambda u: m.tanh_k(u, s=2.0), (v,), (w,)))
    exp = export.export(fn, disabled_checks=m.export_safety_checks())(x, t)
    blob = tmp_path / "jvp.bin"
    blob.write_bytes(exp.serialize())
    script = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {str(built)!r})
        import jax, numpy as np
        jax.config.update("jax_enable_x64", True)
        import e2e_prims as m
        exp = m.deserialize(bytearray(open({str(blob)!r}, "rb").read()))
        y, dy = exp.call(np.linspace(-1.0, 1.0, 5), np.linspace(0.5, 1.5, 5))
        print("y", np.asarray(y).round(6).tolist())
        print("dy", np.asarray(dy).round(6).tolist())
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"y {(2 * np.tanh(x)).round(6).tolist()}" in proc.stdout, proc.stdout
    assert f"dy {(2 * (1 - np.tanh(x) ** 2) * t).round(6).tolist()}" in proc.stdout, proc.stdout


def test_sizes_from_attributes(m, jax_cpu, built):
    jax = jax_cpu
    close(m.fill(n=6, v=2.5), np.full(6, 2.5, np.float32))
    close(jax.jit(lambda: m.fill(n=3, v=-1.0))(), np.full(3, -1.0, np.float32))
    assert m.fill(n=0, v=1.0).shape == (0,)
    with pytest.raises(ValueError, match=r"fill: attribute 'n' sizes dimension 'n': it must not be negative"):
        m.fill(n=-1, v=1.0)
    with pytest.raises(TypeError, match=r"fill: attribute 'n' sizes dimension 'n': it takes an integer"):
        m.fill(n=2.5, v=1.0)
    # The CSR product's row count: its attribute; an out= that disagrees is refused.
    with pytest.raises(ValueError, match=r"dimension 'm' is 4 \(from attribute 'm'\)"):
        m.csrmv(np.ones(1), np.zeros(1, np.int32), np.array([0, 1], np.int32), np.ones(2), m=4,
                out=jax.ShapeDtypeStruct((3,), np.float64))
    stub = (built / "e2e_prims.pyi").read_text()
    assert re.search(r"def fill\(\*, n: int, v: float, out: jax.ShapeDtypeStruct \| None = None\)", stub), stub


def test_zero_outputs(m, jax_cpu, tmp_path):
    jax = jax_cpu
    close(m.accumulate(n=5, v=1.5), np.full(5, 1.5, np.float32))
    close(jax.jit(lambda: m.accumulate(n=1000, v=0.25) + m.accumulate(n=1000, v=0.5))(), np.full(1000, 0.75))
    # The trampolines of the kernels with `zero_outputs: true`, and only those, zero them.
    run_begen("generate", REPO / "tests/e2e/prims", "--out", tmp_path, "--platform", "cpu")
    wrapper = (tmp_path / "gen/prims.cpp.begen.cc").read_text()
    blocks = re.split(r"BEGEN_TRAMPOLINE const char\* begen_call_e2e_prims_", wrapper)[1:]
    zeroed = sorted(b.split("(")[0] for b in blocks if "begen::tr::zero_output(" in b.split("\n}\n")[0])
    assert zeroed == ["accumulate", "csrmv_tv"], wrapper


def test_cuda_kernels_compile_and_lower_for_cuda(jax_cpu, tmp_path):
    """The CUDA kernels (CSR product with transposes, outputs zeroed on XLA's
    stream, by a kernel that takes none too) compile with pip's nvcc; their
    primitives lower for CUDA on this CPU-only machine."""
    nvcc = os.environ.get("NVCC")
    if not nvcc or not os.path.isfile(nvcc):
        missing("no nvcc: NVCC is not set (source scripts/env.sh)")
    jax = jax_cpu
    # Another name: its CPU targets must not clash with the CPU build's.
    run_begen("build", REPO / "tests/e2e/prims", "--out", tmp_path, "--name", "prims_cuda", "--platform", "cuda",
              "--arch", "sm_90", "--quiet", env={"NVCC": nvcc})
    m = import_module(tmp_path, "prims_cuda")
    data, idx, ptr, v = np.ones(3), np.array([0, 1, 1], np.int32), np.array([0, 1, 3], np.int32), np.ones(2)

    def loss(d, vv):
        return (m.csrmv_cuda(d, idx, ptr, vv, m=2) ** 2).sum()

    fn = jax.jit(lambda d, vv: (loss(d, vv), jax.grad(loss, argnums=(0, 1))(d, vv)))
    text = fn.trace(data, v).lower(lowering_platforms=("cuda",)).as_text()
    assert sorted(set(re.findall(r"custom_call @([\w.]+)", text))) == [
        "prims_cuda.csrmv_cuda", "prims_cuda.csrmv_cuda_tdata", "prims_cuda.csrmv_cuda_tv"], text
    text = jax.jit(lambda: m.zeros_cuda(n=4)).trace().lower(lowering_platforms=("cuda",)).as_text()
    assert re.findall(r"custom_call @([\w.]+)", text) == ["prims_cuda.zeros_cuda"], text
