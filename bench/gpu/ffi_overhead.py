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
import statistics
import sys

import jax
import jax.numpy as jnp
from interleaved import chained, ratio, run, table


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

    variants = {
        "begen": chained(lambda x: ovh.add_one(x, out=out)),
        "begen-typed": chained(lambda x: ovh.add_one_typed(x)),
        "hand": chained(lambda x: jax.ffi.ffi_call("hand.hand_add_one", out)(x)),
        "begen+graph": chained(lambda x: ovh.add_one_graph(x, out=out)),
        "hand+graph": chained(lambda x: jax.ffi.ffi_call("hand.hand_add_one_graph", out)(x)),
    }
    if has_inside:
        variants["hand-in-lib"] = chained(lambda x: jax.ffi.ffi_call("inside.add_one", out)(x))
    times = run(variants, x0, a.rounds)
    table(times, a.rounds, a.n)
    ratio(times, "begen-typed", "hand", "begen typed / hand")
    untyped = statistics.median(x / y for x, y in zip(times["begen-typed"], times["begen"]))
    print(f"ratio begen typed / begen untyped: {untyped:.3f} paired per round")
    ratio(times, "begen", "hand", "begen (no trait) / hand")
    ratio(times, "begen+graph", "hand+graph")


if __name__ == "__main__":
    main()
