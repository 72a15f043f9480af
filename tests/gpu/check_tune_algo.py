"""On a GPU: an algorithm tuned over its CUDA implementations
(tests/gpu/tune_algo, scripts/gpu-check.sh step `tune-algo`).

Before `begen tune` the traced call runs the priority order's choice
(`axpy_one_block`); after it, the table's (`axpy_grid`), read from the
lowered HLO, with numbers equal to numpy's either way; `config=` and
BEGEN_TUNE=default still win. Per-call times of both implementations, as
many calls inside one jit, are printed beside the table's.

usage: check_tune_algo.py OUT STAGE    STAGE: `before` (no table yet) or
       `after` (BEGEN_TUNE_DIR holds the table `begen tune` wrote)
"""

import importlib
import json
import os
import sys
import time

import jax
import numpy as np

NAME = "tune_algo"
SLOW, FAST = "axpy_one_block", "axpy_grid"
N = 1 << 22


def targets(f, *args, **kw):
    text = jax.jit(lambda *a: f(*a, **kw)).lower(*args).as_text()
    return {name for name in (SLOW, FAST) if f"@{NAME}.{name}(" in text}


def per_call_us(f, x, y, reps=200):
    # reps calls in one jitted loop, each call's input fed by the last output.
    loop = jax.jit(lambda a, b: jax.lax.fori_loop(0, reps, lambda _, v: f(v, b, alpha=1e-3) * 0.5, a))
    jax.block_until_ready(loop(x, y))
    ts = []
    for _ in range(7):
        t0 = time.perf_counter()
        jax.block_until_ready(loop(x, y))
        ts.append((time.perf_counter() - t0) / reps * 1e6)
    return sorted(ts)[len(ts) // 2]


def main(out, stage):
    sys.path.insert(0, out)
    m = importlib.import_module(NAME)
    rng = np.random.default_rng(0)
    x, y = (jax.device_put(rng.standard_normal(N).astype(np.float32)) for _ in range(2))
    want = np.asarray(x) + 2.0 * np.asarray(y)
    print(
        f"tune-algo ({jax.devices()[0].device_kind}, {stage}): implementations {m._BEGEN_TUNE['axpy']['implementations']}"
    )
    assert m._BEGEN_TUNE["axpy"]["implementations"] == {"cuda": (SLOW, FAST)}
    expect = {"before": SLOW, "after": FAST}[stage]
    got = targets(m.axpy, x, y, alpha=2.0)
    assert got == {expect}, f"the traced call names {got}, not {expect}"
    np.testing.assert_allclose(np.asarray(m.axpy(x, y, alpha=2.0)), want, rtol=1e-6)
    for name in (SLOW, FAST):
        assert targets(m.axpy, x, y, alpha=2.0, config={"implementation": name}) == {name}
        np.testing.assert_allclose(
            np.asarray(m.axpy(x, y, alpha=2.0, config={"implementation": name})), want, rtol=1e-6
        )
    if stage == "after":
        folder = os.environ["BEGEN_TUNE_DIR"]
        with open(os.path.join(folder, f"{NAME}.tune.json")) as fh:
            (entry,) = json.load(fh)["entries"]
        assert entry["config"] == {"implementation": FAST}, entry
        print(f"tune-algo: the table's entry for {entry['key']} on {entry.get('device')}: {entry['times_us']}")
        os.environ["BEGEN_TUNE"] = "default"
        assert targets(m.axpy, x, y, alpha=2.0) == {SLOW}, "BEGEN_TUNE=default must take the priority order"
        del os.environ["BEGEN_TUNE"]
    slow, fast = (
        per_call_us(lambda *a, n=n, **k: m.axpy(*a, config={"implementation": n}, **k), x, y) for n in (SLOW, FAST)
    )
    tuned = per_call_us(m.axpy, x, y)
    print(f"tune-algo: per call at n={N}: {SLOW} {slow:.1f} us, {FAST} {fast:.1f} us, the tuned call {tuned:.1f} us")
    print(f"tune-algo {stage}: ok")


if __name__ == "__main__":
    main(*sys.argv[1:])
