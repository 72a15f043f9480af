"""Sharded CUDA kernels on a mesh of every GPU (scripts/gpu-check.sh, steps
`sharding` and `multigpu`).

tests/e2e/sharding built for CUDA: an elementwise kernel, a row reduction, a
matrix-vector product split by rows and (on 2+ GPUs) by columns with
`reduce`, and a block-row CSR matrix-vector product split by row blocks, on
meshes of explicit and of auto axes. Each result equals the one-GPU call of
the same kernel (bit for bit where no sum is split); the compiled HLO has no
all-gather on a declared dimension, per-GPU operand shapes, and one
all-reduce for a split `reduce` dimension. The `_plain` twins (no `shard:`)
show the all-gather begen avoids. A sharded export is deserialized and run in
a fresh process on the same mesh.

usage: python tests/gpu/check_sharding.py OUT   (e2e_sharding built with --platform cuda)
"""

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import jax
import numpy as np
from jax import export
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

out_dir = sys.argv[1]
sys.path.insert(0, out_dir)
# The collective counter the CPU sharding tests use (tests/python).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import e2e_sharding as m
from hlo_collectives import ops

if len(sys.argv) > 2 and sys.argv[2] == "--deserialize":
    # The fresh process of the export check: run the file on the same mesh.
    axis_type = AxisType.Auto if sys.argv[3] == "auto" else AxisType.Explicit
    mesh = jax.make_mesh((jax.device_count(),), ("x",), axis_types=(axis_type,))
    with open(sys.argv[4], "rb") as f:
        exported = m.deserialize(bytearray(f.read()))
    A, v = np.load(sys.argv[5]), np.load(sys.argv[6])
    args = (jax.device_put(A, NamedSharding(mesh, P("x"))), jax.device_put(v, NamedSharding(mesh, P())))
    y = exported.call(*args)
    text = jax.jit(exported.call).lower(*args).compile().as_text()
    print(json.dumps({"y": np.asarray(y).tolist(), "all_gather": ops(text)["all-gather"]}))
    sys.exit(0)

assert jax.default_backend() == "gpu", jax.default_backend()
G = jax.device_count()
rng = np.random.default_rng(0)
checks = 0


def check(cond, what):
    global checks
    assert cond, what
    checks += 1


def facts(f, args):
    text = jax.jit(f).lower(*args).compile().as_text()
    calls = {}
    for line in text.splitlines():
        target = re.search(r'custom_call_target="e2e_sharding\.([^"]+)"', line)
        if target:
            constraints = line.split("operand_layout_constraints={", 1)[-1].split(", api_version", 1)[0]
            calls[target.group(1)] = re.findall(r"[a-z]+\d*\[[\d,]*\]", constraints)
    # Counted in every form XLA prints them in: on several GPUs it combines
    # gathers into one async all-gather-start with a tuple type.
    counts = ops(text)
    return calls, counts["all-gather"], counts["all-reduce"]


def one_gpu(f, *args):
    return np.asarray(f(*[np.asarray(a) for a in args]))


# Inputs: 64 rows per GPU.
n, k = 64 * G, 96
x = rng.normal(size=(n, k)).astype(np.float32)
v = rng.normal(size=k).astype(np.float32)
# A block-row CSR matrix: 2 blocks per GPU of 32 rows, columns over k.
b, r, per_row = 2 * G, 32, 5
nnz = r * per_row
indptr = np.tile(np.arange(0, nnz + 1, per_row, dtype=np.int32), (b, 1))
indices = rng.integers(0, k, size=(b, nnz)).astype(np.int32)
data = rng.normal(size=(b, nnz)).astype(np.float32)
dense_y = np.einsum("bz,bz->bz", data, v[indices]).reshape(b, r, per_row).sum(2)
y_struct = jax.ShapeDtypeStruct((b, r), np.float32)

