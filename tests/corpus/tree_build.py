"""Build brainevent 0.3.0's whole kernel tree as ONE library with modules, for real.

modules_compare.py *scans* the tree with kernix's module names; this compiles
it. It lays out the annotated tree (a copy of the cache's `corpus/` in a
scratch directory of the cache) beside an include directory that holds only
the wheel's `cuda_common.h` (not brainevent's own `brainevent/*.h`: the sources
compile against begen's support headers), writes

    name: brainevent_aot
    cxx_flags: [-O0]
    cuda: {flags: [-Xcompiler=-O0, -Xcicc=-O0, -Xptxas=-O0]}
    modules: {names: {FILE: NAME, ...}}

with the module name brainevent gives every file (tests/corpus/kernix_modules.py;
a file no call loads keeps its per-file name, as in modules_compare.py; the
host compiler, cicc and ptxas at -O0: brainevent_corpus.BUILD_CONFIG), and runs

    begen build TREE --out OUT --arch sm_90 -I INCLUDE --work-dir OUT.work --quiet

with the environment's nvcc (`source scripts/env.sh`: pip's toolkit). The build
must succeed (its wall time is printed), and then:

  - `begen scan --format json` of the same tree lists every function of every
    built source, none with an error, each with kernix's arg_spec, module and
    target `<module>.<function>` (modules_compare.py's comparison);
  - the manifest `brainevent_aot.yaml` lists exactly those functions, with the
    same module, target and arg_spec;
  - `nm -D --defined-only libbrainevent_aot.so` exports each function's
    `handler_symbol` as code, and no other `begen_` symbol but the manifest's
    `xla_ffi_api_symbol`: one handler per function.

Sources that cannot build here are left out, each with its reason printed:
`_dense/binary_dense_cublas.cu` (cuBLAS's headers are not in the pinned pip
toolkit), `_tcsr/tile_mm/binary_csrmm_tile.cu` (includes `bn_tile.cuh`, which
the wheel does not ship), and any source including a `brainevent/*.h` header
that begen's support headers (build-support/include, or $BEGEN_SUPPORT_INCLUDE)
do not have.

usage: python tests/corpus/tree_build.py [--begen BIN] [--cache DIR] [--keep]
exit status: 0 built and checked, 1 failure (the build, or a check after it),
             2 usage/setup error (no begen, nvcc or nm), 3 corpus unavailable.
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import brainevent_corpus as bc  # noqa: E402
import kernix_compare  # noqa: E402
import kernix_modules  # noqa: E402
import modules_compare as mc  # noqa: E402

LIBRARY = "brainevent_aot"
ARCH = "sm_90"
SHOWN = mc.SHOWN  # failures printed per check; the rest are counted
SHOWN_LINES = 60  # lines of a failed build's report printed

# Sources that cannot build against the pinned toolchain and the wheel, whatever begen does.
CANNOT_BUILD = {
    "_dense/binary_dense_cublas.cu":
        "includes <cublas_v2.h>: cuBLAS's headers are not in the pinned pip CUDA toolkit",
    "_tcsr/tile_mm/binary_csrmm_tile.cu":
        'includes "bn_tile.cuh", which the wheel does not ship',
}
BRAINEVENT_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"(brainevent/[^"]+)"', re.M)


class SetupError(Exception):
    """A tool is missing or did not run: not a verdict on begen's output."""


def main() -> int:
    a = kernix_compare.script_arguments(__doc__, "keep the scratch tree and the build's output and print their path")
    loaded = kernix_compare.corpus_and_kernix("tree_build", a.cache)
    if isinstance(loaded, int):
        return loaded
    corpus, kx, files = loaded
    cuda_common = bc.package_dir(corpus) / "include" / "cuda_common.h"
    if not cuda_common.is_file():
        print(f"tree_build: {cuda_common} is missing: is {corpus} the right corpus?",
              file=sys.stderr)
        return 2

    mods = kernix_modules.module_names(corpus)
    if mods.problems:
        for line in kernix_modules.report(mods):
            print(f"  {line}")
        print("tree_build: cannot read every load_cuda_file call (UNRESOLVED above)",
              file=sys.stderr)
        return 2

    try:
        exe, nvcc, nm = tools(a.begen)
    except SetupError as e:
        print(f"tree_build: {e}", file=sys.stderr)
        return 2
    print(f"  begen {exe}; nvcc {nvcc}; --arch {ARCH}")

    try:
        skipped = left_out(corpus, files, support_dir())
    except SetupError as e:
        print(f"tree_build: {e}", file=sys.stderr)
        return 2
    built = [f for f in files if f not in skipped]
    per_file_count = {}
    for (f, _name) in kx:
        per_file_count[f] = per_file_count.get(f, 0) + 1
    for f, why in skipped.items():
        print(f"  left out {f} ({per_file_count.get(f, 0)} functions): {why}")
    expected = {key: v for key, v in kx.items() if key[0] in built}
    named = {f: mods.names[f].name if f in mods.names else kernix_modules.per_file_module(f)
             for f in built}
    unnamed = [f for f in built if f not in mods.names]
    print(f"  building {len(built)} of {len(files)} files, {len(expected)} of {len(kx)} "
          f"functions, {len(set(named.values()))} modules by kernix's names"
          + (f" ({', '.join(f'{f}: per-file {named[f]}' for f in unnamed)})" if unnamed else ""))

    scratch = pathlib.Path(tempfile.mkdtemp(prefix="tree-", dir=a.cache))
    try:
        tree, include, out = layout(corpus, cuda_common, scratch, skipped)
        failures = run_checks(exe, nm, tree, include, out, expected, named)
    except SetupError as e:
        print(f"tree_build: {e}", file=sys.stderr)
        return 2
    finally:
        if a.keep:
            print(f"  scratch kept: {scratch} (tree brainevent/, include/, out/)")
        else:
            shutil.rmtree(scratch, ignore_errors=True)

    print(f"tree_build: {'OK' if not failures else 'FAILED'}")
    return 0 if not failures else 1


