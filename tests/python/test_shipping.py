"""The loader pattern of docs/shipping.md, run against a built library:
prebuilt modules are registered under their target names, and what the
prebuilt library lacks falls back to the old path.

Each scenario runs in a fresh Python: XLA refuses a second registration of
a target name from another library, and test_e2e_modules.py registers the
same names in this process."""

import subprocess
import sys
import textwrap

import pytest
from conftest import REPO, run_begen

LOADER = textwrap.dedent(
    '''
    import importlib

    FALLBACK = []

    def _jit_load_cuda_file(path, name, **kwargs):
        FALLBACK.append(name)
        return None

    def _prebuilt():
        try:
            return importlib.import_module("mypkg._aot.e2e_modules")
        except (ImportError, OSError):
            return None

    _AOT = _prebuilt()

    def load_cuda_file(path, name, **kwargs):
        if _AOT is not None and any(t.startswith(name + ".") for t in _AOT.TARGETS):
            _AOT.register()
            return getattr(_AOT, name, None)
        return _jit_load_cuda_file(path, name=name, **kwargs)
    '''
)


@pytest.fixture()
def package(jax_cpu, tmp_path):
    """A package `mypkg` with the prebuilt kernels in `mypkg/_aot`."""
    pkg = tmp_path / "mypkg"
    (pkg / "_aot").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "_aot" / "__init__.py").write_text("")
    (pkg / "loader.py").write_text(LOADER)
    run_begen("build", REPO / "tests/e2e/modules", "--out", pkg / "_aot", "--quiet")
    return pkg


def test_the_package_folder_gets_the_four_outputs_and_no_work_files(package):
    # What the manual route puts into a wheel: OUT is shipped as it is.
    held = sorted(p.name for p in (package / "_aot").iterdir())
    assert held == ["__init__.py", "e2e_modules.py", "e2e_modules.pyi", "e2e_modules.yaml", "libe2e_modules.so"], held


def run_python(package, code):
    """Runs `code` in a fresh Python that finds `mypkg`; fails with its output."""
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=package.parent, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_prebuilt_module_is_registered_under_its_targets(package):
    run_python(
        package,
        """
        import jax, numpy as np
        from mypkg import loader
        assert loader.load_cuda_file("_jit/csr.cu", name="jit_csr") is not None
        assert loader.FALLBACK == []
        # The library's own code calls targets by name, as it did with the JIT.
        x = jax.numpy.arange(3, dtype=jax.numpy.float32)
        call = jax.ffi.ffi_call("jit_csr.scale", jax.ShapeDtypeStruct(x.shape, x.dtype))
        np.testing.assert_allclose(call(x, alpha=np.float32(2.0)), 2 * np.arange(3))
        """,
    )


def test_missing_module_or_library_falls_back(package):
    run_python(
        package,
        """
        from mypkg import loader
        assert loader.load_cuda_file("_new/kernel.cu", name="not_prebuilt") is None
        assert loader.FALLBACK == ["not_prebuilt"]
        """,
    )
    # Without the prebuilt library at all, everything takes the old path.
    for f in (package / "_aot").glob("e2e_modules.py*"):
        f.unlink()
    run_python(
        package,
        """
        from mypkg import loader
        loader.load_cuda_file("_jit/csr.cu", name="jit_csr")
        assert loader.FALLBACK == ["jit_csr"]
        """,
    )
