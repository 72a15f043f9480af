"""Per-call cost of a kernel with a native XLA FFI signature bound by begen
against the hand-written `Bind` handler of the same impl function, side by
side in one run. Both handlers are in one library (bench/ffi_native/<platform>,
built by begen), so they differ only in who wrote the binding.

usage:
  begen build bench/ffi_native/cpu --out OUT --name nat [--platform cpu]
  python bench/ffi_native/native_overhead.py OUT [--platform cpu|cuda] [--rounds N]
"""

import argparse
import ctypes
import os
import sys

import jax
import jax.numpy as jnp

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "gpu"))
from interleaved import chained, ratio, run, table


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--platform", default="cpu")
    p.add_argument("--rounds", type=int, default=200)
    p.add_argument("--n", type=int, default=1024)
    a = p.parse_args()
    sys.path.insert(0, a.out)
    import nat  # the module begen generated

    nat.register()
    lib = ctypes.cdll.LoadLibrary(os.path.join(a.out, "libnat.so"))
    jax.ffi.register_ffi_target(
        "hand.add_one",
        jax.ffi.pycapsule(lib.hand_add_one),
        platform=a.platform.upper() if a.platform == "cuda" else "cpu",
    )
    x0 = jnp.zeros((a.n,), jnp.float32)
    out = jax.ShapeDtypeStruct(x0.shape, x0.dtype)
    variants = {
        "begen-native": chained(lambda x: nat.AddOne(x, out=out)),
        "hand": chained(lambda x: jax.ffi.ffi_call("hand.add_one", out)(x)),
    }
    times = run(variants, x0, a.rounds)
    table(times, a.rounds, a.n)
    ratio(times, "begen-native", "hand", "begen native / hand-written Bind")


if __name__ == "__main__":
    main()
