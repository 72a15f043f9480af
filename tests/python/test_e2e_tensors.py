"""Kernels in begen's own vocabulary that take a variable number of inputs
or outputs (`const BE::Tensors`, `BE::Tensors`), end to end on the CPU:
tests/e2e/tensors built by the CLI."""

import numpy as np
import pytest
from conftest import REPO, import_module, run_begen

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane


@pytest.fixture(scope="module")
def tensors(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_tensors")
    run_begen("build", REPO / "tests/e2e/tensors", "--out", out, "--quiet")
    return import_module(out, "tensors")


def like(jax, x):
    return jax.ShapeDtypeStruct(np.shape(x), x.dtype)


def arrays(n):
    return [np.arange(4, dtype=np.float32) * (k + 1) for k in range(n)]


@pytest.mark.parametrize("n", [0, 1, 3])
def test_a_list_of_inputs(tensors, jax_cpu, n):
    xs = arrays(n)
    out = jax_cpu.ShapeDtypeStruct((4,), np.float32)
    want = sum(xs) if xs else np.zeros(4, np.float32)
    np.testing.assert_allclose(tensors.sum_all(xs, out=out), want)
    np.testing.assert_allclose(tensors.sum_all(tuple(xs), out=out), want)
    np.testing.assert_allclose(jax_cpu.jit(lambda xs: tensors.sum_all(xs, out=out))(xs), want)


@pytest.mark.parametrize("n", [0, 2])
def test_a_list_declared_before_a_fixed_input(tensors, jax_cpu, n):
    # The list comes first in the signature; XLA hands it after `first`.
    xs = arrays(n)
    first = np.full(4, 10.0, dtype=np.float32)
    out = like(jax_cpu, first)
    want = 0.5 * (first + sum(xs, np.zeros(4, np.float32)))
    np.testing.assert_allclose(tensors.scaled_sum(xs, first, scale=0.5, out=out), want)
    f = jax_cpu.jit(lambda xs, first: tensors.scaled_sum(xs, first, scale=0.5, out=out))
    np.testing.assert_allclose(f(xs, first), want)


@pytest.mark.parametrize("n", [1, 3])
def test_a_list_of_outputs_before_a_fixed_one(tensors, jax_cpu, n):
    x = np.arange(4, dtype=np.float32)
    # out= lists the fixed output's struct, then the list's.
    out = [jax_cpu.ShapeDtypeStruct((), np.int32)] + [like(jax_cpu, x)] * n
    for run in (tensors.copies, jax_cpu.jit(lambda x: tensors.copies(x, out=tuple(out)))):
        count, *ys = run(x, out=out) if run is tensors.copies else run(x)
        assert int(count) == n and len(ys) == n
        for k, y in enumerate(ys):
            np.testing.assert_allclose(y, x * (k + 1))


def test_elements_keep_their_own_rank_and_dtype(tensors, jax_cpu):
    xs = [np.zeros((2, 3), np.float64), np.zeros(5, np.int8), np.zeros((), np.float32), np.zeros((1, 2, 2), np.bool_)]
    got = np.asarray(tensors.describe(xs, out=jax_cpu.ShapeDtypeStruct((3 * len(xs),), np.int64))).reshape(-1, 3)
    assert got[:, 0].tolist() == [2, 1, 0, 3]
    assert got[:, 2].tolist() == [48, 5, 4, 4]
    # BE::DType's codes, one per element type.
    assert len(set(got[:, 1].tolist())) == 4


def test_lists_for_inputs_and_outputs(tensors, jax_cpu):
    xs = arrays(3)
    ys = tensors.twice(xs, out=[like(jax_cpu, x) for x in xs])
    assert len(ys) == 3
    for x, y in zip(xs, ys):
        np.testing.assert_allclose(y, 2 * x)


def test_reading_past_the_end_is_an_error(tensors, jax_cpu):
    xs = arrays(2)
    out = like(jax_cpu, xs[0])
    np.testing.assert_allclose(tensors.pick(xs, at=1, out=out), xs[1])
    with pytest.raises(Exception, match=r"pick: BE::Tensors: index 2 is past the end of a list of 2 tensors"):
        np.asarray(tensors.pick(xs, at=2, out=out))


def test_misuse_is_a_located_error(tensors, jax_cpu):
    x = np.arange(4, dtype=np.float32)
    with pytest.raises(TypeError, match="sum_all: parameter 'xs' takes a list or tuple of arrays, got"):
        tensors.sum_all(x, out=like(jax_cpu, x))
    with pytest.raises(TypeError, match="copies: out= takes a list or tuple of jax.ShapeDtypeStruct: 1 for the fixed"):
        tensors.copies(x, out=[])
    # The kernel's own check of an element, with its code.
    with pytest.raises(Exception, match="INVALID_ARGUMENT: sum_all: .*every input is float32"):
        np.asarray(tensors.sum_all([x, np.arange(4, dtype=np.int32)], out=like(jax_cpu, x)))


def test_outputs_like_the_inputs_need_no_out(tensors, jax_cpu):
    xs = [np.arange(4, dtype=np.float32), np.ones((2, 3), np.float32)]
    for run in (tensors.neg_each, jax_cpu.jit(tensors.neg_each)):
        ys = run(xs)
        assert len(ys) == 2
        for x, y in zip(xs, ys):
            assert y.shape == x.shape and y.dtype == x.dtype
            np.testing.assert_allclose(y, -x)
    assert tensors.neg_each([]) == ()


def test_outputs_like_a_python_number(tensors, jax_cpu):
    # A Python number in the list is an array of JAX's default dtype for
    # it, as for a kernel given out=: float32 with x64 off, where the kernel
    # takes it; float64 with x64 on, which the kernel itself refuses.
    jax = jax_cpu
    x = np.arange(3, dtype=np.float32)
    jax.config.update("jax_enable_x64", False)
    try:
        ys = tensors.neg_each([x, 1.5])
        assert ys[1].shape == () and ys[1].dtype == np.float32
        np.testing.assert_allclose(ys[1], -1.5)
        np.testing.assert_allclose(jax.jit(lambda v: tensors.neg_each([v, 2.0])[1])(x), -2.0)
    finally:
        jax.config.update("jax_enable_x64", True)
    with pytest.raises(Exception, match="neg_each takes float32 arrays"):
        np.asarray(tensors.neg_each([x, 1.5])[1])


def test_typed_pointers_beside_a_list(tensors, jax_cpu):
    w = np.array([1, 2, 3, 4], np.float32)
    xs = arrays(3)
    # The typed output is inferred from the typed input: no out=.
    np.testing.assert_allclose(tensors.weighted_sum(w, xs), w * sum(xs))
    np.testing.assert_allclose(jax_cpu.jit(tensors.weighted_sum)(w, xs), w * sum(xs))
    np.testing.assert_allclose(tensors.weighted_sum(w, []), np.zeros(4, np.float32))
    # The contracts are checked before the call, the list's elements by name.
    with pytest.raises(ValueError, match="weighted_sum: dimension 'n'"):
        tensors.weighted_sum(w, xs, out=jax_cpu.ShapeDtypeStruct((3,), np.float32))
    with pytest.raises(TypeError, match="weighted_sum: parameter 'xs' takes a list or tuple of arrays"):
        tensors.weighted_sum(w, xs[0])
    # The handler checks the typed input too, past the Python checks.
    call = jax_cpu.ffi.ffi_call(tensors.TARGETS["weighted_sum"], jax_cpu.ShapeDtypeStruct((3,), np.float32))
    with pytest.raises(Exception, match="weighted_sum: dimension 'n'"):
        np.asarray(call(w, *xs))


def test_a_template_beside_a_list_of_inputs(tensors, jax_cpu):
    # The instance comes from the typed input's dtype.
    a = np.ones(4, np.float32)
    xs = arrays(2)
    np.testing.assert_allclose(tensors.template_sum(a, xs), a + sum(xs))
    np.testing.assert_allclose(jax_cpu.jit(tensors.template_sum)(a, xs), a + sum(xs))
    with pytest.raises(Exception, match="every input is of a's size and dtype"):
        np.asarray(tensors.template_sum(a, [np.ones(4, np.int8)]))


def test_a_list_of_outputs_is_zeroed(tensors, jax_cpu):
    xs = [np.full(5, 7.0, np.float32), np.full((2, 2), 3.0, np.float32)]
    for run in (tensors.first_only, jax_cpu.jit(tensors.first_only)):
        ys = run(xs)
        np.testing.assert_array_equal(ys[0], [7, 0, 0, 0, 0])
        np.testing.assert_array_equal(ys[1], [[3, 0], [0, 0]])
