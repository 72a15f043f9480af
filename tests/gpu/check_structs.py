"""Runs the struct and array attribute kernels of tests/gpu/structs (built
by begen into OUT_DIR) on the GPU against numpy: a struct by value into a
CUDA kernel, CUDA's 16-bit float members, arrays as BE::Span, std::vector
and xla::ffi::Span of __half, a template instantiated per dtype; eagerly,
under jit and vmap; bad dicts and arrays refused in Python, and by the
handler past Python.

usage: python tests/gpu/check_structs.py OUT_DIR
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, sys.argv[1])
import gpu_structs as m  # noqa: E402

assert jax.devices()[0].platform == "gpu", jax.devices()
jax.config.update("jax_enable_x64", True)


def expect(error, text, call):
    try:
        call()
    except error as e:
        assert text in str(e), (text, str(e))
        return
    raise SystemExit(f"no {error.__name__} ({text})")


AFFINE = {"scale": 2.0, "shift": 1.0, "limit": 100.0, "clamp": True}


def affine(x, p):
    y = p["scale"] * np.asarray(x, np.float32) + p["shift"]
    return np.clip(y, -p["limit"], p["limit"]) if p["clamp"] else y


x = jnp.arange(1000, dtype=jnp.float32) - 500
np.testing.assert_allclose(m.gpu_affine(x, p=AFFINE), affine(x, AFFINE))
free = dict(AFFINE, clamp=False)
np.testing.assert_allclose(jax.jit(lambda v: m.gpu_affine(v, p=free))(x), affine(x, free))
batch = jnp.stack([x, -x])
np.testing.assert_allclose(jax.vmap(lambda v: m.gpu_affine(v, p=AFFINE))(batch), np.stack([affine(x, AFFINE), affine(-x, AFFINE)]))

got = m.gpu_halves(p={"h": 1.5, "b": -2.25, "bits": 65535})
np.testing.assert_array_equal(np.asarray(got), np.array([1.5, -2.25, 65535.0], np.float32))

t = jnp.linspace(-1.0, 1.0, 257, dtype=jnp.float64)
coeffs = [1.0, -2.0, 0.5, 3.0]
want = np.polynomial.polynomial.polyval(np.asarray(t), coeffs)
np.testing.assert_allclose(m.gpu_poly(t, c=coeffs), want, rtol=1e-12)
np.testing.assert_allclose(jax.jit(lambda v: m.gpu_poly_vec(v, c=np.array(coeffs)))(t), want, rtol=1e-12)
np.testing.assert_allclose(m.gpu_half_poly(t, w=np.array(coeffs, np.float16)), want, rtol=1e-3)

for dtype in (jnp.float32, jnp.float16):
    got = m.gpu_scale(x.astype(dtype), p=free)
    assert got.dtype == dtype, got.dtype
    np.testing.assert_allclose(np.asarray(got, np.float32), affine(np.asarray(x.astype(dtype), np.float32), free), rtol=1e-2)

expect(TypeError, "gpu_affine: attribute 'p' (Affine): member 'clamp' is missing",
       lambda: m.gpu_affine(x, p={"scale": 1.0, "shift": 0.0, "limit": 1.0}))
expect(TypeError, "gpu_affine: attribute 'p' (Affine) has no member 'bias'",
       lambda: m.gpu_affine(x, p=dict(AFFINE, bias=0.0)))
expect(ValueError, "gpu_halves: attribute 'p' (Halves), member 'h' (float16): 1000000.0 is out of range for a 16-bit float",
       lambda: m.gpu_halves(p={"h": 1e6, "b": 0.0, "bits": 0}))
expect(TypeError, "gpu_poly: attribute 'c' (float64[]) must be an array of float64, got an array of float32",
       lambda: m.gpu_poly(t, c=np.ones(2, np.float32)))
# The kernel's own check: at most 16 coefficients.
expect(Exception, "1 to 16 coefficients, got 17", lambda: m.gpu_poly(t, c=[1.0] * 17).block_until_ready())
# Past Python, straight to the target: XLA's struct decoding refuses.
expect(Exception, "Wrong number of attributes",
       lambda: jax.ffi.ffi_call(m.TARGETS["gpu_affine"], jax.ShapeDtypeStruct(x.shape, x.dtype))(
           x, p={"scale": np.float32(1.0)}).block_until_ready())
print("struct and array attributes on the GPU: all checks passed")
