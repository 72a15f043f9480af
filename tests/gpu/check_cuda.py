"""Runs the CUDA example kernels (examples/kernels-demo/kernels/cuda) from JAX
on a GPU and compares every result with numpy, eagerly and under jax.jit.

usage: python check_cuda.py DIR   # DIR holds demo_cuda.py and libdemo_cuda.so
Exits non-zero on the first mismatch; prints one line per check.
"""

import sys

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, sys.argv[1])
import demo_cuda as m  # noqa: E402

assert jax.devices()[0].platform == "gpu", jax.devices()
checks = 0


def check(label, got, want, **tol):
    global checks
    got = [np.asarray(g) for g in (got if isinstance(got, tuple) else (got,))]
    want = [np.asarray(w) for w in (want if isinstance(want, tuple) else (want,))]
    assert len(got) == len(want), label
    for g, w in zip(got, want):
        assert g.dtype == w.dtype, f"{label}: dtype {g.dtype} != {w.dtype}"
        assert g.shape == w.shape, f"{label}: shape {g.shape} != {w.shape}"
        np.testing.assert_allclose(g, w, err_msg=label, **tol)
    checks += 1
    print(f"ok  {label}")


def both(label, fn, *args, want, **tol):
    """The same call eagerly and under jax.jit."""
    check(label + " [eager]", fn(*args), want, **tol)
    check(label + " [jit]", jax.jit(fn)(*args), want, **tol)


m.register()
rng = np.random.default_rng(0)

# Several inputs, a float32 attr.
x = rng.standard_normal(100_003).astype(np.float32)
y = rng.standard_normal(100_003).astype(np.float32)
like = jax.ShapeDtypeStruct(x.shape, jnp.float32)
both("saxpy(x, y, a=2.5)", lambda a, b: m.saxpy(a, b, a=2.5, out=like), x, y,
     want=np.float32(2.5) * x + y, rtol=1e-6, atol=1e-6)  # the GPU fuses a*x+y (FMA)

# float16 tensors and a float16 attr (raw bits on the wire).
h = np.linspace(-4, 4, 4097).astype(np.float16)
hl = jax.ShapeDtypeStruct(h.shape, jnp.float16)
both("leaky_relu_f16(h, slope=0.125)", lambda v: m.leaky_relu_f16(v, slope=0.125, out=hl), h,
     want=np.where(h > 0, h, h * np.float16(0.125)).astype(np.float16), rtol=1e-3)

# Macro-generated functions (token pasting, type parameter).
both("iota_f32(start=-3.5)", lambda: m.iota_f32(start=-3.5, out=jax.ShapeDtypeStruct((1000,), jnp.float32)),
     want=np.float32(-3.5) + np.arange(1000, dtype=np.float32))
both("iota_i32(start=7)", lambda: m.iota_i32(start=7, out=jax.ShapeDtypeStruct((513,), jnp.int32)),
     want=7 + np.arange(513, dtype=np.int32))

# float64 tensors, two 0-d outputs.
d = rng.standard_normal(5000)
scalar = jax.ShapeDtypeStruct((), jnp.float64)
both("moments_f64(d)", lambda v: m.moments_f64(v, out=(scalar, scalar)), d,
     want=(np.sum(d), np.sum(d * d)), rtol=1e-9)

# float64 attrs, two outputs.
dl = jax.ShapeDtypeStruct(d.shape, jnp.float64)
both("affine_neg_f64(d, a=1/3, b=1e-12)", lambda v: m.affine_neg_f64(v, a=1 / 3, b=1e-12, out=(dl, dl)), d,
     want=(d / 3 + 1e-12, -d), rtol=1e-15)

# A host-side check fails: Python gets an exception naming the function, the
# process lives, and the next call works.
empty = jnp.zeros((0,), jnp.float64)
for label, call in [("eager", lambda: m.moments_f64(empty, out=(scalar, scalar))),
                    ("jit", lambda: jax.jit(lambda v: m.moments_f64(v, out=(scalar, scalar)))(empty))]:
    try:
        jax.block_until_ready(call())
    except Exception as e:  # XlaRuntimeError
        msg = str(e)
        assert "moments_f64" in msg and "empty input" in msg, msg
        print(f"ok  BE_CHECK failure [{label}] -> {type(e).__name__}: {msg.splitlines()[0][:120]}")
        checks += 1
    else:
        raise AssertionError(f"moments_f64(empty) [{label}] did not raise")
check("moments_f64 after the failure", m.moments_f64(d, out=(scalar, scalar)), (np.sum(d), np.sum(d * d)), rtol=1e-9)

print(f"{checks} checks passed on {jax.devices()[0].device_kind} (jax {jax.__version__})")
