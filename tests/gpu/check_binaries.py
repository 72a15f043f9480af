"""Runs the precompiled kernels of tests/e2e/binaries (built by begen into
OUT_DIR, binaries made by tests/e2e/binaries/make_binaries.py) on the GPU
against numpy: every binary kernel eagerly and under jit (lists of arrays
too: one element, many, a list whose words take several launches), the CPU
kernel of the same library, a cuTile assumption broken (by an array and by
a list's element) and an int32 index overflow each raising in Python with
the process going on, and the command_buffer kernels (lists among them)
inside a CUDA graph, replayed and given other buffers.

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
# Lists of arrays (cuTile ListConstraint): tile_sum is y = s * sum(xs), its
# elements with scale's assumptions (extent % 16, stride 1, base % 16).
xs3 = [x, 2 * x, jnp.cos(x)]
want3 = sum(np.asarray(v, np.float64) for v in xs3)
both("tile_sum (a list of 3)", lambda a, b, c: m.tile_sum([a, b, c], s=0.5), *xs3, want=0.5 * want3, rtol=1e-5)
both("tile_sum (a tuple of 1)", lambda v: m.tile_sum((v,), s=2.0), x, want=2 * np.asarray(x))
close(jax.jit(lambda vs: m.tile_sum(vs, s=1.0))(xs3), want3, rtol=1e-5)
print("ok   tile_sum: a list as a jit argument (a pytree)")
# 600 elements: 1800 words, written by 4 launches of begen_write_words.
many = [jnp.full(64, float(k), jnp.float32) for k in range(600)]
both("tile_sum (600 elements)", lambda *vs: m.tile_sum(list(vs), s=1.0), *many, want=np.full(64, 599 * 600 / 2))
# add_list2d: out = a + sum(xs), 2-D elements with int64 extents and strides (5 words each) after an array.
a2 = jnp.arange(64 * 96, dtype=jnp.float32).reshape(64, 96) / 100
l2 = [jnp.sin(a2), a2 * a2, jnp.full((64, 96), 3.0, jnp.float32)]
both("tile_add_list2d", lambda a, *vs: m.tile_add_list2d(a, vs), a2, *l2,
     want=np.asarray(a2, np.float64) + sum(np.asarray(v, np.float64) for v in l2), rtol=1e-5)
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
raises("a list element's extent not a multiple of 16",
       lambda: m.tile_sum([jnp.ones(40, jnp.float32), jnp.ones(40, jnp.float32)], s=1.0),
       "tile_sum: parameter 'arg0[0]': extent 40 of axis 0 is not a multiple of 16, as the kernel assumes")
raises("the same under jit", lambda: jax.jit(lambda v: m.tile_sum([v, v], s=1.0))(jnp.ones(40, jnp.float32)),
       "parameter 'arg0[0]': extent 40 of axis 0 is not a multiple of 16")
# int32 index overflow: 2**31 elements (8 GiB in, 8 GiB out).
free = jax.devices()[0].memory_stats() or {}
limit = free.get("bytes_limit", 0) - free.get("bytes_in_use", 0)
if limit >= 20 * 2**30:
    big = jnp.zeros(2**31, jnp.float32)
    raises("int32 index overflow", lambda: m.tile_scale(big, s=1.0),
           "extent 2147483648 of axis 0 does not fit the kernel's int32 index type")
    raises("int32 index overflow in a list element", lambda: m.tile_sum([big], s=1.0),
           "parameter 'arg0[0]': extent 2147483648 of axis 0 does not fit the kernel's int32 index type")
    del big
else:
    print(f"skip int32 index overflow: {limit / 2**30:.1f} GiB free, 20 needed")
# The process goes on: a good call after the errors.
both("tile_scale after the errors", lambda v: m.tile_scale(v, s=3.0), x, want=3 * np.asarray(x))

# Graph capture: tile_scale_graph, affine, tile_sum, tile_add_list2d and
# capture_probe are `command_buffer: true`. capture_probe (device.cu) returns
# 1 when it ran under stream capture: XLA recorded the jit's custom calls into
# a CUDA graph. tile_scale_graph is called here first: its image is loaded by
# a launch that XLA may be recording. A list's words are written by a kernel
# launch in the graph (no host copy), with the addresses of the call XLA
# recorded.
def chain(v, w):
    for k in range(4):
        v = m.tile_scale_graph(v, s=1.5)
        v = m.affine(v, p={"tag": 0, "scale": 1.0, "shift": float(k)})
        v = m.tile_sum([v, w, w], s=0.5)
    return v, m.capture_probe()


def chain_want(v, w):
    want = np.asarray(v, np.float64)
    for k in range(4):
        want = (want * 1.5 + k + 2 * np.asarray(w, np.float64)) * 0.5
    return want


def run_captured(compiled, args, want, label, runs):
    """Runs `compiled` `runs` times; the probe must say the last run was captured."""
    seen = []
    for _ in range(runs):  # XLA may run the first execution directly, then records the graph and replays it
        got, captured = compiled(*args)
        close(got, want, rtol=1e-5, atol=1e-4)
        seen.append(int(captured))
    assert seen[-1] == 1, f"{label}: the custom calls were not recorded into a CUDA graph (probe per run: {seen})"
    return seen


w = jnp.sin(x)
compiled = jax.jit(chain).lower(x, w).compile()
seen = run_captured(compiled, (x, w), chain_want(x, w), "chain", 4)
# Other inputs (other buffers): XLA records again or updates the graph; the words follow.
x_other, w_other = jnp.cos(x) * 3, x / 3
run_captured(compiled, (x_other, w_other), chain_want(x_other, w_other), "chain, other buffers", 2)
run_captured(compiled, (x, w), chain_want(x, w), "chain, first buffers again", 1)
print(f"ok   command buffer: 12 binary launches (lists among them) recorded into one CUDA graph "
      f"(probe per run: {seen}), replayed, other buffers")


def grid_chain(a, ys):
    for _ in range(3):
        a = m.tile_add_list2d(a, ys)
    return a, m.capture_probe()


compiled2 = jax.jit(grid_chain).lower(a2, l2).compile()
run_captured(compiled2, (a2, l2), np.asarray(a2, np.float64) + 3 * sum(np.asarray(v, np.float64) for v in l2),
             "grid_chain", 3)
print("ok   command buffer: tile_add_list2d (2-D list elements) recorded into a CUDA graph")
print(f"check_binaries: {checks} checks passed")
