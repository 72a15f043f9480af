"""Attribute conversions (section `scalars`) and the text helpers of `core`."""

import ml_dtypes
import numpy as np
import pytest
from begen_runtime import core, scalars

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane

W = "f: attribute 'a'"


@pytest.mark.parametrize(
    ("value", "dtype", "want"),
    [(127, np.int8, 127), (-128, np.int8, -128), (2.0, np.int32, 2), (True, np.uint8, 1), (np.int64(7), np.int16, 7),
     (2**63 - 1, np.uint64, 2**63 - 1), (np.array(5, dtype=np.uint32), np.int64, 5)],
)
def test_int_in_range_keeps_its_value_and_takes_the_type(value, dtype, want):
    out = scalars._begen_int(value, dtype, W)
    assert type(out) is dtype and int(out) == want


@pytest.mark.parametrize(
    ("value", "dtype", "error", "text"),
    [(128, np.int8, ValueError, r"128 is out of range \[-128, 127\]"),
     (-1, np.uint16, ValueError, r"-1 is out of range \[0, 65535\]"),
     (2**63, np.uint64, ValueError, r"above 2\*\*63 - 1"),
     (2.5, np.int32, ValueError, "takes a whole number, got 2.5 \\(float\\)"),
     (1j, np.int32, TypeError, "takes a whole number"),
     ("3", np.int32, TypeError, "takes a number, got '3' \\(str\\)")],
)
def test_int_refuses_what_does_not_fit(value, dtype, error, text):
    with pytest.raises(error, match=f"^{W}.*{text}"):
        scalars._begen_int(value, dtype, W)


def test_bool_takes_true_false_and_0_1_only():
    assert scalars._begen_bool(True, W) is np.bool_(True)
    assert scalars._begen_bool(0, W) == np.bool_(False)
    with pytest.raises(ValueError, match=r"takes True or False \(or 0/1\), got 2"):
        scalars._begen_bool(2, W)
    with pytest.raises(TypeError, match="takes True or False, got 1.0"):
        scalars._begen_bool(1.0, W)


def test_float_checks_range_but_keeps_infinity():
    assert scalars._begen_float(1, np.float32, W) == np.float32(1.0)
    assert type(scalars._begen_float(0.5, np.float64, W)) is np.float64
    assert np.isinf(scalars._begen_float(float("inf"), np.float32, W))
    with pytest.raises(ValueError, match=r"1e\+39 is out of range \(largest .*3.4028235e\+38\)?\)"):
        scalars._begen_float(1e39, np.float32, W)
    with pytest.raises(ValueError, match="is out of range$"):
        scalars._begen_float(10**400, np.float64, W)
    with pytest.raises(TypeError, match="takes a real number"):
        scalars._begen_float(1 + 2j, np.float64, W)


def test_16_bit_floats_travel_as_their_bits():
    assert scalars._begen_half(1.0, np.float16, np.uint16, W) == 0x3C00
    assert scalars._begen_half(-2, np.float16, np.uint16, W) == 0xC000
    assert scalars._begen_half(1.0, ml_dtypes.bfloat16, np.uint16, W) == 0x3F80
    assert scalars._begen_half(ml_dtypes.bfloat16(3.0), ml_dtypes.bfloat16, np.uint16, W) == 0x4040
    assert scalars._begen_half(1.0, np.float16, np.uint16, W).dtype == np.uint16
    with pytest.raises(ValueError, match="out of range for a 16-bit float"):
        scalars._begen_half(70000.0, np.float16, np.uint16, W)
    with pytest.raises(TypeError, match="takes a real number, got 1j"):
        scalars._begen_half(1j, np.float16, np.uint16, W)


