"""Section `contracts` (and `lists`): inputs and outputs against their
dtype/shape contracts, consts resolved."""

import types

import jax
import numpy as np
import pytest
from begen_runtime import contracts, core, lists

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane


@pytest.fixture()
def x64(monkeypatch):
    """JAX's x64 mode on, as `_begen_honest` reads it (64-bit inputs pass)."""
    monkeypatch.setattr(core, "_jax", types.SimpleNamespace(config=types.SimpleNamespace(jax_enable_x64=True)))

F32 = ("x", "float32", ("n",))


def test_named_dimensions_are_bound_by_the_first_input_and_checked_after():
    x, y = np.zeros(3, np.float32), np.zeros((3, 2), np.float32)
    d, c = contracts._begen_inputs("f", (x, y), (F32, ("y", "float32", ("n", 2))), ())
    assert d == {"n": (3, "from 'x' axis 0")} and c == {}
    with pytest.raises(ValueError, match=r"^f: dimension 'n' is 3 \(from 'x' axis 0\) but parameter 'y' has 4 at axis 0$"):
        contracts._begen_inputs("f", (x, np.zeros(4, np.float32)), (F32, ("y", "float32", ("n",))), ())
    with pytest.raises(ValueError, match=r"^f: parameter 'y' dimension 1 must be 2, got 5$"):
        contracts._begen_inputs("f", (x, np.zeros((3, 5), np.float32)), (F32, ("y", "float32", ("n", 2))), ())
    with pytest.raises(ValueError, match=r"must have rank 1 \(shape \[n\]\), got shape \(3, 2\)"):
        contracts._begen_inputs("f", (y,), (F32,), ())


def test_dtypes_must_match_and_type_consts_come_from_the_inputs(x64):
    with pytest.raises(TypeError, match="^f: parameter 'x' must be float32, got int32$"):
        contracts._begen_inputs("f", (np.zeros(2, np.int32),), (F32,), ())
    t = ("T", "T", "type", None, ("float32", "float64"))
    spec = ("x", ("T",), None)
    assert contracts._begen_inputs("f", (np.zeros(2, np.float64),), (spec,), (t,))[1] == {"T": "float64"}
    with pytest.raises(ValueError, match="^f: dtype int8 is not instantiated; T is one of float32, float64$"):
        contracts._begen_inputs("f", (np.zeros(2, np.int8),), (spec,), (t,))
    # A second input of the same type const must agree with the first.
    with pytest.raises(TypeError, match="parameter 'y' must be float64, got float32"):
        contracts._begen_inputs(
            "f", (np.zeros(2, np.float64), np.zeros(2, np.float32)), (spec, ("y", ("T",), None)), (t,)
        )


def test_keyword_consts_are_checked_and_written_canonically():
    n = ("N", "N", "int", 4, ("2", "4"))
    flag = ("B", "b", "bool", True, ("true", "false"))
    dtype = ("T", "T", "type", "float32", ("float32",))
    assert contracts._begen_inputs("f", (), (), (n, flag, dtype))[1] == {"N": "4", "B": "true", "T": "float32"}
    with pytest.raises(TypeError, match="N= takes an integer, one of 2, 4; got '4'"):
        contracts._begen_inputs("f", (), (), (("N", "N", "int", "4", ("2", "4")),))
    with pytest.raises(TypeError, match="N= takes an integer"):
        contracts._begen_inputs("f", (), (), (("N", "N", "int", True, ("1",)),))
    with pytest.raises(ValueError, match="^f: N=3 is not instantiated; N is one of 2, 4$"):
        contracts._begen_inputs("f", (), (), (("N", "N", "int", 3, ("2", "4")),))
    with pytest.raises(TypeError, match="b= takes True or False, got 1"):
        contracts._begen_inputs("f", (), (), (("B", "b", "bool", 1, ("true",)),))
    with pytest.raises(TypeError, match="T= takes a dtype"):
        contracts._begen_inputs("f", (), (), (("T", "T", "type", "no_such_type", ("float32",)),))


def test_outputs_are_inferred_or_checked():
    d, c = {"n": (3, "from 'x' axis 0")}, {"T": "float64"}
    (s,) = contracts._begen_outputs("f", None, (("y", ("T",), ("n", 2)),), d, c)
    assert s.shape == (3, 2) and s.dtype == np.float64
    with pytest.raises(TypeError, match="^f: out= is required: dimension 'm' is not known from the inputs for output 'y'$"):
        contracts._begen_outputs("f", None, (("y", "float32", ("m",)),), d, c)
    with pytest.raises(TypeError, match="out= is required: its shape is not known"):
        contracts._begen_outputs("f", None, (("y", "float32", None),), d, c)
    given = jax.ShapeDtypeStruct((3,), np.float32)
    assert contracts._begen_outputs("f", given, (("y", "float32", ("n",)),), d, c) == [given]
    with pytest.raises(ValueError, match="^f: dimension 'n' is 3 .* but output 'y' has 3 at axis 0|output 'y' dimension"):
        contracts._begen_outputs("f", jax.ShapeDtypeStruct((3,), np.float32), (("y", "float32", (4,)),), d, c)
    with pytest.raises(TypeError, match="out= takes a tuple of 2 jax.ShapeDtypeStruct"):
        contracts._begen_outputs("f", given, (("y", None, None), ("z", None, None)), d, c)
    # Not a struct where one is due: a TypeError naming the kernel and the output.
    with pytest.raises(TypeError, match=r"^f: out= takes a jax.ShapeDtypeStruct; got \(ShapeDtypeStruct.* for output 'y'$"):
        contracts._begen_outputs("f", (given,), (("y", "float32", ("n",)),), d, c)
    with pytest.raises(TypeError, match=r"^f: out= takes a tuple of 2 jax.ShapeDtypeStruct, one per output; got None"):
        contracts._begen_outputs("f", (given, None), (("y", None, None), ("z", None, None)), d, c)


def test_instances_and_in_place_results():
    assert contracts._begen_key("f", {"T": "float32", "N": "4"}) == "f[T=float32,N=4]"
    like = contracts._begen_like(np.zeros((2, 3), np.int16))
    assert like.shape == (2, 3) and like.dtype == np.int16
    assert contracts._begen_same(3, 3) and not contracts._begen_same(3, 4)


def test_list_elements_are_checked_one_by_one():
    a, b = np.zeros(3, np.float32), np.zeros(3, np.float32)
    specs = (("xs", "float32", ("n",), True), ("y", "float32", ("n",)))
    d, _ = lists._begen_list_inputs("f", ([a, b], a), specs, ())
    assert d["n"] == (3, "from 'xs[0]' axis 0")
    with pytest.raises(ValueError, match="dimension 'n' is 3 .* but parameter 'xs\\[1\\]' has 4"):
        lists._begen_list_inputs("f", ((a, np.zeros(4, np.float32)), a), specs, ())
    with pytest.raises(ValueError, match="parameter 'xs' is an empty list"):
        lists._begen_list_inputs("f", ([], a), specs, ())
    with pytest.raises(TypeError, match="parameter 'xs' takes a list or tuple of arrays, got ndarray"):
        lists._begen_list_inputs("f", (a, a), specs, ())
    words = lists._begen_words([a, b], 3)
    assert words.shape == (48,) and words.dtype == np.uint8
