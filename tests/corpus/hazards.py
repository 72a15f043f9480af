"""Small sources where kernix's regular expressions go wrong, three opinions each.

Every folder under tests/corpus/hazards/ holds one annotated `.cu` file (ours,
not brainevent's) built around one pattern that kernix misreads: a comment
inside a parameter list, a macro parameter used as a type, east const, ...
For each, this prints what kernix's `parse_annotations` makes of it, what
`begen scan` reports, and the signature `nvcc -E` produces (the reference,
tests/corpus/reference.py). begen must agree with the reference: the same
arg_spec, or an error diagnostic where the reference finds a parameter the
seed cannot map. KNOWN_GAPS lists the cases where begen is known to differ,
with the reason; they are printed on every run but do not fail it.

usage: python tests/corpus/hazards.py [--begen BIN] [--cache DIR]
exit status: 0 begen agrees, 1 it does not, 2 setup error, 3 corpus unavailable.
"""

import argparse
import json
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import brainevent_corpus as bc  # noqa: E402
import reference  # noqa: E402

HAZARDS = HERE / "hazards"
KNOWN_GAPS: dict[str, str] = {}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--begen", help="begen binary (default $BEGEN_BIN, else target/debug/begen)")
    p.add_argument("--cache", type=pathlib.Path, default=bc.DEFAULT_CACHE)
    a = p.parse_args()
    try:
        corpus = bc.fetch(a.cache)  # kernix's parser comes from the wheel
    except bc.Unavailable as e:
        print(f"hazards: kernix unavailable: {e}", file=sys.stderr)
        return 3
    kc = bc.load_kernix(corpus)
    exe = bc.begen_bin(a.begen)
    nvcc = reference.find_nvcc()
    if not exe.exists() or not nvcc:
        print(f"hazards: need begen ({exe}) and nvcc (NVCC or PATH)", file=sys.stderr)
        return 2
    includes = [bc.ROOT / "build-support" / "include", bc.package_dir(corpus) / "include"]
    include = next(d for d in includes if (d / "brainevent" / "common.h").exists())

    failed = 0
    for case in sorted(d for d in HAZARDS.iterdir() if d.is_dir()):
        src = case / f"{case.name}.cu"
        text = src.read_text()
        first = text.splitlines()[0].removeprefix("// Hazard: ")
        try:
            kx = bc.kernix_spec(kc, text)
        except Exception as e:  # kernix's KernelError
            kx = f"error: {str(e).splitlines()[0]}"
        r = subprocess.run([str(exe), "scan", str(case), "--format", "json"],
                           capture_output=True, text=True)
        try:
            doc = json.loads(r.stdout)
        except json.JSONDecodeError:
            print(f"hazards: begen scan {case} exited {r.returncode} without JSON:\n"
                  f"{r.stderr.strip()}", file=sys.stderr)
            return 2
        bg = {f["name"]: f["arg_spec"] for f in doc["functions"]}
        errors = [d["message"] for d in doc["diagnostics"] if d["severity"] == "error"]
        pp = subprocess.run([nvcc, "-E", "-x", "cu", "-I", str(include), "-I", str(case), str(src)],
                            capture_output=True, text=True)
        if pp.returncode != 0:
            print(f"hazards: nvcc -E {src} failed:\n{pp.stderr.strip()}", file=sys.stderr)
            return 2
        sigs = reference.signatures(pp.stdout)
        # The functions the preprocessed source really defines under an annotation.
        names = set(bg) | (set(kx) if isinstance(kx, dict) else set()) | _annotated(text)
        ref = {n: reference.classify(sigs[n][0]) for n in sorted(names) if len(sigs.get(n, [])) == 1}

        want = {n: s for n, s in ref.items() if not any(t.startswith("error(") for t in s)}
        want_error = sorted(set(ref) - set(want))
        ok = bg == want and (not want_error or errors)
        verdict = "ok" if ok else ("known gap" if case.name in KNOWN_GAPS else "BEGEN DIFFERS")
        if not ok and case.name not in KNOWN_GAPS:
            failed += 1
        print(f"{case.name}: {first}  [{verdict}]")
        print(f"    kernix:  {_fmt(kx)}")
        print(f"    begen:   {_fmt(bg)}" + "".join(f"\n             error: {m}" for m in errors))
        print(f"    nvcc -E: {_fmt(ref)}")
        if not ok and case.name in KNOWN_GAPS:
            print(f"    ({KNOWN_GAPS[case.name]})")
        elif ok and case.name in KNOWN_GAPS:
            print("    (listed in KNOWN_GAPS but begen now agrees: remove the entry)")
    print(f"hazards: {'OK' if not failed else f'FAILED ({failed} cases)'}")
    return 1 if failed else 0


def _annotated(text: str) -> set[str]:
    return set(bc.annotation_lines(text))


def _fmt(x) -> str:
    if isinstance(x, dict):
        return "; ".join(f"{n}: {' '.join(s)}" for n, s in sorted(x.items())) or "(nothing)"
    return str(x)


if __name__ == "__main__":
    sys.exit(main())
