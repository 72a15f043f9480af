"""Per-call cost of a begen JAX primitive against today's plain binding of
the same kernel (the goal: no per-call cost), side by side in one run.

tests/gpu/prims_bench builds `inc` (plain) and `inc_p` (the same kernel with
a tangent kernel, so its Python function binds a primitive), and both again
CUDA-graph compatible. The compiled HLO of both is checked to be one custom
call each, then CHAIN chained calls per jit are timed in interleaved rounds.

usage: python bench/gpu/prims_overhead.py OUT [--rounds 300] [--n 1024]
"""

import argparse
import re
import sys

import jax
import jax.numpy as jnp
from interleaved import chained, ratio, run, table


def main():
    p = argparse.ArgumentParser()
    p.add_argument("begen_out")
    p.add_argument("--rounds", type=int, default=300)
    p.add_argument("--n", type=int, default=1024)
    a = p.parse_args()
    sys.path.insert(0, a.begen_out)
    import gpu_prims_bench as m

    x0 = jnp.zeros((a.n,), jnp.float32)
    # The primal's HLO: the same single custom call (the target name apart).
    for fn, target in ((m.inc, "inc"), (m.inc_p, "inc_p")):
        hlo = jax.jit(fn).lower(x0).compile().as_text()
        calls = re.findall(r'custom_call_target="([\w.]+)"', hlo)
        assert calls == [f"gpu_prims_bench.{target}"], (target, calls)
    y, t = jax.jvp(m.inc_p, (x0,), (jnp.ones_like(x0),))
    assert float(y.sum()) == a.n and float(t.sum()) == a.n

    variants = {
        "binding": chained(m.inc),
        "primitive": chained(m.inc_p),
        "binding+graph": chained(m.inc_graph),
        "primitive+graph": chained(m.inc_p_graph),
    }
    times = run(variants, x0, a.rounds)
    table(times, a.rounds, a.n)
    ratio(times, "primitive", "binding", "primitive / binding")
    ratio(times, "primitive+graph", "binding+graph", "primitive / binding, CUDA graphs")


if __name__ == "__main__":
    main()
