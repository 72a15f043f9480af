"""Tuning's costs, side by side in one run (CPU; tests/e2e/tune built by the
CLI):

1. Per call: a tuned function (`transpose(x)`, its candidate chosen from a
   table when traced) against that candidate called by name
   (`transpose(x, BLOCK=b)`), each as 200 chained calls in one jit, in
   interleaved rounds. Both lower to the same custom call, so the ratio of
   medians must be 1.
2. At trace time: the cost of the choice itself (`_begen_tune_pick` with a
   user table and a shipped table on disk), in microseconds per traced call,
   against `_begen_inputs` (the contract check every typed call runs then).

usage: python bench/tune_bench.py [--begen target/debug/begen] [--rounds 50]
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--begen", default=str(REPO / "target/debug/begen"))
    p.add_argument("--rounds", type=int, default=50)
    a = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="tune-bench-"))
    out = tmp / "out"
    env = dict(os.environ, BEGEN_PYTHON=sys.executable)
    subprocess.run(
        [a.begen, "build", REPO / "tests/e2e/tune", "--out", out, "--name", "tb", "--quiet"], check=True, env=env
    )
    os.environ["BEGEN_TUNE_DIR"] = str(tmp)
    sys.path.insert(0, str(out))
    import jax
    import numpy as np
    import tb

    chosen = "8"
    key = {"kernel": "tb.transpose", "hash": tb._BEGEN_TUNE["transpose"]["hash"], "device": "cpu"}
    entry = dict(key, dtypes=["float32"], key={"n": 64, "m": 64}, config={"BLOCK": chosen})
    (tmp / "tb.tune.json").write_text(json.dumps({"begen_tune": 1, "entries": [entry]}))
    x0 = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)

    def chained(call):
        @jax.jit
        def f(x):
            for _ in range(200):
                x = call(x)
            return x

        return f

    variants = {
        "tuned (table)": chained(tb.transpose),
        f"BLOCK={chosen} by name": chained(lambda x: tb.transpose(x, BLOCK=int(chosen))),
    }
    for name, f in variants.items():
        text = f.lower(x0).compile().as_text()
        assert f'"tb.transpose[BLOCK={chosen}]"' in text, name
        np.testing.assert_array_equal(np.asarray(f(x0)), x0)
    times = {n: [] for n in variants}
    rng = random.Random(0)
    for _ in range(a.rounds):
        names = list(variants)
        rng.shuffle(names)
        for n in names:
            t0 = time.perf_counter()
            variants[n](x0).block_until_ready()
            times[n].append((time.perf_counter() - t0) / 200 * 1e6)
    print(
        f"per call: 200 chained calls in one jit, {a.rounds} interleaved rounds, 64x64 float32 ({jax.devices()[0].device_kind})"
    )
    for n, ts in times.items():
        print(f"  {n:<22} {statistics.median(ts):8.3f} us/call (median)")
    names = list(times)
    ratio = statistics.median(times[names[0]]) / statistics.median(times[names[1]])
    print(f"  ratio tuned / by name: {ratio:.3f} of medians")

    # The choice at trace time, without jit: what one traced call adds.
    d = {"n": (64, "from 'x' axis 0"), "m": (64, "from 'x' axis 1")}
    c = {"BLOCK": "1"}
    specs = (("x", "float32", ("n", "m")),)
    consts = (("BLOCK", "BLOCK", "int", 1, ("1", "8", "32")),)
    reps = 20000
    tb._begen_tune_pick("transpose", c, d, (x0,), set())
    t0 = time.perf_counter()
    for _ in range(reps):
        assert tb._begen_tune_pick("transpose", c, d, (x0,), set())["BLOCK"] == chosen
    pick = (time.perf_counter() - t0) / reps * 1e6
    t0 = time.perf_counter()
    for _ in range(reps):
        tb._begen_inputs("transpose", (x0,), specs, consts)
    inputs = (time.perf_counter() - t0) / reps * 1e6
    print(
        f"trace time: the choice {pick:.1f} us per traced call (tables on disk, parsed once); the contract check {inputs:.1f} us"
    )


if __name__ == "__main__":
    main()
