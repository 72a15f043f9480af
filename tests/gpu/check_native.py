"""Runs the kernels of tests/gpu/native (CUDA kernels declared with XLA
FFI's own types, built by begen into OUT_DIR) on the GPU against numpy,
eagerly and under jit: `cudaStream_t` and typed buffers, a result bound as
an input by its token with a `size_t` attribute, an untyped buffer of
either float type, per-executable state in device memory (42, 43, 44
within one executable, 42 again in a new one), and the kernels' own
INVALID_ARGUMENT errors seen from Python. Prints PASS or FAIL per check
and exits 1 on any failure.

usage: python tests/gpu/check_native.py OUT_DIR
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)
sys.path.insert(0, sys.argv[1])
import gpu_native as m
from gpu_checks import check, failed


def raises(text, call):
    """`call()` raises an error whose message contains `text`; arrays are
    made concrete, so an error of an asynchronous GPU call surfaces here."""
    try:
        jax.tree_util.tree_map(np.asarray, call())
    except Exception as e:
        assert text in str(e), f"{text!r} not in {str(e)!r}"
        return
    raise AssertionError(f"no error ({text})")


def like(x):
    return jax.ShapeDtypeStruct(x.shape, x.dtype)


def close(got, want):
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6)


if jax.default_backend() != "gpu":
    print(f"gpu native: no GPU backend (jax's default is {jax.default_backend()!r}): the checks did not run")
    sys.exit(1)

n = 1 << 16 | 3  # not a multiple of the block size
xn = np.linspace(-2, 3, n, dtype=np.float32)
yn = np.linspace(5, -1, n, dtype=np.float32)
x, y = jnp.asarray(xn), jnp.asarray(yn)


def axpby():
    close(m.NativeAxpby(x, y, a=2.5, out=like(x)), 2.5 * xn + yn)
    f = jax.jit(lambda u, v: m.NativeAxpby(u, v, a=-1.0, out=like(u)))
    close(f(x, y), -xn + yn)
    raises("NativeAxpby: x and y differ in size", lambda: m.NativeAxpby(x, y[:10], a=1.0, out=like(x)))


def fma_by_tokens():
    c = jnp.full_like(x, 0.25)
    close(m.NativeFma(x, y, c, n=n, out=like(x)), xn * yn + 0.25)
    f = jax.jit(lambda a, b, c: m.NativeFma(a, b, c, n=a.size, out=like(a)))
    close(f(x, y, c), xn * yn + 0.25)
    raises("NativeFma: n is not a's element count", lambda: m.NativeFma(x, y, c, n=n - 1, out=like(x)))


def negate_either_dtype():
    for dtype in (np.float32, np.float64):
        v = jnp.asarray(xn.astype(dtype))
        got = m.NativeNegate(v, out=like(v))
        assert got.dtype == dtype, got.dtype
        close(got, -xn.astype(dtype))
        close(jax.jit(lambda u: m.NativeNegate(u, out=like(u)))(v), -xn.astype(dtype))
    raises("NativeNegate: x is float32 or float64", lambda: m.NativeNegate(jnp.arange(4), out=like(jnp.arange(4))))


def state_per_executable():
    f = jax.jit(lambda: m.NativeReadOffset())
    assert [int(f()) for _ in range(3)] == [42, 43, 44]
    g = jax.jit(lambda v: (v + 1, m.NativeReadOffset()))
    assert int(g(jnp.int32(1))[1]) == 42
    assert int(f()) == 45
    assert int(g(jnp.int32(2))[1]) == 43


check("cudaStream_t and typed buffers: a * x + y, eager and jit, the kernel's own error", axpby)
check("a result bound as an input by its token, a size_t attribute", fma_by_tokens)
check("an untyped buffer of float32 or float64, dispatched on its type", negate_either_dtype)
check("native state in device memory per executable: 42, 43, 44; a new executable from 42", state_per_executable)

if failed:
    print(f"gpu native: {len(failed)} check(s) FAILED: {', '.join(failed)}")
    sys.exit(1)
print("CUDA kernels with XLA FFI's own types: all checks passed")
