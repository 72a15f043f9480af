"""Sharding on GPUs, side by side in one run (scripts/gpu-check.sh steps
`bench` and `multigpu`).

1. Per-call cost of an unsplit call: `inc_cuda` (declares `shard: [n]`)
   against `inc_cuda_plain` (declares nothing) on one GPU's arrays: the same
   custom call, so the ratio must be 1: declaring a split costs nothing per call.
2. Scaling, on 2+ GPUs: the time of one step of the row-split kernels
   (`rowscale_cuda`, `csr_rows_cuda`) on 1 GPU and on every GPU (split with
   `shard:`), against the same kernel without `shard:` on every GPU (its
   inputs gathered onto each GPU: the baseline before sharding). Strong
   scaling keeps the global size; weak scaling keeps the size per GPU.
   Measured as users run: `--inner` steps inside one `jit` (a
   `lax.fori_loop` whose carry depends on every step's outputs), so one
   dispatch serves many steps; ms per step is a loop's time over `--inner`,
   median of `--steps` loops.
3. Where the time goes (`--where`), for the strong-scaling split: each GPU
   alone running its own block (a slower GPU bounds the split step), all
   GPUs running their blocks as independent one-GPU programs dispatched
   together (no SPMD program: the best a split can do), and the split step
   itself, with `--inner` and 4x `--inner` steps per jit (a cost per
   dispatch shrinks per step; a cost per step does not).

4. A step's fixed and per-row cost (`--fit`, one GPU): t(rows) = a + b rows
   fitted over four sizes, with 1 and 8 steps per loop iteration; `a`
   bounds strong scaling.

usage: python bench/gpu/sharding.py OUT [--rounds 300] [--steps 20] [--inner 100] [--where | --fit]
"""

import argparse
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from interleaved import chained, ratio, run, table
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P


def per_call(m, rounds):
    x0 = jnp.zeros((1024,), jnp.float32)
    for fn, target in ((m.inc_cuda, "inc_cuda"), (m.inc_cuda_plain, "inc_cuda_plain")):
        hlo = jax.jit(fn).lower(x0).compile().as_text()
        assert hlo.count("custom_call_target=") == 1 and f'"e2e_sharding.{target}"' in hlo, target
    times = run({"shard: [n]": chained(m.inc_cuda), "no shard:": chained(m.inc_cuda_plain)}, x0, rounds)
    table(times, rounds, 1024)
    ratio(times, "shard: [n]", "no shard:", "declared / undeclared, unsplit call")


def step_time(f, feed, args, steps, inner, unroll=1):
    # ms per step: `inner` calls of f in one jitted fori_loop, each step's
    # inputs made from the last step's outputs by `feed` (a true data
    # dependency: XLA can neither drop a call nor hoist it out of the loop).
    def body(_, carry):
        return feed(carry, f(*carry))

    loop = jax.jit(lambda *a: jax.lax.fori_loop(0, inner, body, a, unroll=unroll))
    for _ in range(2):
        jax.block_until_ready(loop(*args))
    ts = []
    for _ in range(steps):
        t0 = time.perf_counter()
        jax.block_until_ready(loop(*args))
        ts.append((time.perf_counter() - t0) * 1e3 / inner)
    return statistics.median(ts)


