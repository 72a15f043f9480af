"""A library of several modules (tests/e2e/modules), built and called from JAX.

`scale` and `fill` are defined in two sources with the same C++ signature
and different bodies: each module's function must call its own.
"""

import ast
import importlib
import sys

import numpy as np
import pytest
from conftest import REPO, import_module, run_begen

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane


@pytest.fixture(scope="module")
def built(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_modules")
    run_begen("build", REPO / "tests/e2e/modules", "--out", out, "--quiet")
    return out


@pytest.fixture(scope="module")
def lib(built):
    return import_module(built, "e2e_modules")


def test_targets_are_module_dot_function(lib):
    assert lib.TARGETS == {
        "jit_coo.fill": "jit_coo.fill",
        "jit_coo.scale": "jit_coo.scale",
        "jit_csr.fill": "jit_csr.fill",
        "jit_csr.scale": "jit_csr.scale",
        "jit_csr_b5.fill": "jit_csr_b5.fill",
        "jit_csr_b5.scale": "jit_csr_b5.scale",
        "ops.add": "ops.add",
        "ops.len": "ops.len",
        "ops.neg": "ops.neg",
    }
    assert lib.jit_csr.TARGETS == {"scale": "jit_csr.scale", "fill": "jit_csr.fill"}
    assert sorted(lib.__all__) == sorted(["register", "TARGETS", "LIBRARY", "export_safety_checks", "registry", "deserialize", "jit_coo", "jit_csr", "jit_csr_b5", "ops"])


def test_same_name_in_two_modules_calls_each_own_kernel(jax_cpu, lib):
    jax = jax_cpu
    x = jax.numpy.arange(4, dtype=jax.numpy.float32)
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    np.testing.assert_allclose(lib.jit_csr.scale(x, alpha=2.0, out=out), 2 * np.arange(4))
    np.testing.assert_allclose(lib.jit_coo.scale(x, alpha=2.0, out=out), 2 * np.arange(4) + 1)
    np.testing.assert_allclose(lib.jit_csr.fill(value=3.0, out=out), np.full(4, 3.0))
    np.testing.assert_allclose(lib.jit_coo.fill(value=3.0, out=out), np.full(4, -3.0))
    # The variant: the same source compiled again with BIAS=5.
    np.testing.assert_allclose(lib.jit_csr_b5.scale(x, alpha=2.0, out=out), 2 * np.arange(4) + 5)
    jitted = jax.jit(lambda v: lib.jit_coo.scale(v, alpha=3.0, out=out))
    np.testing.assert_allclose(jitted(x), 3 * np.arange(4) + 1)


def test_directory_module_and_renamed_function(jax_cpu, lib):
    jax = jax_cpu
    x = jax.numpy.arange(3, dtype=jax.numpy.float32)
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    np.testing.assert_allclose(lib.ops.add(x, x, out=out), 2 * np.arange(3))
    np.testing.assert_allclose(lib.ops.neg(x, out=out), -np.arange(3))
    # `len` would hide the builtin the typed functions use: it is `len_`.
    np.testing.assert_allclose(lib.ops.len_(x, out=out), np.arange(3) ** 2)


def test_modules_import_every_way(lib, built):
    assert importlib.import_module("e2e_modules.ops") is lib.ops
    sys.path.insert(0, str(built))
    try:
        from e2e_modules import jit_csr

        assert jit_csr is lib.jit_csr
    finally:
        sys.path.remove(str(built))
    assert lib.ops.register is lib.register
    assert lib.ops.add.__module__ == "e2e_modules.ops"


def test_errors_name_module_and_function(jax_cpu, lib):
    x = jax_cpu.numpy.arange(2, dtype=jax_cpu.numpy.float32)
    with pytest.raises(TypeError, match=r"jit_csr\.scale: attribute 'alpha'"):
        lib.jit_csr.scale(x, alpha="big", out=jax_cpu.ShapeDtypeStruct(x.shape, x.dtype))


def test_vmap_method_per_module_function(lib, built):
    text = (built / "e2e_modules.py").read_text()
    csr = text[text.index("def jit_csr():") :]
    assert 'vmap_method="broadcast_all"' in csr[: csr.index("def fill")]
    coo = text[text.index("def jit_coo():") : text.index("def jit_csr():")]
    assert 'vmap_method="broadcast_all"' not in coo


def test_stub_declares_every_module_function(built):
    stub = ast.parse((built / "e2e_modules.pyi").read_text())
    classes = {n.name: n for n in stub.body if isinstance(n, ast.ClassDef)}
    assert set(classes) == {"_begen_jit_coo", "_begen_jit_csr", "_begen_jit_csr_b5", "_begen_ops", "_BegenImplementation",
                            "_BegenRegistry"}
    methods = {f.name for f in classes["_begen_ops"].body if isinstance(f, ast.FunctionDef)}
    assert methods == {"register", "export_safety_checks", "add", "neg", "len_"}
    annotated = {t.target.id for t in stub.body if isinstance(t, ast.AnnAssign)}
    assert {"jit_coo", "jit_csr", "ops", "LIBRARY", "TARGETS"} <= annotated


def test_manifest_lists_modules(built):
    text = (built / "e2e_modules.yaml").read_text()
    modules = text[text.index("\nmodules:\n") : text.index("\nfunctions:\n")]
    assert [line.split(": ")[1] for line in modules.splitlines() if line.startswith("- name: ")] == [
        "jit_coo",
        "jit_csr",
        "jit_csr_b5",
        "ops",
    ]
    assert "target: jit_coo.scale" in text and "target: jit_csr.scale" in text
