"""How fast `begen scan` finds and parses annotations, against kernix and grep.

Corpora: brainevent 0.3.0's 61 annotated `.cu` files (1x), and the same tree
copied into 20 subdirectories (20x). Copies are exact: no function is renamed,
because most names are made by token-pasting macros at their invocation and a
rename would mean rewriting macro arguments. One `begen scan` of a tree is one
library, so repeated names are reported as errors (84 names already repeat
across files of the 1x tree; at 20x every name does); begen still reads,
parses and checks every annotation, which is the work measured here.

Per corpus, each timed over --reps runs after one warm-up, median reported:
  begen         whole process: `begen scan DIR --format json > /dev/null` (release build)
  kernix loop   in this process: read each file, `parse_annotations`, then the
                alias normalisation and bare-attr resolution kernix's build applies
  kernix proc   whole process: Python start-up, import kernix, the same loop
  grep          `grep -rc --include=*.cu @BE DIR`: reading the files, the I/O floor
Ratios: kernix/begen (goal >= 10) and begen/grep (goal <= 3); ms per MB
shows whether cost grows linearly with the corpus.

--baseline BIN times a second begen binary (e.g. the build before a change)
on the same trees with the same reps, interleaved with the first: each round
runs both, the order swapped every round, so load on a shared machine falls
on both alike. It prints both medians and minimums, and begen/baseline as
the ratio of the medians and as the median of the per-round ratios (the
steadier of the two when the load moves).

--modules scans copies of the trees that carry a `begen.yaml` with
`modules: {per-file: true}` (the 1x tree as `copy00/`, the Kx tree as
`copy00 .. copyNN/`), so every file is its own module and repeated names are
no error. They live beside the plain trees in the cache; without --modules
the plain trees are scanned as before.

usage: python bench/scan_bench.py [--begen BIN] [--baseline BIN] [--modules]
                                  [--reps N] [--copies K]
  BIN defaults to $BEGEN_BIN, else target/release/begen (build it with
  `cargo build --release`).
"""

import argparse
import functools
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "corpus"))
import brainevent_corpus as bc


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--begen", type=pathlib.Path,
                   default=pathlib.Path(os.environ.get("BEGEN_BIN") or ROOT / "target/release/begen"))
    p.add_argument("--baseline", type=pathlib.Path,
                   help="a second begen binary, timed interleaved with --begen")
    p.add_argument("--modules", action="store_true",
                   help="scan trees with a begen.yaml of `modules: {per-file: true}`")
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--copies", type=int, default=20)
    p.add_argument("--cache", type=pathlib.Path, default=bc.DEFAULT_CACHE)
    a = p.parse_args()

    for exe, flag in ((a.begen, "--begen"), (a.baseline, "--baseline")):
        if exe is not None and not exe.exists():
            print(f"scan_bench: no begen binary at {exe}: run `cargo build --release` "
                  f"or pass {flag}", file=sys.stderr)
            return 2
    try:
        corpus = bc.fetch(a.cache)
    except bc.Unavailable as e:
        print(f"scan_bench: {e}", file=sys.stderr)
        return 3
    if a.modules:
        trees = (("1x", per_file_modules(replicate(corpus, a.cache / "bench-modules-1x", 1))),
                 (f"{a.copies}x", per_file_modules(
                     replicate(corpus, a.cache / f"bench-modules-{a.copies}x", a.copies))))
    else:
        trees = (("1x", corpus),
                 (f"{a.copies}x", replicate(corpus, a.cache / f"bench-{a.copies}x", a.copies)))
    kc = bc.load_kernix(corpus)

    print(f"scan_bench: {a.begen} ({a.reps} runs each, median; {os.cpu_count()} CPUs)")
    if a.baseline:
        print(f"  baseline: {a.baseline} (interleaved with begen, order swapped every round)")
    if a.modules:
        print("  trees with begen.yaml `modules: {per-file: true}`")
    rows = []
    for label, tree in trees:
        files = bc.sources(tree)
        mb = sum(f.stat().st_size for f in files) / 1e6
        row = {"corpus": label, "files": len(files), "mb": mb}
        begen_cmd = scan_cmd(a.begen, tree)
        row["begen_status"] = scan_status(begen_cmd)
        if a.baseline:
            base_cmd = scan_cmd(a.baseline, tree)
            row["baseline_status"] = scan_status(base_cmd)
            row["begen_times"], row["baseline_times"] = times_interleaved(
                a.reps, functools.partial(run_quiet, begen_cmd), functools.partial(run_quiet, base_cmd))
            row["begen"] = statistics.median(row["begen_times"])
            row["baseline"] = statistics.median(row["baseline_times"])
        else:
            row["begen"] = median_of(a.reps, functools.partial(run_quiet, begen_cmd))
        row["functions"] = kernix_loop(kc, files)
        row["kernix_loop"] = median_of(a.reps, functools.partial(kernix_loop, kc, files))
        row["kernix_proc"] = median_of(a.reps, functools.partial(
            run_quiet, [sys.executable, str(ROOT / "bench" / "kernix_run.py"), str(corpus), str(tree)]))
        row["grep"] = median_of(a.reps, functools.partial(
            run_quiet, ["grep", "-rc", "--include=*.cu", "@BE", str(tree)], ok=(0, 1)))
        rows.append(row)
    report(rows, a.modules)
    if a.baseline:
        report_baseline(rows, a.reps)
    return 0


