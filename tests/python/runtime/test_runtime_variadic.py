"""Section `variadic`: a native kernel's variadic inputs and outputs."""

import jax
import numpy as np
import pytest
from begen_runtime import variadic

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane


def test_variadic_inputs_are_a_list_or_tuple_of_arrays():
    x = np.zeros(3, np.float32)
    for xs in ([], [x], (x, x)):
        variadic._begen_rest_inputs("f", xs, "xs")
    with pytest.raises(TypeError, match=r"^f: parameter 'xs' takes a list or tuple of arrays, got .*ndarray"):
        variadic._begen_rest_inputs("f", x, "xs")


def test_variadic_inputs_are_checked_for_x64_by_element():
    if jax.config.jax_enable_x64:
        pytest.skip("x64 is on")
    with pytest.raises(TypeError, match=r"^f: parameter 'xs\[1\]' is float64"):
        variadic._begen_rest_inputs("f", [np.zeros(2, np.float32), np.zeros(2)], "xs")


def test_variadic_out_is_a_sequence_of_at_least_the_fixed_structs():
    s = jax.ShapeDtypeStruct((3,), np.float32)
    variadic._begen_rest_out([], 0, "f: out= ...")
    variadic._begen_rest_out((s, s), 1, "f: out= ...")
    for bad in (s, [], [s, 3]):
        with pytest.raises(TypeError, match=r"^f: out= \.\.\.; got "):
            variadic._begen_rest_out(bad, 1, "f: out= ...")
