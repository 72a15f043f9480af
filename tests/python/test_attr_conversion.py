"""Attribute conversion in the generated module is exact: a value that does
not fit the declared type (a fraction for an integer, 2 for a bool, 300 for an
int8, -1 for a uint32, a string) is a TypeError/ValueError naming the kernel,
the attribute and the type, raised in Python before XLA sees the call. Values
that fit, numpy scalars and 0-d arrays included, reach the kernel unchanged."""

import math

import ml_dtypes
import numpy as np
import pytest
from conftest import import_module, run_begen

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane

KERNEL = """\
#include "brainevent/common.h"

#include <complex>

// @BE echo
void echo(BE::Tensor out, bool b, int8_t i8, uint8_t u8, int16_t i16, uint16_t u16, int32_t i32,
          uint32_t u32, int64_t i64, uint64_t u64, float f32, double f64, std::complex<float> c64) {
    BE_CHECK(out.numel() == 13) << "echo writes 13 values";
    double* o = out.data_ptr<double>();
    o[0] = b ? 1.0 : 0.0;
    o[1] = i8;
    o[2] = u8;
    o[3] = i16;
    o[4] = u16;
    o[5] = i32;
    o[6] = u32;
    o[7] = static_cast<double>(i64);
    o[8] = static_cast<double>(u64);
    o[9] = f32;
    o[10] = f64;
    o[11] = c64.real();
    o[12] = c64.imag();
}
"""

