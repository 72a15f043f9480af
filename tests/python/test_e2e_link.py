"""`link: libs:` (tests/e2e/link): a kernel calling into a system library
that begen.yaml names, built and called from JAX."""

import shutil
import zlib

import numpy as np
from conftest import REPO, import_module, run_begen


def test_linked_library_is_called(jax_cpu, tmp_path):
    out = tmp_path / "out"
    run_begen("build", REPO / "tests/e2e/link", "--out", out, "--quiet")
    lib = import_module(out, "e2e_link")
    got = lib.zlib_major(out=jax_cpu.ShapeDtypeStruct((1,), "int32"))
    np.testing.assert_array_equal(got, [int(zlib.ZLIB_RUNTIME_VERSION[0])])


def test_a_missing_library_is_one_clear_error(tmp_path):
    kernels = tmp_path / "kernels"
    shutil.copytree(REPO / "tests/e2e/link", kernels)
    (kernels / "begen.yaml").write_text("name: e2e_link\nlink:\n  libs: [begen_no_such_lib]\n")
    proc = run_begen("build", kernels, "--out", tmp_path / "out", "--quiet", check=False)
    assert proc.returncode == 1
    assert "the library `begen_no_such_lib` (begen.yaml's `link: libs:`) was not found" in proc.stderr
    assert "add its directory under `link: dirs:`" in proc.stderr
    assert not (tmp_path / "out" / "libe2e_link.so").exists()
