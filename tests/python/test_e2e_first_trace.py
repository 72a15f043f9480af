"""One compile per jitted function, from its first call: a jitted step
calling a begen primitive (tests/e2e/prims), a kernel linear in a group
(tests/e2e/joint) or a kernel split under auto mesh axes
(tests/e2e/sharding, on 2 CPU devices) keeps one cache entry over three
calls. Each runs in a fresh process, where nothing has imported the parts
of JAX the generated module uses yet (the first trace must not be the one
that imports them: that changes JAX's trace context, so the second call
misses the cache and compiles again)."""

import os
import subprocess
import sys

import pytest
from conftest import REPO, run_begen

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane

STEP = """
import sys
out, case = sys.argv[1], sys.argv[2]
sys.path.insert(0, out)
import jax
import numpy as np

jax.config.update("jax_enable_x64", True)
if case == "split":
    jax.config.update("jax_num_cpu_devices", 2)
x = np.linspace(0.1, 1.0, 4)
if case == "primitive":
    import e2e_prims as m

    step = jax.jit(lambda v: m.tanh_k(v, s=2.0) * 2)
    args = (x,)
elif case == "grad":
    import e2e_prims as m

    step = jax.jit(jax.grad(lambda v: m.tanh_k(v, s=2.0).sum()))
    args = (x,)
elif case == "joint":
    import e2e_joint as m

    step = jax.jit(lambda a, b: m.gp(x, a, b) + 1)
    args = (x, x)
else:
    import e2e_sharding as m
    from jax.sharding import AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Auto,))
    a = jax.device_put(np.ones((4, 3), np.float32), NamedSharding(mesh, P("x", None)))
    step = jax.jit(lambda v: m.rowscale(v, s=2.0) + 1)
    args = (a,)
for _ in range(3):
    jax.block_until_ready(step(*args))
print("cache entries:", step._cache_size())
"""


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    out = tmp_path_factory.mktemp("first_trace")
    for tree in ("prims", "joint", "sharding"):
        run_begen("build", REPO / "tests/e2e" / tree, "--out", out / tree, "--platform", "cpu", "--quiet")
    return out


@pytest.mark.parametrize(("case", "tree"), [("primitive", "prims"), ("grad", "prims"), ("joint", "joint"), ("split", "sharding")])
def test_a_jitted_step_compiles_once(builds, case, tree):
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run(
        [sys.executable, "-c", STEP, str(builds / tree), case], capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "cache entries: 1" in proc.stdout, proc.stdout + proc.stderr
