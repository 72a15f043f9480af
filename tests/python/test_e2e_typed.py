"""Shape contracts (typed tokens) end to end on the CPU: tests/e2e/typed
built by the CLI, called from JAX eagerly, under jit, vmap and export."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import REPO, import_module, run_begen

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane


@pytest.fixture(scope="module")
def typed(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_typed")
    run_begen("build", REPO / "tests/e2e/typed", "--out", out, "--quiet")
    return import_module(out, "e2e_typed")


def f32(*shape, start=0.0):
    return (np.arange(int(np.prod(shape)), dtype=np.float32) + start).reshape(shape)


def test_outputs_are_inferred_and_pointer_kernels_get_their_dims(typed, jax_cpu):
    x, y = f32(5), f32(5, start=1.0)
    np.testing.assert_allclose(typed.axpy(x, y, a=2.0), 2 * x + y)
    np.testing.assert_allclose(jax_cpu.jit(lambda x, y: typed.axpy(x, y, a=3.0))(x, y), 3 * x + y)
    A = f32(2, 3)
    np.testing.assert_allclose(typed.matvec(A, f32(3)), A @ f32(3))
    # A dimension no input has: out= gives it, and is checked.
    got = typed.tile(f32(3), out=jax_cpu.ShapeDtypeStruct((3, 4), "float32"))
    np.testing.assert_allclose(got, np.repeat(f32(3)[:, None], 4, axis=1))
    with pytest.raises(TypeError, match="required keyword-only argument: 'out'"):
        typed.tile(f32(3))
    # vmap: the contract holds per example.
    np.testing.assert_allclose(jax_cpu.vmap(lambda a, b: typed.axpy(a, b, a=1.0))(f32(4, 5), f32(4, 5)), 2 * f32(4, 5))


def test_contract_violations_raise_naming_the_parameter(typed, jax_cpu):
    x = f32(5)
    cases = [
        (lambda: typed.axpy(x, f32(4), a=1.0), ValueError, r"axpy: dimension 'n' is 5 \(from 'x' axis 0\) but parameter 'y' has 4 at axis 0"),
        (lambda: typed.axpy(x.astype(np.int32), x, a=1.0), TypeError, "axpy: parameter 'x' must be float32, got int32"),
        (lambda: typed.matvec(x, x), ValueError, r"matvec: parameter 'A' must have rank 2 \(shape \[m, k\]\), got shape \(5,\)"),
        (lambda: typed.matvec(f32(2, 3), f32(3), out=jax_cpu.ShapeDtypeStruct((3,), "float32")), ValueError,
         r"matvec: dimension 'm' is 2 \(from 'A' axis 0\) but output 'y' has 3 at axis 0"),
        (lambda: typed.matvec(f32(2, 3), f32(3), out=jax_cpu.ShapeDtypeStruct((2,), "float64")), TypeError,
         "matvec: output 'y' must be float32, got float64"),
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call()


def test_template_kernels_are_instantiated_per_value_and_dtype(typed, jax_cpu):
    jax = jax_cpu
    x = f32(4)
    for times in (1, 2, 3):
        np.testing.assert_allclose(typed.repeat(x, TIMES=times), times * x)
    with pytest.raises(ValueError, match="repeat: TIMES=4 is not instantiated; TIMES is one of 1, 2, 3"):
        typed.repeat(x, TIMES=4)
    with pytest.raises(TypeError, match="TIMES"):
        typed.repeat(x)
    # The dtype picks the instance.
    np.testing.assert_allclose(typed.scale(x, s=2.0), 2 * x)
    assert typed.scale(x, s=2.0).dtype == np.float32
    assert typed.scale(x.astype(np.float64), s=2.0).dtype == np.float64
    np.testing.assert_array_equal(typed.scale(np.arange(4, dtype=np.int32), s=3.0), [0, 3, 6, 9])
    with pytest.raises(ValueError, match="scale: dtype float16 is not instantiated; T is one of float32, float64, int32"):
        typed.scale(x.astype(np.float16), s=1.0)
    # A type no input fixes is a keyword, combined with a bool.
    np.testing.assert_array_equal(typed.fill(T=np.int64, NEG=True, v=2.0, out=jax.ShapeDtypeStruct((3,), "int64")), [-2] * 3)
    np.testing.assert_allclose(typed.fill(T="float32", NEG=False, v=1.5, out=jax.ShapeDtypeStruct((2,), "float32")), [1.5] * 2)
    with pytest.raises(TypeError, match="fill: output 'out' must be int64, got float32"):
        typed.fill(T="int64", NEG=False, v=1.0, out=jax.ShapeDtypeStruct((2,), "float32"))
    assert sorted(k for k in typed.TARGETS if k.startswith("fill[")) == [
        "fill[T=float32,NEG=false]", "fill[T=float32,NEG=true]", "fill[T=int64,NEG=false]", "fill[T=int64,NEG=true]"]


def test_inout_updates_in_place_under_jit(typed, jax_cpu):
    acc, x = f32(6), f32(6, start=10.0)
    np.testing.assert_allclose(typed.accumulate(acc, x), acc + x)
    step = jax_cpu.jit(typed.accumulate, donate_argnums=0)
    hlo = step.lower(acc, x).as_text()
    assert "output_operand_aliases" in hlo and "operand_index = 0" in hlo, hlo
    np.testing.assert_allclose(step(jax_cpu.numpy.asarray(acc), x), acc + x)


def test_the_handler_checks_what_python_does_not_see(typed, jax_cpu):
    ffi = jax_cpu.ffi
    # Shapes that disagree, straight to the target (no Python checks).
    call = ffi.ffi_call(typed.TARGETS["axpy"], jax_cpu.ShapeDtypeStruct((5,), "float32"))
    with pytest.raises(Exception, match="axpy: dimension 'n' is 5 \\(parameter 'x', axis 0\\) but parameter 'y' has 4 at axis 0"):
        call(f32(5), f32(4), a=np.float32(1.0))
    # A dimension that overflows its parameter's type (int8).
    np.testing.assert_array_equal(typed.count_small(f32(100) / 100), 50)
    with pytest.raises(Exception, match="count_small: dimension 'n' = 200 does not fit parameter 'n' \\(int8_t\\)"):
        typed.count_small(f32(200))


def test_symbolic_export_round_trip(typed, jax_cpu):
    from jax import export

    (n,) = export.symbolic_shape("n")
    spec = jax_cpu.ShapeDtypeStruct((n,), "float32")
    exp = export.export(jax_cpu.jit(lambda x, y: typed.axpy(x, y, a=2.0)), disabled_checks=typed.export_safety_checks())(spec, spec)
    again = export.deserialize(exp.serialize())
    for size in (3, 7):
        x, y = f32(size), f32(size, start=1.0)
        np.testing.assert_allclose(again.call(x, y), 2 * x + y)
    # One check per target, and one for begen's partitioned call (a typed
    # kernel may be split across devices; its export under auto axes names it).
    names = [str(check) for check in typed.export_safety_checks()]
    assert len(names) == len(typed.TARGETS) + 1 and any("begen_partitioned" in n for n in names)


def test_untyped_inputs_are_not_narrowed_silently(typed, tmp_path):
    # x64 is on in this test run: a fresh interpreter with it off.
    script = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {str(typed.LIBRARY.rsplit('/', 1)[0])!r})
        import numpy as np, jax.numpy as jnp, e2e_typed as m
        try:
            m.untyped(np.ones(3), a=1.0, out=None)
        except TypeError as e:
            print("refused:", e)
        print("ok:", m.untyped(jnp.ones(3, jnp.float32), a=2.0, out=__import__("jax").ShapeDtypeStruct((3,), "float32")))
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert "refused: untyped: parameter 'x' is float64, but JAX's x64 mode is off" in proc.stdout, proc.stdout + proc.stderr
    assert "ok: [2. 2. 2.]" in proc.stdout, proc.stdout + proc.stderr