def replicate(corpus: pathlib.Path, dest: pathlib.Path, copies: int) -> pathlib.Path:
    """`dest/copy00 .. copyNN`, each an exact copy of the corpus (made once)."""
    stamp = dest / ".complete"
    if not stamp.exists():
        shutil.rmtree(dest, ignore_errors=True)
        for i in range(copies):
            shutil.copytree(corpus, dest / f"copy{i:02d}")
        stamp.touch()
    return dest


def per_file_modules(tree: pathlib.Path) -> pathlib.Path:
    """Give the tree a `begen.yaml` making every source file its own module."""
    config = tree / "begen.yaml"
    text = "modules:\n  per-file: true\n"
    if not config.exists() or config.read_text() != text:
        config.write_text(text)
    return tree


def scan_cmd(exe: pathlib.Path, tree: pathlib.Path) -> list[str]:
    return [str(exe), "scan", str(tree), "--format", "json"]


def scan_status(cmd) -> int:
    """The exit status of one untimed scan."""
    return subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False).returncode


def kernix_loop(kc, files) -> int:
    n = 0
    for f in files:
        n += len(bc.kernix_spec(kc, f.read_text(encoding="utf-8")))
    return n


def run_quiet(cmd, ok=(0, 1)):
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    if r.returncode not in ok:
        raise RuntimeError(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr.decode()[:500]}")


def median_of(reps: int, fn) -> float:
    fn()  # warm-up: page cache, lazy imports
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def times_interleaved(reps: int, fn_a, fn_b) -> tuple[list[float], list[float]]:
    """Times of two functions run in alternation: a warm-up of each, then
    `reps` rounds running both, the first one first in even rounds."""
    fn_a()
    fn_b()
    times_a, times_b = [], []
    for i in range(reps):
        order = [(fn_a, times_a), (fn_b, times_b)]
        for fn, times in order if i % 2 == 0 else order[::-1]:
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return times_a, times_b


def report(rows, modules: bool = False) -> None:
    print()
    print(f"{'corpus':>6} {'files':>5} {'MB':>6} {'funcs':>6} | {'begen':>8} {'kernix':>8} "
          f"{'kx proc':>8} {'grep':>8} | {'kx/begen':>8} {'kxproc/bg':>9} {'begen/grep':>10} | "
          f"{'begen ms/MB':>11} {'kernix ms/MB':>12} {'grep ms/MB':>10}")
    for r in rows:
        ms = lambda s: f"{s * 1e3:7.1f}ms"
        print(f"{r['corpus']:>6} {r['files']:>5} {r['mb']:>6.2f} {r['functions']:>6} | "
              f"{ms(r['begen'])} {ms(r['kernix_loop'])} {ms(r['kernix_proc'])} {ms(r['grep'])} | "
              f"{r['kernix_loop'] / r['begen']:>7.1f}x {r['kernix_proc'] / r['begen']:>8.1f}x "
              f"{r['begen'] / r['grep']:>9.2f}x | "
              f"{r['begen'] * 1e3 / r['mb']:>11.2f} {r['kernix_loop'] * 1e3 / r['mb']:>12.2f} "
              f"{r['grep'] * 1e3 / r['mb']:>10.2f}")
    print()
    for r in rows:
        if r["begen_status"] != 0 and not modules:
            print(f"note: begen exits {r['begen_status']} on {r['corpus']}: names repeated "
                  f"across files are errors within one library (see the docstring)")
        elif r["begen_status"] != 0:
            print(f"note: begen exits {r['begen_status']} on {r['corpus']} with "
                  f"`modules: {{per-file: true}}`")


def report_baseline(rows, reps: int) -> None:
    """begen against the baseline binary, same trees, interleaved runs."""
    print(f"begen vs baseline ({reps} interleaved runs each; median, min; begen/baseline "
          f"as the ratio of medians and the median of each round's ratio):")
    print(f"{'corpus':>6} | {'begen':>8} {'min':>8} | {'baseline':>8} {'min':>8} | "
          f"{'ratio':>7} {'paired':>7}")
    ms = lambda s: f"{s * 1e3:6.1f}ms"
    for r in rows:
        paired = statistics.median([b / base for b, base in
                                    zip(r["begen_times"], r["baseline_times"])])
        print(f"{r['corpus']:>6} | {ms(r['begen'])} {ms(min(r['begen_times']))} | "
              f"{ms(r['baseline'])} {ms(min(r['baseline_times']))} | "
              f"{r['begen'] / r['baseline']:>6.3f}x {paired:>6.3f}x")
    for r in rows:
        if r["baseline_status"] != r["begen_status"]:
            print(f"note: on {r['corpus']} begen exits {r['begen_status']}, "
                  f"the baseline {r['baseline_status']}")


if __name__ == "__main__":
    sys.exit(main())
