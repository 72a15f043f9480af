"""Is `begen scan` linear on crafted input? Time per MB at 1x, 10x and 100x.

Inputs that once made the scan quadratic (what a hostile-input
review found): annotations over unclosed declarations, bare annotations, a
begen.yaml with many `functions:` entries, a long run of `[`, a long run of
spaces inside a typed token's brackets; and for struct attributes, many
functions whose parameters name many structs, nested and unclosed struct
heads. For each, the
time per MB should stay flat as the input grows (start-up aside at 1x).

usage: python bench/crafted_bench.py [--begen target/release/begen] [--reps 3]
"""

import argparse
import pathlib
import statistics
import subprocess
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def unclosed(n):
    return {"k.cu": "".join(f"// @BE f{i}\nvoid f{i}(const BE::Tensor x,\n" for i in range(n))}


def bare(n):
    return {"k.cu": "// @BE f\n" * (50 * n)}


def many_options(n):
    src = "".join(f"// @BE f{i}\nvoid f{i}(const BE::Tensor x, BE::Tensor y) {{}}\n" for i in range(n))
    yaml = "functions:\n" + "".join(f"  f{i}: {{command_buffer: true}}\n" for i in range(10 * n))
    return {"k.cu": src, "begen.yaml": yaml}


def brackets(n):
    return {"k.cu": "// @BE f\nvoid f(" + "[" * (50 * n) + ")\n"}


def spaced_dims(n):
    # Whitespace inside a typed token's brackets: each space once asked
    # whether a token followed, which made the annotation's split quadratic.
    return {"k.cu": "// @BE f arg:float32[" + " " * (2000 * n) + "n]\nvoid f(const float* x);\n"}


def struct_params(n):
    # Every function names a struct of its own, each defined in the file:
    # each name looked up once, each definition read once.
    defs = "".join(f"struct S{i} {{ float a; int b; }};\n" for i in range(20 * n))
    fns = "".join(f"// @BE f{i}\nvoid f{i}(const BE::Tensor x, BE::Tensor y, S{i} p) {{}}\n" for i in range(20 * n))
    return {"k.cpp": defs + fns}


def struct_heads(n):
    # Nested and unclosed struct heads: scopes and closing braces found in
    # one pass, not once per `struct`.
    nested = "struct a { " * (500 * n) + "} " * (500 * n)
    return {"k.cpp": nested + "struct alignas( " * (500 * n) + "\n// @BE f\nvoid f(const BE::Tensor x, BE::Tensor y, a p) {}\n"}


CASES = {
    "unclosed declarations": unclosed,
    "bare annotations": bare,
    "many options": many_options,
    "[ x N": brackets,
    "spaces in [ ]": spaced_dims,
    "struct params": struct_params,
    "struct heads": struct_heads,
}


def time_scan(begen, files, reps):
    with tempfile.TemporaryDirectory() as d:
        size = 0
        for name, text in files.items():
            (pathlib.Path(d) / name).write_text(text)
            size += len(text.encode())
        runs = []
        for _ in range(reps):
            t = time.perf_counter()
            subprocess.run([begen, "scan", d, "--format", "json"], stdout=subprocess.DEVNULL, check=False)
            runs.append(time.perf_counter() - t)
        return statistics.median(runs), size


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--begen", default=str(ROOT / "target/release/begen"))
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    print(f"{'input':24} {'scale':>6} {'MB':>8} {'time':>9} {'ms/MB':>9}")
    for label, make in CASES.items():
        for scale in (20, 200, 2000):
            seconds, size = time_scan(args.begen, make(scale), args.reps)
            mb = size / 1e6
            print(f"{label:24} {scale:>6} {mb:8.3f} {seconds * 1000:8.1f}ms {seconds * 1000 / mb:9.1f}")


if __name__ == "__main__":
    main()
