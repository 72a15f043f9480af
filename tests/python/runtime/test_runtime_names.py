"""The runtime against begen's list of reserved names (src/model/pynames.rs),
ruff over the runtime, the Python and torch tests, the benchmarks and generated
modules, and names that would clash with the runtime's."""

import ast
import builtins
import re
import subprocess
import sys

import pytest
from conftest import REPO, RUNTIME, import_module, missing, run_begen

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane

MARKER = "# begen: emit below\n"
SECTIONS = sorted((RUNTIME / "begen_runtime").glob("*.py"))


def reserved():
    """The string literals of `PY_RESERVED` in src/model/pynames.rs."""
    text = (REPO / "src/model/pynames.rs").read_text()
    block = re.search(r"PY_RESERVED: \[&str; \d+\] = \[(.*?)\];", text, re.DOTALL)
    assert block, "PY_RESERVED not found in src/model/pynames.rs"
    return set(re.findall(r'"([^"]+)"', block.group(1)))


def ruff(*args):
    try:
        import ruff  # noqa: F401
    except ImportError:
        missing("ruff is not installed in this Python (scripts/requirements.txt)")
    return subprocess.run([sys.executable, "-m", "ruff", *args], capture_output=True, text=True, cwd=REPO, check=False)


def test_every_builtin_the_runtime_calls_is_reserved():
    names = reserved()
    assert "open" in names and "_ALGORITHMS" in names
    sections = [s for s in SECTIONS if s.name != "__init__.py"]
    assert len(sections) == 21
    for path in sections:
        body = path.read_text().split(MARKER, 1)[1]
        used = {n.id for n in ast.walk(ast.parse(body)) if isinstance(n, ast.Name) and hasattr(builtins, n.id)}
        missing_names = sorted(u for u in used if not u.startswith("__") and u not in names)
        assert not missing_names, f"{path.name} calls {missing_names}: add them to PY_RESERVED in src/model/pynames.rs"


@pytest.mark.parametrize(
    "folder", ["src/target/xla_jax/runtime", "build-support/python", "tests/python", "tests/torch", "bench"]
)
def test_ruff_passes(folder):
    # The runtime, the tuner, their tests (the torch target's too) and the
    # benchmarks, under pyproject.toml's rules.
    assert (REPO / folder).is_dir(), folder
    proc = ruff("check", folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("case", ["cpu", "algo", "structs", "modules", "link", "typed", "native", "tune_algo"])
def test_generated_modules_name_only_what_they_define(case, tmp_path):
    # pyflakes' rules: no undefined name (a helper whose section was left
    # out), no unused import (an import no section needs), no redefinition.
    out = tmp_path / "out"
    run_begen("generate", REPO / "tests/e2e" / case, "--out", out, "--platform", "cpu")
    (module,) = [p for p in out.glob("*.py")]
    proc = ruff("check", "--isolated", "--select", "F", "--ignore", "F841", str(module))
    assert proc.returncode == 0, proc.stdout + proc.stderr


KERNELS = """#include "brainevent/common.h"
#include <cstdint>

// @BE open
void open(const BE::Tensor x, BE::Tensor y, float alpha) {
    for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = alpha * x.data_ptr<const float>()[i];
}

// @BE _ALGORITHMS
void _ALGORITHMS(const BE::Tensor x, BE::Tensor y) {
    for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = -x.data_ptr<const float>()[i];
}

// @BE _BEGEN_WIDE
void _BEGEN_WIDE(const BE::Tensor x, BE::Tensor y) {
    for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = 2 * x.data_ptr<const float>()[i];
}
"""


def test_kernels_named_like_runtime_names_leave_them_alone(jax_cpu, tmp_path):
    src = tmp_path / "clash"
    src.mkdir()
    (src / "k.cpp").write_text(KERNELS)
    out = tmp_path / "out"
    run_begen("build", src, "--out", out, "--platform", "cpu", "--quiet")
    m = import_module(out, "clash")
    x = jax_cpu.numpy.arange(3.0, dtype="float32")
    s = jax_cpu.ShapeDtypeStruct(x.shape, x.dtype)
    # register() reads jaxlib's header with the builtin open(); the registry
    # reads the algorithm table: neither is replaced by a kernel.
    assert m.open_(x, alpha=3.0, out=s).tolist() == [0.0, 3.0, 6.0]
    assert m._ALGORITHMS_(x, out=s).tolist() == [0.0, -1.0, -2.0]
    assert m._BEGEN_WIDE_(x, out=s).tolist() == [0.0, 2.0, 4.0]
    assert m._ALGORITHMS == {} and m.registry.algorithms() == []
    assert m._BEGEN_WIDE == ("int64", "uint64", "float64", "complex128")


@pytest.mark.parametrize("name", ["typing", "functools", "jaxlib", "math"])
def test_a_library_named_like_an_imported_module_is_refused(tmp_path, name):
    src = tmp_path / "k"
    src.mkdir()
    (src / "k.cpp").write_text(KERNELS)
    proc = run_begen("build", src, "--out", tmp_path / "out", "--name", name, check=False)
    assert proc.returncode != 0
    assert f"the library name `{name}` (the given name) is not usable: the generated Python module `{name}`" in proc.stderr
    assert not (tmp_path / "out" / f"{name}.py").exists()
