"""Build-time and first-call benchmarks for brainevent's kernel tree, run by
`scripts/gpu-brainevent.sh BIN bench` on the GPU machine (after its install
and build steps: brainevent installed in WORK/site, the layout in WORK/tree,
begen's library of the whole tree in WORK/out).

  kernix-compile   kernix compiles every module the library holds (the same
                   sources, names and -D flags, kernix's own cache cleared),
                   P modules at a time in P worker processes.
  begen-per-file   begen builds every source as its own library (its
                   variants with it), one `begen build -j 1` per source, P
                   at a time: what a build driven per file costs.
  first-result     a fresh Python process from `import brainevent` to the
                   first result of a cuda_raw operation: begen's prebuilt
                   library served by the loader of docs/shipping.md, kernix
                   with an empty cache (it compiles the module), kernix with
                   that cache warm. Rounds interleave the three.

usage: python bench/gpu/brainevent_build.py WORK STEP [--begen BIN] [--jobs P] [--rounds N]
Prints one table per step; `begen build`'s own clean-build time is the
script's build step.
"""

import argparse
import concurrent.futures as cf
import multiprocessing
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import time


def modules(tree):
    """(source relative to the tree, module, defines) for every module of the
    begen.yaml that tests/gpu/brainevent_layout.py writes (read by its shape:
    `"file": "module"` lines, then variants as `- {module: M, defines: {K: V}}`
    under `"file":`; PyYAML may be missing on the GPU machine), and its text."""
    text = (tree / "begen.yaml").read_text()
    out, source = [], None
    for line in text.splitlines():
        if m := re.fullmatch(r'\s+"([^"]+)": "([^"]+)"', line):
            out.append((m[1], m[2], {}))
        elif m := re.fullmatch(r'\s+"([^"]+)":', line):
            source = m[1]
        elif m := re.fullmatch(r"\s+- \{module: (\w+), defines: \{(.*)\}\}", line):
            defines = dict(kv.split(": ") for kv in m[2].split(", "))
            out.append((source, m[1], defines))
    return out, text


# ---- kernix ------------------------------------------------------------------

def _kernix_one(site, rel, module, defines):
    """In a worker: kernix compiles (and loads) one module; seconds, or the error."""
    t0 = time.perf_counter()
    try:
        if module == "dense_binary_cublas":
            # brainevent's own loader: it finds libcublas and links it.
            from brainevent._dense.binary import _load_dense_cublas_file
            _load_dense_cublas_file()
        else:
            from brainevent._op.kernix_pipeline import load_cuda_file
            flags = [f"-D{k}={v}" for k, v in defines.items()]
            load_cuda_file(pathlib.Path(site) / "brainevent" / rel, name=module,
                           **({"extra_cuda_cflags": flags} if flags else {}))
        return module, time.perf_counter() - t0, None
    except Exception as e:  # reported per module, the run goes on
        return module, time.perf_counter() - t0, f"{type(e).__name__}: {str(e)[:300]}"


def kernix_compile(work, jobs):
    mods, _ = modules(work / "tree" / "brainevent")
    cache = work / "cache-bench-kernix"
    shutil.rmtree(cache, ignore_errors=True)
    os.environ["BRAINEVENT_CACHE_DIR"] = str(cache)
    os.environ.pop("BEGEN_AOT_DIR", None)
    ctx = multiprocessing.get_context("spawn")
    t0 = time.perf_counter()
    done = []
    with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        futs = [pool.submit(_kernix_one, str(work / "site"), f, m, d) for f, m, d in mods]
        for fut in cf.as_completed(futs):
            done.append(fut.result())
    wall = time.perf_counter() - t0
    ok = [t for _, t, e in done if e is None]
    failed = [(m, e) for m, _, e in done if e is not None]
    print(f"kernix, cold cache, {jobs} worker processes: {len(ok)} of {len(mods)} modules compiled, "
          f"{wall:.1f} s wall (worker start-up and imports included); "
          f"sum of per-module times {sum(ok):.1f} s (one module at a time, as a first call pays), "
          f"slowest {max(ok, default=0):.1f} s")
    for m, e in failed:
        print(f"  not compiled by kernix: {m}: {e}")
    return wall


# ---- begen per file ----------------------------------------------------------