for axis_type in (AxisType.Explicit, AxisType.Auto):
    mesh = jax.make_mesh((G,), ("x",), axis_types=(axis_type,))

    def put(a, *spec, mesh=mesh):
        return jax.device_put(a, NamedSharding(mesh, P(*spec)))

    kind = "explicit" if axis_type == AxisType.Explicit else "auto"
    cases = [
        ("rowscale_cuda", lambda a: m.rowscale_cuda(a, s=2.0), (put(x, "x"),), f"f32[64,{k}]"),
        ("rowsum_cuda", m.rowsum_cuda, (put(x, "x"),), f"f32[64,{k}]"),
        ("matvec_cuda", m.matvec_cuda, (put(x, "x"), put(v)), f"f32[64,{k}]"),
        (
            "csr_rows_cuda",
            lambda d, i, p, w: m.csr_rows_cuda(d, i, p, w, out=y_struct),
            (put(data, "x"), put(indices, "x"), put(indptr, "x"), put(v)),
            f"f32[2,{nnz}]",
        ),
    ]
    plain = {
        "rowscale_cuda": lambda a: m.rowscale_cuda_plain(a, s=2.0),
        "rowsum_cuda": m.rowsum_cuda_plain,
        "matvec_cuda": m.matvec_cuda_plain,
        "csr_rows_cuda": lambda d, i, p, w: m.csr_rows_cuda_plain(d, i, p, w, out=y_struct),
    }
    for target, f, args, first_operand in cases:
        # Rows split: each GPU computes its rows as one GPU would, bit for bit.
        want = one_gpu(f, *args)
        check(np.array_equal(np.asarray(jax.jit(f)(*args)), want), f"{kind} {target}: differs from the one-GPU call")
        calls, gathers, reduces = facts(f, args)
        check(calls[target][0] == first_operand, f"{kind} {target}: per-GPU operand {calls[target]}")
        check(gathers == 0 and reduces == 0, f"{kind} {target}: {gathers} all-gathers, {reduces} all-reduces")
        # The twin without `shard:`: the same numbers, every input gathered.
        g = plain[target]
        check(np.array_equal(np.asarray(jax.jit(g)(*args)), want), f"{kind} {target}_plain")
        _, gathers, _ = facts(g, args)
        check(G == 1 or gathers >= 1, f"{kind} {target}_plain: no all-gather on {G} GPUs")
    check(np.allclose(one_gpu(cases[3][1], *cases[3][2]), dense_y, rtol=1e-5), "csr_rows_cuda against numpy")
    if G > 1 and k % G == 0:
        # Columns split: each GPU multiplies its k/G columns; one all-reduce.
        args = (put(x, None, "x"), put(v, "x"))
        got = np.asarray(jax.jit(m.matvec_cuda)(*args))
        check(np.allclose(got, one_gpu(m.matvec_cuda, *args), rtol=1e-4, atol=1e-4), f"{kind} matvec k-split")
        calls, gathers, reduces = facts(m.matvec_cuda, args)
        check(calls["matvec_cuda"][0] == f"f32[{n},{k // G}]", f"{kind} matvec k-split operand {calls}")
        check(gathers == 0 and reduces == 1, f"{kind} matvec k-split: {gathers} all-gathers, {reduces} all-reduces")

# A sharded export, run in a fresh process on the same mesh: explicit axes
# export their shard_map, auto axes begen's partitioned call. Either way the
# deserialized call runs per GPU with no gather.
for axes in ("explicit", "auto"):
    axis_type = AxisType.Auto if axes == "auto" else AxisType.Explicit
    mesh = jax.make_mesh((G,), ("x",), axis_types=(axis_type,))
    args = (jax.device_put(x, NamedSharding(mesh, P("x"))), jax.device_put(v, NamedSharding(mesh, P())))
    exported = export.export(jax.jit(m.matvec_cuda), disabled_checks=m.export_safety_checks())(*args)
    scratch = tempfile.mkdtemp()
    paths = [f"{scratch}/exported.bin", f"{scratch}/A.npy", f"{scratch}/v.npy"]
    with open(paths[0], "wb") as f:
        f.write(exported.serialize())
    np.save(paths[1], x)
    np.save(paths[2], v)
    proc = subprocess.run(
        [sys.executable, __file__, out_dir, "--deserialize", axes, *paths], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    check(np.allclose(np.asarray(result["y"]), x @ v, rtol=1e-4, atol=1e-4), f"{axes}: deserialized matvec_cuda")
    check(result["all_gather"] == 0, f"{axes}: the deserialized call gathers")

print(f"check_sharding: {checks} checks passed on {G} GPU(s) ({jax.devices()[0].device_kind})")
