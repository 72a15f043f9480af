"""The calls of tests/e2e/transformer on 4 CPU devices, run in a fresh process
by tests/python/test_e2e_transformer.py (a device count is fixed when JAX's
backend starts): `python transformer_cases.py OUT MODE` prints one JSON
object, a case per key, each with whether the numbers equal jax.numpy's,
the result's sharding type, and from the compiled HLO the collectives and
the custom calls' operand shapes.

MODE is `explicit` (jax.make_mesh's default axes, the calls under
jax.set_mesh, as a data-parallel training step makes them) or `auto`.
"""

import json
import re
import sys
import warnings

import numpy as np

out_dir, mode = sys.argv[1], sys.argv[2]
sys.path.insert(0, out_dir)

import jax

jax.config.update("jax_num_cpu_devices", 4)
import e2e_transformer as m
import hlo_collectives
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

axis_type = AxisType.Auto if mode == "auto" else AxisType.Explicit
mesh = jax.make_mesh((4,), ("data",), axis_types=(axis_type,))
rng = np.random.default_rng(0)


def put(a, *spec):
    return jax.device_put(a, NamedSharding(mesh, P(*spec)))


def operands(line):
    # A custom call's target and operand shapes, as its layout constraints list them.
    target = re.search(r'custom_call_target="([^"]+)"', line).group(1)
    constraints = line.split("operand_layout_constraints={", 1)[-1].split(", api_version", 1)[0]
    return [target, re.findall(r"[a-z]+\d*\[[\d,]*\]", constraints)]


def case(f, args, ref, rtol=1e-4):
    # The jitted call's numbers against `ref` (jax.numpy's, unsplit), its
    # type and its compiled HLO's collectives and custom calls.
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = jax.jit(f)(*args)
            text = jax.jit(f).lower(*args).compile().as_text()
    except Exception as e:  # reported, not raised: the test names the case
        return {"error": f"{type(e).__name__}: {e}"}
    ys = y if isinstance(y, tuple) else (y,)
    refs = ref if isinstance(ref, tuple) else (ref,)
    counts = hlo_collectives.ops(text)
    return {
        "equal": all(np.allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-5) for a, b in zip(ys, refs)),
        "type": [str(jax.typeof(a)) for a in ys],
        "collectives": {k: v for k, v in counts.items() if v},
        "calls": [operands(line) for line in text.splitlines() if 'custom_call_target="e2e_transformer' in line],
        "op_names": [
            re.search(r'op_name="([^"]*)"', line).group(1)
            for line in text.splitlines()
            if 'custom_call_target="e2e_transformer' in line
        ],
    }


def rms_ref(a, eps=1e-5):
    return a * jax.lax.rsqrt((a * a).mean(-1, keepdims=True) + eps)


results = {}
x = rng.normal(size=(16, 32)).astype(np.float32)
c = rng.normal(size=(32, 8, 32)).astype(np.float32)
with jax.set_mesh(mesh):
    # RMSNorm with `residuals: [rstd]` and `shard: [n]`: per shard, forward
    # and backward, rows split.
    rms_loss = lambda f: lambda a: (f(a) ** 2 * a).sum()
    results["rms_forward"] = case(m.rmsnorm, (put(x, "data"),), rms_ref(x))
    results["rms_grad"] = case(jax.grad(rms_loss(m.rmsnorm)), (put(x, "data"),), jax.grad(rms_loss(rms_ref))(x))
    results["rms_value_and_grad"] = case(
        jax.value_and_grad(rms_loss(m.rmsnorm)), (put(x, "data"),), jax.value_and_grad(rms_loss(rms_ref))(x)
    )
    # A backward kernel with no `shard:`: the gradient has the input's split.
    cube_loss = lambda f: lambda a: (f(a) * a).sum()
    results["cube_forward"] = case(m.cube, (put(c, "data"),), c**3)
    results["cube_grad"] = case(jax.grad(cube_loss(m.cube)), (put(c, "data"),), 4 * c**3)
    results["cube_grad_replicated"] = case(jax.grad(cube_loss(m.cube)), (put(c),), 4 * c**3)
    # Softmax cross-entropy over int32 labels: the backward kernel returns
    # the logits' cotangent only. Data-parallel: the batch split.
    logits = rng.normal(size=(16, 10)).astype(np.float32)
    labels = rng.integers(0, 10, size=16).astype(np.int32)

    def xent_ref(lg, lb):
        return jax.nn.logsumexp(lg, axis=-1) - jnp.take_along_axis(lg, lb[:, None], axis=-1)[:, 0]

    xent_loss = lambda f: lambda lg, lb: f(lg, lb).mean()
    results["xent_grad"] = case(
        jax.grad(xent_loss(m.xent)),
        (put(logits, "data"), put(labels, "data")),
        jax.grad(xent_loss(xent_ref))(logits, labels),
    )

print(json.dumps(results))
