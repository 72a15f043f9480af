"""Shared fixtures for the end-to-end tests: build a kernel directory with
the `begen` CLI and import the generated module.

The CLI is `$BEGEN_BIN`, else `target/debug/begen` (built by `cargo build`).
Without JAX (or nvcc, for CUDA tests) a test is skipped, except under
CI=true, where a missing piece fails the test.
"""

import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
IN_CI = os.environ.get("CI") == "true"
# begen's Python runtime as a package, for its unit tests (runtime/).
RUNTIME = REPO / "src" / "target" / "xla_jax" / "runtime"
sys.path.insert(0, str(RUNTIME))


def pytest_configure(config):
    # A test file joins scripts/test.sh's jax lane (the CPU end-to-end tests
    # under each older jax release) with a module-level
    # `pytestmark = pytest.mark.jax_lane`: test.sh runs the files that say
    # so, with `-m jax_lane`.
    config.addinivalue_line("markers", "jax_lane: also run under each older jax release (scripts/test.sh's jax lane)")


def missing(what):
    """Skip, or fail under CI=true."""
    if IN_CI:
        pytest.fail(f"CI=true and {what}: this test must not be skipped in CI")
    pytest.skip(what)


def begen_bin():
    path = Path(os.environ.get("BEGEN_BIN") or REPO / "target" / "debug" / "begen")
    if not path.is_file():
        missing(f"no begen binary at {path} (run `cargo build` or set BEGEN_BIN)")
    return path


# begen's default work directories (a per-user cache keyed by OUT) go under
# the test run's temporary folder, not the user's ~/.cache: pytest's folders
# are new each run, and their keys would pile up there.
_WORK_CACHE = []


@pytest.fixture(scope="session", autouse=True)
def _begen_work_cache(tmp_path_factory):
    _WORK_CACHE.append(tmp_path_factory.getbasetemp() / "begen-cache")


def run_begen(*args, check=True, env=None):
    """Runs the CLI with this interpreter as BEGEN_PYTHON; returns the process."""
    full_env = dict(os.environ)
    full_env.setdefault("BEGEN_PYTHON", sys.executable)
    if _WORK_CACHE:
        full_env["XDG_CACHE_HOME"] = str(_WORK_CACHE[-1])
    full_env.update(env or {})
    proc = subprocess.run(
        [str(begen_bin()), *map(str, args)], capture_output=True, text=True, env=full_env, check=False
    )
    if check and proc.returncode != 0:
        pytest.fail(f"begen {' '.join(map(str, args))} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return proc


def import_module(out_dir, name):
    """Imports OUT/<name>.py fresh."""
    sys.path.insert(0, str(out_dir))
    try:
        sys.modules.pop(name, None)
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(out_dir))


@pytest.fixture(scope="session")
def jax_cpu():
    try:
        import jax
    except ImportError:
        missing("jax is not installed in this Python")
    jax.config.update("jax_enable_x64", True)
    return jax


@pytest.fixture(scope="session")
def e2e_cpu(jax_cpu, tmp_path_factory):
    """tests/e2e/cpu built with `begen build --platform cpu`, imported."""
    out = tmp_path_factory.mktemp("e2e_cpu")
    run_begen("build", REPO / "tests/e2e/cpu", "--out", out, "--platform", "cpu", "--quiet")
    return import_module(out, "e2e_cpu")


@pytest.fixture()
def kernel_copy(tmp_path):
    """A writable copy of tests/e2e/cpu."""
    dest = tmp_path / "kernels"
    shutil.copytree(REPO / "tests/e2e/cpu", dest)
    return dest