@pytest.mark.parametrize(
    ("value", "dtype", "nearest"),
    [
        (16777217, np.float32, "16777216.0"),
        (np.int32(-16777217), np.float32, "-16777216.0"),
        (2**53 + 1, np.float64, "9007199254740992.0"),
        (2049, np.float16, "2048.0"),
        (np.uint16(65535), np.float16, "inf"),
        (257, ml_dtypes.bfloat16, "256.0"),
        (np.int64(2**40 + 1), ml_dtypes.bfloat16, "1099511627776.0"),
    ],
)
def test_an_integer_a_float_type_cannot_hold_is_refused(value, dtype, nearest):
    name = np.dtype(dtype).name
    convert = scalars._begen_float if dtype in (np.float32, np.float64) else (
        lambda v, t, w: scalars._begen_half(v, t, np.uint16, w)
    )
    with pytest.raises(ValueError, match=rf"^{W}: .*"):
        convert(value, dtype, W)
    try:
        convert(value, dtype, W)
    except ValueError as e:
        assert f"has no exact {name} value (it would round to {nearest})" in str(e) or "out of range" in str(e), e


def test_exact_integers_and_rounded_floats_convert():
    assert scalars._begen_float(16777216, np.float32, W) == np.float32(16777216)
    assert scalars._begen_float(16777217.0, np.float32, W) == np.float32(16777216)
    assert scalars._begen_half(2048, np.float16, np.uint16, W) == np.float16(2048).view(np.uint16)
    assert scalars._begen_half(256, ml_dtypes.bfloat16, np.uint16, W) == 0x4380
    assert scalars._begen_float(True, np.float32, W) == np.float32(1.0)


def test_a_longdouble_beyond_float64_is_out_of_range():
    for dtype in (np.float64, np.float32):
        with pytest.raises(ValueError, match=r"np.longdouble\('1e\+400'\) is out of range$"):
            scalars._begen_float(np.longdouble("1e400"), dtype, W)
    with pytest.raises(ValueError, match="is out of range"):
        scalars._begen_half(np.longdouble("-1e400"), np.float16, np.uint16, W)
    assert np.isinf(scalars._begen_float(np.longdouble("inf"), np.float32, W))


def test_a_float_passed_as_bits_travels_as_the_wire_dtype_given():
    # The wire comes from the caller (begen's type table), not the helper:
    # an 8-bit float travels as uint8.
    bits = scalars._begen_half(1.0, ml_dtypes.float8_e4m3fn, np.uint8, W)
    assert bits.dtype == np.uint8 and bits == 0x38
    assert scalars._begen_half(-2.0, ml_dtypes.float8_e4m3fn, np.uint8, W) == 0xC0
    # It has no infinity: a value too large becomes NaN, refused all the same.
    with pytest.raises(ValueError, match="1000.0 is out of range"):
        scalars._begen_half(1000.0, ml_dtypes.float8_e4m3fn, np.uint8, W)
    assert np.isnan(scalars._begen_half(float("nan"), np.float16, np.uint16, W).view(np.float16))
    assert scalars._begen_half(float("-inf"), np.float16, np.uint16, W) == 0xFC00


def test_complex_becomes_real_and_imaginary_parts():
    parts = scalars._begen_complex(1 + 2j, np.float32, W)
    assert parts.dtype == np.float32 and parts.tolist() == [1.0, 2.0]
    assert scalars._begen_complex(3, np.float64, W).tolist() == [3.0, 0.0]
    with pytest.raises(ValueError, match="out of range"):
        scalars._begen_complex(complex(1e39, 0), np.float32, W)
    with pytest.raises(TypeError, match="takes a number"):
        scalars._begen_complex(None, np.float64, W)


def test_kind_reads_numpy_scalars_and_refuses_arrays():
    assert scalars._begen_kind(np.float32(2.5), W) == ("f", 2.5)
    assert scalars._begen_kind(np.array(3, dtype=np.uint8), W) == ("u", 3)
    assert scalars._begen_kind(ml_dtypes.bfloat16(1.5), W) == ("f", 1.5)
    with pytest.raises(TypeError, match=r"takes a number, got array\(\[1, 2\]\)"):
        scalars._begen_kind(np.array([1, 2]), W)


def test_shown_values_are_cut_at_60_characters():
    assert core._begen_text("ab") == "'ab'"
    long = core._begen_text("x" * 100)
    assert len(long) == 60 and long.endswith("...")
    assert core._begen_show(1.5) == "1.5 (float)"
