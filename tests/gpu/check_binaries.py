"""Runs the precompiled kernels of tests/e2e/binaries (built by begen into
OUT_DIR, binaries made by tests/e2e/binaries/make_binaries.py) on the GPU
against numpy: every binary kernel eagerly and under jit, the CPU kernel of
the same library, a cuTile assumption broken and an int32 index overflow
each raising in Python with the process going on, and the command_buffer
kernels inside a CUDA graph.

usage: python tests/gpu/check_binaries.py OUT_DIR
"""

import os
import sys

# Custom calls go into command buffers (CUDA graphs) only when XLA is told
# so; set before JAX starts its backend.
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "")
    + " --xla_gpu_enable_command_buffer=FUSION,CUSTOM_CALL --xla_gpu_graph_min_graph_size=1"
)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, sys.argv[1])
import bink as m  # noqa: E402

assert jax.devices()[0].platform == "gpu", jax.devices()
checks = 0


def close(got, want, rtol=1e-6, atol=0.0):
    global checks
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=rtol, atol=atol)
    checks += 1


def both(name, f, *args, want, **kw):
    """f eagerly and under jit, against `want`."""
    close(f(*args), want, **kw)
    close(jax.jit(f)(*args), want, **kw)
    print(f"ok   {name}: eager and jit")


def raises(name, thunk, part):
    global checks
    try:
        jax.block_until_ready(thunk())
    except Exception as e:  # XLA's runtime error carries the handler's message
        assert part in str(e), f"{name}: {e}"
        checks += 1
        print(f"ok   {name}: {type(e).__name__}: {str(e).splitlines()[0][:160]}")
        return
    raise SystemExit(f"FAIL {name}: no error")


# cuTile: scale (x: extent % 16, stride 1, base % 16; y stride 1), TILE=16.
n = 4096
x = jnp.arange(n, dtype=jnp.float32) / 7
both("tile_scale", lambda v: m.tile_scale(v, s=2.5), x, want=2.5 * np.asarray(x))
# The int64-index export, TILE=128: any extent.
x2 = jnp.arange(1000, dtype=jnp.float32)
both("tile_scale_i64", lambda v: m.tile_scale_i64(v, s=-0.5), x2, want=-0.5 * np.asarray(x2))
# add2d: float16 (m, n) tiles of 16 x 32; a's row stride % 8, out's extents % 16.
a = (jnp.arange(64 * 128, dtype=jnp.float32).reshape(64, 128) % 251).astype(jnp.float16)
b = (jnp.arange(64 * 128, dtype=jnp.float32).reshape(64, 128) % 13).astype(jnp.float16)
both("tile_add2d", m.tile_add2d, a, b, want=np.asarray(a, np.float32) + np.asarray(b, np.float32), rtol=1e-3)
# scalars: out = a + b + c + d + e, one per element, TILE=64.
out = jax.ShapeDtypeStruct((256,), jnp.float32)
both("tile_scalars", lambda: m.tile_scalars(a=3, b=0.25, c=-2, d=True, e=40, out=out), want=np.full(256, 42.25))
# c: affine with a struct by value, axpy with a slice-style (pointer, length).
xs = jnp.linspace(-1, 1, 1000, dtype=jnp.float32)
p = {"tag": 3, "scale": 0.5, "shift": 0.25}
both("affine", lambda v: m.affine(v, p=p), xs, want=np.asarray(xs, np.float64) * 0.5 + 0.25 + 3, rtol=1e-6)
ys = jnp.cos(xs)
both("axpy", lambda u, v: m.axpy(u, v, a=2.0), xs, ys, want=2 * np.asarray(xs) + np.asarray(ys), rtol=1e-6)
both("axpy_fat (fatbin)", lambda u, v: m.axpy_fat(u, v, a=-1.0), xs, ys, want=np.asarray(ys) - np.asarray(xs),
     rtol=1e-6, atol=1e-7)
# The CUDA source of the same library (nvcc, a trampoline, the glue).
both("cu_twice", m.cu_twice, xs, want=2 * np.asarray(xs))
# An empty input: nothing is launched.
close(m.affine(jnp.zeros(0, jnp.float32), p=p), np.zeros(0))
# The CPU kernel of the same library.
with jax.default_device(jax.devices("cpu")[0]):
    c = jnp.arange(5, dtype=jnp.float32)
    close(m.add_one(c, out=jax.ShapeDtypeStruct((5,), jnp.float32)), np.arange(5) + 1)
print("ok   add_one (CPU) beside the binaries")

# A broken assumption: scale's x extent must be a multiple of 16.
raises("extent not a multiple of 16", lambda: m.tile_scale(jnp.ones(40, jnp.float32), s=1.0),
       "tile_scale: parameter 'arg0': extent 40 of axis 0 is not a multiple of 16, as the kernel assumes")
raises("the same under jit", lambda: jax.jit(lambda v: m.tile_scale(v, s=1.0))(jnp.ones(40, jnp.float32)),
       "is not a multiple of 16")
# int32 index overflow: 2**31 elements (8 GiB in, 8 GiB out).
free = jax.devices()[0].memory_stats() or {}
limit = free.get("bytes_limit", 0) - free.get("bytes_in_use", 0)
if limit >= 20 * 2**30:
    big = jnp.zeros(2**31, jnp.float32)
    raises("int32 index overflow", lambda: m.tile_scale(big, s=1.0),
           "extent 2147483648 of axis 0 does not fit the kernel's int32 index type")
    del big
else:
    print(f"skip int32 index overflow: {limit / 2**30:.1f} GiB free, 20 needed")
# The process goes on: a good call after the errors.
both("tile_scale after the errors", lambda v: m.tile_scale(v, s=3.0), x, want=3 * np.asarray(x))

# Graph capture: tile_scale_graph, affine and capture_probe are
# `command_buffer: true`. capture_probe (device.cu) returns 1 when it ran
# under stream capture: XLA recorded the jit's custom calls into a CUDA
# graph. tile_scale_graph is called here first: its image is loaded by a
# launch that XLA may be recording.
def chain(v):
    for k in range(4):
        v = m.tile_scale_graph(v, s=1.5)
        v = m.affine(v, p={"tag": 0, "scale": 1.0, "shift": float(k)})
    return v, m.capture_probe()


compiled = jax.jit(chain).lower(x).compile()
want = np.asarray(x, np.float64)
for k in range(4):
    want = want * 1.5 + k
seen = []
for run in range(4):  # XLA may run the first execution directly, then records the graph and replays it
    got, captured = compiled(x)
    close(got, want, rtol=1e-5)
    seen.append(int(captured))
assert seen[-1] == 1, f"the custom calls were not recorded into a CUDA graph (probe per run: {seen})"
print(f"ok   command buffer: 8 binary launches recorded into one CUDA graph (probe per run: {seen})")
print(f"check_binaries: {checks} checks passed")
