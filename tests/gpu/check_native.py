"""Runs the kernels of tests/gpu/native (CUDA kernels declared with XLA
FFI's own types, built by begen into OUT_DIR) on the GPU against numpy,
eagerly and under jit: `cudaStream_t` and typed buffers, a result bound as
an input by its token with a `size_t` attribute, an untyped buffer of
either float type, per-executable state in device memory (42, 43, 44
within one executable, 42 again in a new one), and the kernels' own
INVALID_ARGUMENT errors seen from Python, and `command_buffer: true`
handlers recorded into a CUDA graph. Prints PASS or FAIL per check
and exits 1 on any failure.

usage: python tests/gpu/check_native.py OUT_DIR
"""

import os
import sys

# Custom calls go into command buffers (CUDA graphs) only when XLA is told
# so; set before JAX starts its backend. Only handlers that carry
# kCmdBufferCompatible are recorded.
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "")
    + " --xla_gpu_enable_command_buffer=FUSION,CUSTOM_CALL --xla_gpu_graph_min_graph_size=1"
)

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


def recorded_into_a_cuda_graph():
    # NativeAxpby and NativeCaptureProbe are `command_buffer: true`: XLA
    # records the jit's native custom calls into one CUDA graph (it may run
    # the first execution directly), then replays it, with other buffers too.
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal(4097).astype(np.float32))
    y = jnp.asarray(rng.standard_normal(4097).astype(np.float32))

    def chain(v, w):
        for k in range(4):
            v = m.NativeAxpby(v, w, a=0.5 + k, out=like(v))
        return v, m.NativeCaptureProbe()

    def want(v, w):
        v, w = np.asarray(v, np.float64), np.asarray(w, np.float64)
        for k in range(4):
            v = (0.5 + k) * v + w
        return v

    compiled = jax.jit(chain).lower(x, y).compile()
    for args, runs in (((x, y), 4), ((y, x), 2)):
        seen = []
        for _ in range(runs):
            got, captured = compiled(*args)
            np.testing.assert_allclose(np.asarray(got), want(*args), rtol=1e-5, atol=1e-4)
            seen.append(int(captured))
        assert seen[-1] == 1, f"the native custom calls were not recorded into a CUDA graph (probe per run: {seen})"


check("cudaStream_t and typed buffers: a * x + y, eager and jit, the kernel's own error", axpby)
check("native handlers with command_buffer: true recorded into a CUDA graph and replayed", recorded_into_a_cuda_graph)
check("a result bound as an input by its token, a size_t attribute", fma_by_tokens)
check("an untyped buffer of float32 or float64, dispatched on its type", negate_either_dtype)
check("native state in device memory per executable: 42, 43, 44; a new executable from 42", state_per_executable)

if failed:
    print(f"gpu native: {len(failed)} check(s) FAILED: {', '.join(failed)}")
    sys.exit(1)
print("CUDA kernels with XLA FFI's own types: all checks passed")
