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

usage: python bench/scan_bench.py [--begen BIN] [--reps N] [--copies K]
  BIN defaults to $BEGEN_BIN, else target/release/begen (build it with
  `cargo build --release`).
"""

import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "corpus"))
import brainevent_corpus as bc  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--begen", type=pathlib.Path,
                   default=pathlib.Path(os.environ.get("BEGEN_BIN") or ROOT / "target/release/begen"))
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--copies", type=int, default=20)
    p.add_argument("--cache", type=pathlib.Path, default=bc.DEFAULT_CACHE)
    a = p.parse_args()

    if not a.begen.exists():
        print(f"scan_bench: no begen binary at {a.begen}: run `cargo build --release` "
              f"or pass --begen", file=sys.stderr)
        return 2
    try:
        corpus = bc.fetch(a.cache)
    except bc.Unavailable as e:
        print(f"scan_bench: {e}", file=sys.stderr)
        return 3
    big = replicate(corpus, a.cache / f"bench-{a.copies}x", a.copies)
    kc = bc.load_kernix(corpus)

    print(f"scan_bench: {a.begen} ({a.reps} runs each, median; {os.cpu_count()} CPUs)")
    rows = []
    for label, tree in (("1x", corpus), (f"{a.copies}x", big)):
        files = bc.sources(tree)
        mb = sum(f.stat().st_size for f in files) / 1e6
        row = {"corpus": label, "files": len(files), "mb": mb}
        begen_cmd = [str(a.begen), "scan", str(tree), "--format", "json"]
        row["begen_status"] = subprocess.run(begen_cmd, stdout=subprocess.DEVNULL,
                                             stderr=subprocess.DEVNULL).returncode
        row["begen"] = median_of(a.reps, lambda: run_quiet(begen_cmd))
        row["functions"] = kernix_loop(kc, files)
        row["kernix_loop"] = median_of(a.reps, lambda: kernix_loop(kc, files))
        row["kernix_proc"] = median_of(a.reps, lambda: run_quiet(
            [sys.executable, str(ROOT / "bench" / "kernix_run.py"), str(corpus), str(tree)]))
        row["grep"] = median_of(a.reps, lambda: run_quiet(
            ["grep", "-rc", "--include=*.cu", "@BE", str(tree)], ok=(0, 1)))
        rows.append(row)
    report(rows)
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


def kernix_loop(kc, files) -> int:
    n = 0
    for f in files:
        n += len(bc.kernix_spec(kc, f.read_text(encoding="utf-8")))
    return n


def run_quiet(cmd, ok=(0, 1)):
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
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


def report(rows) -> None:
    print()
    print(f"{'corpus':>6} {'files':>5} {'MB':>6} {'funcs':>6} | {'begen':>8} {'kernix':>8} "
          f"{'kx proc':>8} {'grep':>8} | {'kx/begen':>8} {'kxproc/bg':>9} {'begen/grep':>10} | "
          f"{'begen ms/MB':>11} {'kernix ms/MB':>12} {'grep ms/MB':>10}")
    for r in rows:
        ms = lambda s: f"{s * 1e3:7.1f}ms"  # noqa: E731
        print(f"{r['corpus']:>6} {r['files']:>5} {r['mb']:>6.2f} {r['functions']:>6} | "
              f"{ms(r['begen'])} {ms(r['kernix_loop'])} {ms(r['kernix_proc'])} {ms(r['grep'])} | "
              f"{r['kernix_loop'] / r['begen']:>7.1f}x {r['kernix_proc'] / r['begen']:>8.1f}x "
              f"{r['begen'] / r['grep']:>9.2f}x | "
              f"{r['begen'] * 1e3 / r['mb']:>11.2f} {r['kernix_loop'] * 1e3 / r['mb']:>12.2f} "
              f"{r['grep'] * 1e3 / r['mb']:>10.2f}")
    print()
    for r in rows:
        if r["begen_status"] != 0:
            print(f"note: begen exits {r['begen_status']} on {r['corpus']}: names repeated "
                  f"across files are errors within one library (see the docstring)")


if __name__ == "__main__":
    sys.exit(main())
