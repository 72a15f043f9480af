"""Per-call cost of a precompiled kernel bound by begen (begen.yaml
`binaries:`, convention `c`) against a hand-written XLA FFI handler that
launches the same cubin with cuLaunchKernel (handwritten_binary.cc).

Both launch `add_one` (y = x + 1 on n floats) from bin/add_one.cubin. Each
variant is 500 calls chained in one `jax.jit`; variants run interleaved, in
a shuffled order each round. Reports the median microseconds per call and
the paired ratio begen / hand-written, without and with the command-buffer
trait (CUDA graphs: set XLA_FLAGS=--xla_gpu_enable_command_buffer=CUSTOM_CALL
to have XLA capture them).

usage: BEGEN_BENCH_CUBIN=bin/add_one.cubin python binary_overhead.py BEGEN_OUT_DIR HAND_SO [--rounds N]
"""

import argparse
import ctypes
import sys

import jax
import jax.numpy as jnp
from interleaved import chained, ratio, run, table


def main():
    p = argparse.ArgumentParser()
    p.add_argument("begen_out")
    p.add_argument("hand_so")
    p.add_argument("--rounds", type=int, default=300)
    p.add_argument("--n", type=int, default=1024)
    a = p.parse_args()

    sys.path.insert(0, a.begen_out)
    import ovhbin  # the module begen generated

    ovhbin.register()
    hand = ctypes.cdll.LoadLibrary(a.hand_so)
    for sym in ("hand_bin_add_one", "hand_bin_add_one_graph"):
        jax.ffi.register_ffi_target(f"hand.{sym}", jax.ffi.pycapsule(getattr(hand, sym)), platform="CUDA")
    # Diagnostics: the hand-written handler with an initialize stage (as
    # begen registers binary kernels), doing nothing or asking the context.
    for init in ("init_noop", "init_ctx"):
        for sym in ("hand_bin_add_one", "hand_bin_add_one_graph"):
            stages = {"initialize": jax.ffi.pycapsule(getattr(hand, f"hand_{init}")),
                      "execute": jax.ffi.pycapsule(getattr(hand, sym))}
            jax.ffi.register_ffi_target(f"hand.{init}.{sym}", stages, platform="CUDA")

    x0 = jnp.zeros((a.n,), jnp.float32)
    out = jax.ShapeDtypeStruct(x0.shape, x0.dtype)

    variants = {
        "begen": chained(ovhbin.bin_add_one),
        "hand": chained(lambda x: jax.ffi.ffi_call("hand.hand_bin_add_one", out)(x)),
        "begen+graph": chained(ovhbin.bin_add_one_graph),
        "hand+graph": chained(lambda x: jax.ffi.ffi_call("hand.hand_bin_add_one_graph", out)(x)),
    }
    for init in ("init_noop", "init_ctx"):
        for mode, sym in (("", "hand_bin_add_one"), ("+graph", "hand_bin_add_one_graph")):
            target = f"hand.{init}.{sym}"
            variants[f"hand+{init}{mode}"] = chained(lambda x, t=target: jax.ffi.ffi_call(t, out)(x))
    times = run(variants, x0, a.rounds)
    table(times, a.rounds, a.n)
    ratio(times, "begen", "hand", "begen (no trait) / hand")
    ratio(times, "begen+graph", "hand+graph")


if __name__ == "__main__":
    main()
