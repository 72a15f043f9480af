"""Kernels declared with XLA FFI's own types, and kernels that return a
status, end to end on the CPU: tests/e2e/native built by the CLI."""

import numpy as np
import pytest
from conftest import REPO, import_module, run_begen


@pytest.fixture(scope="module")
def native(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_native")
    run_begen("build", REPO / "tests/e2e/native", "--out", out, "--quiet")
    return import_module(out, "e2e_native")


def like(jax, x):
    return jax.ShapeDtypeStruct(x.shape, x.dtype)


def test_native_signatures_bind_as_declared(native, jax_cpu):
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_allclose(native.ScaleImpl(x, factor=2.0, out=like(jax_cpu, x)), 2 * x)
    f = jax_cpu.jit(lambda x: native.ScaleImpl(x, factor=3.0, out=like(jax_cpu, x)))
    np.testing.assert_allclose(f(x), 3 * x)
    # A rank-0 result buffer needs no out=; a span attribute from a sequence.
    assert int(native.SumArray(array=np.arange(5, dtype=np.int32))) == 10
    # The whole attribute dictionary, through the target.
    native.register()
    i32 = jax_cpu.ShapeDtypeStruct((), np.int32)
    secret, count = jax_cpu.ffi.ffi_call(native.TARGETS["DictAttr"], (i32, i32))(secret=5, a_string="hi")
    assert (int(secret), int(count)) == (5, 2)


@pytest.mark.parametrize("name", ["ScaleImpl", "checked_copy", "returns_error", "arg_check"])
def test_returned_and_checked_errors_keep_their_code(native, jax_cpu, name):
    """A 0-d input the kernel rejects raises INVALID_ARGUMENT: never an
    output of uninitialised memory."""
    f = getattr(native, name)
    kw = {"factor": 1.0} if name == "ScaleImpl" else {}
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_allclose(f(x, out=like(jax_cpu, x), **kw), x)
    with pytest.raises(Exception, match="INVALID_ARGUMENT: .*x must be an array"):
        np.asarray(f(np.float32(1), out=jax_cpu.ShapeDtypeStruct((), np.float32), **kw))


def test_plain_check_stays_internal(native, jax_cpu):
    with pytest.raises(Exception, match="INTERNAL: plain_check: .*check failed: x.ndim\\(\\) > 0"):
        np.asarray(native.plain_check(np.float32(1), out=jax_cpu.ShapeDtypeStruct((), np.float32)))
