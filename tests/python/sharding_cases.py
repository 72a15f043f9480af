"""The calls of tests/e2e/sharding on several CPU devices, run in a fresh
process by tests/python/test_e2e_sharding.py (a device count is fixed when
JAX's backend starts): `python sharding_cases.py OUT DEVICES MODE [FILES]` prints one
JSON object, a case per key, each with what the test checks: whether the
numbers equal the one-device call's, the output's PartitionSpec, and from the
compiled HLO the all-gathers, all-reduces and the custom calls' operand shapes.

MODE is `explicit` (jax.make_mesh's default axes), `auto`, `export` (a
sharded call exported to FILES/exported.bin) or `deserialize` (that file run in
this fresh process on the same mesh); `auto-export` and `auto-deserialize`
do the same on a mesh of auto axes. `eager` and `auto-eager` make calls
outside jit, XLA dumping every module it compiles to FILES/dump: the
collectives and custom calls are read from there.
"""

import json
import os
import re
import sys
import warnings
from pathlib import Path

import numpy as np

out_dir, devices, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
files = sys.argv[4] if len(sys.argv) > 4 else out_dir
sys.path.insert(0, out_dir)
if mode.endswith("eager"):
    os.environ["XLA_FLAGS"] = f"--xla_dump_to={files}/dump --xla_dump_hlo_as_text"

import jax

jax.config.update("jax_num_cpu_devices", devices)
jax.config.update("jax_enable_x64", True)
import e2e_sharding as m
import hlo_collectives
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

