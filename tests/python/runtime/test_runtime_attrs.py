"""Sections `structs`, `records` and `arrays`: struct and array attributes."""

import numpy as np
import pytest
from begen_runtime import arrays, records, scalars, structs

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane

W = "f: attribute 'p'"


def i32(x, w):
    return scalars._begen_int(x, np.int32, w)


def f32(x, w):
    return scalars._begen_float(x, np.float32, w)


def test_a_record_is_every_member_converted():
    members = (("n", "int32", i32), ("scale", "float32", f32))
    out = records._begen_record({"scale": 2, "n": 3.0}, members, W)
    assert out == {"n": 3, "scale": 2.0} and type(out["n"]) is np.int32 and type(out["scale"]) is np.float32
    with pytest.raises(TypeError, match="^f: attribute 'p': member 'scale' is missing"):
        records._begen_record({"n": 1}, members, W)
    with pytest.raises(TypeError, match="has no member 'k'; its members are n, scale$"):
        records._begen_record({"n": 1, "scale": 1, "k": 0}, members, W)
    with pytest.raises(ValueError, match=r"member 'n' \(int32\): 2147483648 is out of range"):
        records._begen_record({"n": 2**31, "scale": 1}, members, W)
    with pytest.raises(TypeError, match="takes a dict of the struct's members, got 3 \\(int\\)"):
        records._begen_record(3, members, W)


def test_a_binary_struct_is_packed_at_its_offsets():
    leaves = ((("n",), 0, i32), (("inner", "scale"), 4, f32))
    raw = structs._begen_struct({"n": 7, "inner": {"scale": 1.5}}, leaves, 12, W)
    assert raw.dtype == np.uint8 and raw.shape == (12,)
    assert np.frombuffer(raw[:4].tobytes(), np.int32)[0] == 7
    assert np.frombuffer(raw[4:8].tobytes(), np.float32)[0] == 1.5
    assert raw[8:].tolist() == [0, 0, 0, 0]
    with pytest.raises(TypeError, match="has no member 'inner.k'"):
        structs._begen_struct({"n": 1, "inner": {"scale": 1, "k": 2}}, leaves, 12, W)
    with pytest.raises(TypeError, match="member 'inner' takes a dict, got 1 \\(int\\)"):
        structs._begen_struct({"n": 1, "inner": 1}, leaves, 12, W)
    with pytest.raises(TypeError, match="member 'inner.scale' is missing"):
        structs._begen_struct({"n": 1, "inner": {}}, leaves, 12, W)


def test_an_array_attribute_takes_a_sequence_or_a_1d_array_of_its_dtype():
    out = arrays._begen_array([1, 2.0, 3], "int32", np.int32, i32, W)
    assert out.dtype == np.int32 and out.tolist() == [1, 2, 3]
    assert arrays._begen_array((), "int32", np.int32, i32, W).shape == (0,)
    same = arrays._begen_array(np.arange(3, dtype=np.int32), "int32", np.int32, i32, W)
    assert same.tolist() == [0, 1, 2]
    flags = arrays._begen_array(np.array([True, False]), "bool", np.uint8, scalars._begen_bool, W)
    assert flags.dtype == np.uint8 and flags.tolist() == [1, 0]

    def half(x, w):
        return scalars._begen_half(x, np.float16, np.uint16, w)

    bits = arrays._begen_array([1.0, -2.0], "float16", np.uint16, half, W)
    assert bits.tolist() == [0x3C00, 0xC000]
    with pytest.raises(ValueError, match=r"element 1: 2147483648 is out of range"):
        arrays._begen_array([1, 2**31], "int32", np.int32, i32, W)
    with pytest.raises(ValueError, match=r"takes a 1-D array, got shape \(2, 2\)"):
        arrays._begen_array(np.zeros((2, 2), np.int32), "int32", np.int32, i32, W)
    with pytest.raises(TypeError, match="must be an array of int32, got an array of int64"):
        arrays._begen_array(np.zeros(2, np.int64), "int32", np.int32, i32, W)
    with pytest.raises(TypeError, match="takes a list, a tuple or a 1-D array, got 3"):
        arrays._begen_array(3, "int32", np.int32, i32, W)