def tools(begen_arg: str | None):
    """begen, nvcc (for the message: begen finds it the same way, $NVCC first) and nm."""
    exe = bc.begen_bin(begen_arg)
    if not exe.exists():
        raise SetupError(f"no begen binary at {exe} (build it with `cargo build`, "
                         f"or pass --begen / set BEGEN_BIN)")
    nvcc = os.environ.get("NVCC") or shutil.which("nvcc")
    if not nvcc or not shutil.which(nvcc):
        raise SetupError(f"no nvcc (NVCC={os.environ.get('NVCC')!r}, none on PATH): "
                         f"run scripts/setup.sh and `source scripts/env.sh`")
    nm = shutil.which(os.environ.get("NM", "nm"))
    if not nm:
        raise SetupError("no nm (binutils) to list the library's exports")
    return exe, nvcc, nm


def support_dir() -> pathlib.Path:
    """begen's support headers as the binary under test uses them: the copy
    $BEGEN_SUPPORT_INCLUDE names, else the repository's (embedded in begen)."""
    env = os.environ.get("BEGEN_SUPPORT_INCLUDE")
    return pathlib.Path(env) if env else bc.ROOT / "build-support" / "include"


def left_out(corpus: pathlib.Path, files: list[str], support: pathlib.Path) -> dict[str, str]:
    """{file: why} for the sources that cannot build here."""
    out = {}
    for f in files:
        if f in CANNOT_BUILD:
            out[f] = CANNOT_BUILD[f]
            continue
        text = (corpus / f).read_text(encoding="utf-8")
        lacking = [h for h in dict.fromkeys(BRAINEVENT_INCLUDE.findall(text))
                   if not (support / h).is_file()]
        if lacking:
            where = support.relative_to(bc.ROOT) if support.is_relative_to(bc.ROOT) else support
            out[f] = (f"includes {', '.join(lacking)}, which begen's support headers "
                      f"({where}) do not have yet")
    missing = sorted(set(CANNOT_BUILD) - set(files))
    if missing:
        raise SetupError(f"{', '.join(missing)} not in {corpus}: is it the right corpus?")
    return out


def layout(corpus, cuda_common, scratch: pathlib.Path, skipped):
    """The tree without the left-out sources, an include directory with only
    `cuda_common.h`, and the output directory's path."""
    tree = scratch / "brainevent"
    shutil.copytree(corpus, tree)
    for f in skipped:
        (tree / f).unlink()
    include = scratch / "include"
    include.mkdir()
    shutil.copyfile(cuda_common, include / "cuda_common.h")
    return tree, include, scratch / "out"


