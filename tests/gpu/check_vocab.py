"""Runs the kernels of tests/gpu/vocab (begen's own vocabulary in CUDA,
built by begen into OUT_DIR) on the GPU against numpy, eagerly and under
jit: every keyword as a dictionary (`BE::Attrs`), string attributes
choosing the device operation, per-executable state in device memory
(42, 43, 44 within one executable, 42 again in a new one; one state per
GPU under a shard_map over 2 or more GPUs), and
INVALID_ARGUMENT errors (`BE::Status`, BE_CHECK_ARG, BE::Attrs' own) seen
from Python. Prints PASS or FAIL per check and exits 1 on any failure.

Without a GPU backend it runs the checks Python makes before XLA, then
fails saying that the GPU checks did not run.

usage: python tests/gpu/check_vocab.py OUT_DIR
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, sys.argv[1])
import gpu_vocab as m  # noqa: E402
from gpu_checks import check, failed


def raises(error, text, call):
    """`call()` raises `error` whose message contains `text`; arrays are
    made concrete, so an error of an asynchronous GPU call surfaces here."""

    try:
        jax.tree_util.tree_map(np.asarray, call())
    except error as e:
        assert text in str(e), f"{text!r} not in {str(e)!r}"
        return
    raise AssertionError(f"no {error.__name__} ({text})")


def like(x):
    return jax.ShapeDtypeStruct(x.shape, x.dtype)


def close(got, want):
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6)


# Checks that Python makes before the call reaches XLA: no GPU needed.
xs = np.arange(-3, 5, dtype=np.float32)
check(
    "string attribute of another type is a TypeError",
    lambda: raises(
        TypeError,
        "vocab_apply: attribute 'op' (str) takes a str, got 3 (int)",
        lambda: m.vocab_apply(xs, op=3, out=like(xs)),
    ),
)
check(
    "dictionary key that is no identifier is a TypeError",
    lambda: raises(
        TypeError,
        "attribute name 'a b' is not an ASCII identifier",
        lambda: m.vocab_affine(xs, scale=1.0, out=like(xs), **{"a b": 2}),
    ),
)
check(
    "shape contract: a wrong out= is a ValueError",
    lambda: raises(
        ValueError,
        "dimension 'n'",
        lambda: m.vocab_add_length(xs, word="a", scale=1.0, out=jax.ShapeDtypeStruct((3,), jnp.float32)),
    ),
)

platform = jax.devices()[0].platform
if platform != "gpu":
    print(f"FAIL gpu: jax's default backend is {platform!r}, not a GPU ({jax.devices()}): the GPU checks did not run")
    sys.exit(1)

# Enough elements for many blocks of 256 threads; every array is a jit
# argument, never a constant captured by the traced function.
N = 100_003
x = jnp.asarray(np.linspace(-50.0, 50.0, N, dtype=np.float32))
xn = np.asarray(x)


# (a) BE::Attrs: a float, an int and a string read by key on the host,
# computed on the device.
def affine():
    close(m.vocab_affine(x, scale=2.0, out=like(x)), 2 * xn)
    close(m.vocab_affine(x, scale=0.5, offset=3, mode="relu", out=like(x)), np.maximum(0.5 * xn + 3, 0))
    close(m.vocab_affine(x, scale=np.float32(-1), offset=np.int8(-2), mode="abs", out=like(x)), np.abs(-xn - 2))
    f = jax.jit(lambda v: m.vocab_affine(v, scale=1.5, offset=-7, mode="abs", out=like(v)))
    close(f(x), np.abs(1.5 * xn - 7))
    close(f(x + 1), np.abs(1.5 * (xn + 1) - 7))


def affine_errors():
    raises(Exception, "INVALID_ARGUMENT", lambda: m.vocab_affine(x, out=like(x)))
    raises(Exception, "attribute 'scale' is missing", lambda: m.vocab_affine(x, out=like(x)))
    raises(Exception, "attribute 'scale' is not a float32", lambda: m.vocab_affine(x, scale="big", out=like(x)))
    raises(
        Exception,
        "attribute 'offset' is out of range for an int32",
        lambda: m.vocab_affine(x, scale=1.0, offset=1 << 40, out=like(x)),
    )
    raises(Exception, "attribute 'mode' is not a string", lambda: m.vocab_affine(x, scale=1.0, mode=3, out=like(x)))
    raises(Exception, "INVALID_ARGUMENT", lambda: m.vocab_affine(x, scale=1.0, mode="cube", out=like(x)))
    raises(
        Exception,
        "unknown mode 'cube'",
        lambda: jax.jit(lambda v: m.vocab_affine(v, scale=1.0, mode="cube", out=like(v)))(x),
    )


def scale_count():
    close(m.vocab_scale_count(x), xn)
    close(m.vocab_scale_count(x, scale=2.0), 2 * xn)
    # Three attributes, `count` among them: x * 0.5 + 3.
    close(m.vocab_scale_count(x, scale=0.5, count=True, other="x"), 0.5 * xn + 3)
    f = jax.jit(lambda v: m.vocab_scale_count(v, count=True, a=1, b=2.0, c="c"))
    close(f(x), xn + 4)


check("BE::Attrs: float, int and string keys into a CUDA kernel, eager and jit", affine)
check("BE::Attrs: missing, mistyped and out-of-range keys, a bad mode: INVALID_ARGUMENT", affine_errors)
check("BE::Attrs beside typed pointers: get_or, contains, size", scale_count)


# (b) std::string_view attributes choosing the device operation.
def apply():
    for op, want in (("double", 2 * xn), ("square", xn * xn), ("negate", -xn)):
        close(m.vocab_apply(x, op=op, out=like(x)), want)
        close(jax.jit(lambda v, op=op: m.vocab_apply(v, op=op, out=like(v)))(x), want)


def apply_errors():
    raises(Exception, "INVALID_ARGUMENT", lambda: m.vocab_apply(x, op="cube", out=like(x)))
    raises(Exception, "unknown op 'cube'", lambda: jax.jit(lambda v: m.vocab_apply(v, op="cube", out=like(v)))(x))


def add_length():
    close(m.vocab_add_length(x, word="héllo", scale=0.5), xn + 3.0)  # 6 UTF-8 bytes
    close(jax.jit(lambda v: m.vocab_add_length(v, word="", scale=2.0))(x), xn)
    close(jax.jit(lambda v: m.vocab_add_length(v, word="abcd", scale=-1.0))(x), xn - 4.0)


check("std::string_view: the op chosen on the device, eager and jit", apply)
check("std::string_view: an unknown op is INVALID_ARGUMENT (BE_CHECK_ARG)", apply_errors)
check("std::string_view between scalars beside typed pointers", add_length)


# (d) BE::Status: INVALID_ARGUMENT returned for a bad attribute value.
def clip():
    close(m.vocab_clip(x, lo=-10.0, hi=20.0, out=like(x)), np.clip(xn, -10, 20))
    f = jax.jit(lambda v: m.vocab_clip(v, lo=0.0, hi=0.0, out=like(v)))
    close(f(x), np.zeros_like(xn))


def clip_errors():
    raises(
        Exception,
        "INVALID_ARGUMENT: vocab_clip: lo (2.000000) is above hi (1.000000)",
        lambda: m.vocab_clip(x, lo=2.0, hi=1.0, out=like(x)),
    )
    raises(
        Exception,
        "is above hi (1.000000)",
        lambda: jax.jit(lambda v: m.vocab_clip(v, lo=float("nan"), hi=1.0, out=like(v)))(x),
    )
    # The GPU is fine after the errors.
    close(m.vocab_clip(x, lo=-1.0, hi=1.0, out=like(x)), np.clip(xn, -1, 1))


check("BE::Status: a clip on the device, eager and jit", clip)
check("BE::Status: lo above hi is INVALID_ARGUMENT, from Python", clip_errors)


# (c) Per-executable state: a counter in device memory made by
# make_device_counter() when XLA instantiates each executable.
scalar = jax.ShapeDtypeStruct((), jnp.int32)


def counter_per_executable():
    f = jax.jit(lambda: m.vocab_read_counter(out=scalar))
    assert [int(f()) for _ in range(3)] == [42, 43, 44]
    # Another executable: a state of its own, from 42; f's goes on.
    g = jax.jit(lambda v: (v + 1, m.vocab_read_counter(out=scalar)))
    assert int(g(jnp.int32(1))[1]) == 42
    assert int(f()) == 45
    assert int(g(jnp.int32(2))[1]) == 43
    # XLA instantiates each call of the kernel in an executable: two calls
    # in one executable have a state each.
    h = jax.jit(lambda: (m.vocab_read_counter(out=scalar), m.vocab_read_counter(out=scalar)))
    got = [int(v) for v in h()]
    assert got == [42, 42], got
    got = [int(v) for v in h()]
    assert got == [43, 43], got
    # Eager calls of one signature share one executable.
    first = int(m.vocab_read_counter(out=scalar))
    assert first >= 42, first
    assert int(m.vocab_read_counter(out=scalar)) == first + 1


def counter_of_typed_pointers():
    f = jax.jit(m.vocab_add_count)
    for k in range(3):
        close(f(x), xn + 42 + k)
    # Another shape is another executable: from 42 again.
    close(f(x[:1000]), xn[:1000] + 42)
    close(f(x), xn + 45)
    first = np.asarray(m.vocab_add_count(x))
    count = round(float(first[0] - xn[0]))
    assert count >= 42, count
    close(first, xn + count)
    close(m.vocab_add_count(x), xn + count + 1)


def counter_not_made():
    raises(Exception, "make_no_counter() returned no state", lambda: jax.jit(lambda: m.vocab_no_counter(out=scalar))())


def counter_per_device():
    """A shard_map over every GPU: each device has a counter of its own, in
    its own memory (one shared counter would count 42.. over all shards)."""
    from jax.sharding import PartitionSpec as P

    devices = jax.devices()
    if len(devices) < 2:
        print("SKIP state per device: one GPU (needs 2 or more)")
        return
    mesh = jax.make_mesh((len(devices),), ("x",))
    one = jax.ShapeDtypeStruct((1,), jnp.int32)
    per_shard = lambda kernel: jax.jit(jax.shard_map(lambda: kernel(out=one), mesh=mesh, in_specs=(), out_specs=P("x")))
    f = per_shard(m.vocab_read_counter)
    got = [np.asarray(f()).tolist() for _ in range(3)]
    assert got == [[k] * len(devices) for k in (42, 43, 44)], got
    where = np.asarray(per_shard(m.vocab_counter_device)()).tolist()
    assert where == [d.id for d in mesh.devices.flat], where


check(
    "state: a device counter per executable (and call in it), 42, 43, 44; a new executable from 42",
    counter_per_executable,
)
check("state beside typed pointers: y = x + the count, per executable", counter_of_typed_pointers)
check("state: an instantiate function that makes none fails the executable, named", counter_not_made)
check("state: one counter per GPU under a shard_map, in that GPU's memory", counter_per_device)

if failed:
    print(f"gpu vocab: {len(failed)} check(s) FAILED: {', '.join(failed)}")
    sys.exit(1)
print("begen's own vocabulary on the GPU: all checks passed")
