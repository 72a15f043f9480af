"""Per-call cost of begen's torch ops against the two ways a kernel library
writes the torch side by hand, side by side in one run:

- `hand`: a hand-written op over PyTorch's stable ABI (handwritten.cc:
  `STABLE_TORCH_LIBRARY` + `TORCH_BOX`, the checks a library makes, the
  output allocated with `new_empty`), compiled here with the same flags
  begen uses (`-DTORCH_TARGET_VERSION` for 2.11);
- `custom_op`: `@torch.library.custom_op` over the same kernel, called
  through ctypes, with its `register_fake`.

begen's side is timed twice: `begen` is the typed function
(`<NAME>_torch.scale`, which makes its input contiguous first) and
`begen_op` is `torch.ops.<NS>.scale` itself. All four call the same
compiled kernel (out = alpha * x over --n floats).

Eager: every round times each variant once, in a fresh random order, as
CALLS calls one after another (then a CUDA synchronize); medians of
microseconds per call over the rounds. Compiled: each variant inside
`torch.compile(fullgraph=True)` (inductor) over a chain of CHAIN calls;
microseconds per call. Ratios are against `hand` (goal: begen <= 1.05
eager, <= 1.00 compiled) and `custom_op` (expected above 1: slower).

usage: begen build bench/torch/cpu --out OUT    (or bench/torch/cuda)
       python bench/torch/torch_overhead.py OUT [--device cpu|cuda]
              [--rounds 30] [--calls 300] [--n 1024] [--chain 8]
The build needs BEGEN_TORCH_PYTHON (this Python, with torch); the CUDA
variant compiles handwritten.cc and cuda/scale.cu with nvcc ($NVCC).
"""

import argparse
import ctypes
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def build_hand(device, work):
    """Compiles handwritten.cc with the kernel into one library; returns it."""
    import torch

    inc = Path(torch.__file__).parent / "include"
    lib = work / "libhand_bench.so"
    version = "-DTORCH_TARGET_VERSION=0x020b000000000000ULL"
    common = ["-O2", "-std=c++17", version, f"-I{inc}", f"-I{REPO / 'build-support' / 'include'}"]
    if device == "cuda":
        nvcc = os.environ.get("NVCC") or shutil.which("nvcc") or "nvcc"
        cmd = [nvcc, "-shared", "-Xcompiler", "-fPIC", "-DBENCH_CUDA", *common,
               str(HERE / "handwritten.cc"), str(HERE / "cuda" / "scale.cu"), "-o", str(lib)]
    else:
        cmd = [os.environ.get("CXX", "g++"), "-shared", "-fPIC", *common,
               str(HERE / "handwritten.cc"), str(HERE / "cpu" / "scale.cpp"), "-o", str(lib)]
    subprocess.run(cmd, check=True)
    return lib


def custom_op_peer(lib_path, device):
    """`@torch.library.custom_op` over the kernel, through ctypes."""
    import torch

    lib = ctypes.CDLL(str(lib_path))
    fn = lib.bench_scale_c
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_float, ctypes.c_int64, ctypes.c_int64]
    fn.restype = None

    @torch.library.custom_op("peer_bench::scale", mutates_args=(), device_types=device)
    def peer_scale(x: torch.Tensor, alpha: float) -> torch.Tensor:
        out = torch.empty_like(x)
        stream = torch.cuda.current_stream(x.device).cuda_stream if device == "cuda" else 0
        fn(x.data_ptr(), out.data_ptr(), alpha, x.numel(), stream)
        return out

    @peer_scale.register_fake
    def _(x, alpha):
        return torch.empty_like(x)

    return lambda x, alpha: peer_scale(x, alpha)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("begen_out")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--calls", type=int, default=300)
    p.add_argument("--n", type=int, default=1024)
    p.add_argument("--chain", type=int, default=8)
    p.add_argument("--no-compile", action="store_true", help="eager figures only")
    a = p.parse_args()

    import torch

    out = Path(a.begen_out)
    name = "torch_bench_cuda" if a.device == "cuda" else "torch_bench"
    sys.path.insert(0, str(out))
    m = __import__(f"{name}_torch")
    work = Path(tempfile.mkdtemp(prefix="torch-bench-"))
    hand_lib = build_hand(a.device, work)
    torch.ops.load_library(str(hand_lib))
    # The fake a library writes by hand beside its op, for torch.compile.
    torch.library.register_fake("hand_bench::scale")(lambda x, *, alpha: torch.empty_like(x))
    ns = getattr(torch.ops, m.NAMESPACE)

    variants = {
        "hand": lambda x, alpha: torch.ops.hand_bench.scale(x, alpha=alpha),
        "begen": lambda x, alpha: m.scale(x, alpha=alpha),
        "begen_op": lambda x, alpha: ns.scale(x, alpha=alpha),
        "custom_op": custom_op_peer(hand_lib, a.device),
    }
    x = torch.arange(a.n, dtype=torch.float32, device=a.device)
    want = 2.0 * x
    for k, f in variants.items():
        got = f(x, 2.0)
        if not torch.equal(got, want):
            sys.exit(f"{k}: wrong result")

    sync = torch.cuda.synchronize if a.device == "cuda" else (lambda: None)

    def timed(f, x, calls):
        sync()
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            f(x, 2.0)
        sync()
        return (time.perf_counter_ns() - t0) / calls / 1e3

    def run(table, fns, calls):
        for f in fns.values():
            timed(f, x, calls)
        for _ in range(a.rounds):
            order = list(fns)
            random.shuffle(order)
            for k in order:
                table.setdefault(k, []).append(timed(fns[k], x, calls))

    rows = []
    eager = {}
    run(eager, variants, a.calls)
    rows.append(("eager", {k: statistics.median(v) for k, v in eager.items()}))

    if not a.no_compile:
        compiled = {}
        for k, f in variants.items():
            def chain(x, f=f):
                for _ in range(a.chain):
                    x = f(x, 1.0)
                return x
            compiled[k] = torch.compile(chain, fullgraph=True)
            compiled[k](x)
        per_call = {k: (lambda x, alpha, g=g: g(x)) for k, g in compiled.items()}
        comp = {}
        run(comp, per_call, max(1, a.calls // a.chain))
        rows.append((f"torch.compile, {a.chain} calls", {k: statistics.median(v) / a.chain for k, v in comp.items()}))

    dev = torch.cuda.get_device_name() if a.device == "cuda" else "cpu"
    print(f"torch {torch.__version__}, {dev}, n={a.n}, {a.rounds} rounds x {a.calls} calls; microseconds per call (median)")
    print(f"{'mode':<26} {'hand':>8} {'begen':>8} {'begen_op':>9} {'custom_op':>10}   begen/hand  begen_op/hand  custom_op/begen")
    for mode, r in rows:
        print(f"{mode:<26} {r['hand']:8.2f} {r['begen']:8.2f} {r['begen_op']:9.2f} {r['custom_op']:10.2f}"
              f"   {r['begen'] / r['hand']:9.2f}x  {r['begen_op'] / r['hand']:12.2f}x  {r['custom_op'] / r['begen']:14.2f}x")


if __name__ == "__main__":
    main()
