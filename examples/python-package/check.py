"""Calls the installed vecops package's kernels from JAX and compares them
with numpy: eagerly, under jax.jit and under jax.vmap. Run in an environment
that has the wheel installed (scripts/wheel-check.sh does)."""

import json
import pathlib
import sys
from importlib import metadata

import jax
import numpy as np

import vecops
from vecops import _kernels

rng = np.random.default_rng(0)
x = rng.standard_normal(1000).astype(np.float32)
y = rng.standard_normal(1000).astype(np.float32)

np.testing.assert_allclose(vecops.axpy(2.5, x, y), 2.5 * x + y, rtol=1e-6)
np.testing.assert_allclose(jax.jit(lambda a, b: vecops.axpy(-1.0, a, b))(x, y), y - x, rtol=1e-6)
np.testing.assert_allclose(vecops.cumsum(x), np.cumsum(x), rtol=1e-4, atol=1e-4)
np.testing.assert_allclose(vecops.norm(x), np.linalg.norm(x), rtol=1e-5)
rows = x.reshape(10, 100)
np.testing.assert_allclose(jax.vmap(vecops.norm)(rows), np.linalg.norm(rows, axis=1), rtol=1e-5)

# Where it came from: the library beside the module, inside site-packages.
lib = pathlib.Path(_kernels.LIBRARY)
assert lib.is_file() and lib.parent == pathlib.Path(vecops.__file__).parent, lib
dist = metadata.distribution("begen-example-vecops")
built = json.loads(dist.read_text("extra_metadata/begen.json"))
assert built["platform"] == "cpu" and built["module"] == "vecops._kernels", built
requires = dist.requires or []
assert any(r.startswith("jaxlib>=") for r in requires), requires
print(f"vecops: {len(_kernels.TARGETS)} kernels from {lib} agree with numpy; built with {built}", file=sys.stderr)
print("ok")