def run_checks(exe, nm, tree, include, out, expected, named) -> list[str]:
    """Scan, build, then check the manifest and the exports. Prints each
    step's summary and failures; returns the failures."""
    config = f"name: {LIBRARY}\n" + bc.BUILD_CONFIG + mc.names_yaml(named)
    failures = []

    # (a) the scan of the tree that is built: functions, arg_specs, modules, targets
    doc, rc = mc.scan(exe, tree, config)
    scanned, bad, good = scan_problems(doc, rc, expected, named)
    show("(a) begen scan", f"{len(scanned)} functions (exit {rc}); {good} of {len(expected)} "
         f"match kernix's arg_spec, module and target", bad)
    failures += bad

    # (b) the build
    cmd = [str(exe), "build", str(tree), "--out", str(out), "--arch", ARCH,
           "-I", str(include), "--work-dir", str(work_dir(out)), "--quiet"]
    start = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - start
    lines = (r.stdout + r.stderr).splitlines()
    warnings = sum(1 for line in lines if ": warning:" in line or line.startswith("warning:"))
    print(f"  (b) begen build: exit {r.returncode} after {wall:.1f} s wall "
          f"({minutes(wall)}, {os.cpu_count()} CPUs, -j default); "
          f"{warnings} compiler warning lines")
    if r.returncode != 0:
        # begen's report starts at its first `error:` line (compiler warnings of
        # the TUs that compiled come before it); else show the end.
        first = next((i for i, line in enumerate(lines) if line.startswith("error")), None)
        report = lines[first:] if first is not None else lines[-SHOWN_LINES:]
        print(f"    FAILED `begen build` exited {r.returncode}:")
        for line in report[:SHOWN_LINES]:
            print(f"      {line}")
        if len(report) > SHOWN_LINES:
            print(f"      ... and {len(report) - SHOWN_LINES} more lines")
        hint = stale_support_hint(out, tree)
        if hint:
            print(f"    {hint}")
        return failures + [f"begen build exited {r.returncode}"]

    # (c) the manifest lists what the scan lists
    manifest = out / f"{LIBRARY}.yaml"
    for name in (f"lib{LIBRARY}.so", f"{LIBRARY}.py", f"{LIBRARY}.pyi", f"{LIBRARY}.yaml"):
        if not (out / name).is_file():
            failures.append(f"{out / name} was not written")
    if not manifest.is_file():
        show("(c) manifest", "missing", failures)
        return failures
    listed = {(f.get("file"), f.get("name")): f for f in read_manifest(manifest)}
    bad, good = manifest_problems(listed, scanned)
    show("(c) manifest", f"{len(listed)} functions, {good} of {len(scanned)} equal to the "
         f"scan's (module, target, arg_spec)", bad)
    failures += bad

    # (d) one exported handler per function
    lib = out / f"lib{LIBRARY}.so"
    if lib.is_file():
        exported = exports(nm, lib)
        handlers = {f.get("handler_symbol"): key for key, f in listed.items()}
        bad = []
        for sym, key in sorted(handlers.items(), key=str):
            if exported.get(sym) not in ("T", "t", "W"):
                bad.append(f"{key[0]} {key[1]}: handler {sym} is not exported "
                           f"(nm: {exported.get(sym, 'absent')})")
        if len(handlers) != len(listed):
            bad.append(f"{len(listed)} functions but {len(handlers)} distinct handler symbols")
        # The manifest names the version symbol the Python module's gate reads.
        api = next((line.split(":", 1)[1].strip() for line in manifest.read_text(encoding="utf-8").splitlines()
                    if line.startswith("xla_ffi_api_symbol:")), None)
        if api is not None and exported.get(api) not in ("T", "t", "W"):
            bad.append(f"the XLA FFI API version symbol {api} is not exported")
        extra = sorted(s for s in exported if s.startswith("begen_") and s not in handlers and s != api)
        bad += [f"exported {s}, which no function of the manifest names" for s in extra]
        size = lib.stat().st_size
        show("(d) nm -D --defined-only", f"{len(exported)} defined dynamic symbols, "
             f"{sum(1 for s in handlers if exported.get(s) in ('T', 't', 'W'))} of "
             f"{len(listed)} handlers exported, {len(extra)} other begen_ symbols; "
             f"lib{LIBRARY}.so {size / 2**20:.1f} MiB", bad)
        failures += bad
    return failures


def scan_problems(doc, rc, expected, named):
    """The scan's functions by (file, name), its failures, and how many
    functions are right (modules_compare.py's comparison with kernix)."""
    funcs = doc.get("functions", [])
    errors = [d for d in doc.get("diagnostics", []) if d.get("severity") == "error"]
    bad = [f"begen scan exited {rc}"] if rc != 0 else []
    bad += [f"begen error {d.get('file')}:{d.get('line')}: {d.get('message')}" for d in errors]
    seen = {}
    for f in funcs:
        key = (f.get("file"), f.get("name"))
        if key in seen:
            bad.append(f"{key[0]} {key[1]}: listed twice")
        seen[key] = f
    good = 0
    for key in sorted(set(expected) | set(seen), key=str):
        problem = mc.function_problem(key, expected.get(key), seen.get(key), named)
        if problem:
            line = (expected.get(key) or seen[key]).get("line")
            bad.append(f"{key[0]}:{line} {key[1]}: {problem}")
        else:
            good += 1
    return seen, bad, good


