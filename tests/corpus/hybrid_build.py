"""Build brainevent's sources that include dtypes.h or ffi_compat.h with begen.

Most brainevent kernels include only `brainevent/common.h`; a few (the
hybrid-scheduler CSR kernels on 0.3.0) also include `brainevent/dtypes.h` or
`brainevent/ffi_compat.h` and XLA's `xla/ffi/api/ffi.h`. begen ships its own
copy of those headers (build-support/include/brainevent/). For every `.cu`
file of the wheel that includes one of them, this copies the file alone into
a scratch directory and runs `begen build --platform cuda` for one
architecture (the host compiler, cicc and ptxas at -O0:
brainevent_corpus.BUILD_CONFIG) twice:

  - with begen's headers: `-I` names only a directory holding brainevent's
    `cuda_common.h`, so every `brainevent/*.h` comes from begen;
  - with brainevent's include directory first (`-I <wheel>/brainevent/include`),
    so every `brainevent/*.h` comes from the wheel.

Both must compile and link, and the dependency files the compiler writes must
show that each build read the headers it was meant to. No source of 0.3.0
includes ffi_compat.h, so `ffi_compat_probe.cu` (ours) is compiled with nvcc
and run in both orders too: it checks dtypes.h's and ffi_compat.h's API on
hand-made XLA FFI buffers.

usage: python tests/corpus/hybrid_build.py [--begen BIN] [--cache DIR] [--arch ARCH] [--jobs N]
exit status: 0 all built, 1 a build or check failed, 2 setup error (no begen
binary, no nvcc, no XLA FFI headers), 3 corpus unavailable.
"""

import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import brainevent_corpus as bc  # noqa: E402
import reference  # noqa: E402

PROBE = HERE / "ffi_compat_probe.cu"
# The files of 0.3.0 that include the two headers, so a wrong search fails
# instead of silently building nothing.
EXPECTED = ["_csr/binary_csrmv_hybrid.cu", "_tcsr/binary_csrmv_hybrid.cu"]
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*["<]brainevent/(dtypes|ffi_compat)\.h[">]', re.M)
USES_CUDA_COMMON = re.compile(r'^[ \t]*#[ \t]*include[ \t]*["<]cuda_common\.h[">]', re.M)
ORDERS = ("begen", "brainevent")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--begen", help="begen binary (default $BEGEN_BIN, else target/debug/begen)")
    p.add_argument("--cache", type=pathlib.Path, default=bc.DEFAULT_CACHE)
    p.add_argument("--arch", default="sm_90", help="the one CUDA architecture to build (default sm_90)")
    p.add_argument("--jobs", type=int, help="begen build -j (default: begen's)")
    a = p.parse_args()
    t_start = time.monotonic()
    try:
        corpus = bc.fetch(a.cache)
    except bc.Unavailable as e:
        print(f"hybrid_build: corpus unavailable: {e}", file=sys.stderr)
        return 3
    exe = bc.begen_bin(a.begen)
    nvcc = reference.find_nvcc()
    ffi = reference.ffi_include()
    if not exe.exists() or not nvcc or not ffi:
        print(f"hybrid_build: need begen ({exe}), nvcc (NVCC or PATH) and XLA's FFI headers "
              "(XLA_FFI_INCLUDE_DIR or jax): run scripts/setup.sh and source scripts/env.sh",
              file=sys.stderr)
        return 2
    wheel_include = bc.package_dir(corpus) / "include"
    env = dict(os.environ, NVCC=nvcc, XLA_FFI_INCLUDE_DIR=ffi)
    env.setdefault("BEGEN_PYTHON", sys.executable)

    found = {}
    for src in bc.sources(corpus):
        names = sorted({m.group(1) + ".h" for m in INCLUDE.finditer(src.read_text(encoding="utf-8"))})
        if names:
            found[src.relative_to(corpus).as_posix()] = names
    print(f"hybrid_build: brainevent {bc.VERSION}: {len(found)} of {len(bc.sources(corpus))} .cu files "
          f"include brainevent/dtypes.h or brainevent/ffi_compat.h; arch {a.arch}")
    if sorted(found) != EXPECTED:
        print(f"hybrid_build: expected {EXPECTED}, found {sorted(found)}", file=sys.stderr)
        return 1

    scratch = a.cache / "hybrid-build"
    shutil.rmtree(scratch, ignore_errors=True)
    failed = 0
    try:
        for rel, names in found.items():
            failed += build_source(exe, env, a, corpus / rel, rel, names, wheel_include,
                                   scratch / bc.per_file_dir(rel))
        failed += run_probe(nvcc, ffi, a.arch, wheel_include, scratch / "probe")
    finally:
        if not failed:
            shutil.rmtree(scratch, ignore_errors=True)
    took = time.monotonic() - t_start
    if failed:
        print(f"hybrid_build: FAILED ({failed} failures, {took:.0f}s; scratch kept in {scratch})")
        return 1
    print(f"hybrid_build: OK ({took:.0f}s)")
    return 0


