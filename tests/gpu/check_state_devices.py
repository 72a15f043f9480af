"""Runs tests/gpu/state_devices (built by begen into OUT_DIR) on every GPU
of the machine (2 or more): a `T& state` kernel and a `T* state` kernel of
XLA FFI's types under a shard_map over all of them. Each device gets a
state of its own, made with that device current; when the executables are
freed (jax.clear_caches), each state is destroyed with its own device
current, whichever device the destroying thread had current. Prints PASS
or FAIL per check and exits 1 on any failure.

usage: python tests/gpu/check_state_devices.py OUT_DIR
"""

import gc
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

sys.path.insert(0, sys.argv[1])
import gpu_state_devices as m
from gpu_checks import check, failed

devices = jax.devices()
if len(devices) < 2:
    print(f"FAIL needs 2 or more GPUs; this machine has {len(devices)}")
    sys.exit(1)
mesh = jax.make_mesh((len(devices),), ("x",))
ids = [d.id for d in mesh.devices.flat]
one = jax.ShapeDtypeStruct((1,), jnp.int32)
KINDS = {0: "T& state", 1: "T* state"}


def made_on_its_device(kernel):
    """Each shard's state was made with the shard's device current."""

    def run():
        f = jax.jit(jax.shard_map(lambda: kernel(out=one), mesh=mesh, in_specs=(), out_specs=P("x")))
        where = np.asarray(f()).tolist()
        assert where == ids, f"made on {where}, the shards run on {ids}"

    return run


def destroyed_on_its_device():
    """The executables above are freed: every state they held is destroyed
    with the device it was made on current."""
    gc.collect()
    jax.clear_caches()
    gc.collect()
    rows = np.asarray(m.state_destructions(out=jax.ShapeDtypeStruct((64, 3), jnp.int32))).tolist()
    rows = [r for r in rows if r[0] >= 0]
    for kind, name in KINDS.items():
        mine = [r for r in rows if r[0] == kind]
        print(f"  {name}: (made on, destroyed on) {[(r[1], r[2]) for r in mine]}")
        assert sorted(r[1] for r in mine) == sorted(ids), f"{name}: states made on {[r[1] for r in mine]}"
        wrong = [r for r in mine if r[1] != r[2]]
        assert not wrong, f"{name}: destroyed with another device current: {wrong}"


check("T& state: one per GPU under a shard_map, made with that GPU current", made_on_its_device(m.be_made_on))
check("T* state: one per GPU under a shard_map, made with that GPU current", made_on_its_device(m.NativeMadeOn))
check("both: each GPU's state destroyed with that GPU current (jax.clear_caches)", destroyed_on_its_device)

if failed:
    print(f"{len(failed)} check(s) failed")
    sys.exit(1)
print("all checks passed")