axis_type = AxisType.Auto if mode.startswith("auto") else AxisType.Explicit
mesh = jax.make_mesh((devices,), ("x",), axis_types=(axis_type,))
grid = jax.make_mesh((devices // 2, 2), ("x", "y"), axis_types=(axis_type,) * 2)
rng = np.random.default_rng(0)
N, K = 4 * devices, 6


def put(a, *spec, on=mesh):
    return jax.device_put(a, NamedSharding(on, P(*spec)))


def operands(line):
    # A custom call's target and operand shapes, as its layout constraints list them.
    target = re.search(r'custom_call_target="([^"]+)"', line).group(1)
    constraints = line.split("operand_layout_constraints={", 1)[-1].split(", api_version", 1)[0]
    return [target, re.findall(r"[a-z]+\d*\[[\d,]*\]", constraints)]


def hlo_facts(f, args):
    text = jax.jit(f).lower(*args).compile().as_text()
    counts = hlo_collectives.ops(text)
    return {
        "all_gather": counts["all-gather"],
        "all_reduce": counts["all-reduce"],
        "collectives": {k: v for k, v in counts.items() if v},
        "calls": [operands(line) for line in text.splitlines() if "custom_call_target=" in line],
    }


def case(f, args, ref, rtol=1e-12):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            y = jax.jit(f)(*args)
            facts = hlo_facts(f, args)
        except Exception as e:  # reported, not raised: the test names the case
            return {"error": f"{type(e).__name__}: {e}"}
    ys = y if isinstance(y, tuple) else (y,)
    refs = ref if isinstance(ref, tuple) else (ref,)
    equal = all(np.allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-12) for a, b in zip(ys, refs))
    spec = getattr(ys[0], "sharding", None)
    return {
        "equal": bool(equal),
        "spec": str(spec.spec) if isinstance(spec, NamedSharding) else None,
        "warnings": [str(w.message) for w in caught if "gathered on every device" in str(w.message)],
        "warned_at": sorted({w.filename.rsplit("/", 1)[-1] for w in caught if "gathered on every" in str(w.message)}),
        **facts,
    }


def error(f, args):
    # The exception a call raises, as text ("" when none).
    try:
        jax.jit(f)(*args)
    except Exception as e:
        return f"{type(e).__name__}: {e}"
    return ""


def one_device(f, *args):
    # The kernel on unsplit arrays, on one device: what every split must equal.
    return np.asarray(f(*[np.asarray(a) for a in args]))


results = {}
x = rng.normal(size=(N, K)).astype(np.float32)
A = rng.normal(size=(N, 24)).astype(np.float32)
v = rng.normal(size=24).astype(np.float32)
d = rng.normal(size=N)
Ad, vd = A.astype(np.float64), v.astype(np.float64)
# A block-row CSR matrix: 2 blocks per device of 3 rows, 2 non-zeros a row
# over v's 24 columns.
csr_blocks, csr_r, csr_per_row = 2 * devices, 3, 2
csr_indptr = np.tile(np.arange(0, csr_r * csr_per_row + 1, csr_per_row, dtype=np.int32), (csr_blocks, 1))
csr_indices = rng.integers(0, 24, size=(csr_blocks, csr_r * csr_per_row)).astype(np.int32)
csr_data = rng.normal(size=(csr_blocks, csr_r * csr_per_row)).astype(np.float32)
csr_x = v
csr_out = jax.ShapeDtypeStruct((csr_blocks, csr_r), np.float32)
csr_dense = (csr_data * v[csr_indices]).reshape(csr_blocks, csr_r, csr_per_row).sum(2)

if mode in ("explicit", "auto"):
    rowscale = lambda a: m.rowscale(a, s=2.0)
    results["rowscale"] = case(rowscale, (put(x, "x"),), one_device(rowscale, x))
    results["rowsum"] = case(m.rowsum, (put(x, "x"),), one_device(m.rowsum, x))
    results["matvec_rows"] = case(m.matvec, (put(A, "x"), put(v)), one_device(m.matvec, A, v), rtol=1e-5)
    results["matvec_k"] = case(m.matvec, (put(A, None, "x"), put(v, "x")), one_device(m.matvec, A, v), rtol=1e-5)
    results["matvec_grid"] = case(
        m.matvec, (put(A, "x", "y", on=grid), put(v, "y", on=grid)), one_device(m.matvec, A, v), rtol=1e-5
    )
    results["undeclared"] = case(m.matvec_plain, (put(A, "x"), put(v)), one_device(m.matvec_plain, A, v), rtol=1e-5)
    results["count_pos"] = case(m.count_pos, (put(x[:, 0], "x"),), one_device(m.count_pos, x[:, 0]))
    scale_t = lambda a: m.scale_t(a, s=3.0)
    results["template"] = case(scale_t, (put(d, "x"),), one_device(scale_t, d))
    results["algorithm"] = case(m.ew, (put(x[:, 0], "x"),), one_device(m.ew, x[:, 0]))
    results["vjp"] = case(jax.grad(lambda a: m.square(a).sum()), (put(d, "x"),), 2 * d)
    results["linear"] = case(m.mv, (put(Ad, "x"), put(vd)), Ad @ vd)
    results["linear_grad"] = case(
        jax.grad(lambda a, b: (m.mv(a, b) ** 2).sum(), argnums=1), (put(Ad, "x"), put(vd)), Ad.T @ (2 * Ad @ vd)
    )
    results["linear_jvp"] = case(
        lambda a, b, ta, tb: jax.jvp(m.mv, (a, b), (ta, tb))[1],
        (put(Ad, "x"), put(vd), put(Ad, "x"), put(vd)),
        2 * Ad @ vd,
    )
    results["jvp_kernel"] = case(
        lambda a, t: jax.jvp(m.tanh_k, (a,), (t,))[1], (put(d, "x"), put(d, "x")), (1 - np.tanh(d) ** 2) * d
    )
    results["jvp_kernel_grad"] = case(jax.grad(lambda a: m.tanh_k(a).sum()), (put(d, "x"),), 1 - np.tanh(d) ** 2)
    B = rng.normal(size=(3, N, K)).astype(np.float32)
    results["vmap"] = case(jax.vmap(m.rowsum), (put(B, None, "x"),), B.sum(2), rtol=1e-5)
    # Every device's thread calls the CPU handler at once, many times.
    many = jax.jit(lambda a: [m.rowscale(a + i, s=0.5) for i in range(32)])
    want = [one_device(lambda a, i=i: m.rowscale(a + i, s=0.5), x) for i in range(32)]
    results["threads"] = {"equal": all(np.array_equal(g, w) for g, w in zip(many(put(x, "x")), want))}
    # A call on one device's arrays: nothing planned, the plain custom call.
    results["unsharded"] = case(m.rowsum, (x,), one_device(m.rowsum, x))
    # Split and unsplit inputs together: each input is resharded to the
    # split the plan chose (an unsplit one is sliced, a split one the plan
    # cannot use is gathered, as the warning says).
    a32, b32 = x[:, 0], x[:, 1]
    results["mixed_numpy"] = case(lambda a: m.add(a, b32), (put(a32, "x"),), a32 + b32)
    results["mixed_replicated"] = case(m.add, (put(a32, "x"), put(b32)), a32 + b32)
    results["mixed_second_split"] = case(m.add, (put(b32), put(a32, "x")), a32 + b32)
    results["k_split_v_replicated"] = case(m.matvec, (put(A, None, "x"), put(v)), one_device(m.matvec, A, v), rtol=1e-5)
    W = rng.normal(size=(N, N)).astype(np.float32)
    s0 = (rng.random(N) < 0.5).astype(np.float32)
    results["rows_and_spikes_split"] = case(m.matvec, (put(W, "x"), put(s0, "x")), one_device(m.matvec, W, s0))
    results["grid_v_replicated"] = case(
        m.matvec, (put(A, "x", "y", on=grid), put(v, on=grid)), one_device(m.matvec, A, v), rtol=1e-5
    )
    results["grid_rows_and_columns"] = case(m.rowsum, (put(x, "x", "y", on=grid),), one_device(m.rowsum, x), rtol=1e-5)
    results["grid_rows_on_both"] = case(
        m.matvec, (put(A, ("x", "y"), on=grid), put(v, "y", on=grid)), one_device(m.matvec, A, v), rtol=1e-5
    )
    results["csr_rows"] = case(
        lambda dd, ii, pp, w: m.csr_rows(dd, ii, pp, w, out=csr_out),
        (put(csr_data, "x"), put(csr_indices, "x"), put(csr_indptr, "x"), csr_x),
        csr_dense,
        rtol=1e-5,
    )

    # vmap over a batch axis split across the devices: each device runs the
    # kernel on its batch elements; an unbatched input beside it is sliced.
    Bb = rng.normal(size=(2 * devices, 4, K)).astype(np.float32)
    Ab = rng.normal(size=(2 * devices, 4, 24))
    results["vmap_batch_split"] = case(jax.vmap(m.rowsum), (put(Bb, "x"),), Bb.sum(2), rtol=1e-5)
    results["vmap_batch_unbatched"] = case(
        jax.vmap(m.matvec, in_axes=(0, None)), (put(Ab.astype(np.float32), "x"), put(v)), Ab @ v, rtol=1e-5
    )
    results["vmap_batch_linear"] = case(jax.vmap(m.mv, in_axes=(0, None)), (put(Ab, "x"), put(vd)), Ab @ vd)
    results["vmap_batch_grid"] = case(jax.vmap(m.rowsum), (put(Bb, "x", "y", on=grid),), Bb.sum(2), rtol=1e-5)
    # Inside a shard_map manual on 'x' only, the rows split along 'y'.
    partial = jax.shard_map(m.rowsum, mesh=grid, in_specs=P(), out_specs=P(), axis_names={"x"}, check_vma=False)
    results["partial_manual"] = case(partial, (put(x, "y", on=grid),), x.sum(1), rtol=1e-5)

    # A reduce dimension of extent 0 (the plain call: nothing to split).
    results["empty_reduce"] = case(
        m.matvec, (put(np.zeros((N, 0), np.float32), None, "x"), put(np.zeros(0, np.float32), "x")), np.zeros(N)
    )
    results["empty_count"] = case(m.count_pos, (put(np.zeros(0, np.float32), "x"),), np.zeros((), np.int32))
    # Errors quote the caller's shapes and name the kernel.
    results["errors"] = {
        "out": error(lambda a: m.rowsum(a, out=jax.ShapeDtypeStruct((N - 1,), np.float32)), (put(x, "x"),)),
        "mismatch": error(m.matvec, (put(A, "x"), put(v[:-1]))),
        "no_derivative": error(jax.grad(lambda a: m.rowsum(a).sum()), (put(x, "x"),)),
        "k_split": error(m.matvec, (put(A, None, "x"), put(v[: 24 - devices], "x"))),
        "vmap_out": error(
            jax.vmap(lambda a: m.rowsum(a, out=jax.ShapeDtypeStruct((N - 1,), np.float32))), (put(B, None, "x"),)
        ),
        "vmap_batch_out": error(
            jax.vmap(lambda a: m.rowsum(a, out=jax.ShapeDtypeStruct((3,), np.float32))), (put(Bb, "x"),)
        ),
    }

    # A spiking network: the membrane potential and the spikes split over
    # the population (the scan's carry), a recurrent weight matrix split by
    # rows, a constant input current as a numpy array.
    current = (0.3 + 0.2 * rng.random(N)).astype(np.float32)

    def network(v0, spikes0, weights, steps=6):
        def step(carry, _):
            u, s = carry
            u = m.add(m.add(0.9 * u, m.matvec(weights, s)), current)
            fired = (u > 1.0).astype(np.float32)
            return (u * (1.0 - fired), fired), fired

        return jax.lax.scan(step, (v0, spikes0), None, length=steps)[1]

    v0 = rng.random(N).astype(np.float32)
    W01 = (0.5 * rng.random((N, N)) / N).astype(np.float32)
    results["network"] = case(network, (put(v0, "x"), put(s0, "x"), put(W01, "x")), np.asarray(network(v0, s0, W01)))

elif mode.endswith("eager"):
    # Calls outside jit: each compiles modules of its own (the call, and
    # the slicing of its inputs), all read back from the dump.
    dump = Path(files) / "dump"

    def eager(f, args, ref):
        before = set(dump.glob("*after_optimizations.txt"))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = f(*args)
        text = "\n".join(p.read_text() for p in sorted(set(dump.glob("*after_optimizations.txt")) - before))
        counts = hlo_collectives.ops(text)
        return {
            "equal": bool(np.allclose(np.asarray(y), ref, rtol=1e-5, atol=1e-6)),
            "spec": str(y.sharding.spec) if isinstance(y.sharding, NamedSharding) else None,
            "warnings": [str(w.message) for w in caught if "gathered on every device" in str(w.message)],
            "collectives": {k: n for k, n in counts.items() if n},
            "calls": [operands(line) for line in text.splitlines() if 'custom_call_target="e2e' in line],
        }

    Bb = rng.normal(size=(2 * devices, 4, K)).astype(np.float32)
    results["eager_vmap"] = eager(jax.vmap(m.rowsum), (put(Bb, "x"),), Bb.sum(2))
    Br = rng.normal(size=(3, N, K)).astype(np.float32)
    results["eager_vmap_rows"] = eager(jax.vmap(m.rowsum), (put(Br, None, "x"),), Br.sum(2))
    results["eager_vjp"] = eager(lambda a: jax.vjp(m.square, a)[1](a)[0], (put(d, "x"),), 2 * d * d)
    results["eager_rows"] = eager(m.matvec, (put(A, "x"), put(v)), A @ v)

elif mode.endswith(("export", "deserialize")):
    # Each exported call: the function, its inputs (split as given), the
    # numbers it must give.
    x = rng.normal(size=(N, 6)).astype(np.float32)
    exports = {
        "matvec": (m.matvec, lambda: (put(A, "x"), put(v)), lambda: A @ v),
        "matvec_k": (m.matvec, lambda: (put(A, None, "x"), put(v, "x")), lambda: A @ v),
        "rowscale": (lambda a: m.rowscale(a, s=2.5), lambda: (put(x, "x"),), lambda: 2.5 * (x + np.arange(6))),
    }
    if mode.endswith("export"):
        from jax import export

        for name, (f, args, _) in exports.items():
            exported = export.export(jax.jit(f), disabled_checks=m.export_safety_checks())(*args())
            with open(f"{files}/{name}.bin", "wb") as file:
                file.write(exported.serialize())
        np.save(f"{files}/A.npy", A)
        np.save(f"{files}/v.npy", v)
        np.save(f"{files}/x.npy", x)
        results["exported"] = {"devices": exported.nr_devices}
    else:
        A, v, x = np.load(f"{files}/A.npy"), np.load(f"{files}/v.npy"), np.load(f"{files}/x.npy")
        results["deserialized"] = {}
        for name, (_, args, want) in exports.items():
            with open(f"{files}/{name}.bin", "rb") as file:
                exported = m.deserialize(bytearray(file.read()))
            y = exported.call(*args())
            text = jax.jit(exported.call).lower(*args()).compile().as_text()
            counts = hlo_collectives.ops(text)
            results["deserialized"][name] = {
                "equal": bool(np.allclose(np.asarray(y), want(), rtol=1e-5, atol=1e-5)),
                "spec": str(y.sharding.spec) if isinstance(y.sharding, NamedSharding) else str(y.sharding),
                "collectives": {k: n for k, n in counts.items() if n},
                "calls": [operands(line) for line in text.splitlines() if "custom_call_target=" in line],
            }

print(json.dumps(results))