def build_source(exe, env, a, src, rel, names, wheel_include, work) -> int:
    """Both begen builds of one source; returns the number of failures."""
    kernels = work / "src"
    kernels.mkdir(parents=True)
    shutil.copyfile(src, kernels / src.name)
    (kernels / "begen.yaml").write_text(bc.BUILD_CONFIG)
    includes = {"brainevent": wheel_include}
    if USES_CUDA_COMMON.search(src.read_text(encoding="utf-8")):
        # Only cuda_common.h, away from brainevent's own brainevent/*.h.
        common = work / "cuda_common"
        common.mkdir()
        shutil.copyfile(wheel_include / "cuda_common.h", common / "cuda_common.h")
        includes["begen"] = common
    else:
        includes["begen"] = None
    failed = 0
    line = f"  {rel} ({', '.join(names)}):"
    for order in ORDERS:
        out = work / f"out-{order}"
        # The dependency files are work files: beside OUT, not in it.
        objs = work / f"work-{order}"
        cmd = [str(exe), "build", str(kernels), "--out", str(out), "--platform", "cuda",
               "--arch", a.arch, "--work-dir", str(objs), "--quiet"]
        if includes[order]:
            cmd += ["-I", str(includes[order])]
        if a.jobs:
            cmd += ["-j", str(a.jobs)]
        t0 = time.monotonic()
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        took = time.monotonic() - t0
        what = "begen's headers" if order == "begen" else "brainevent's first"
        if r.returncode != 0:
            print(f"{line} {what}: begen build exited {r.returncode} ({took:.1f}s)\n"
                  f"    {' '.join(cmd)}\n{_tail(r.stdout + r.stderr)}")
            failed += 1
            continue
        wrong = _wrong_headers(objs, order, wheel_include, names)
        if wrong:
            print(f"{line} {what}: built, but {wrong}")
            failed += 1
            continue
        print(f"{line} {what}: ok ({took:.1f}s)")
    return failed


def _wrong_headers(objs, order, wheel_include, names) -> str | None:
    """What is wrong with where the kernel TU found brainevent/*.h, from the
    compiler's dependency files (in the work directory `objs`); None when
    each header came from the intended side."""
    deps = set()
    for d in objs.rglob("*.d"):
        text = d.read_text(errors="replace").replace("\\\n", " ")
        deps.update(tok for tok in text.split() if not tok.endswith(":"))
    ours = [p for p in map(pathlib.Path, deps) if p.parent.name == "brainevent" and p.suffix == ".h"]
    for name in ["common.h"] + names:
        if not any(p.name == name for p in ours):
            return f"no dependency file lists brainevent/{name}"
    root = wheel_include.resolve()
    in_wheel = [p for p in ours if p.resolve().is_relative_to(root)]
    if order == "begen" and in_wheel:
        return f"it read brainevent's {', '.join(sorted(str(p) for p in in_wheel))}"
    if order == "brainevent" and len(in_wheel) != len(ours):
        rest = sorted(str(p) for p in ours if p not in in_wheel)
        return f"it read headers other than brainevent's: {', '.join(rest)}"
    return None


def run_probe(nvcc, ffi, arch, wheel_include, work) -> int:
    """Compile and run ffi_compat_probe.cu against each side's headers."""
    work.mkdir(parents=True)
    # begen's side: the copy begen builds read (BEGEN_SUPPORT_INCLUDE, else the
    # source tree's, which begen embeds).
    ours = os.environ.get("BEGEN_SUPPORT_INCLUDE") or bc.ROOT / "build-support" / "include"
    includes = {"begen": ours, "brainevent": wheel_include}
    failed = 0
    line = f"  tests/corpus/{PROBE.name}:"
    for order in ORDERS:
        exe = work / f"probe-{order}"
        cmd = [nvcc, "-std=c++17", f"-arch={arch}", "-I", str(includes[order]), "-isystem", ffi,
               "-o", str(exe), str(PROBE)]
        what = "begen's headers" if order == "begen" else "brainevent's"
        t0 = time.monotonic()
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{line} {what}: nvcc exited {r.returncode}\n    {' '.join(cmd)}\n"
                  f"{_tail(r.stdout + r.stderr)}")
            failed += 1
            continue
        r = subprocess.run([str(exe)], capture_output=True, text=True)
        took = time.monotonic() - t0
        if r.returncode != 0:
            print(f"{line} {what}: the probe exited {r.returncode}\n{_tail(r.stdout + r.stderr)}")
            failed += 1
            continue
        print(f"{line} {what}: ok ({took:.1f}s)")
    return failed


def _tail(text: str, lines: int = 40) -> str:
    kept = text.strip().splitlines()[-lines:]
    return "\n".join("    | " + s for s in kept)


if __name__ == "__main__":
    sys.exit(main())