def workload(m, name, rows, put, rng):
    # (args, (split fn, undeclared fn), feed) of one kernel at `rows` rows.
    if name == "rowscale_cuda":
        x = rng.normal(size=(rows, 64)).astype(np.float32)
        fs = (lambda a: m.rowscale_cuda(a, s=2.0), lambda a: m.rowscale_cuda_plain(a, s=2.0))
        # y = 2x feeds the next step, as a recurrent update would.
        return (put(x, "x"),), fs, lambda carry, y: (y,)
    b, r, per_row = rows // 1024, 1024, 8
    indptr = np.tile(np.arange(0, r * per_row + 1, per_row, dtype=np.int32), (b, 1))
    indices = rng.integers(0, 1 << 16, size=(b, r * per_row)).astype(np.int32)
    data = rng.normal(size=(b, r * per_row)).astype(np.float32)
    v = rng.normal(size=1 << 16).astype(np.float32)
    out = jax.ShapeDtypeStruct((b, r), np.float32)
    fs = (
        lambda d, i, p, w, out=out: m.csr_rows_cuda(d, i, p, w, out=out),
        lambda d, i, p, w, out=out: m.csr_rows_cuda_plain(d, i, p, w, out=out),
    )

    # Each row block's first offset takes 0 * its first output: a
    # per-block update (no communication) the next step reads.
    def feed(carry, y):
        d, i, p, w = carry
        return d, i, p.at[:, 0].add((y[:, 0] * 0).astype(p.dtype)), w

    return (put(data, "x"), put(indices, "x"), put(indptr, "x"), put(v)), fs, feed


