"""`vmap: fold` against a hand-written folding rule over the same FFI
target, and against one call per right-hand side, side by side in one run.

The kernels are tests/e2e/solver's (built by the CLI): `solve(Ai, Aj, Ax,
b)` factorises the COO matrix once per call and solves every column of
`b: float64[n, n_rhs]`. Three ways to vmap it over `--batch` right-hand
sides of `--rhs` columns each, all under `jax.jit`:

- **begen fold**: `m.solve`, whose begen.yaml says `vmap: {fold: {b: n_rhs}}`:
  the generated batching rule makes one call with n_rhs = batch * rhs;
- **hand-written**: a `jax.custom_batching.custom_vmap` over
  `jax.ffi.ffi_call(m.TARGETS["solve"], ...)` that folds the same way, as a
  library's own Python batching rule would;
- **per element**: `m.solve_each`, the same kernel without a fold (one
  call, one factorisation, per right-hand side).

Every round times each variant once, in a fresh random order, as `--calls`
calls, in the process's CPU time (all threads; the machine may be shared);
the figures are medians over `--rounds` rounds of milliseconds per call,
and each ratio is the variant's time / the hand-written rule's.

usage: python bench/fold_bench.py [--begen target/debug/begen] [--n 120]
       [--batch 16] [--rhs 1] [--rounds 15] [--calls 10] [--out DIR]
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


def hand_written(target):
    """A folding rule written by hand over the FFI target."""
    import jax

    def call(Ai, Aj, Ax, b):
        return jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(b.shape, b.dtype))(Ai, Aj, Ax, b)

    @jax.custom_batching.custom_vmap
    def solve(Ai, Aj, Ax, b):
        return call(Ai, Aj, Ax, b)

    @solve.def_vmap
    def _(size, batched, Ai, Aj, Ax, b):
        assert not any(batched[:3]) and batched[3]
        _, n, k = b.shape
        x = call(Ai, Aj, Ax, jax.numpy.moveaxis(b, 0, 1).reshape(n, size * k))
        return jax.numpy.moveaxis(x.reshape(n, size, k), 1, 0), True

    return solve


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--begen", default=str(REPO / "target/debug/begen"))
    ap.add_argument("--n", type=int, default=120)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--rhs", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="begen-fold-"))
    if not (out / "e2e_solver.py").is_file():
        env = dict(os.environ, BEGEN_PYTHON=sys.executable)
        cmd = [args.begen, "build", REPO / "tests/e2e/solver", "--out", out, "--platform", "cpu", "--quiet"]
        subprocess.run(cmd, check=True, env=env)
    sys.path.insert(0, str(out))
    import e2e_solver as m
    import jax
    import numpy as np

    jax.config.update("jax_enable_x64", True)
    m.register()
    rng = np.random.default_rng(0)
    n = args.n
    A = rng.normal(size=(n, n)) * (rng.random((n, n)) < 0.1) + n * np.eye(n)
    Ai, Aj = (i.astype(np.int32) for i in np.nonzero(A))
    Ax = A[Ai, Aj]
    b = rng.normal(size=(args.batch, n, args.rhs))
    a = [jax.device_put(t) for t in (Ai, Aj, Ax, b)]
    axes = (None, None, None, 0)
    variants = {
        "begen fold": jax.jit(jax.vmap(m.solve, in_axes=axes)),
        "hand-written": jax.jit(jax.vmap(hand_written(m.TARGETS["solve"]), in_axes=axes)),
        "per element": jax.jit(jax.vmap(m.solve_each, in_axes=axes)),
    }
    ref = np.linalg.solve(A, b)
    for name, f in variants.items():
        np.testing.assert_allclose(np.asarray(f(*a)), ref, rtol=1e-8, err_msg=name)
        calls = f.lower(*a).as_text().count("stablehlo.custom_call")
        print(f"{name}: {calls} custom_call(s) in the HLO")
    times = {name: [] for name in variants}
    order = list(variants.items())
    shuffle = random.Random(0).shuffle
    for _ in range(args.rounds):
        shuffle(order)
        for name, f in order:
            start = time.process_time()
            for _ in range(args.calls):
                jax.block_until_ready(f(*a))
            times[name].append((time.process_time() - start) / args.calls * 1e3)
    base = statistics.median(times["hand-written"])
    print(f"n={n}, {args.batch} right-hand sides of {args.rhs} column(s); medians of {args.rounds} rounds")
    print("| variant | CPU ms per call | / hand-written |")
    print("|---|---|---|")
    for name in variants:
        med = statistics.median(times[name])
        print(f"| {name} | {med:.3f} | {med / base:.3f}x |")


if __name__ == "__main__":
    main()
