"""Runs the list kernels of tests/gpu/vocab/lists.cu (the tree built by begen into OUT_DIR) on
the GPU against numpy: eagerly and under jit, empty lists, outputs like the
inputs, a list of outputs before a fixed one, an index past the end.

usage: python tests/gpu/check_lists.py OUT_DIR
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, sys.argv[1])
import gpu_vocab as m

assert jax.devices()[0].platform == "gpu", jax.devices()
n = 100_000
xs = [jnp.arange(n, dtype=jnp.float32) * (k + 1) for k in range(4)]
like = jax.ShapeDtypeStruct((n,), jnp.float32)
want = sum(np.asarray(x) for x in xs)
np.testing.assert_allclose(m.gpu_sum_all(xs, out=like), want)
np.testing.assert_allclose(jax.jit(lambda xs: m.gpu_sum_all(xs, out=like))(xs), want)
np.testing.assert_allclose(m.gpu_sum_all([], out=like), np.zeros(n, np.float32))
print("PASS gpu_sum_all: 4 inputs eagerly and under jit, and none")

ys = m.gpu_neg_each([xs[0], jnp.ones((3, 5), jnp.float32)])
assert [y.shape for y in ys] == [(n,), (3, 5)], [y.shape for y in ys]
np.testing.assert_allclose(ys[0], -np.asarray(xs[0]))
np.testing.assert_allclose(ys[1], -np.ones((3, 5), np.float32))
ys = jax.jit(m.gpu_neg_each)(xs)
for x, y in zip(xs, ys):
    np.testing.assert_allclose(y, -np.asarray(x))
print("PASS gpu_neg_each: outputs shaped like each input, no out=")

x = xs[0]
out = [jax.ShapeDtypeStruct((), jnp.int32)] + [like] * 3
count, *copies = jax.jit(lambda x: m.gpu_copies(x, out=out))(x)
assert int(count) == 3 and len(copies) == 3
for k, y in enumerate(copies):
    np.testing.assert_allclose(y, np.asarray(x) * (k + 1))
print("PASS gpu_copies: the fixed output first, then the list's")

np.testing.assert_allclose(m.gpu_pick(xs, at=3, out=like), np.asarray(xs[3]))
try:
    np.asarray(m.gpu_pick(xs, at=4, out=like))
    raise SystemExit("FAIL gpu_pick: an index past the end was read")
except Exception as e:
    assert "BE::Tensors: index 4 is past the end of a list of 4 tensors" in str(e), e
print("PASS gpu_pick: an index past the end is an error")
ys = jax.jit(m.gpu_first_only)([jnp.full(1000, 7.0, jnp.float32), jnp.full((3, 3), 3.0, jnp.float32)])
np.testing.assert_array_equal(ys[0], np.r_[7.0, np.zeros(999)].astype(np.float32))
np.testing.assert_array_equal(ys[1], np.r_[3.0, np.zeros(8)].reshape(3, 3).astype(np.float32))
print("PASS gpu_first_only: zero_outputs zeroes every output of the list on XLA's stream")
print("lists: all passed")
