"""Scan brainevent 0.3.0's whole annotated tree as one library, split into modules.

kernix_compare.py scans each `.cu` file alone, because one library holds each
function name once and 84 names repeat across brainevent's files. With
`modules:` in `begen.yaml` the whole tree is one library and a name needs to be
unique within its module only. This lays out the 61 files once (a copy of
`corpus/` in a scratch directory of the cache) and scans it twice:

  (a) `modules: {per-file: true}`: every file its own module, named from its
      path (`_jit_uniform/csr.cu` -> `jit_uniform_csr`). begen must list all
      732 functions without an error, each with kernix's arg_spec (kernix run
      per file, as in kernix_compare.py), the module this script computes from
      the path, and `target` = `module.name`.
  (b) `modules: {names: {FILE: NAME, ...}}` with, for every file, the module
      name brainevent gives it in its `load_cuda_file(..., name=...)` calls
      (read from the wheel's Python by tests/corpus/kernix_modules.py). Every
      `target` must be kernix's FFI target for that function. A file no call
      loads keeps its per-file name (reported).

usage: python tests/corpus/modules_compare.py [--begen BIN] [--cache DIR] [--keep]
exit status: 0 agree, 1 disagreement (including a begen that rejects `modules:`),
             2 usage/setup error, 3 corpus unavailable (no network/pip).
"""

import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import brainevent_corpus as bc  # noqa: E402
import kernix_compare  # noqa: E402
import kernix_modules  # noqa: E402

SHOWN = 10  # failures printed per check; the rest are counted


class SetupError(Exception):
    """begen did not run or did not print JSON: not a verdict on its answers."""


def main() -> int:
    a = kernix_compare.script_arguments(__doc__, "keep the scratch tree and print its path")
    loaded = kernix_compare.corpus_and_kernix("modules_compare", a.cache)
    if isinstance(loaded, int):
        return loaded
    corpus, kx, files = loaded

    per_file = {f: kernix_modules.per_file_module(f) for f in files}
    if len(set(per_file.values())) != len(files):
        print("modules_compare: two files get the same per-file module name", file=sys.stderr)
        return 2
    mods = kernix_modules.module_names(corpus)
    for line in kernix_modules.report(mods):
        print(f"  {line}")
    if mods.problems:
        print("modules_compare: cannot read every load_cuda_file call (UNRESOLVED above)",
              file=sys.stderr)
        return 2
    named = {f: mods.names[f].name if f in mods.names else per_file[f] for f in files}
    same = sum(1 for f in mods.names if named[f] == per_file[f])
    print(f"  per-file names equal to kernix's: {same} of {len(mods.names)} "
          f"(e.g. {files_example(mods, per_file)})")

    exe = bc.begen_bin(a.begen)
    if not exe.exists():
        print(f"modules_compare: no begen binary at {exe} (build it with `cargo build`, "
              f"or pass --begen / set BEGEN_BIN)", file=sys.stderr)
        return 2

    tree = layout(corpus, a.cache)
    try:
        failures = check(exe, tree, kx, "(a) per-file: true",
                         "modules:\n  per-file: true\n", per_file)
        failures += check(exe, tree, kx, f"(b) names: ({len(named)} files)",
                          names_yaml(named), named)
    except SetupError as e:
        print(f"modules_compare: {e}", file=sys.stderr)
        return 2
    finally:
        if a.keep:
            print(f"  scratch tree kept: {tree}")
        else:
            shutil.rmtree(tree.parent, ignore_errors=True)

    print(f"modules_compare: {'OK' if not failures else 'FAILED'}")
    return 0 if not failures else 1


def files_example(mods, per_file) -> str:
    """Three files whose kernix name differs from the per-file one, as examples
    (from different directories)."""
    diff, dirs = [], set()
    for f, load in sorted(mods.names.items()):
        top = f.split("/")[0]
        if load.name != per_file[f] and top not in dirs and len(diff) < 3:
            diff.append(f)
            dirs.add(top)
    return "; ".join(f"{f}: {mods.names[f].name}, per-file {per_file[f]}" for f in diff)


def layout(corpus: pathlib.Path, cache: pathlib.Path) -> pathlib.Path:
    """A fresh copy of the annotated tree in a scratch directory of the cache
    (its own per run, so concurrent runs do not meet)."""
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="modules-", dir=cache))
    tree = scratch / "brainevent"
    shutil.copytree(corpus, tree)
    return tree