ORDER = ["b", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f32", "f64"]
VALID = {"b": True, "i8": -5, "u8": 200, "i16": -300, "u16": 60000, "i32": 7, "u32": 9, "i64": -(2**40),
         "u64": 2**53, "f32": 1.5, "f64": math.pi, "c64": 1 - 2j}


@pytest.fixture(scope="module")
def attrs(jax_cpu, tmp_path_factory):
    """A one-kernel library with an attribute of every checked type."""
    root = tmp_path_factory.mktemp("attrs")
    src = root / "kernels"
    src.mkdir()
    (src / "echo.cpp").write_text(KERNEL)
    out = root / "out"
    run_begen("build", src, "--out", out, "--name", "attrconv", "--platform", "cpu", "--quiet")
    return import_module(out, "attrconv")


def call(jax, m, **changes):
    values = dict(VALID, **changes)
    return np.asarray(m.echo(**values, out=jax.ShapeDtypeStruct((13,), "float64")))


def expected(**changes):
    values = dict(VALID, **changes)
    row = [float(values[k]) for k in ORDER]
    row[ORDER.index("f32")] = float(np.float32(values["f32"]))
    return np.array(row + [1.0, -2.0])


def test_valid_values_reach_the_kernel(jax_cpu, attrs):
    np.testing.assert_array_equal(call(jax_cpu, attrs), expected())
    jitted = jax_cpu.jit(lambda: attrs.echo(**VALID, out=jax_cpu.ShapeDtypeStruct((13,), "float64")))
    np.testing.assert_array_equal(np.asarray(jitted()), expected())


@pytest.mark.parametrize(
    "name, value, want",
    [
        ("i8", 127, 127), ("i8", -128, -128), ("u8", 0, 0), ("u8", 255, 255),
        ("u16", 65535, 65535), ("i16", -(2**15), -(2**15)),
        ("u32", 2**32 - 1, 2**32 - 1), ("i32", -(2**31), -(2**31)),
        ("i64", -(2**63), -(2**63)), ("u64", 2**63 - 1, 2**63 - 1),
        ("i32", 3.0, 3), ("i64", -2.0**40, -(2**40)),         # integral floats
        ("b", False, 0), ("b", 1, 1), ("b", 0, 0),
        ("f32", 2, 2.0), ("f64", True, 1.0), ("f32", float("inf"), math.inf),
        ("f32", 0.1, float(np.float32(0.1))),                 # rounding is not range
        # numpy scalars and 0-d arrays of a compatible kind
        ("i8", np.int64(-7), -7), ("u16", np.uint8(9), 9), ("i32", np.float64(4.0), 4),
        ("i64", np.array(11, dtype=np.uint8), 11), ("b", np.bool_(True), 1),
        ("b", np.array(False), 0), ("f64", np.float32(0.5), 0.5),
        ("f32", np.array(2.5), 2.5), ("f64", ml_dtypes.bfloat16(-1.5), -1.5),
        ("i8", np.array(3, dtype=ml_dtypes.bfloat16), 3), ("u64", np.uint64(2**63 - 1), 2**63 - 1),
    ],
)
def test_values_that_fit(jax_cpu, attrs, name, value, want):
    got = call(jax_cpu, attrs, **{name: value})
    assert got[ORDER.index(name)] == float(want), (name, value, got)


def test_nan_passes_for_floats(jax_cpu, attrs):
    assert math.isnan(call(jax_cpu, attrs, f32=float("nan"))[ORDER.index("f32")])


def test_concrete_jax_scalars(jax_cpu, attrs):
    jnp = jax_cpu.numpy
    got = call(jax_cpu, attrs, i32=jnp.int32(-4), f64=jnp.float64(0.25), b=jnp.bool_(True))
    assert (got[ORDER.index("i32")], got[ORDER.index("f64")], got[0]) == (-4.0, 0.25, 1.0)


@pytest.mark.parametrize(
    "name, value, error, detail",
    [
        ("i32", 3.7, ValueError, "takes a whole number, got 3.7 (float)"),
        ("i64", np.float32(2.5), ValueError, "takes a whole number"),
        ("u8", float("inf"), ValueError, "takes a whole number"),
        ("i16", float("nan"), ValueError, "takes a whole number"),
        ("b", 2, ValueError, "takes True or False (or 0/1), got 2 (int)"),
        ("b", -1, ValueError, "takes True or False"),
        ("b", 1.0, TypeError, "takes True or False, got 1.0 (float)"),
        ("i8", 300, ValueError, "300 is out of range [-128, 127]"),
        ("i8", -129, ValueError, "-129 is out of range [-128, 127]"),
        ("u8", 256, ValueError, "256 is out of range [0, 255]"),
        ("u16", -1, ValueError, "-1 is out of range [0, 65535]"),
        ("u32", -1, ValueError, "-1 is out of range [0, 4294967295]"),
        ("u32", 2**32, ValueError, "out of range [0, 4294967295]"),
        ("i32", 2**31, ValueError, "out of range [-2147483648, 2147483647]"),
        ("i64", 2**63, ValueError, "out of range"),
        ("u64", 2**64, ValueError, "out of range [0, 18446744073709551615]"),
        ("u64", -1, ValueError, "out of range"),
        # JAX encodes integer attributes through int64: std::bad_cast above.
        ("u64", 2**63, ValueError, "is above 2**63 - 1, the largest integer JAX can pass"),
        ("u64", np.uint64(2**64 - 1), ValueError, "is above 2**63 - 1"),
        ("i64", 1e20, ValueError, "out of range"),
        ("i8", np.int16(1000), ValueError, "1000 is out of range"),
        ("u32", np.array(-3), ValueError, "-3 is out of range"),
        ("f32", 1e39, ValueError, "is out of range"),
        ("f32", -1e39, ValueError, "is out of range"),
        ("f64", 10**400, ValueError, "is out of range"),
        ("i64", 10**400, ValueError, "... is out of range"),  # shortened
        ("i32", "3", TypeError, "takes a number, got '3' (str)"),
        ("f32", "1.5", TypeError, "takes a number, got '1.5' (str)"),
        ("b", "yes", TypeError, "takes a number"),
        ("u8", None, TypeError, "takes a number, got None (NoneType)"),
        ("i32", [1], TypeError, "takes a number, got [1] (list)"),
        ("f64", np.array([1.0]), TypeError, "takes a number"),
        ("i32", 1 + 0j, TypeError, "takes a whole number, got (1+0j) (complex)"),
        ("f32", 1 + 2j, TypeError, "takes a real number"),
        ("f64", np.complex64(1), TypeError, "takes a real number"),
        ("i32", np.array("7"), TypeError, "takes a number"),
        # An integer a float type cannot hold exactly: not rounded silently.
        ("f32", 16777217, ValueError, "the integer 16777217 has no exact float32 value (it would round to 16777216.0)"),
        ("f32", np.int64(-(2**24) - 1), ValueError, "the integer -16777217 has no exact float32 value"),
        ("f32", np.array(2**31 - 1), ValueError, "the integer 2147483647 has no exact float32 value"),
        ("f64", 2**53 + 1, ValueError, "the integer 9007199254740993 has no exact float64 value"),
        ("f64", np.uint64(2**64 - 1), ValueError, "the integer 18446744073709551615 has no exact float64 value"),
        ("c64", 16777217, ValueError, "the integer 16777217 has no exact float32 value"),
        # A longdouble beyond float64: out of range, never inf.
        ("f64", np.longdouble("1e400"), ValueError, "is out of range"),
        ("f32", np.longdouble("-1e400"), ValueError, "is out of range"),
    ],
)
def test_values_that_do_not_fit(jax_cpu, attrs, name, value, error, detail):
    ty = {"b": "bool", "i8": "int8", "u8": "uint8", "i16": "int16", "u16": "uint16", "i32": "int32",
          "u32": "uint32", "i64": "int64", "u64": "uint64", "f32": "float32", "f64": "float64", "c64": "complex64"}[name]
    with pytest.raises(error) as info:
        call(jax_cpu, attrs, **{name: value})
    message = str(info.value)
    assert message.startswith(f"echo: attribute '{name}' ({ty})"), message
    assert detail in message, message
    # Raised by the generated module itself, before anything reached XLA.
    assert info.traceback[-1].path.name == "attrconv.py", info.traceback[-1]


def test_floats_and_exact_integers_still_convert(jax_cpu, attrs):
    # An integer a float type holds is exact; a float is rounded to it (rounding is not range).
    got = call(jax_cpu, attrs, f32=16777216, f64=2**53)
    assert (got[ORDER.index("f32")], got[ORDER.index("f64")]) == (16777216.0, 2.0**53)
    assert call(jax_cpu, attrs, f32=16777217.0)[ORDER.index("f32")] == 16777216.0
    assert call(jax_cpu, attrs, f64=np.longdouble("inf"))[ORDER.index("f64")] == math.inf


def test_traced_value_is_named(jax_cpu, attrs):
    f = jax_cpu.jit(lambda a: attrs.echo(**dict(VALID, i32=a), out=jax_cpu.ShapeDtypeStruct((13,), "float64")))
    with pytest.raises(TypeError, match=r"echo: attribute 'i32' \(int32\) takes a number known at trace time"):
        f(3)


def test_long_values_are_shortened(jax_cpu, attrs):
    with pytest.raises(TypeError) as info:
        call(jax_cpu, attrs, i32="x" * 500)
    assert len(str(info.value)) < 120, str(info.value)
