"""Per-call cost of begen's generated functions called eagerly on a GPU,
against a cached plain `jax.ffi.ffi_call` of the same target, side by side
in one run (the GPU twin of bench/eager_bench.py).

bench/gpu/eager/ holds one CUDA kernel (y = x + 1) bound five ways: plain
(untyped, out= given), typed, with a `vjp:` backward kernel, as a JAX
primitive (a tangent kernel) and tuned. Every round times each (case,
variant) once, in a fresh random order, as CALLS calls dispatched one by
one and then waited for; medians of microseconds per call over the rounds,
each ratio begen / ffi_call (goal: eager <= 1.2; under jit 1.0).

usage: begen build bench/gpu/eager --out OUT
       python bench/gpu/eager_overhead.py OUT [--rounds 30] [--calls 300] [--n 1024]
"""

import argparse
import os
import sys
from pathlib import Path


def main():
    p = argparse.ArgumentParser()
    p.add_argument("begen_out")
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--calls", type=int, default=300)
    p.add_argument("--n", type=int, default=1024)
    a = p.parse_args()
    os.environ.setdefault("BEGEN_TUNE_DIR", os.path.join(a.begen_out, "no-tables"))
    sys.path.insert(0, a.begen_out)
    import gpu_eager_bench as m
    import jax
    import numpy as np

    m.register()
    gpu = jax.devices("gpu")[0]
    x = jax.device_put(np.arange(a.n, dtype=np.float32), gpu)
    struct = jax.ShapeDtypeStruct((a.n,), np.float32)

    def ffi(key):
        return jax.ffi.ffi_call(m.TARGETS[key], struct, vmap_method="sequential")

    cases = [
        ("plain", lambda x: m.inc_plain(x, out=struct), ffi("inc_plain")),
        ("typed", m.inc_typed, ffi("inc_typed")),
        ("vjp", m.inc_vjp, ffi("inc_vjp")),
        ("primitive", m.inc_p, ffi("inc_p")),
        ("tuned", m.inc_tuned, ffi("inc_tuned[THREADS=256]")),
    ]
    variants, names = {}, []
    for name, ours, ref in cases:
        np.testing.assert_array_equal(np.asarray(ours(x)), np.asarray(x) + 1)
        np.testing.assert_array_equal(np.asarray(ref(x)), np.asarray(x) + 1)
        names.append(name)
        variants[(name, "eager", "begen")] = (ours, x)
        variants[(name, "eager", "ffi_call")] = (ref, x)
        variants[(name, "jit", "begen")] = (jax.jit(ours), x)
        variants[(name, "jit", "ffi_call")] = (jax.jit(ref), x)
    # The CPU benchmark's timing and table, so both measure alike.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from eager_bench import measure, report

    report(measure(variants, a.rounds, a.calls), names, gpu.device_kind, a)


if __name__ == "__main__":
    main()
