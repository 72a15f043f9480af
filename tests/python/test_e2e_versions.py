"""The version gate and the duplicate-target check with real libraries, each
scenario in a fresh Python (a refused registration must leave JAX's backend
working, and XLA's registrations last as long as the process)."""

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import REPO, missing, run_begen

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane


def run_python(code, **kwargs):
    """Runs `code` in a fresh Python; fails with its output; returns stdout."""
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=False, **kwargs
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


LOAD = """
    import importlib.util, sys
    import jax, numpy as np

    def load(name, path):
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
"""


@pytest.fixture(scope="module")
def built(jax_cpu, tmp_path_factory):
    """tests/e2e/cpu built once for the CPU."""
    out = tmp_path_factory.mktemp("versions") / "dev"
    run_begen("build", REPO / "tests/e2e/cpu", "--out", out, "--platform", "cpu", "--quiet")
    return out


def test_a_second_library_with_the_same_targets_is_refused_by_name(built, tmp_path):
    # The same kernels twice, as a development build and an installed copy.
    wheel = tmp_path / "wheel"
    shutil.copytree(built, wheel)
    run_python(
        LOAD
        + f"""
    dev = load("dev", {str(built / "e2e_cpu.py")!r})
    installed = load("installed", {str(wheel / "e2e_cpu.py")!r})
    dev.register()
    try:
        installed.register()
    except RuntimeError as e:
        text = str(e)
    else:
        raise AssertionError("the second library was registered")
    assert text.startswith("installed: cannot register libe2e_cpu.so ("), text
    assert "is already registered by {(built / "libe2e_cpu.so").resolve()}" in text, text
    assert "its FFI target 'e2e_cpu." in text, text
    # The backend is up and the first library's kernels still run.
    x = jax.numpy.arange(4, dtype=jax.numpy.float32)
    np.testing.assert_allclose(dev.scale(x, alpha=2.0, out=jax.ShapeDtypeStruct(x.shape, x.dtype)), 2 * np.arange(4))
    dev.register()  # idempotent, and the same library again is no duplicate
    """
    )


def test_a_library_built_against_a_newer_api_is_refused_before_xla(jax_cpu, tmp_path):
    # Headers that claim one minor version more than the running jaxlib's.
    headers = tmp_path / "include"
    shutil.copytree(jax_cpu.ffi.include_dir(), headers)
    c_api = headers / "xla" / "ffi" / "api" / "c_api.h"
    text = c_api.read_text()
    minor = int(re.search(r"#define XLA_FFI_API_MINOR (\d+)", text).group(1))
    c_api.write_text(text.replace(f"#define XLA_FFI_API_MINOR {minor}", f"#define XLA_FFI_API_MINOR {minor + 1}"))
    out = tmp_path / "out"
    run_begen(
        "build", REPO / "tests/e2e/cpu", "--out", out, "--platform", "cpu", "--quiet",
        env={"XLA_FFI_INCLUDE_DIR": str(headers)},
    )
    run_python(
        LOAD
        + f"""
    import jaxlib
    lib = load("e2e_cpu", {str(out / "e2e_cpu.py")!r})
    try:
        lib.register()
    except RuntimeError as e:
        text = str(e)
    else:
        raise AssertionError("a library for a newer XLA FFI API was registered")
    api = jax.ffi.include_dir()
    assert "was built against XLA FFI API 0.{minor + 1}, but the running jaxlib " + jaxlib.__version__ in text, text
    assert "has XLA FFI API 0.{minor}" in text, text
    assert "`begen build --jax-min " + jaxlib.__version__ + "`" in text, text
    # Nothing reached XLA: the backend starts and computes.
    assert float(jax.numpy.arange(4.0).sum()) == 6.0
    """
    )


# The cross-version test: one build with --jax-min 0.10.2 under this jax,
# called under every jax of the matrix. scripts/test.sh sets
# BEGEN_JAX_MATRIX to the matrix's Pythons (target/venv-jax-*/bin/python,
# made by scripts/setup-jax.sh), separated by ':'.
MATRIX = [p for p in os.environ.get("BEGEN_JAX_MATRIX", "").split(os.pathsep) if p]

CALL = """
    import jax, jaxlib, numpy as np
    import e2e_cpu
    x = jax.numpy.arange(4, dtype=jax.numpy.float32)
    y = jax.jit(lambda v: e2e_cpu.scale(v, alpha=3.0, out=jax.ShapeDtypeStruct(v.shape, v.dtype)))(x)
    np.testing.assert_allclose(y, 3 * np.arange(4))
    print(jaxlib.__version__, e2e_cpu._begen_built_ffi_api(), e2e_cpu._begen_running_ffi_api())
"""


def test_one_build_for_jax_0_10_2_runs_under_every_jax_of_the_matrix(jax_cpu, tmp_path):
    if not MATRIX:
        missing("BEGEN_JAX_MATRIX names no other jax's Python (scripts/test.sh sets it)")
    out = tmp_path / "oldest"
    run_begen("build", REPO / "tests/e2e/cpu", "--out", out, "--platform", "cpu", "--quiet", "--jax-min", "0.10.2")
    manifest = (out / "e2e_cpu.yaml").read_text()
    assert "xla_ffi_api_version: '0.3'\njax_min: 0.10.2\n" in manifest, manifest
    seen = set()
    for python in [sys.executable, *MATRIX]:
        proc = subprocess.run(
            [python, "-c", textwrap.dedent(CALL)], cwd=out, capture_output=True, text=True, check=False
        )
        assert proc.returncode == 0, f"{python}:\n{proc.stdout}{proc.stderr}"
        jaxlib_version, built, _running = proc.stdout.split()
        assert built == "0.3", proc.stdout
        seen.add(jaxlib_version)
    assert len(seen) == 1 + len(MATRIX), f"the matrix's Pythons repeat a jaxlib: {seen}"


def test_a_build_for_this_jax_is_refused_by_the_older_jax_of_the_matrix(built):
    # Built against this jaxlib's headers: each older jax of the matrix
    # refuses it in register(), and its backend still works.
    from jax import ffi

    here = re.search(r"#define XLA_FFI_API_MINOR (\d+)", (Path(ffi.include_dir()) / "xla/ffi/api/c_api.h").read_text())
    for python in MATRIX:
        code = f"""
            import jax, jaxlib, numpy as np
            import e2e_cpu
            older = e2e_cpu._begen_running_ffi_api() != "0.{here.group(1)}"
            try:
                e2e_cpu.register()
            except RuntimeError as e:
                assert older, e
                assert "`begen build --jax-min " + jaxlib.__version__ + "`" in str(e), e
            else:
                assert not older, "an older jaxlib registered a library built for a newer one"
            assert float(jax.numpy.arange(4.0).sum()) == 6.0
        """
        proc = subprocess.run(
            [python, "-c", textwrap.dedent(code)], cwd=built, capture_output=True, text=True, check=False
        )
        assert proc.returncode == 0, f"{python}:\n{proc.stdout}{proc.stderr}"
