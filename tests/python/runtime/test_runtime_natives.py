"""Section `natives`: string attributes and a dictionary's free keywords."""

import pytest
from begen_runtime import natives

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane


def test_a_string_attribute_is_a_str():
    assert natives._begen_str("fast", "f: attribute 'mode' (str)") == "fast"
    with pytest.raises(TypeError, match=r"^f: attribute 'mode' \(str\) takes a str, got 3 \(int\)$"):
        natives._begen_str(3, "f: attribute 'mode' (str)")
    with pytest.raises(TypeError, match="takes a str, got b'x' \\(bytes\\)"):
        natives._begen_str(b"x", "f: attribute 'mode' (str)")


def test_free_keywords_are_identifiers_passed_as_they_are():
    attrs = {"secret": 5, "a_string": "hello", "x1": 1.5}
    assert natives._begen_attrs("f", attrs) is attrs
    for bad in ("a b", "1x", "", "é", 'x"); import os; ("'):
        with pytest.raises(TypeError, match="^f: attribute name .* is not an ASCII identifier$"):
            natives._begen_attrs("f", {bad: 1})
