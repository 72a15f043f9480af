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
import random
import statistics
import sys
import time


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
    variants = {}
    for name, ours, ref in cases:
        np.testing.assert_array_equal(np.asarray(ours(x)), np.asarray(x) + 1)
        np.testing.assert_array_equal(np.asarray(ref(x)), np.asarray(x) + 1)
        variants[(name, "eager", "begen")] = ours
        variants[(name, "eager", "ffi_call")] = ref
        variants[(name, "jit", "begen")] = jax.jit(ours)
        variants[(name, "jit", "ffi_call")] = jax.jit(ref)
    for f in variants.values():
        for _ in range(20):
            f(x).block_until_ready()
    times = {k: [] for k in variants}
    order = list(variants)
    rng = random.Random(0)
    for _ in range(a.rounds):
        rng.shuffle(order)
        for k in order:
            f = variants[k]
            t0 = time.perf_counter()
            for _ in range(a.calls):
                y = f(x)
            y.block_until_ready()
            times[k].append((time.perf_counter() - t0) / a.calls * 1e6)
    print(
        f"device: {gpu.device_kind} ({os.cpu_count()} CPUs); jax {jax.__version__}; n={a.n}; "
        f"{a.calls} calls per timing, {a.rounds} interleaved rounds; us/call, median"
    )
    print(f"{'case':<11}{'mode':<7}{'begen':>10}{'ffi_call':>10}{'ratio':>8}{'paired':>8}")
    worst = 0.0
    for name, _, _ in cases:
        for mode in ("eager", "jit"):
            ours, ref = times[(name, mode, "begen")], times[(name, mode, "ffi_call")]
            r = statistics.median(ours) / statistics.median(ref)
            paired = statistics.median(o / f for o, f in zip(ours, ref))
            if mode == "eager":
                worst = max(worst, r)
            print(
                f"{name:<11}{mode:<7}{statistics.median(ours):>10.1f}{statistics.median(ref):>10.1f}"
                f"{r:>7.2f}x{paired:>7.2f}x"
            )
    print(f"worst eager ratio: {worst:.2f}x (goal <= 1.2x)")


if __name__ == "__main__":
    main()