def names_yaml(named: dict[str, str]) -> str:
    """`modules: {names: ...}` as YAML; keys and values JSON-quoted (valid YAML)."""
    lines = ["modules:", "  names:"]
    lines += [f"    {json.dumps(f)}: {json.dumps(n)}" for f, n in sorted(named.items())]
    return "\n".join(lines) + "\n"


def scan(exe: pathlib.Path, tree: pathlib.Path, config: str):
    """Write `begen.yaml` and run `begen scan --format json` on the tree.
    Returns (document, exit status)."""
    (tree / "begen.yaml").write_text(config)
    r = subprocess.run([str(exe), "scan", str(tree), "--format", "json"],
                       capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise SetupError(f"`{exe} scan {tree} --format json` exited {r.returncode}:\n"
                         f"{r.stderr.strip()}")
    try:
        return json.loads(r.stdout), r.returncode
    except json.JSONDecodeError as e:
        raise SetupError(f"begen's JSON for {tree} does not parse ({e}); stdout starts:\n"
                         f"{r.stdout[:500]}") from None


def check(exe, tree, kx, label: str, config: str, modules: dict[str, str]) -> list[str]:
    """One scan of the whole tree with `config`; every function must have
    kernix's arg_spec, the module `modules[file]` and the target `module.name`.
    Prints a summary line and each failure; returns the failures."""
    doc, rc = scan(exe, tree, config)
    funcs = doc.get("functions", [])
    diags = doc.get("diagnostics", [])
    errors = [d for d in diags if d.get("severity") == "error"]
    warnings = [d for d in diags if d.get("severity") == "warning"]

    failures = []
    if any(d.get("file") == "begen.yaml" and "modules" in d.get("message", "") for d in errors):
        failures.append("begen rejects the `modules:` key of begen.yaml: "
                        "this binary predates modules")
    if funcs and not all("module" in f and "target" in f for f in funcs):
        failures.append("functions without `module`/`target` in the JSON: "
                        "this binary predates modules")
    if rc != 0:
        failures.append(f"begen exited {rc}")
    failures += [f"begen error {d.get('file')}:{d.get('line')}: {d.get('message')}"
                 for d in errors]
    seen = {}
    for f in funcs:
        key = (f.get("file"), f.get("name"))
        if key in seen:
            failures.append(f"{key[0]} {key[1]}: listed twice")
        seen[key] = f
    if len(funcs) != bc.EXPECTED_FUNCTIONS:
        failures.append(f"{len(funcs)} functions listed, expected {bc.EXPECTED_FUNCTIONS}")

    good = 0
    for key in sorted(set(kx) | set(seen)):
        problem = function_problem(key, kx.get(key), seen.get(key), modules)
        if problem:
            line = (kx.get(key) or seen[key]).get("line")
            failures.append(f"{key[0]}:{line} {key[1]}: {problem}")
        else:
            good += 1

    print(f"  {label}: {len(funcs)} functions, {len(errors)} errors, {len(warnings)} warnings "
          f"(exit {rc}); {good} of {len(kx)} match kernix's arg_spec, module and target")
    for line in failures[:SHOWN]:
        print(f"    FAILED {line}")
    if len(failures) > SHOWN:
        print(f"    ... and {len(failures) - SHOWN} more")
    return failures


def function_problem(key, kernix, begen, modules) -> str | None:
    """What is wrong with begen's entry for one function; None if nothing."""
    file, name = key
    if begen is None:
        return "not listed by begen"
    if kernix is None:
        return "listed by begen, not found by kernix"
    if begen.get("arg_spec") != kernix["spec"]:
        return (f"arg_spec {kernix_compare.fmt(begen.get('arg_spec'))}, "
                f"kernix {kernix_compare.fmt(kernix['spec'])}")
    want = modules[file]
    if begen.get("module") != want:
        return f"module {begen.get('module')!r}, expected {want!r}"
    if begen.get("target") != f"{want}.{name}":
        return f"target {begen.get('target')!r}, expected {f'{want}.{name}'!r}"
    return None


if __name__ == "__main__":
    sys.exit(main())