def manifest_problems(listed, scanned):
    """Failures between the manifest and the scan, and how many functions agree."""
    bad, good = [], 0
    for key in sorted(set(listed) | set(scanned), key=str):
        m, s = listed.get(key), scanned.get(key)
        if m is None:
            bad.append(f"{key[0]} {key[1]}: scanned, not in the manifest")
        elif s is None:
            bad.append(f"{key[0]} {key[1]}: in the manifest, not scanned")
        else:
            diff = [f"{k} {m.get(k)!r}, scan {s.get(k)!r}"
                    for k in ("module", "target", "arg_spec") if m.get(k) != s.get(k)]
            if not m.get("handler_symbol"):
                diff.append("no handler_symbol")
            if diff:
                bad.append(f"{key[0]} {key[1]}: " + "; ".join(diff))
            else:
                good += 1
    return bad, good


def read_manifest(path: pathlib.Path) -> list[dict]:
    """The `functions:` list of begen's manifest, read without a YAML library.

    Enough for what serde_yaml writes there: a top-level `functions:` key, then
    one `- key: value` block per function, its keys indented by two, scalar
    values (plain, 'single' or "double" quoted) and block lists (`- item`
    lines at the key's indentation or deeper) or flow lists (`[a, b]`)."""
    funcs, cur, key_list, in_funcs = [], None, None, False
    for raw in path.read_text(encoding="utf-8").splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        if not raw.startswith((" ", "-")):  # a top-level key
            in_funcs = raw.rstrip() == "functions:"
            key_list = None
            continue
        if not in_funcs:
            continue
        if raw.startswith("- "):
            cur = {}
            funcs.append(cur)
            raw = "  " + raw[2:]
            key_list = None
        if cur is None:
            continue
        body = raw.strip()
        if body.startswith("- ") and key_list is not None:
            cur[key_list].append(scalar(body[2:]))
            continue
        m = re.match(r"^([A-Za-z_][\w.-]*):(?: (.*))?$", body)
        if not m:
            continue
        k, v = m.group(1), (m.group(2) or "").strip()
        if v == "":
            cur[k], key_list = [], k
        elif v.startswith("[") and v.endswith("]"):
            inner = v[1:-1].strip()
            cur[k] = [scalar(x.strip()) for x in inner.split(",")] if inner else []
            key_list = None
        else:
            cur[k], key_list = scalar(v), None
    return funcs


def scalar(v: str):
    """A YAML scalar as serde_yaml writes one: quoted strings, booleans, integers, text."""
    if len(v) >= 2 and v[0] == v[-1] == "'":
        return v[1:-1].replace("''", "'")
    if len(v) >= 2 and v[0] == v[-1] == '"':
        return v[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
    if v in ("true", "false"):
        return v == "true"
    if re.fullmatch(r"-?\d+", v):
        return int(v)
    return v


def exports(nm: str, lib: pathlib.Path) -> dict[str, str]:
    """{symbol: nm type letter} of the library's defined dynamic symbols."""
    r = subprocess.run([nm, "-D", "--defined-only", str(lib)], capture_output=True, text=True)
    if r.returncode != 0:
        raise SetupError(f"`{nm} -D --defined-only {lib}` exited {r.returncode}:\n"
                         f"{r.stderr.strip()}")
    out = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            out[parts[2]] = parts[1]
        elif len(parts) == 2:  # an absolute symbol without a value column
            out[parts[1]] = parts[0]
    return out


def work_dir(out: pathlib.Path) -> pathlib.Path:
    """begen's work files, beside OUT (OUT holds only the four outputs)."""
    return out.with_name(out.name + ".work")


def stale_support_hint(out: pathlib.Path, tree: pathlib.Path) -> str | None:
    """When a built source includes a brainevent/ header that the binary's
    embedded copy lacks (a begen built before build-support/ gained it)."""
    used = work_dir(out) / LIBRARY / "include"
    if not used.is_dir() or os.environ.get("BEGEN_SUPPORT_INCLUDE"):
        return None
    wanted = set()
    for cu in tree.rglob("*.cu"):
        wanted.update(BRAINEVENT_INCLUDE.findall(cu.read_text(encoding="utf-8")))
    lacking = sorted(h for h in wanted if not (used / h).is_file())
    if not lacking:
        return None
    return (f"the binary's support headers ({used}) lack {', '.join(lacking)}, which "
            f"build-support/include has: rebuild begen (`cargo build`)")


def show(label: str, summary: str, failures: list[str]) -> None:
    print(f"  {label}: {summary}")
    for line in failures[:SHOWN]:
        print(f"    FAILED {line}")
    if len(failures) > SHOWN:
        print(f"    ... and {len(failures) - SHOWN} more")


def minutes(seconds: float) -> str:
    m, s = divmod(round(seconds), 60)
    return f"{m}m{s:02d}s"


if __name__ == "__main__":
    sys.exit(main())
