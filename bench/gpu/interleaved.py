"""The timing harness of the per-call benchmarks (ffi_overhead.py,
binary_overhead.py): each variant is CHAIN calls chained in one `jax.jit`;
every round runs each variant once, in a fresh random order, so neither the
position in a round nor drift over time favours one of them.
"""

import random
import statistics
import time

import jax
import numpy as np

CHAIN = 500


def chained(call):
    """A jit of CHAIN calls of `call`, each taking the previous result."""

    @jax.jit
    def f(x):
        for _ in range(CHAIN):
            x = call(x)
        return x

    return f


def run(variants, x0, rounds):
    """Checks every variant (each adds 1 per call), warms it up, then times
    `rounds` interleaved rounds: microseconds per call, per variant."""
    for name, f in variants.items():
        y = np.asarray(f(x0))
        assert np.all(y == CHAIN), (name, y[:4])
        for _ in range(5):
            f(x0).block_until_ready()
    rng = random.Random(0)
    names = list(variants)
    times = {name: [] for name in variants}
    for _ in range(rounds):
        rng.shuffle(names)
        for name in names:
            t0 = time.perf_counter()
            variants[name](x0).block_until_ready()
            times[name].append((time.perf_counter() - t0) / CHAIN * 1e6)
    return times


def table(times, rounds, n):
    print(f"device: {jax.devices()[0].device_kind}; jax {jax.__version__}; "
          f"{CHAIN} calls per jit, {rounds} interleaved rounds, n={n}")
    width = max(14, max(map(len, times)) + 2)
    print(f"{'variant':<{width}}{'us/call (median)':>18}{'p25':>9}{'p75':>9}{'min':>9}")
    for k, ts in times.items():
        q = statistics.quantiles(ts, n=4)
        print(f"{k:<{width}}{statistics.median(ts):>18.3f}{q[0]:>9.3f}{q[2]:>9.3f}{min(ts):>9.3f}")


def ratio(times, a, b, label=None):
    """a / b as the ratio of the medians and as the median of the per-round
    ratios (the two ran moments apart: less exposed to drift)."""
    r = statistics.median(times[a]) / statistics.median(times[b])
    paired = statistics.median(x / y for x, y in zip(times[a], times[b]))
    print(f"ratio {label or f'{a} / {b}'}: {r:.3f} ({(r - 1) * 100:+.1f}%) of medians, "
          f"{paired:.3f} ({(paired - 1) * 100:+.1f}%) paired per round")
