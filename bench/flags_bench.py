"""begen's default host compile flags against the flags other build systems
use, on the same CPU kernels (bench/flags/kernels.cpp), side by side in one
run: one kernel folder built once per configuration (`--config`), every
library loaded into one process.

Configurations: `default` (begen's own flags), `setuptools` (what Python's
sysconfig CFLAGS/OPT add: `-fno-strict-overflow -DNDEBUG -O3`), `cmake`
(CMake Release: `-O3 -DNDEBUG`) and `o2` (`-O2`). Kernels: a CSR
matrix-vector product (indirect loads), a dense triangular solve with 16
right-hand sides (a dense loop nest), a sum of squares (a reduction) and an
element-wise `x * exp(-x^2)` (a vectorisable loop with a libm call).

Every round times each (kernel, configuration) once, in a fresh random
order, as `--calls` calls of a jitted function, in CPU time of the
process (all its threads: a machine shared with other work takes the CPU
away between calls, which wall time would count); the figures are medians
over `--rounds` rounds of milliseconds per call, and each ratio is the
configuration's time / the default's (below 1: faster than begen's
default).

usage: python bench/flags_bench.py [--begen target/debug/begen] [--rounds 9]
       [--calls 5] [--out DIR]  (DIR: reuse the builds there)
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
TREE = REPO / "bench/flags"
CONFIGS = ["default", "setuptools", "cmake", "o2"]


def build(begen, out):
    env = dict(os.environ, BEGEN_PYTHON=sys.executable)
    for c in CONFIGS:
        name = f"flags_{c}"
        if not (out / c / f"{name}.py").is_file():
            cmd = [begen, "build", TREE, "--config", TREE / f"{c}.yaml", "--out", out / c, "--quiet"]
            subprocess.run(cmd, check=True, env=env)
        sys.path.insert(0, str(out / c))


def cases(rng):
    """(kernel, {config: jitted call taking no argument}) per kernel."""
    import importlib

    import jax
    import numpy as np

    jax.config.update("jax_enable_x64", True)
    mods = {c: importlib.import_module(f"flags_{c}") for c in CONFIGS}
    rows, per_row = 200_000, 16
    indptr = np.arange(0, rows * per_row + 1, per_row, dtype=np.int32)
    indices = rng.integers(0, rows, size=rows * per_row, dtype=np.int32)
    data, x = rng.normal(size=rows * per_row), rng.normal(size=rows)
    n, k = 600, 16
    L = np.tril(rng.normal(size=(n, n))) + n * np.eye(n)
    b = rng.normal(size=(n, k))
    v = rng.normal(size=4_000_000)
    g = rng.normal(size=4_000_000).astype(np.float32)
    args = {
        "csr_dot": (indptr, indices, data, x),
        "dense_solve": (L, b),
        "sumsq": (v,),
        "gauss": (g,),
    }
    out = []
    for kernel, a in args.items():
        a = [jax.device_put(t) for t in a]
        calls = {}
        for c, m in mods.items():
            f = jax.jit(getattr(m, kernel))
            jax.block_until_ready(f(*a))
            calls[c] = lambda f=f, a=a: f(*a)
        ref = np.asarray(calls["default"]())
        for c, call in calls.items():
            np.testing.assert_allclose(np.asarray(call()), ref, rtol=1e-6)
        out.append((kernel, calls))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--begen", default=str(REPO / "target/debug/begen"))
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="begen-flags-"))
    build(args.begen, out)
    rng = random.Random(0)
    import jax
    import numpy as np

    table = cases(np.random.default_rng(0))
    times = {(k, c): [] for k, calls in table for c in calls}
    for _ in range(args.rounds):
        order = [(k, c, call) for k, calls in table for c, call in calls.items()]
        rng.shuffle(order)
        for k, c, call in order:
            start = time.process_time()
            for _ in range(args.calls):
                jax.block_until_ready(call())
            times[(k, c)].append((time.process_time() - start) / args.calls * 1e3)
    print(f"medians of {args.rounds} rounds of {args.calls} calls, CPU ms per call; ratio = config / default")
    print("(in brackets: the ratio of the minimums, less sensitive to a load that comes and goes)")
    print("| kernel | " + " | ".join(CONFIGS) + " |")
    print("|---|" + "---|" * len(CONFIGS))
    for k, _ in table:
        base = statistics.median(times[(k, "default")])
        cells = []
        for c in CONFIGS:
            med = statistics.median(times[(k, c)])
            low = min(times[(k, c)]) / min(times[(k, "default")])
            cells.append(f"{med:.2f}" if c == "default" else f"{med:.2f} {med / base:.3f}x [{low:.3f}x]")
        print(f"| {k} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