def scaling(m, steps, inner, size, kinds=("strong", "weak"), gather=True):
    G = jax.device_count()
    rng = np.random.default_rng(0)
    one = jax.make_mesh((1,), ("x",), devices=jax.devices()[:1])
    every = jax.make_mesh((G,), ("x",))
    print(
        f"\nscaling: {G} GPUs ({jax.devices()[0].device_kind}); ms per step, {inner} steps per jit, median of {steps}"
    )
    print(f"{'kernel':<16}{'rows':>12}{'1 GPU':>10}{f'{G} GPUs':>10}{'no shard:':>11}{'speed-up':>10}{'vs gather':>11}")
    for label, rows_per_gpu_1, rows_per_gpu_g in (("strong", size, size // G), ("weak", size, size)):
        if label not in kinds:
            continue
        for name in ("rowscale_cuda", "csr_rows_cuda"):
            results = []
            for mesh, rows in ((one, rows_per_gpu_1), (every, rows_per_gpu_g * G)):
                put = lambda a, *spec, mesh=mesh: jax.device_put(a, NamedSharding(mesh, P(*spec)))
                args, fs, feed = workload(m, name, rows, put, rng)
                results.append([step_time(f, feed, args, steps, inner) for f in (fs if gather else fs[:1])] + [0.0])
            (t1, *_), (tg, tplain, *_) = results
            print(
                f"{name + ' ' + label:<16}{rows_per_gpu_g * G:>12}{t1:>10.3f}{tg:>10.3f}{tplain:>11.3f}"
                f"{t1 / tg:>10.2f}{tplain / tg if gather else float('nan'):>11.2f}"
            )


def where(m, steps, inner, size):
    # The strong split's step, taken apart (see the module's docstring).
    G = jax.device_count()
    rng = np.random.default_rng(0)
    print(f"\nwhere the time goes: strong split of {size} rows over {G} GPUs; ms per step, median of {steps}")
    for name in ("rowscale_cuda", "csr_rows_cuda"):
        rows = size // G
        alone = []
        loops = []
        for d in jax.devices():
            mesh = jax.make_mesh((1,), ("x",), devices=[d])
            put = lambda a, *spec, mesh=mesh: jax.device_put(a, NamedSharding(mesh, P(*spec)))
            args, fs, feed = workload(m, name, rows, put, rng)
            alone.append(step_time(fs[0], feed, args, steps, inner))
            body = lambda _, carry, f=fs[0], feed=feed: feed(carry, f(*carry))
            loop = jax.jit(lambda *a, body=body: jax.lax.fori_loop(0, inner, body, a))
            jax.block_until_ready(loop(*args))
            loops.append((loop, args))
        ts = []
        for _ in range(steps):
            t0 = time.perf_counter()
            outs = [loop(*args) for loop, args in loops]
            jax.block_until_ready(outs)
            ts.append((time.perf_counter() - t0) * 1e3 / inner)
        together = statistics.median(ts)
        every = jax.make_mesh((G,), ("x",))
        put = lambda a, *spec, mesh=every: jax.device_put(a, NamedSharding(mesh, P(*spec)))
        args, fs, feed = workload(m, name, size, put, rng)
        split = step_time(fs[0], feed, args, steps, inner)
        split4 = step_time(fs[0], feed, args, max(steps // 4, 3), 4 * inner)
        print(f"{name}: each GPU alone " + " ".join(f"{t:.3f}" for t in alone))
        print(
            f"{name}: {G} one-GPU programs together {together:.3f}; split {split:.3f} ({inner} steps per jit), "
            f"{split4:.3f} ({4 * inner} steps per jit)"
        )


def fit(m, steps, inner, size):
    # A step's time on one GPU against its rows, t(n) = a + b n (least
    # squares over size/8 .. size): `a` is what a step costs whatever its
    # size (launches, the loop, the feed), which a split cannot divide, and
    # it bounds strong scaling on G GPUs at t(N) / t(N/G). Twice: one step
    # per loop iteration, and 8 steps per iteration (`unroll`), which
    # removes most of the loop's own cost from `a`.
    rng = np.random.default_rng(0)
    one = jax.make_mesh((1,), ("x",), devices=jax.devices()[:1])
    put = lambda a, *spec: jax.device_put(a, NamedSharding(one, P(*spec)))
    sizes = [size >> s for s in (3, 2, 1, 0)]
    print(f"\nfit: t(rows) = a + b rows on 1 GPU; ms per step, {inner} steps per jit, median of {steps}")
    print(
        f"{'kernel':<16}{'unroll':>7}"
        + "".join(f"{n:>10}" for n in sizes)
        + f"{'a us':>8}{'b ns/row':>10}{'bound 2':>8}{'bound 4':>8}"
    )
    for name in ("rowscale_cuda", "csr_rows_cuda"):
        for unroll in (1, 8):
            ts = []
            for n in sizes:
                args, fs, feed = workload(m, name, n, put, rng)
                ts.append(step_time(fs[0], feed, args, steps, inner, unroll))
            b, a = np.polyfit(np.array(sizes, float), np.array(ts), 1)
            bound = lambda g, a=a, b=b: (a + b * size) / (a + b * size / g)
            print(
                f"{name:<16}{unroll:>7}"
                + "".join(f"{t:>10.4f}" for t in ts)
                + f"{a * 1e3:>8.1f}{b * 1e6:>10.4f}{bound(2):>8.2f}{bound(4):>8.2f}"
            )


def main():
    p = argparse.ArgumentParser()
    p.add_argument("begen_out")
    p.add_argument("--rounds", type=int, default=300)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--inner", type=int, default=100)
    p.add_argument("--rows", type=int, default=1 << 23, help="rows of the 1-GPU problem (k = 64 columns)")
    p.add_argument("--where", action="store_true", help="only the strong split's step, taken apart")
    p.add_argument("--fit", action="store_true", help="only a step's fixed and per-row cost on 1 GPU")
    p.add_argument("--only", choices=("strong", "weak"), help="one kind of scaling row")
    p.add_argument("--no-gather", action="store_true", help="skip the gather-everything baseline (slow at large sizes)")
    a = p.parse_args()
    sys.path.insert(0, a.begen_out)
    import e2e_sharding as m

    if a.where:
        where(m, a.steps, a.inner, a.rows)
        return
    if a.fit:
        fit(m, a.steps, a.inner, a.rows)
        return
    if a.rounds:
        per_call(m, a.rounds)
    if jax.device_count() > 1:
        kinds = (a.only,) if a.only else ("strong", "weak")
        scaling(m, a.steps, a.inner, a.rows, kinds, gather=not a.no_gather)
    else:
        print("\nscaling: 1 GPU; the scaling rows need 2 or more (scripts/gpu-check.sh step `multigpu`)")


if __name__ == "__main__":
    main()
