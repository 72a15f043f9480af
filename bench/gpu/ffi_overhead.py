"""Per-call cost of a begen binding against a hand-written typed XLA FFI handler.

Both launch the same tiny CUDA kernel (y = x + 1 on 1024 floats). Each variant
is 500 calls chained in one `jax.jit`; variants run interleaved, in a shuffled
order each round, so drift and position hit them alike. Reports the median microseconds per call and
the ratio begen / hand-written, without and with the command-buffer trait,
and for the typed binding (`arg:float32[n] ret:float32[n] dim.n`: typed XLA
buffers, pointers, the length as a dimension, the output inferred).

usage: python ffi_overhead.py BEGEN_OUT_DIR HANDWRITTEN_SO [--rounds N]
"""

import argparse
import ctypes
import os
import random
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

CHAIN = 500


def main():
    p = argparse.ArgumentParser()
    p.add_argument("begen_out")
    p.add_argument("handwritten_so")
    p.add_argument("--rounds", type=int, default=300)
    p.add_argument("--n", type=int, default=1024)
    a = p.parse_args()

    sys.path.insert(0, a.begen_out)
    import ovh  # the module begen generated

    ovh.register()
    hand = ctypes.cdll.LoadLibrary(a.handwritten_so)
    for sym in ("hand_add_one", "hand_add_one_graph"):
        jax.ffi.register_ffi_target(
            f"hand.{sym}", jax.ffi.pycapsule(getattr(hand, sym)), platform="CUDA"
        )
    # Optional control: the hand-written handler compiled and linked by begen
    # into the begen library (an un-annotated source beside the kernels), to
    # tell the handler's cost apart from how the library was built.
    inside = ctypes.cdll.LoadLibrary(os.path.join(a.begen_out, "libovh.so"))
    has_inside = hasattr(inside, "inside_add_one")
    if has_inside:
        jax.ffi.register_ffi_target(
            "inside.add_one", jax.ffi.pycapsule(inside.inside_add_one), platform="CUDA")

    x0 = jnp.zeros((a.n,), jnp.float32)
    out = jax.ShapeDtypeStruct(x0.shape, x0.dtype)

    def chained(call):
        @jax.jit
        def f(x):
            for _ in range(CHAIN):
                x = call(x)
            return x

        return f

    variants = {
        "begen": chained(lambda x: ovh.add_one(x, out=out)),
        "begen-typed": chained(lambda x: ovh.add_one_typed(x)),
        "hand": chained(lambda x: jax.ffi.ffi_call("hand.hand_add_one", out)(x)),
        "begen+graph": chained(lambda x: ovh.add_one_graph(x, out=out)),
        "hand+graph": chained(lambda x: jax.ffi.ffi_call("hand.hand_add_one_graph", out)(x)),
    }
    if has_inside:
        variants["hand-in-lib"] = chained(lambda x: jax.ffi.ffi_call("inside.add_one", out)(x))
    for name, f in variants.items():
        y = np.asarray(f(x0))
        assert np.all(y == CHAIN), (name, y[:4])
        for _ in range(5):
            f(x0).block_until_ready()

    # Each round runs every variant once, in a fresh random order, so neither
    # position in the round nor drift over time favours one of them.
    rng = random.Random(0)
    names = list(variants)
    times = {name: [] for name in variants}
    for _ in range(a.rounds):
        rng.shuffle(names)
        for name in names:
            f = variants[name]
            t0 = time.perf_counter()
            f(x0).block_until_ready()
            times[name].append((time.perf_counter() - t0) / CHAIN * 1e6)

    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"device: {jax.devices()[0].device_kind}; jax {jax.__version__}; "
          f"{CHAIN} calls per jit, {a.rounds} interleaved rounds, n={a.n}")
    print(f"{'variant':<14}{'us/call (median)':>18}{'p25':>9}{'p75':>9}{'min':>9}")
    for k in variants:
        q = statistics.quantiles(times[k], n=4)
        print(f"{k:<14}{med[k]:>18.3f}{q[0]:>9.3f}{q[2]:>9.3f}{min(times[k]):>9.3f}")
    # Paired: the ratio within each round (the two ran moments apart), then
    # the median over rounds; less exposed to drift than a ratio of medians.
    typed = med["begen-typed"] / med["hand"]
    paired = statistics.median(x / y for x, y in zip(times["begen-typed"], times["hand"]))
    print(f"ratio begen typed / hand: {typed:.3f} ({(typed - 1) * 100:+.1f}%) of medians, "
          f"{paired:.3f} ({(paired - 1) * 100:+.1f}%) paired per round")
    untyped = statistics.median(x / y for x, y in zip(times["begen-typed"], times["begen"]))
    print(f"ratio begen typed / begen untyped: {untyped:.3f} paired per round")
    for mode in ("", "+graph"):
        b, h = times["begen" + mode], times["hand" + mode]
        r = med["begen" + mode] / med["hand" + mode]
        paired = statistics.median(x / y for x, y in zip(b, h))
        print(f"ratio begen{mode or ' (no trait)'} / hand{mode}: {r:.3f} ({(r - 1) * 100:+.1f}%) "
              f"of medians, {paired:.3f} ({(paired - 1) * 100:+.1f}%) paired per round")


if __name__ == "__main__":
    main()
