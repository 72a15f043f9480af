"""Kernels as JAX primitives on a GPU (scripts/gpu-check.sh, step `prims`).

tests/e2e/prims built for CUDA: the CSR matrix-vector product `csrmv_cuda`,
declared linear in its weights and its vector with a CUDA transpose kernel
for each (brainevent's pattern), runs under jvp, jacfwd, grad, jacrev,
linear_transpose, jit, vmap and check_grads against a dense numpy product;
`zeros_cuda` (a kernel that writes nothing, `zero_outputs: true`) returns
zeros through the handler's cudaMemsetAsync on XLA's stream, also after the
same buffer held other numbers; sizes come from the `m` attribute.

usage: python tests/gpu/check_prims.py OUT   (OUT holds e2e_prims built with --platform cuda)
"""

import sys

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)
from jax.test_util import check_grads  # noqa: E402

sys.path.insert(0, sys.argv[1])
import e2e_prims as m  # noqa: E402

assert jax.default_backend() == "gpu", jax.default_backend()
rng = np.random.default_rng(0)
checks = 0


def close(a, b):
    global checks
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12)
    checks += 1


# A random CSR matrix of rows x cols, and its dense copy.
rows, cols = 300, 200
dense = np.where(rng.random((rows, cols)) < 0.05, rng.normal(size=(rows, cols)), 0.0)
indptr = np.concatenate([[0], np.cumsum((dense != 0).sum(axis=1))]).astype(np.int32)
indices = np.nonzero(dense)[1].astype(np.int32)
data = dense[dense != 0]
v = rng.normal(size=cols)


def mv(d, x):
    return m.csrmv_cuda(d, indices, indptr, x, m=rows)


def as_dense(d):
    out = np.zeros((rows, cols))
    out[np.nonzero(dense)] = np.asarray(d)
    return out


close(mv(data, v), dense @ v)
close(jax.jit(mv)(data, v), dense @ v)

# Forward mode: the kernel on the tangents, summed over both linear inputs.
td, tv = rng.normal(size=data.shape), rng.normal(size=cols)
y, t = jax.jvp(mv, (data, v), (td, tv))
close(y, dense @ v)
close(t, as_dense(td) @ v + dense @ tv)
close(jax.jit(lambda a, b, c, e: jax.jvp(mv, (a, b), (c, e))[1])(data, v, td, tv), as_dense(td) @ v + dense @ tv)
close(jax.jacfwd(mv, argnums=1)(data, v), dense)

# Reverse mode through the CUDA transpose kernels.
close(jax.jacrev(mv, argnums=1)(data, v), dense)
gd, gv = jax.grad(lambda a, b: (mv(a, b) ** 2).sum(), argnums=(0, 1))(data, v)
w = 2 * dense @ v
close(gv, dense.T @ w)
close(gd, (w[:, None] * v[None, :])[np.nonzero(dense)])
ct = rng.normal(size=rows)
(cv,) = jax.linear_transpose(lambda x: mv(data, x), v)(ct)
close(cv, dense.T @ ct)
(cd,) = jax.linear_transpose(lambda d: mv(d, v), data)(ct)
close(cd, (ct[:, None] * v[None, :])[np.nonzero(dense)])

# vmap of the primal, of its jvp and of its gradient.
vs = rng.normal(size=(5, cols))
close(jax.vmap(lambda x: mv(data, x))(vs), vs @ dense.T)
tvs = rng.normal(size=(5, cols))
close(jax.vmap(lambda x, tx: jax.jvp(lambda u: mv(data, u), (x,), (tx,))[1])(vs, tvs), tvs @ dense.T)
close(jax.vmap(jax.grad(lambda x: mv(data, x).sum()))(vs), np.tile(dense.sum(axis=0), (5, 1)))
check_grads(mv, (data, v), order=1, modes=("fwd", "rev"))
checks += 1

# zero_outputs on CUDA: a kernel that writes nothing returns zeros, also
# when its output buffer is reused after holding other numbers.
for n in (5, 4096, 1 << 20):
    junk = jax.block_until_ready(jax.numpy.full((n,), 7.0, dtype=jax.numpy.float32))
    del junk
    z = jax.block_until_ready(m.zeros_cuda(n=n))
    assert z.shape == (n,) and z.dtype == np.float32, (z.shape, z.dtype)
    assert not np.asarray(z).any(), f"zeros_cuda(n={n}) has nonzero elements"
    checks += 1
z = jax.jit(lambda: m.zeros_cuda(n=1000) + 1.0)()
close(z, np.ones(1000, np.float32))

print(f"check_prims: {checks} checks passed on {jax.devices()[0].device_kind}")
