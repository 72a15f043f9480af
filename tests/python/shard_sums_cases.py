"""The calls of tests/e2e/shard_sums on several CPU devices, run in a fresh
process by tests/python/test_e2e_shard_sums.py (the device count is fixed
when JAX's backend starts): `python shard_sums_cases.py OUT DEVICES MODE [FILES]`
prints one JSON object, a case per key, each with whether every output
equals jnp's reference, its outputs' PartitionSpecs, the begen warnings
the call raised, and from the compiled HLO the collectives and the custom
calls' operand shapes. MODE is `explicit` or `auto` (the mesh's axis type);
`export`/`auto-export` export the backward calls to FILES, and
`deserialize`/`auto-deserialize` run them in this fresh process.
"""

import json
import re
import sys
import warnings

import numpy as np

out_dir, devices, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
files = sys.argv[4] if len(sys.argv) > 4 else out_dir
sys.path.insert(0, out_dir)

import jax

jax.config.update("jax_num_cpu_devices", devices)
import e2e_shard_sums as m
import hlo_collectives
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

axis_type = AxisType.Auto if mode.startswith("auto") else AxisType.Explicit
mesh = jax.make_mesh((devices,), ("x",), axis_types=(axis_type,))
rng = np.random.default_rng(0)
N, D = 4 * devices, 6
EPS = 1e-5


def put(a, *spec):
    return jax.device_put(a, NamedSharding(mesh, P(*spec)))


def operands(line):
    target = re.search(r'custom_call_target="([^"]+)"', line).group(1)
    constraints = line.split("operand_layout_constraints={", 1)[-1].split(", api_version", 1)[0]
    return [target, re.findall(r"[a-z]+\d*\[[\d,]*\]", constraints)]


def case(f, args, want):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = jax.jit(f)(*args)
            text = jax.jit(f).lower(*args).compile().as_text()
        except Exception as e:  # reported, not raised: the test names the case
            return {"error": f"{type(e).__name__}: {e}"}
    got = got if isinstance(got, (tuple, list)) else (got,)
    want = want if isinstance(want, (tuple, list)) else (want,)
    specs = [str(g.sharding.spec) if isinstance(g.sharding, NamedSharding) else None for g in got]
    return {
        "close": [bool(np.allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-5)) for g, w in zip(got, want)],
        "specs": specs,
        "collectives": {k: v for k, v in hlo_collectives.ops(text).items() if v},
        "calls": [operands(line) for line in text.splitlines() if "custom_call_target=" in line],
        "warnings": [str(w.message) for w in caught if "gathered on every device" in str(w.message)],
    }


def rms_ref(x, w):
    rstd = 1 / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + EPS)
    return x * rstd * w


x = rng.normal(size=(N, D)).astype(np.float32)
w = rng.normal(size=D).astype(np.float32)
ct = rng.normal(size=(N, D)).astype(np.float32)
rstd = (1 / np.sqrt(np.mean(x * x, axis=-1) + EPS)).astype(np.float32)
_, pullback = jax.vjp(rms_ref, x, w)
ref_ct_x, ref_ct_w = pullback(ct)

if mode.endswith(("export", "deserialize")):
    # The backward kernels exported (rows split, ct_w summed), and run after
    # deserializing in a fresh process: still split, still one all-reduce.
    B, R = devices, 3
    xr = rng.normal(size=(B, R, D)).astype(np.float32)
    ctr = rng.normal(size=(B, R, D)).astype(np.float32)
    exports = {
        "bwd": (m.rms_norm_bwd, lambda: (put(x, "x"), put(w), put(rstd, "x"), put(ct, "x")), (ref_ct_x, ref_ct_w)),
        "rest_bwd": (m.rms_rows_grad, lambda: (put(xr, "x"), put(w), put(ctr, "x")), jax.vjp(rms_ref, xr, w)[1](ctr)),
    }
    results = {}
    if mode.endswith("export"):
        from jax import export

        for name, (f, args, _) in exports.items():
            exported = export.export(jax.jit(f), disabled_checks=m.export_safety_checks())(*args())
            with open(f"{files}/{name}.bin", "wb") as file:
                file.write(exported.serialize())
            results[name] = {"devices": exported.nr_devices}
    else:
        for name, (_, args, want) in exports.items():
            with open(f"{files}/{name}.bin", "rb") as file:
                exported = m.deserialize(bytearray(file.read()))
            got = exported.call(*args())
            text = jax.jit(exported.call).lower(*args()).compile().as_text()
            results[name] = {
                "close": [
                    bool(np.allclose(np.asarray(g), np.asarray(r), rtol=1e-4, atol=1e-5)) for g, r in zip(got, want)
                ],
                "collectives": {k: v for k, v in hlo_collectives.ops(text).items() if v},
                "calls": [operands(line) for line in text.splitlines() if "custom_call_target=" in line],
            }
    print(json.dumps(results))
    sys.exit(0)

results = {
    # The backward kernel called directly on rows split across devices.
    "bwd": case(m.rms_norm_bwd, (put(x, "x"), put(w), put(rstd, "x"), put(ct, "x")), (ref_ct_x, ref_ct_w)),
    "forward": case(m.rms, (put(x, "x"), put(w)), rms_ref(x, w)),
    # The gradient of both inputs through rms's backward kernel.
    "grad": case(
        jax.grad(lambda a, b, c: (m.rms(a, b) * c).sum(), argnums=(0, 1)),
        (put(x, "x"), put(w), put(ct, "x")),
        (ref_ct_x, ref_ct_w),
    ),
}
# A named rest `rows...`: x of shape (B, R, D), its leading (B, R) split
# along either axis.
B, R = devices, 3
xr = rng.normal(size=(B, R, D)).astype(np.float32)
ctr = rng.normal(size=(B, R, D)).astype(np.float32)
_, pullback_r = jax.vjp(rms_ref, xr, w)
ref_r = pullback_r(ctr)
xt = np.ascontiguousarray(xr.transpose(1, 0, 2))  # (R, B, D): the split on the second axis
ctt = np.ascontiguousarray(ctr.transpose(1, 0, 2))
_, pullback_t = jax.vjp(rms_ref, xt, w)
grad_rows = jax.grad(lambda a, b, c: (m.rms_rows(a, b) * c).sum(), argnums=(0, 1))
inv = 1 / np.sqrt(np.mean(xr * xr, axis=-1) + EPS)
results.update(
    {
        "rest_forward": case(m.rms_rows, (put(xr, "x"), put(w)), rms_ref(xr, w)),
        "rest_forward_axis1": case(m.rms_rows, (put(xt, None, "x"), put(w)), rms_ref(xt, w)),
        "rest_grad": case(grad_rows, (put(xr, "x"), put(w), put(ctr, "x")), ref_r),
        "rest_grad_axis1": case(grad_rows, (put(xt, None, "x"), put(w), put(ctt, None, "x")), pullback_t(ctt)),
        "rest_bwd": case(m.rms_rows_grad, (put(xr, "x"), put(w), put(ctr, "x")), ref_r),
        "rms_norm": case(m.rms_norm, (put(xr, "x"),), (xr * inv[..., None], inv)),
        "rest_undeclared": case(m.rms_rows_plain, (put(xr, "x"), put(w)), rms_ref(xr, w)),
    }
)
print(json.dumps(results))
