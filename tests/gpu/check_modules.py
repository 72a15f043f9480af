"""On a GPU: a CUDA library of several modules (tests/gpu/modules) whose
sources define the same host function and the same `__global__` kernel
name; each module's function must run its own kernel.

usage: python tests/gpu/check_modules.py OUT    (OUT holds gpu_modules.py)
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, sys.argv[1])
import gpu_modules as m  # noqa: E402

assert jax.devices()[0].platform == "gpu", jax.devices()
x = jnp.arange(1000, dtype=jnp.float32)
out = jax.ShapeDtypeStruct(x.shape, x.dtype)
base = 2 * np.arange(1000, dtype=np.float32)
checks = {
    "a_scale.scale": (m.a_scale.scale, base),
    "b_scale.scale": (m.b_scale.scale, base + 1),
    "a_scale_b7.scale": (m.a_scale_b7.scale, base + 7),
}
failed = 0
for name, (fn, want) in checks.items():
    for how, call in (("eager", fn), ("jit", jax.jit(fn, static_argnames=("alpha", "out")))):
        got = np.asarray(call(x, alpha=2.0, out=out))
        ok = np.allclose(got, want)
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name} ({how}): first values {got[:3]}")
print(f"check_modules: {len(checks) * 2 - failed} of {len(checks) * 2} passed")
sys.exit(1 if failed else 0)
