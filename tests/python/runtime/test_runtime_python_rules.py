"""Section `python_rules`, on its own: a backward pass's Python function
found (a carried file run as a module of its own, or a module imported by
name), called with the module, and what it returns checked by name; and
under `jax.grad`, to the second order, through `_begen_vjp_rule`."""

import jax
import numpy as np
import pytest
from begen_runtime import python_rules

pytestmark = pytest.mark.jax_lane


@pytest.fixture(autouse=True)
def rules(jax_cpu, monkeypatch):
    """A carried rule file `r` (what `_BEGEN_RULES` holds), no module run yet."""
    text = (
        "def f(m, x, idx, y, ct):\n"
        "    return m.SCALE * ct, None\n"
        "def three(m, x, idx, y, ct):\n"
        "    return ct, None, ct\n"
        "def wide(m, x, idx, y, ct):\n"
        "    return ct[None], None\n"
        "def index(m, x, idx, y, ct):\n"
        "    return ct, ct\n"
    )
    monkeypatch.setattr(python_rules, "_BEGEN_RULES", {"r": ("r.py", text)})
    monkeypatch.setattr(python_rules, "_begen_rule_modules", {})
    monkeypatch.setattr(python_rules, "SCALE", 2.0, raising=False)


def call(rule, x, idx, y, ct):
    return python_rules._begen_python_rule(rule, "lib.k", ("x", "idx"), x, idx, (y,), (ct,))


def test_the_carried_file_runs_as_a_module_and_gets_the_module():
    x, idx, ct = np.ones(3), np.zeros(3, np.int32), np.arange(3.0)
    g_x, g_idx = call("r:f", x, idx, 2 * x, ct)
    np.testing.assert_array_equal(np.asarray(g_x), 2 * ct)
    assert g_idx is None
    (module,) = python_rules._begen_rule_modules.values()
    assert module.__file__ == "r.py" and module.__name__.endswith("._begen_rules.r")
    # An integer input's cotangent is dropped, whatever it is.
    assert call("r:index", x, idx, x, ct)[1] is None


def test_what_the_rule_returns_is_checked_by_name():
    x, idx, ct = np.ones(3), np.zeros(3, np.int32), np.arange(3.0)
    with pytest.raises(
        TypeError, match=r"lib.k: its python_vjp rule `r:three` returned 3 cotangents, not one per input \(2: x, idx\)"
    ):
        call("r:three", x, idx, x, ct)
    with pytest.raises(
        TypeError,
        match=r"`r:wide` returned a cotangent for input 'x' of shape \(1, 3\) and dtype float64, not its input's \(3,\)",
    ):
        call("r:wide", x, idx, x, ct)


def test_a_rule_that_cannot_be_found_names_it(tmp_path, monkeypatch):
    x, idx, ct = np.ones(3), np.zeros(3, np.int32), np.arange(3.0)
    with pytest.raises(ImportError, match=r"lib.k: its python_vjp rule `r:nowhere` cannot be found"):
        call("r:nowhere", x, idx, x, ct)
    with pytest.raises(ImportError, match=r"its python_vjp rule `no_such_module_here:f` cannot be found"):
        call("no_such_module_here:f", x, idx, x, ct)
    # A module with no carried file: imported by name.
    (tmp_path / "imported_rules_here.py").write_text("def g(m, x, idx, y, ct):\n    return -ct, None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    np.testing.assert_array_equal(np.asarray(call("imported_rules_here:g", x, idx, x, ct)[0]), -ct)


def test_under_grad_through_the_custom_vjp():
    def k(x, idx):
        def backward(x, idx, outs, cts):
            return python_rules._begen_python_rule("r:f", "lib.k", ("x", "idx"), x, idx, outs, cts)

        return python_rules._begen_vjp_rule(lambda x, idx: x * 3.0, backward, (x, idx), (0,), 1)

    x, idx = np.arange(3.0), np.zeros(3, np.int32)
    # The rule says 2 * ct (not the true 3): the custom_vjp runs the rule.
    g = jax.grad(lambda x: k(x, idx).sum())(x)
    np.testing.assert_array_equal(np.asarray(g), 2.0 * np.ones(3))


def test_a_second_order_differentiates_the_outputs_the_rule_is_handed():
    # y = sin(x) with a primal that has no derivative (a callback, as an FFI
    # call): the rule's cos(x) = sqrt(1 - y^2) uses the output, which the
    # second order differentiates through the rule again.
    def raw(x, idx):
        return jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    def backward(x, idx, outs, cts):
        return jax.numpy.sqrt(1 - outs[0] ** 2) * cts[0], None

    def k(x, idx):
        return python_rules._begen_vjp_rule(raw, backward, (x, idx), (0,), 1)

    x, idx = np.array([0.3, 0.5]), np.zeros(2, np.int32)
    h = jax.grad(lambda x: jax.grad(lambda x: k(x, idx).sum())(x).sum())(x)
    np.testing.assert_allclose(np.asarray(h), -np.sin(x), rtol=1e-12)