def _begen_one(begen, tree, inc, work, rel, mods, text):
    """Builds one source (and its variants) as its own library; seconds, or the error."""
    name = mods[0][1]
    d = work / "perfile" / name
    shutil.rmtree(d, ignore_errors=True)
    (d / "src" / rel).parent.mkdir(parents=True)
    shutil.copy(tree / rel, d / "src" / rel)
    doc = f'name: pf_{name}\nmodules:\n  names:\n    "{rel}": "{name}"\n'
    variants = [(m, defs) for _, m, defs in mods[1:]]
    if variants:
        doc += f'variants:\n  "{rel}":\n'
        for m, defs in variants:
            doc += f"    - {{module: {m}, defines: {{{', '.join(f'{k}: {v}' for k, v in defs.items())}}}}}\n"
    if "cublas" in name and "\nlink:" in text:
        doc += text[text.index("\nlink:") + 1:]
    (d / "src" / "begen.yaml").write_text(doc)
    t0 = time.perf_counter()
    r = subprocess.run([begen, "build", str(d / "src"), "--out", str(d / "out"), "--platform", "cuda",
                        "-I", str(inc), "--quiet", "-j", "1"], capture_output=True, text=True, check=False)
    took = time.perf_counter() - t0
    return name, took, None if r.returncode == 0 else r.stderr.strip()[-300:]


def begen_per_file(work, begen, jobs):
    tree = work / "tree" / "brainevent"
    inc = work / "tree" / "include"
    mods, text = modules(tree)
    sources = {}
    for f, m, d in mods:
        sources.setdefault(f, []).append((f, m, d))
    shutil.rmtree(work / "perfile", ignore_errors=True)
    t0 = time.perf_counter()
    with cf.ThreadPoolExecutor(max_workers=jobs) as pool:
        done = list(pool.map(lambda kv: _begen_one(begen, tree, inc, work, kv[0], kv[1], text), sources.items()))
    wall = time.perf_counter() - t0
    ok = [t for _, t, e in done if e is None]
    print(f"begen per file, {jobs} `begen build -j 1` at a time: {len(ok)} of {len(sources)} sources "
          f"({len(mods)} modules), {wall:.1f} s wall; sum of per-source times {sum(ok):.1f} s, "
          f"slowest {max(ok, default=0):.1f} s")
    for m, _, e in done:
        if e is not None:
            print(f"  failed: {m}: {e}")
    return wall


# ---- import to first result -------------------------------------------------

FIRST = r"""
import time
t0 = time.perf_counter()
import brainevent
import jax, jax.numpy as jnp
from brainevent._dense.binary import binary_densemv
w = jnp.ones((256, 512), jnp.float32)
s = (jnp.arange(512) % 3 == 0)
y = binary_densemv(w, s, transpose=False, backend="cuda_raw")
y.block_until_ready()
took = time.perf_counter() - t0
assert float(y[0]) == float((jnp.arange(512) % 3 == 0).sum()), y[:4]
print(took)
"""


def first_result(work, rounds):
    base = dict(os.environ)
    base.pop("BEGEN_AOT_DIR", None)
    cold = work / "cache-first-cold"
    warm = work / "cache-first-warm"
    shutil.rmtree(warm, ignore_errors=True)
    modes = {
        "begen prebuilt": dict(base, BEGEN_AOT_DIR=str(work / "out"), BEGEN_AOT_LOG=str(work / "first.log"),
                               BRAINEVENT_CACHE_DIR=str(work / "cache-first-begen")),
        "kernix cold cache": dict(base, BRAINEVENT_CACHE_DIR=str(cold)),
        "kernix warm cache": dict(base, BRAINEVENT_CACHE_DIR=str(warm)),
    }

    def once(mode):
        if mode == "kernix cold cache":
            shutil.rmtree(cold, ignore_errors=True)
        r = subprocess.run([sys.executable, "-c", FIRST], env=modes[mode], capture_output=True, text=True, check=False)
        if r.returncode != 0:
            raise SystemExit(f"{mode}: {r.stderr[-800:]}")
        return float(r.stdout.strip().splitlines()[-1])

    once("kernix warm cache")  # fills the warm cache
    times = {m: [] for m in modes}
    for _ in range(rounds):
        for m in modes:
            times[m].append(once(m))
    served = (work / "first.log").read_text() if (work / "first.log").exists() else ""
    print(f"import brainevent -> first binary_densemv result (cuda_raw), fresh process each, {rounds} rounds:")
    for m, ts in times.items():
        print(f"  {m:<18} median {statistics.median(ts):6.2f} s  min {min(ts):6.2f} s  max {max(ts):6.2f} s")
    b = statistics.median(times["begen prebuilt"])
    print(f"  kernix cold / begen {statistics.median(times['kernix cold cache']) / b:.1f}x, "
          f"kernix warm / begen {statistics.median(times['kernix warm cache']) / b:.2f}x; "
          f"begen's loader served: {sorted({l.split()[1] for l in served.split(chr(10)) if l.startswith('served')})}")
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work", type=pathlib.Path)
    ap.add_argument("step", choices=["kernix-compile", "begen-per-file", "first-result"])
    ap.add_argument("--begen", default="begen")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    if a.step == "kernix-compile":
        kernix_compile(a.work, a.jobs)
    elif a.step == "begen-per-file":
        begen_per_file(a.work, a.begen, a.jobs)
    else:
        first_result(a.work, a.rounds)


if __name__ == "__main__":
    main()
