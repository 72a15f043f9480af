"""Compare `begen scan` with kernix on brainevent 0.3.0's 61 annotated `.cu` files.

Each file is scanned as its own library, as brainevent builds it. For every
`// @BE` function, kernix's own parser (`parse_annotations`, run in
this process from the downloaded wheel, followed by the alias normalisation and
bare-attr resolution of its build step) and `begen scan DIR --format json` must
give the same name and the same canonical arg_spec. A difference fails the
check unless tests/corpus/allowlist.json records it with the reason kernix is
wrong; `--reference` also classifies every signature as `nvcc -E` expands it
(tests/corpus/reference.py) and checks each allow-list entry against that.

usage: python tests/corpus/kernix_compare.py [--begen BIN] [--reference]
           [--cache DIR] [--kernix-only] [--json OUT]
exit status: 0 agree, 1 disagreement (or a stale allow-list entry),
             2 usage/setup error, 3 corpus unavailable (no network/pip).
"""

import argparse
import concurrent.futures
import json
import os
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import brainevent_corpus as bc  # noqa: E402
import reference  # noqa: E402

ALLOWLIST = pathlib.Path(__file__).resolve().parent / "allowlist.json"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--begen", help="begen binary (default $BEGEN_BIN, else target/debug/begen)")
    p.add_argument("--cache", type=pathlib.Path, default=bc.DEFAULT_CACHE,
                   help=f"download cache (default {bc.DEFAULT_CACHE.relative_to(bc.ROOT)})")
    p.add_argument("--reference", action="store_true",
                   help="also check every function against its nvcc -E signature")
    p.add_argument("--kernix-only", action="store_true",
                   help="run kernix (and --reference) without begen")
    p.add_argument("--json", type=pathlib.Path, help="write the per-function table here")
    a = p.parse_args()

    try:
        corpus = bc.fetch(a.cache)
    except bc.Unavailable as e:
        print(f"kernix_compare: corpus unavailable: {e}", file=sys.stderr)
        return 3

    kx, kx_errors = run_kernix(corpus)
    nfiles = len(bc.sources(corpus))
    print(f"kernix_compare: brainevent {bc.VERSION}: {nfiles} .cu files, "
          f"{len(kx)} functions by kernix's parse_annotations"
          + (f", {len(kx_errors)} files kernix rejects" if kx_errors else ""))
    for rel, err in kx_errors.items():
        print(f"  kernix error in {rel}: {err}")
    if (nfiles, len(kx)) != (bc.EXPECTED_FILES, bc.EXPECTED_FUNCTIONS):
        print(f"kernix_compare: expected {bc.EXPECTED_FILES} files and "
              f"{bc.EXPECTED_FUNCTIONS} functions: is {corpus} the right corpus?", file=sys.stderr)
        return 2

    ref = {}
    if a.reference:
        wanted = {}
        for rel, name in kx:
            wanted.setdefault(rel, []).append(name)
        ref = reference.reference_specs(bc.package_dir(corpus), wanted, a.cache)
        bad = {k: v for k, v in ref.items() if v != kx[k]["spec"]}
        print(f"  nvcc -E reference: {len(ref) - len(bad)} of {len(ref)} agree with kernix")

    if a.kernix_only:
        for (rel, name), v in sorted(bad.items()) if a.reference else []:
            print(f"  {rel}:{kx[(rel, name)]['line']} {name}\n"
                  f"      kernix:    {' '.join(kx[(rel, name)]['spec'])}\n"
                  f"      reference: {fmt(v)}")
        return 0

    exe = bc.begen_bin(a.begen)
    if not exe.exists():
        print(f"kernix_compare: no begen binary at {exe} (build it with `cargo build`, "
              f"or pass --begen / set BEGEN_BIN)", file=sys.stderr)
        return 2
    bg, diags, rc = run_begen(exe, corpus)
    if bg is None:
        return 2
    errors = [d for d in diags if d.get("severity") == "error"]
    warnings = [d for d in diags if d.get("severity") == "warning"]
    print(f"  begen scan: {len(bg)} functions, {len(errors)} errors, "
          f"{len(warnings)} warnings (exit {rc})")

    allow = {(e["file"], e["function"]): e for e in json.loads(ALLOWLIST.read_text())}
    rows, failures, allowed = [], [], []
    for key in sorted(set(kx) | set(bg)):
        k = kx.get(key, {}).get("spec")
        b = bg.get(key, {}).get("spec")
        row = {"file": key[0], "function": key[1], "kernix": k, "begen": b,
               "kernix_line": kx.get(key, {}).get("line"), "begen_line": bg.get(key, {}).get("line")}
        if key in ref:
            row["reference"] = ref[key]
        rows.append(row)
        if k == b:
            continue
        entry = allow.get(key)
        if entry and entry["kernix"] == k and entry["begen"] == b:
            allowed.append(row)
        else:
            failures.append(row)

    stale = []
    for key, entry in allow.items():
        row = next((r for r in rows if (r["file"], r["function"]) == key), None)
        if row is None or row not in allowed:
            stale.append(f"{key[0]} {key[1]}: no longer differs as recorded")
        elif a.reference and ref.get(key) != entry["begen"]:
            stale.append(f"{key[0]} {key[1]}: nvcc -E gives {fmt(ref.get(key))}, "
                         f"not begen's {fmt(entry['begen'])}: the entry's reason does not hold")

    agree = sum(1 for r in rows if r["kernix"] == r["begen"])
    print(f"  agree: {agree} of {len(rows)} functions; {len(allowed)} allow-listed "
          f"differences; {len(failures)} disagreements")
    for r in allowed:
        print(f"  allowed  {r['file']}:{r['kernix_line']} {r['function']}: "
              f"{allow[(r['file'], r['function'])]['why']}")
    shown = set()
    for r in failures:
        where = f"{r['file']}:{r['begen_line'] or r['kernix_line']}"
        print(f"  DIFFERS  {where} {r['function']}\n"
              f"      kernix: {fmt(r['kernix'])}\n"
              f"      begen:  {fmt(r['begen'])}"
              + (f"\n      nvcc -E: {fmt(r['reference'])}" if "reference" in r else ""))
        for d in diags if r["file"] not in shown else []:
            if d.get("file") == r["file"]:
                print(f"      begen {d.get('severity')} at line {d.get('line')}: {d.get('message')}")
        shown.add(r["file"])
    # An error is explained by a failure printed above or by an allow-listed
    # function begen rightly rejects in that file; any other fails the check.
    rejected_ok = {r["file"] for r in allowed if r["begen"] is None}
    unexplained = [d for d in errors if d.get("file") not in rejected_ok]
    for d in unexplained:
        if not any(f["file"] == d.get("file") for f in failures):
            print(f"  begen error {d.get('file')}:{d.get('line')}: {d.get('message')}")
    for s in stale:
        print(f"  STALE allow-list entry: {s}")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))

    ok = not failures and not stale and not unexplained
    print(f"kernix_compare: {'OK' if ok else 'FAILED'}")
    return 0 if ok else 1


