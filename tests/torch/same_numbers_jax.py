"""The JAX side of test_same_numbers.py, run by the Python that has jax:

    python same_numbers_jax.py PLAN.json INPUTS.npz RESULTS.npz

PLAN.json lists, per tree, the built OUT, the JAX module's name and the
calls: the typed function, its positional inputs and keywords, an out=
op's outputs (`out`: [shape, dtype] each, given as `jax.ShapeDtypeStruct`s,
a tuple for several), the inputs differentiated (`wrt`) and, per output,
the cotangent's key (None for an output torch gives no gradient: an integer
one). Each call runs forward and, with `wrt`, `jax.vjp` on the same arrays
torch ran on (INPUTS.npz);
RESULTS.npz gets `ID.oJ` (output J) and `ID.gK` (the gradient of input K),
and `errors` (a JSON text) says why a tree or call gave nothing. bfloat16
travels as its bits (uint16): the keys listed in the plan's `bfloat16`, and
in RESULTS.npz's `bfloat16`.
"""

import importlib
import json
import sys
import traceback

import jax
import ml_dtypes
import numpy as np

jax.config.update("jax_enable_x64", True)


def main(plan_path, inputs_path, results_path):
    with open(plan_path) as f:
        plan = json.load(f)
    given = np.load(inputs_path)
    bf16 = set(plan["bfloat16"])

    def load(key):
        a = given[key]
        return a.view(ml_dtypes.bfloat16) if key in bf16 else a

    results, errors, bits = {}, {}, []

    def keep(key, value):
        a = np.asarray(value)
        if a.dtype == ml_dtypes.bfloat16:
            a = a.view(np.uint16)
            bits.append(key)
        results[key] = a

    for tree in plan["trees"]:
        sys.path.insert(0, tree["out"])
        try:
            module = importlib.import_module(tree["module"])
        except Exception:
            errors[tree["tree"]] = traceback.format_exc(limit=3)
            continue
        finally:
            sys.path.remove(tree["out"])
        for call in tree["calls"]:
            try:
                run(module, call, load, keep)
            except Exception as e:
                errors[call["id"]] = f"{type(e).__name__}: {e}".splitlines()[0]
    results["errors"] = np.array(json.dumps(errors))
    results["bfloat16"] = np.array(json.dumps(bits))
    np.savez(results_path, **results)


def run(module, call, load, keep):
    fn = module
    for part in call["call"].split("."):
        fn = getattr(fn, part)
    args = [load(f"{call['id']}.a{k}") for k in range(call["args"])]
    kwargs = dict(call["kwargs"])
    if call.get("out") is not None:
        out = tuple(jax.ShapeDtypeStruct(tuple(shape), dtype) for shape, dtype in call["out"])
        kwargs["out"] = out[0] if len(out) == 1 else out
    wrt = call["wrt"]
    if not wrt:
        outs = jax.tree.leaves(fn(*args, **kwargs))
        for j, o in enumerate(outs):
            keep(f"{call['id']}.o{j}", o)
        return

    def f(*diff):
        full = list(args)
        for k, x in zip(wrt, diff):
            full[k] = x
        return fn(*full, **kwargs)

    out, vjp = jax.vjp(f, *[args[k] for k in wrt])
    outs, tree = jax.tree.flatten(out)
    if len(outs) != len(call["cts"]):
        raise ValueError(f"{len(outs)} outputs from JAX, {len(call['cts'])} from torch")
    cts = []
    for o, key in zip(outs, call["cts"]):
        # An output with no cotangent (an integer one): float0 zeros.
        cts.append(np.zeros(o.shape, jax.dtypes.float0) if key is None else load(key))
    grads = vjp(jax.tree.unflatten(tree, cts))
    for j, o in enumerate(outs):
        keep(f"{call['id']}.o{j}", o)
    for k, g in zip(wrt, grads):
        keep(f"{call['id']}.g{k}", g)


if __name__ == "__main__":
    main(*sys.argv[1:])
