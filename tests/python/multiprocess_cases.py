"""One process of tests/python/test_e2e_multiprocess.py: 2 processes of 2
CPU devices each, one global mesh of 4 devices across them.

`python multiprocess_cases.py OUT DATA PORT PROCESS_ID` joins the job whose
coordinator (process 0) listens on 127.0.0.1:PORT, builds each case's global
input arrays from DATA/inputs.npz (every process has the whole arrays and
keeps its own blocks), runs tests/e2e/sharding's kernels on meshes of
explicit and of auto axes, and compares every output block it holds with
DATA/reference.npz (the test's one-process results). It prints one JSON line:
{case: {"blocks": blocks compared, "equal": bool, "collectives": the compiled
HLO's} or {"error": ...}}, with "process" and "devices" (global, local).

Exit status 3: this jax cannot run collectives across CPU processes (the
test skips, or fails under CI=true).
"""

import json
import sys

import numpy as np

out_dir, data_dir, port, process_id = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
sys.path.insert(0, out_dir)

import jax

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_num_cpu_devices", 2)
jax.config.update("jax_enable_x64", True)
try:
    # Collectives between CPU processes: gloo over TCP (jax 0.12's default;
    # named here for the older jax versions the tests also run under).
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(
        coordinator_address=f"127.0.0.1:{port}", num_processes=2, process_id=process_id, initialization_timeout=60
    )
    jax.devices()  # the CPU client with its cross-process collectives
except Exception as e:
    print(json.dumps({"unsupported": f"{type(e).__name__}: {e}"}), flush=True)
    sys.exit(3)

import e2e_sharding as m
import hlo_collectives
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

inputs = dict(np.load(f"{data_dir}/inputs.npz"))
reference = dict(np.load(f"{data_dir}/reference.npz"))
results = {"process": jax.process_index(), "devices": [jax.device_count(), jax.local_device_count()]}


def global_array(a, mesh, spec):
    # The global array of `a` split as `spec`: this process makes its blocks.
    sharding = NamedSharding(mesh, P(*spec))
    return jax.make_array_from_callback(a.shape, sharding, lambda index: a[index])


def compare(name, y, rtol):
    # Every block of y this process holds against the same block of the
    # one-process result.
    want = reference[name]
    blocks = 0
    for shard in y.addressable_shards:
        if not np.allclose(np.asarray(shard.data), want[shard.index], rtol=rtol, atol=1e-6):
            return {"blocks": blocks, "equal": False, "at": str(shard.index)}
        blocks += 1
    return {"blocks": blocks, "equal": True, "spec": str(y.sharding.spec)}


def case(key, name, f, args, rtol=1e-6):
    try:
        results[key] = compare(name, jax.jit(f)(*args), rtol)
        text = jax.jit(f).lower(*args).compile().as_text()
        results[key]["collectives"] = {k: v for k, v in hlo_collectives.ops(text).items() if v}
    except Exception as e:  # reported, not raised: the test names the case
        results[key] = {"error": f"{type(e).__name__}: {e}"}


a = inputs
csr_out = jax.ShapeDtypeStruct(reference["csr_rows"].shape, np.float32)

for kind, axis_type in (("explicit", AxisType.Explicit), ("auto", AxisType.Auto)):
    mesh = jax.make_mesh((4,), ("x",), axis_types=(axis_type,))

    def g(name, *spec, mesh=mesh):
        return global_array(a[name], mesh, spec)

    # Rows split: each device its rows.
    case(f"{kind}/rowsum", "rowsum", m.rowsum, (g("x", "x"),))
    case(f"{kind}/matvec_rows", "matvec", m.matvec, (g("A", "x"), g("v")), rtol=1e-5)
    # k split: partial sums added up across the processes (an all-reduce).
    case(f"{kind}/matvec_k", "matvec", m.matvec, (g("A", None, "x"), g("v", "x")), rtol=1e-5)
    # A block-row CSR matrix, split by row blocks.
    case(
        f"{kind}/csr_rows",
        "csr_rows",
        lambda d, i, p, w: m.csr_rows(d, i, p, w, out=csr_out),
        (g("csr_data", "x"), g("csr_indices", "x"), g("csr_indptr", "x"), g("v")),
        rtol=1e-5,
    )
    # A gradient: the cotangent of the unsplit vector summed across devices.
    case(
        f"{kind}/grad",
        "grad",
        jax.grad(lambda A, x: (m.mv(A, x) ** 2).sum(), argnums=1),
        (g("Ad", "x"), g("vd")),
        rtol=1e-10,
    )
    # A split input beside a numpy constant (resharded to its blocks).
    case(f"{kind}/add_constant", "add", lambda s: m.add(s, a["b"]), (g("a32", "x"),))

print(json.dumps(results), flush=True)
jax.distributed.shutdown()
