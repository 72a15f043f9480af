"""Builds begen-annotated versions of jax's own `examples/ffi` kernels.

jax's examples are not committed here and cannot be fetched in CI (no
GitHub there; jax's sdist has no `examples/`): the caller gives a jax git
directory (`BEGEN_JAX_GIT_DIR`) and this script extracts `examples/ffi` from
it at test time with `git --git-dir DIR archive`.

For each example source it keeps every impl function exactly as upstream
wrote it, drops the hand-written binding code (`XLA_FFI_DEFINE_HANDLER_SYMBOL`
and the nanobind module), adds a `// @BE <name>` line over each impl
function, builds the result with begen, and writes:

- `OUT/lib/`: the begen library (`_ffi_examples.py` + `lib_ffi_examples.so`);
- `OUT/pkg/begen_ffi_example/`: one module per example, with the
  example's Python API over begen's generated functions (see `shims/`);
- `OUT/tests/`: the example's own test files, unchanged but for the import
  line (`from jax_ffi_example import X` -> `from begen_ffi_example import X`).

Usage: python prepare.py JAX_GIT_DIR OUT BEGEN [cpu|cuda]
       python prepare.py --extract JAX_GIT_DIR DEST   (examples/ffi as files)
"""

import io
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

# The impl functions annotated, per example source.
ANNOTATED = {
    "rms_norm.cc": ["RmsNormDispatch", "RmsNormFwdDispatch", "RmsNormBwdDispatch"],
    # AliasingImpl's result is its input updated in place: `inout` over both.
    "cpu_examples.cc": ["ArrayAttrImpl", "DictionaryAttrImpl", "CounterImpl", "AliasingImpl inout inout"],
}
CUDA_ANNOTATED = {
    # Upstream binds FooBwdHost's `b_plus_1`, declared `ffi::ResultBuffer`,
    # as an input (`.Arg<>()`): the tokens say so.
    "cuda_examples.cu": ["FooFwdHost", "FooBwdHost stream arg arg arg ret ret attr.n"],
    # gpu_examples.cc calls the CUDA runtime: built as a CUDA source.
    "gpu_examples.cc": ["StateExecute"],
}
# The names the CUDA sources are built under, where they differ.
CUDA_RENAMED = {"gpu_examples.cc": "gpu_examples.cu"}
# StateExecute's state comes from StateInstantiate (XLA's instantiate stage).
CUDA_CONFIG = """\
functions:
  StateExecute: {instantiate: StateInstantiate}
"""
TESTS = {
    "cpu": ["rms_norm_test.py", "cpu_examples_test.py"],
    "cuda": ["cuda_examples_test.py", "gpu_examples_test.py"],
}
CONFIG = """\
functions:
  RmsNormDispatch: {vmap_method: broadcast_all}
  # begen's custom_vjp: the backward takes the residual `res` (by name).
  RmsNormFwdDispatch: {vmap_method: broadcast_all, vjp: RmsNormBwdDispatch, residuals: [res]}
  RmsNormBwdDispatch: {vmap_method: broadcast_all}
"""


def extract(git_dir: Path) -> dict[str, str]:
    """`examples/ffi` at the git directory's HEAD: path -> text. A folder
    that holds `src/jax_ffi_example` is read as examples/ffi already
    extracted (what the device gets: no git directory travels there)."""
    if (git_dir / "src" / "jax_ffi_example").is_dir():
        return {p.relative_to(git_dir).as_posix(): p.read_text() for p in git_dir.rglob("*") if p.is_file()}
    data = subprocess.run(
        ["git", "--git-dir", str(git_dir), "archive", "--format=tar", "HEAD", "examples/ffi"],
        check=True,
        capture_output=True,
    ).stdout
    out = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for m in tar.getmembers():
            if m.isfile():
                out[m.name.removeprefix("examples/ffi/")] = tar.extractfile(m).read().decode()
    return out


def matching(text: str, start: int, open_: str, close: str) -> int:
    """The index just past the bracket that closes the one at `start`."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_:
            depth += 1
        elif text[i] == close:
            depth -= 1
            if depth == 0:
                return i + 1
    raise ValueError("unbalanced")


def annotate(text: str, names: list[str]) -> str:
    """Upstream's source with its binding code dropped and `// @BE` added."""
    # The hand-written handlers: `XLA_FFI_DEFINE_HANDLER_SYMBOL(...);`.
    while (at := max(text.find("XLA_FFI_DEFINE_HANDLER_SYMBOL("), text.find("XLA_FFI_DEFINE_HANDLER("))) >= 0:
        end = matching(text, text.index("(", at), "(", ")")
        end = text.index(";", end) + 1
        text = text[:at] + text[end:]
    # The nanobind module and its helpers: everything from the first of them on.
    cut = [i for i in (text.find("template <typename T>\nnb::capsule"), text.find("NB_MODULE(")) if i >= 0]
    if cut:
        text = text[: min(cut)]
    text = re.sub(r'#include "nanobind/nanobind.h"\n', "", text)
    text = re.sub(r"namespace nb = nanobind;\n", "", text)
    for annotation in names:  # `Name` or `Name tokens...`
        name = annotation.split()[0]
        pattern = re.compile(r"^(static\s+)?(ffi::Error|void)\s+" + name + r"\(", re.MULTILINE)
        m = pattern.search(text)
        if m is None:
            raise SystemExit(f"{name}: no impl function found to annotate")
        text = text[: m.start()] + f"// @BE {annotation}\n" + text[m.start() :]
    return text


def main() -> None:
    if sys.argv[1] == "--extract":
        # python prepare.py --extract JAX_GIT_DIR DEST: examples/ffi as files
        # (e.g. into .carry/, an ignored folder that travels to the device).
        for rel, text in extract(Path(sys.argv[2])).items():
            path = Path(sys.argv[3]) / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return
    git_dir, out, begen = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    platform = sys.argv[4] if len(sys.argv) > 4 else "cpu"
    files = extract(git_dir)
    kernels = out / "kernels"
    shutil.rmtree(out, ignore_errors=True)
    kernels.mkdir(parents=True)
    annotated = ANNOTATED if platform == "cpu" else CUDA_ANNOTATED
    for name, names in annotated.items():
        target = name if platform == "cpu" else CUDA_RENAMED.get(name, name)
        (kernels / target).write_text(annotate(files["src/jax_ffi_example/" + name], names))
    # The options name the platform's own kernels.
    (kernels / "begen.yaml").write_text(CONFIG if platform == "cpu" else CUDA_CONFIG)
    lib = out / "lib"
    subprocess.run(
        [begen, "build", str(kernels), "--out", str(lib), "--name", "_ffi_examples", "--platform", platform],
        check=True,
    )
    pkg = out / "pkg" / "begen_ffi_example"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for shim in (HERE / "shims").glob("*.py"):
        shutil.copy(shim, pkg / shim.name)
    tests = out / "tests"
    tests.mkdir()
    for name in TESTS[platform]:
        text = files["tests/" + name]
        changed = re.sub(r"^([ \t]*)from jax_ffi_example import", r"\1from begen_ffi_example import", text, flags=re.MULTILINE)
        if changed == text:
            raise SystemExit(f"{name}: no `from jax_ffi_example import` line")
        (tests / name).write_text(changed)
    print(out)


if __name__ == "__main__":
    main()
