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

    def chained(call):
        @jax.jit
        def f(x):
            for _ in range(CHAIN):
                x = call(x)
            return x

        return f

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
    for name, f in variants.items():
        y = np.asarray(f(x0))
        assert np.all(y == CHAIN), (name, y[:4])
        for _ in range(5):
            f(x0).block_until_ready()

    rng = random.Random(0)
    names = list(variants)
    times = {name: [] for name in variants}
    for _ in range(a.rounds):
        rng.shuffle(names)
        for name in names:
            t0 = time.perf_counter()
            variants[name](x0).block_until_ready()
            times[name].append((time.perf_counter() - t0) / CHAIN * 1e6)

    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"device: {jax.devices()[0].device_kind}; jax {jax.__version__}; "
          f"{CHAIN} calls per jit, {a.rounds} interleaved rounds, n={a.n}")
    print(f"{'variant':<14}{'us/call (median)':>18}{'p25':>9}{'p75':>9}{'min':>9}")
    for k in variants:
        q = statistics.quantiles(times[k], n=4)
        print(f"{k:<14}{med[k]:>18.3f}{q[0]:>9.3f}{q[2]:>9.3f}{min(times[k]):>9.3f}")
    for mode in ("", "+graph"):
        b, h = times["begen" + mode], times["hand" + mode]
        r = med["begen" + mode] / med["hand" + mode]
        paired = statistics.median(x / y for x, y in zip(b, h))
        print(f"ratio begen{mode or ' (no trait)'} / hand{mode}: {r:.3f} ({(r - 1) * 100:+.1f}%) "
              f"of medians, {paired:.3f} ({(paired - 1) * 100:+.1f}%) paired per round")


if __name__ == "__main__":
    main()
