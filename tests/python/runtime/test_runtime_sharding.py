"""Section `sharding`, on its own: the plan it makes from a kernel's rule and
its inputs' splits, the Shardy factors of its partitioning rule, the blocks it
gives outputs. (Calls across devices: tests/python/test_e2e_sharding.py.)"""

import jax
import numpy as np
import pytest
from begen_runtime import sharding

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane

# matvec: y[m] = A[m, k] x[k], split along m, partial sums over k.
MATVEC = ("matvec", ("A", "x"), (("m", "k"), ("k",)), (("m",),), ("m",), ("k",))
SHAPES = {"A": (8, 6), "x": (6,)}
MESH = {"x": 4, "y": 2}


def choose(rule, specs, mesh=MESH, shapes=SHAPES):
    return sharding._begen_choose(rule, specs, lambda p, i: shapes[p][i], mesh)


def test_a_declared_dimension_takes_the_first_inputs_axes():
    axes, gathered = choose(MATVEC, [("x", None), (None,)])
    assert axes == {"m": "x"} and gathered == []
    axes, gathered = choose(MATVEC, [("x", "y"), ("y",)])
    assert axes == {"m": "x", "k": "y"} and gathered == []
    axes, _ = choose(MATVEC, [(("x", "y"), None), (None,)])
    assert axes == {"m": ("x", "y")}


def test_an_undeclared_dimension_is_gathered_and_named():
    rule = ("rowsum", ("x",), (("n", "k"),), (("n",),), ("n",), ())
    axes, gathered = choose(rule, [("x", "y")], shapes={"x": (8, 6)})
    assert axes == {"n": "x"}
    assert gathered == [("x", "k", "which begen.yaml does not declare in `shard:` or `reduce:`")]
    fixed = ("f", ("x",), ((None,),), ((None,),), (), ())
    _, gathered = choose(fixed, [("x",)], shapes={"x": (8,)})
    assert gathered[0][:2] == ("x", "0")


def test_an_axis_splits_one_dimension_and_extents_must_divide():
    axes, gathered = choose(MATVEC, [("x", "x"), (None,)])
    assert axes == {"m": "x"}
    assert gathered == [("A", "k", "but mesh axis 'x' splits another dimension already")]
    axes, gathered = choose(MATVEC, [("x", None), (None,)], shapes={"A": (6, 6), "x": (6,)})
    assert axes == {} and "not a multiple of the 4 devices of 'x'" in gathered[0][2]


def test_an_axis_of_one_device_splits_nothing():
    axes, gathered = choose(MATVEC, [("one", None), ("one",)], mesh={"one": 1, "x": 4})
    assert axes == {} and gathered == []
    axes, _ = choose(MATVEC, [(("one", "x"), None), (None,)], mesh={"one": 1, "x": 4})
    assert axes == {"m": "x"}


def test_a_second_split_of_a_dimension_follows_the_first():
    axes, gathered = choose(MATVEC, [(None, "y"), ("x",)])
    assert axes == {"k": "y"} and gathered == []


def test_outputs_get_their_blocks():
    s = jax.ShapeDtypeStruct((8, 6), np.float32)
    local = sharding._begen_local(s, ("m", "k"), {"m": ("x", "y")}, MESH)
    assert local.shape == (1, 6) and local.dtype == np.float32


def test_shardy_factors_name_what_may_be_split():
    in_maps, out_maps, reduction, whole = sharding._begen_factors(MATVEC, ())
    assert in_maps == (("d_m", "d_k"), ("d_k",)) and out_maps == (("d_m",),)
    assert reduction == ("d_k",) and whole == ()
    # Undeclared, fixed and repeated dimensions stay whole; vmap's axes lead.
    rule = ("g", ("a", "b"), (("n", "n", None), ("k",)), (("n",),), ("n",), ())
    in_maps, out_maps, reduction, whole = sharding._begen_factors(rule, (3,))
    assert in_maps == (("b0", "d_n", "w0", "w1"), ("b0", "d_k"))
    assert out_maps == (("b0", "d_n"),) and reduction == ()
    assert set(whole) == {"w0", "w1", "d_k"}


def test_one_device_plans_nothing():
    x = np.ones((8, 6), np.float32)
    assert sharding._begen_split(MATVEC, (x, np.ones(6, np.float32))) is None
    assert sharding._begen_split(MATVEC, (x,)) is None  # a wrong count: the kernel's checks say so


def test_an_input_split_otherwise_than_planned_is_resharded():
    P = jax.sharding.PartitionSpec
    assert not sharding._begen_differs(("x", None), P("x"))
    assert not sharding._begen_differs((("x",), None), P("x", None))
    assert sharding._begen_differs((None,), P("x"))  # replicated, planned split: sliced
    assert sharding._begen_differs(("x",), P(None))  # split, planned whole: gathered
    assert sharding._begen_differs(("x", "y"), P("x", None))
    assert sharding._begen_differs((("x", "y"),), P("x"))
