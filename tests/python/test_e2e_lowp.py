"""16-bit floats on the CPU, end to end: tests/e2e/lowp built by the CLI and
called from JAX. One template (`const.T=float32,bfloat16,float16`) serves
the three dtypes through brainevent/float16.h's BE::bfloat16 and BE::half;
its numbers equal jnp's computed in float32 and rounded to the dtype. The
header's conversions are checked bit for bit: every bfloat16 and float16 bit
pattern round-trips through float, and float32 values round to the bits
ml_dtypes gives (nearest even: ties, overflow, subnormals, NaN, infinities)."""

import ml_dtypes
import numpy as np
import pytest
from conftest import REPO, run_begen

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane

DTYPES = [np.float32, ml_dtypes.bfloat16, np.float16]


@pytest.fixture(scope="module")
def m(jax_cpu, tmp_path_factory):
    import importlib
    import sys

    out = tmp_path_factory.mktemp("e2e_lowp")
    run_begen("build", REPO / "tests/e2e/lowp", "--out", out, "--platform", "cpu", "--quiet")
    sys.path.insert(0, str(out))
    try:
        return importlib.import_module("e2e_lowp")
    finally:
        sys.path.remove(str(out))


def rounded(values, dtype):
    # float32 math, rounded once to `dtype`: what the kernel computes.
    return np.asarray(values, np.float32).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_one_template_serves_every_float(m, dtype):
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(1)
    x = rng.normal(size=64).astype(np.float32).astype(dtype)
    y = jax.jit(lambda a: m.axpb(a, s=1.5))(jnp.asarray(x))
    assert y.dtype == np.dtype(dtype)
    want = rounded(1.5 * x.astype(np.float32) + 1.0, dtype)
    np.testing.assert_array_equal(np.asarray(y).view(np.uint8), want.view(np.uint8))

    a = rng.normal(size=(8, 100)).astype(np.float32).astype(dtype)
    total, naive = m.rowsum(jnp.asarray(a))
    assert total.dtype == naive.dtype == np.dtype(dtype)
    # Accumulated in float32, rounded once: jnp's float32 sum rounded.
    want = rounded(jnp.sum(jnp.asarray(a, jnp.float32), axis=1), dtype)
    np.testing.assert_allclose(np.asarray(total, np.float32), want.astype(np.float32), rtol=1e-6)
    # Rounded to the dtype at every step: within that dtype's precision.
    eps = float(ml_dtypes.finfo(dtype).eps)
    scale = np.abs(a.astype(np.float32)).sum(axis=1)
    err = np.abs(np.asarray(naive, np.float32) - want.astype(np.float32))
    assert np.all(err <= 100 * eps * scale), (err, scale)
    if dtype is not np.float32:
        assert np.any(err > 0), "the naive sum rounds at every step: it should differ somewhere"


def test_a_plain_bfloat16_kernel(m):
    import jax.numpy as jnp

    x = np.linspace(0.0, 50.0, 33, dtype=np.float32).astype(ml_dtypes.bfloat16)
    y = m.bf16_sqrt(jnp.asarray(x))
    want = rounded(np.sqrt(x.astype(np.float32)), ml_dtypes.bfloat16)
    np.testing.assert_array_equal(np.asarray(y).view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16], ids=lambda d: np.dtype(d).name)
def test_every_bit_pattern_round_trips_through_float(m, dtype):
    import jax.numpy as jnp

    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    from_bits, to_bits = (m.from_bf16, m.to_bf16) if dtype is ml_dtypes.bfloat16 else (m.from_half, m.to_half)
    f = np.asarray(from_bits(jnp.asarray(bits)))
    # The floats are the patterns' values (NaNs compared as NaNs).
    want = bits.view(dtype).astype(np.float32)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(f), nan)
    np.testing.assert_array_equal(f[~nan], want[~nan])
    # And back: every pattern, NaNs included, is the same 16 bits again.
    np.testing.assert_array_equal(np.asarray(to_bits(jnp.asarray(f))), bits)


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16], ids=lambda d: np.dtype(d).name)
def test_float_rounds_to_nearest_even_as_ml_dtypes(m, dtype):
    import jax.numpy as jnp

    rng = np.random.default_rng(2)
    info = ml_dtypes.finfo(dtype)
    tiny, big = float(info.smallest_subnormal), float(info.max)
    edges = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, big, -big, tiny, tiny / 2, tiny * 1.5, tiny / 3]
    edges += [float(info.smallest_normal), float(info.smallest_normal) * (1 - 2.0**-12)]
    f = np.concatenate(
        [
            np.asarray(edges, np.float32),
            rng.normal(size=4000).astype(np.float32),
            (rng.uniform(-1, 1, size=2000) * big).astype(np.float32),
            (rng.normal(size=2000) * tiny * 64).astype(np.float32),
        ]
    )
    # Every value of the dtype, and the midpoints between neighbours (the
    # ties) with the floats just above and below them.
    with np.errstate(invalid="ignore"):
        every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dtype).astype(np.float64)
    finite = np.unique(every[np.isfinite(every)])
    f = np.concatenate([f, finite.astype(np.float32)])
    mids = ((finite[:-1] + finite[1:]) / 2).astype(np.float32)
    mids = mids[mids.astype(np.float64) == (finite[:-1] + finite[1:]) / 2]  # exactly representable in float32
    f = np.concatenate([f, mids, np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(-np.inf))])
    f = f[~np.isnan(f)]
    to_bits = m.to_bf16 if dtype is ml_dtypes.bfloat16 else m.to_half
    got = np.asarray(to_bits(jnp.asarray(f)))
    with np.errstate(over="ignore"):  # past the largest value: infinity, as wanted
        want = f.astype(dtype).view(np.uint16)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, [(float(f[i]), hex(got[i]), hex(want[i])) for i in bad[:8]]
    assert mids.size > 1000  # the ties were tested
    # A NaN stays a NaN.
    nan = np.asarray(to_bits(jnp.asarray(np.array([np.nan, -np.nan], np.float32))))
    assert np.all(np.isnan(nan.view(dtype)))