def script_arguments(doc: str, keep_help: str):
    """The options the corpus scripts share: --begen, --cache, --keep."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--begen", help="begen binary (default $BEGEN_BIN, else target/debug/begen)")
    p.add_argument("--cache", type=pathlib.Path, default=bc.DEFAULT_CACHE,
                   help=f"download cache (default {bc.DEFAULT_CACHE.relative_to(bc.ROOT)})")
    p.add_argument("--keep", action="store_true", help=keep_help)
    return p.parse_args()


def corpus_and_kernix(prog: str, cache: pathlib.Path):
    """The corpus, kernix's functions and the corpus's files; or the exit
    status to stop with (3: no corpus, 2: not the corpus expected)."""
    try:
        corpus = bc.fetch(cache)
    except bc.Unavailable as e:
        print(f"{prog}: corpus unavailable: {e}", file=sys.stderr)
        return 3
    kx, kx_errors = run_kernix(corpus)
    files = [p.relative_to(corpus).as_posix() for p in bc.sources(corpus)]
    print(f"{prog}: brainevent {bc.VERSION}: {len(files)} .cu files, "
          f"{len(kx)} functions by kernix's parse_annotations")
    if kx_errors or (len(files), len(kx)) != (bc.EXPECTED_FILES, bc.EXPECTED_FUNCTIONS):
        print(f"{prog}: expected {bc.EXPECTED_FILES} files and {bc.EXPECTED_FUNCTIONS} "
              f"functions, all accepted by kernix: is {corpus} the right corpus?", file=sys.stderr)
        return 2
    return corpus, kx, files


def run_kernix(corpus: pathlib.Path):
    """{(file, function): {"spec", "line"}} and {file: error} from kernix."""
    kc = bc.load_kernix(corpus)
    found, errors = {}, {}
    for path in bc.sources(corpus):
        rel = path.relative_to(corpus).as_posix()
        src = path.read_text(encoding="utf-8")
        try:
            specs = bc.kernix_spec(kc, src)
        except Exception as e:  # kernix raises KernelError for a file it cannot parse
            errors[rel] = f"{type(e).__name__}: {e}"
            continue
        lines = bc.annotation_lines(src)
        for name, spec in specs.items():
            found[(rel, name)] = {"spec": spec, "line": lines.get(name)}
    return found, errors


def run_begen(exe: pathlib.Path, corpus: pathlib.Path):
    """Scan each file as its own library (perfile/), as brainevent builds them.

    Returns ({(file, function): {"spec", "line"}}, diagnostics, worst exit status),
    files relative to the corpus; (None, None, status) when begen failed to run.
    """
    perfile = corpus.parent / "perfile"
    rels = [p.relative_to(corpus).as_posix() for p in bc.sources(corpus)]

    def scan(rel):
        d = perfile / bc.per_file_dir(rel)
        r = subprocess.run([str(exe), "scan", str(d), "--format", "json"],
                           capture_output=True, text=True)
        return rel, d, r

    found, diags, worst = {}, [], 0
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        for rel, d, r in pool.map(scan, rels):
            if r.returncode not in (0, 1):
                print(f"kernix_compare: `{exe} scan {d} --format json` exited {r.returncode}:\n"
                      f"{r.stderr.strip()}", file=sys.stderr)
                return None, None, r.returncode
            worst = max(worst, r.returncode)
            try:
                doc = json.loads(r.stdout)
            except json.JSONDecodeError as e:
                print(f"kernix_compare: begen's JSON for {d} does not parse ({e}); stdout starts:\n"
                      f"{r.stdout[:500]}", file=sys.stderr)
                return None, None, r.returncode
            for f in doc.get("functions", []):
                found[(rel, f["name"])] = {"spec": f["arg_spec"], "line": f.get("line")}
            for g in doc.get("diagnostics", []):
                diags.append(dict(g, file=rel))
    return found, diags, worst


def fmt(spec) -> str:
    if spec is None:
        return "(not listed)"
    if isinstance(spec, str):
        return f"({spec})"
    return " ".join(spec)


if __name__ == "__main__":
    sys.exit(main())
