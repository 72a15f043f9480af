"""Kernels with XLA FFI types that take a variable number of inputs or
outputs (`ffi::RemainingArgs`, `ffi::RemainingRets`), and inputs updated in
place (`inout` over the buffer and its result), end to end on the CPU:
tests/e2e/native_rest built by the CLI."""

import warnings

import numpy as np
import pytest
from conftest import REPO, import_module, run_begen


@pytest.fixture(scope="module")
def rest(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_native_rest")
    run_begen("build", REPO / "tests/e2e/native_rest", "--out", out, "--quiet")
    return import_module(out, "e2e_native_rest")


def like(jax, x):
    return jax.ShapeDtypeStruct(np.shape(x), x.dtype)


def arrays(n):
    return [np.arange(4, dtype=np.float32) * (k + 1) for k in range(n)]


@pytest.mark.parametrize("n", [1, 2, 3])
def test_variadic_inputs_are_a_sequence(rest, jax_cpu, n):
    xs = arrays(n)
    out = like(jax_cpu, xs[0])
    np.testing.assert_allclose(rest.SumAll(xs, out=out), sum(xs))
    np.testing.assert_allclose(rest.SumAll(tuple(xs), out=out), sum(xs))
    np.testing.assert_allclose(jax_cpu.jit(lambda xs: rest.SumAll(xs, out=out))(xs), sum(xs))
    # After a fixed input, with an attribute before both.
    first = np.full(4, 10.0, dtype=np.float32)
    np.testing.assert_allclose(rest.ScaledSum(first, xs, scale=0.5, out=out), 0.5 * (first + sum(xs)))
    f = jax_cpu.jit(lambda first, xs: rest.ScaledSum(first, xs, scale=2.0, out=out))
    np.testing.assert_allclose(f(first, xs), 2.0 * (first + sum(xs)))


def test_no_variadic_inputs(rest, jax_cpu):
    first = np.full(4, 10.0, dtype=np.float32)
    np.testing.assert_allclose(rest.ScaledSum(first, [], scale=1.0, out=like(jax_cpu, first)), first)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_variadic_outputs_take_out(rest, jax_cpu, n):
    x = np.arange(4, dtype=np.float32)
    out = [like(jax_cpu, x)] * n
    ys = rest.Ramp(x, out=out)
    assert len(ys) == n
    for k, y in enumerate(ys):
        np.testing.assert_allclose(y, x + k)
    ys = jax_cpu.jit(lambda x: rest.Ramp(x, out=tuple(out)))(x)
    assert [float(y[0]) for y in ys] == [float(k) for k in range(n)]
    # A fixed output first: out= lists its struct, then the variadic ones'.
    count, *copies = rest.Copies(x, out=[jax_cpu.ShapeDtypeStruct((), np.int32)] + out)
    assert int(count) == n and len(copies) == n
    for k, y in enumerate(copies):
        np.testing.assert_allclose(y, x * (k + 1))


def test_variadic_misuse_is_a_located_error(rest, jax_cpu):
    x = np.arange(4, dtype=np.float32)
    with pytest.raises(TypeError, match="SumAll: parameter 'xs' takes a list or tuple of arrays, got"):
        rest.SumAll(x, out=like(jax_cpu, x))
    with pytest.raises(TypeError, match="Ramp: out= takes a list or tuple of jax.ShapeDtypeStruct"):
        rest.Ramp(x, out=like(jax_cpu, x))
    with pytest.raises(TypeError, match="Copies: out= takes a list or tuple of jax.ShapeDtypeStruct: 1 for the fixed"):
        rest.Copies(x, out=[])
    with pytest.raises(TypeError, match="Ramp: out= takes a list or tuple"):
        rest.Ramp(x, out=[like(jax_cpu, x), 3])
    # The kernel's own refusal of an element, with its code.
    with pytest.raises(Exception, match="INVALID_ARGUMENT: SumAll: every input is float32"):
        np.asarray(rest.SumAll([x, np.arange(4, dtype=np.int32)], out=like(jax_cpu, x)))
    # XLA's decoding of a typed element (`get<ffi::Buffer<ffi::F32>>`).
    with pytest.raises(Exception, match="Wrong buffer dtype"):
        np.asarray(rest.ScaledSum(x, [np.arange(4, dtype=np.int32)], scale=1.0, out=like(jax_cpu, x)))


def test_upstream_aliasing_needs_no_wrapper(rest, jax_cpu):
    """An input updated in place by a kernel with jax's aliasing example's
    signature, on the generated function itself: the output is the input's
    buffer, for any dtype and rank."""
    jnp = jax_cpu.numpy
    x = jnp.linspace(0, 0.5, 10)
    np.testing.assert_allclose(rest.AliasingImpl(x), x)
    np.testing.assert_allclose(rest.AliasingImpl(jnp.int32(6)), 6)
    np.testing.assert_allclose(jax_cpu.jit(rest.AliasingImpl)(x), x)


def test_donated_input_is_updated_in_place(rest, jax_cpu):
    jnp = jax_cpu.numpy
    f = jax_cpu.jit(lambda acc, x: rest.Accumulate(acc, x), donate_argnums=0)
    acc = jnp.zeros(4, jnp.float32)
    x = jnp.arange(4, dtype=jnp.float32)
    with warnings.catch_warnings():
        # A donation XLA could not use would warn: the alias is declared.
        warnings.simplefilter("error")
        count, acc = f(acc, x)
        count, acc = f(acc, x)
    assert int(count) == 4
    np.testing.assert_allclose(acc, 2 * np.arange(4))
    g = jax_cpu.jit(rest.AliasingImpl, donate_argnums=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = g(jnp.arange(3.0, dtype=jnp.float32))
    np.testing.assert_allclose(y, np.arange(3.0))
    assert "output_operand_alias<" in jax_cpu.jit(rest.AliasingImpl).lower(x).as_text()


@pytest.mark.parametrize("n", [1, 2, 3])
def test_variadic_inputs_into_an_input_updated_in_place(rest, jax_cpu, n):
    xs = arrays(n)
    acc = np.full(4, 1.0, dtype=np.float32)
    np.testing.assert_allclose(rest.AddAll(acc, xs), acc + sum(xs))
    f = jax_cpu.jit(rest.AddAll, donate_argnums=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = f(jax_cpu.numpy.asarray(acc), xs)
    np.testing.assert_allclose(y, acc + sum(xs))


def test_unaliased_call_is_refused_by_the_handler(rest, jax_cpu):
    """A raw ffi_call without input_output_aliases hands the kernel two
    buffers: the generated handler refuses it before the kernel runs."""
    rest.register()
    x = jax_cpu.numpy.zeros(3)
    call = jax_cpu.ffi.ffi_call(rest.TARGETS["AliasingImpl"], like(jax_cpu, x))
    with pytest.raises(Exception, match="INVALID_ARGUMENT: AliasingImpl: 'output' is 'input' updated in place"):
        np.asarray(call(x))
