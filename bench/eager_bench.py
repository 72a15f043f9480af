"""Per-call cost of begen's generated functions against a cached plain
`jax.ffi.ffi_call` of the same target, side by side in one run: eagerly
(each call dispatched on its own) and under `jax.jit`.

Cases (the CPU e2e trees, built by the CLI): a plain untyped kernel
(`e2e_cpu.scale`), a typed one (`e2e_typed.axpy`), one with a `vjp:`
backward kernel (`e2e_algo.square`), a JAX primitive with a tangent kernel
(`e2e_prims.tanh_k`) and a tuned one (`tune.transpose`). The reference of
each is `jax.ffi.ffi_call(target, struct, ...)` made once and called with
the same arrays and the attribute already converted; begen's function is
called as a user would, with Python numbers.

Every round times each (case, variant) once, in a fresh random order, as
`--calls` calls each (the eager ones dispatched one by one, then waited
for); the figures are medians over `--rounds` rounds of microseconds per
call, and each ratio is begen / ffi_call. The goal: eager ratio <= 1.2 for
every case; under jit 1.0 (the same single custom call).

usage: python bench/eager_bench.py [--begen target/debug/begen] [--rounds 15]
       [--calls 200] [--n 16] [--out DIR]  (DIR: reuse the builds there)
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TREES = {"cpu": "e2e_cpu", "typed": "e2e_typed", "algo": "e2e_algo", "prims": "e2e_prims", "tune": "tune"}


def build(begen, out, platform):
    env = dict(os.environ, BEGEN_PYTHON=sys.executable)
    for tree, name in TREES.items():
        if not (out / tree / f"{name}.py").is_file():
            cmd = [begen, "build", REPO / "tests/e2e" / tree, "--out", out / tree, "--platform", platform, "--quiet"]
            subprocess.run(cmd, check=True, env=env)
        sys.path.insert(0, str(out / tree))


def cases(n, device):
    """(name, begen call, reference call) per case, each taking no argument."""
    import e2e_algo
    import e2e_cpu
    import e2e_prims
    import e2e_typed
    import jax
    import numpy as np
    import tune

    for m in (e2e_algo, e2e_cpu, e2e_prims, e2e_typed, tune):
        m.register()

    def ffi(module, key, shape, dtype, vmap="sequential"):
        return jax.ffi.ffi_call(module.TARGETS[key], jax.ShapeDtypeStruct(shape, dtype), vmap_method=vmap)

    f32 = jax.device_put(np.arange(n, dtype=np.float32), device)
    f64 = jax.device_put(np.arange(n, dtype=np.float64), device)
    sq = jax.device_put(np.ones((n, n), np.float32), device)
    out32 = jax.ShapeDtypeStruct((n,), np.float32)
    scale, axpy, square = (
        ffi(e2e_cpu, "scale", (n,), np.float32, "broadcast_all"),
        ffi(e2e_typed, "axpy", (n,), np.float32),
        ffi(e2e_algo, "square", (n,), np.float64),
    )
    tanh, transpose = ffi(e2e_prims, "tanh_k", (n,), np.float64), ffi(tune, "transpose[BLOCK=1]", (n, n), np.float32)
    two32, two64 = np.float32(2.0), np.float64(2.0)
    return [
        ("plain", lambda x: e2e_cpu.scale(x, alpha=2.0, out=out32), lambda x: scale(x, alpha=two32), f32),
        ("typed", lambda x: e2e_typed.axpy(x, x, a=2.0), lambda x: axpy(x, x, a=two32), f32),
        ("vjp", lambda x: e2e_algo.square(x, scale=2.0), lambda x: square(x, scale=two64), f64),
        ("primitive", lambda x: e2e_prims.tanh_k(x, s=2.0), lambda x: tanh(x, s=two64), f64),
        ("tuned", lambda x: tune.transpose(x), lambda x: transpose(x), sq),
    ]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--begen", default=str(REPO / "target/debug/begen"))
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--calls", type=int, default=200)
    p.add_argument("--n", type=int, default=16)
    p.add_argument("--out", help="a folder for the builds (kept; reused when they are there)")
    a = p.parse_args()
    out = Path(a.out) if a.out else Path(tempfile.mkdtemp(prefix="eager-bench-"))
    build(a.begen, out, "cpu")
    os.environ.setdefault("BEGEN_TUNE_DIR", str(out / "no-tables"))

    import jax
    import numpy as np

    jax.config.update("jax_enable_x64", True)
    device = jax.devices("cpu")[0]
    variants, names = {}, []
    for name, ours, ref, x in cases(a.n, device):
        names.append(name)
        np.testing.assert_array_equal(np.asarray(ours(x)), np.asarray(ref(x)))
        variants[(name, "eager", "begen")] = (ours, x)
        variants[(name, "eager", "ffi_call")] = (ref, x)
        variants[(name, "jit", "begen")] = (jax.jit(ours), x)
        variants[(name, "jit", "ffi_call")] = (jax.jit(ref), x)
    times = measure(variants, a.rounds, a.calls)
    report(times, names, device.device_kind, a)


def measure(variants, rounds, calls):
    """Microseconds per call of each variant ({key: (f, x)}): warmed up, then
    every round times each once, in a fresh random order, as `calls` calls
    dispatched one by one and then waited for."""
    for f, x in variants.values():  # compile and warm up
        for _ in range(20):
            f(x).block_until_ready()
    times = {k: [] for k in variants}
    order = list(variants)
    rng = random.Random(0)
    for _ in range(rounds):
        rng.shuffle(order)
        for k in order:
            f, x = variants[k]
            t0 = time.perf_counter()
            for _ in range(calls):
                y = f(x)
            y.block_until_ready()
            times[k].append((time.perf_counter() - t0) / calls * 1e6)
    return times


def report(times, names, device_kind, a):
    """The table: per case and mode, medians and begen / ffi_call ratios."""
    import jax

    print(
        f"device: {device_kind} ({os.cpu_count()} CPUs); jax {jax.__version__}; n={a.n}; "
        f"{a.calls} calls per timing, {a.rounds} interleaved rounds; us/call, median"
    )
    print(f"{'case':<11}{'mode':<7}{'begen':>10}{'ffi_call':>10}{'ratio':>8}{'paired':>8}")
    worst = 0.0
    for name in names:
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
