"""Runs the typed CUDA kernels of tests/gpu/typed (built by begen into
OUT_DIR) on the GPU against numpy: eagerly, under jit, in place.

usage: python tests/gpu/check_typed.py OUT_DIR
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, sys.argv[1])
import gpu_typed as m  # noqa: E402

assert jax.devices()[0].platform == "gpu", jax.devices()
x = jnp.arange(1000, dtype=jnp.float32)
np.testing.assert_allclose(m.gpu_scale(x, s=2.0), 2 * np.asarray(x))
np.testing.assert_allclose(jax.jit(lambda v: m.gpu_scale(v, s=0.5))(x), 0.5 * np.asarray(x))
h = m.gpu_scale(x.astype(jnp.float16), s=2.0)
assert h.dtype == jnp.float16, h.dtype
np.testing.assert_allclose(np.asarray(h, np.float32), 2 * np.asarray(x.astype(jnp.float16), np.float32), rtol=1e-3)
acc = jnp.ones(1000, jnp.float32)
step = jax.jit(m.gpu_accumulate, donate_argnums=0)
assert "output_operand_aliases" in step.lower(acc, x).as_text()
np.testing.assert_allclose(step(jnp.ones(1000, jnp.float32), x), 1 + np.asarray(x))
a = jnp.arange(12, dtype=jnp.float32).reshape(3, 4)
np.testing.assert_allclose(m.gpu_rowsum(a), np.asarray(a).sum(1))
try:
    m.gpu_rowsum(a, out=jax.ShapeDtypeStruct((4,), jnp.float32))
    raise SystemExit("a wrong out= was accepted")
except ValueError as e:
    assert "dimension 'm' is 3" in str(e), e
# Straight to the target, past the Python checks: the handler refuses.
try:
    jax.ffi.ffi_call(m.TARGETS["gpu_scale[T=float32]"], jax.ShapeDtypeStruct((4,), jnp.float32))(
        jnp.ones(5, jnp.float32), s=np.float32(1.0)).block_until_ready()
    raise SystemExit("a shape mismatch reached the kernel")
except Exception as e:
    assert "gpu_scale: dimension 'n' is 5 (parameter 'x', axis 0) but parameter 'y' has 4" in str(e), e
print("typed CUDA kernels: all checks passed")
