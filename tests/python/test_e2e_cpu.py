"""Every kernel of tests/e2e/cpu, built by `begen build` and called from a
real JAX on the CPU: eagerly, under jit and vmap, and through the raw
`jax.ffi.ffi_call(TARGETS[...])` path."""

import math

import numpy as np
import pytest
from conftest import import_module, run_begen

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane


def like(jax, x):
    return jax.ShapeDtypeStruct(x.shape, x.dtype)


def test_targets_and_register_is_idempotent(e2e_cpu):
    names = {
        "scale", "add", "minmax", "transpose", "checked_sqrt", "double_it",
        "add_i64", "scale_f64", "all_attrs", "axpy_f32", "axpy_f64",
        "neg_float", "neg_int32_t", "fill_answer", "add_three", "failing_text",
    }
    assert set(e2e_cpu.TARGETS) == names
    assert all(e2e_cpu.TARGETS[n] == f"e2e_cpu.{n}" for n in names)
    e2e_cpu.register()
    e2e_cpu.register()


def test_scale_eager_and_jit(jax_cpu, e2e_cpu):
    jnp = jax_cpu.numpy
    x = jnp.arange(6, dtype=jnp.float32)
    y = e2e_cpu.scale(x, alpha=2.5, out=like(jax_cpu, x))
    np.testing.assert_allclose(y, 2.5 * np.arange(6))
    f = jax_cpu.jit(lambda v: e2e_cpu.scale(v, alpha=-1.0, out=like(jax_cpu, v)))
    np.testing.assert_allclose(f(x), -np.arange(6))


def test_two_inputs_and_static_kernel(jax_cpu, e2e_cpu):
    jnp = jax_cpu.numpy
    a = jnp.arange(5, dtype=jnp.float32)
    b = jnp.full(5, 10.0, dtype=jnp.float32)
    np.testing.assert_allclose(e2e_cpu.add(a, b, out=like(jax_cpu, a)), np.arange(5) + 10)
    np.testing.assert_allclose(e2e_cpu.double_it(a, out=like(jax_cpu, a)), 2 * np.arange(5))


def test_several_outputs_0d(jax_cpu, e2e_cpu):
    jnp = jax_cpu.numpy
    x = jnp.array([3.0, -2.0, 7.5, 0.0], dtype=jnp.float32)
    scalar = jax_cpu.ShapeDtypeStruct((), jnp.float32)
    lo, hi = e2e_cpu.minmax(x, out=(scalar, scalar))
    assert lo.shape == () and hi.shape == ()
    assert float(lo) == -2.0 and float(hi) == 7.5
    lo, hi = jax_cpu.jit(lambda v: e2e_cpu.minmax(v, out=(scalar, scalar)))(x)
    assert (float(lo), float(hi)) == (-2.0, 7.5)


def test_0d_input(jax_cpu, e2e_cpu):
    jnp = jax_cpu.numpy
    x = jnp.float32(4.0)
    y = e2e_cpu.scale(x, alpha=0.5, out=jax_cpu.ShapeDtypeStruct((), jnp.float32))
    assert y.shape == () and float(y) == 2.0


def test_2d(jax_cpu, e2e_cpu):
    jnp = jax_cpu.numpy
    x = jnp.arange(6, dtype=jnp.float32).reshape(2, 3)
    y = e2e_cpu.transpose(x, out=jax_cpu.ShapeDtypeStruct((3, 2), jnp.float32))
    np.testing.assert_array_equal(y, np.arange(6, dtype=np.float32).reshape(2, 3).T)


def test_int64_float64_with_x64(jax_cpu, e2e_cpu):
    jnp = jax_cpu.numpy
    a = jnp.array([2**40, -3, 5], dtype=jnp.int64)
    b = jnp.array([1, 1, 2**41], dtype=jnp.int64)
    np.testing.assert_array_equal(e2e_cpu.add_i64(a, b, out=like(jax_cpu, a)),
                                  np.array([2**40 + 1, -2, 5 + 2**41]))
    x = jnp.array([1.0, 2.0], dtype=jnp.float64)
    y = e2e_cpu.scale_f64(x, alpha=math.pi, shift=2**33, out=like(jax_cpu, x))
    assert y.dtype == jnp.float64
    np.testing.assert_array_equal(y, np.array([1.0, 2.0]) * math.pi + 2**33)


def test_every_attr_type(jax_cpu, e2e_cpu):
    jnp = jax_cpu.numpy
    import ml_dtypes

    values = {
        "b": True, "i8": -5, "u8": 200, "i16": -30000, "u16": 60000, "i32": -(2**31) + 1, "u32": 2**32 - 1,
        "i64": -(2**40), "u64": 2**53, "f32": 1.5, "f64": math.pi, "c64": 1.5 - 2.25j,
        "c128": complex(math.e, -math.pi), "h": 1.5, "bf": -2.0,
    }
    out = e2e_cpu.all_attrs(**values, out=jax_cpu.ShapeDtypeStruct((17,), jnp.float64))
    half_bits = int(np.float16(1.5).view(np.uint16))
    bf_bits = int(np.asarray(-2.0, dtype=ml_dtypes.bfloat16).view(np.uint16))
    expected = [1, -5, 200, -30000, 60000, -(2**31) + 1, 2**32 - 1, -(2**40), 2**53, 1.5,
                math.pi, 1.5, -2.25, math.e, -math.pi, half_bits, bf_bits]
    np.testing.assert_array_equal(np.asarray(out), np.array(expected, dtype=np.float64))


def test_macro_generated_family(jax_cpu, e2e_cpu):
    jnp = jax_cpu.numpy
    x = jnp.arange(4, dtype=jnp.float32)
    np.testing.assert_allclose(e2e_cpu.axpy_f32(x, x, alpha=3.0, out=like(jax_cpu, x)), 4 * np.arange(4))
    xd = jnp.arange(4, dtype=jnp.float64)
    np.testing.assert_allclose(e2e_cpu.axpy_f64(xd, xd, alpha=0.5, out=like(jax_cpu, xd)), 1.5 * np.arange(4))
    np.testing.assert_allclose(e2e_cpu.neg_float(x, out=like(jax_cpu, x)), -np.arange(4))
    i = jnp.arange(4, dtype=jnp.int32)
    np.testing.assert_array_equal(e2e_cpu.neg_int32_t(i, out=like(jax_cpu, i)), -np.arange(4))


def test_unannotated_source_is_linked(jax_cpu, e2e_cpu):
    jnp = jax_cpu.numpy
    y = e2e_cpu.fill_answer(out=jax_cpu.ShapeDtypeStruct((3,), jnp.float32))
    np.testing.assert_array_equal(y, [42, 42, 42])


def test_be_check_failure_is_an_exception_and_calls_go_on(jax_cpu, e2e_cpu):
    jnp = jax_cpu.numpy
    bad = jnp.array([4.0, -1.0], dtype=jnp.float32)
    with pytest.raises(Exception, match="negative input -1 at index 1"):
        e2e_cpu.checked_sqrt(bad, out=like(jax_cpu, bad)).block_until_ready()
    with pytest.raises(Exception, match="checked_sqrt"):
        jax_cpu.jit(lambda v: e2e_cpu.checked_sqrt(v, out=like(jax_cpu, v)))(bad).block_until_ready()
    good = jnp.array([4.0, 9.0], dtype=jnp.float32)
    np.testing.assert_allclose(e2e_cpu.checked_sqrt(good, out=like(jax_cpu, good)), [2.0, 3.0])


def test_raw_ffi_call(jax_cpu, e2e_cpu):
    jnp = jax_cpu.numpy
    e2e_cpu.register()
    x = jnp.arange(3, dtype=jnp.float32)
    y = jax_cpu.ffi.ffi_call(e2e_cpu.TARGETS["scale"], like(jax_cpu, x))(x, alpha=np.float32(4.0))
    np.testing.assert_allclose(y, 4 * np.arange(3))


def test_vmap(jax_cpu, e2e_cpu):
    jnp = jax_cpu.numpy
    rows = jnp.arange(6, dtype=jnp.float32).reshape(2, 3)
    # `scale` declares vmap_method broadcast_all in begen.yaml; `add` is sequential.
    scaled = jax_cpu.vmap(lambda r: e2e_cpu.scale(r, alpha=2.0, out=like(jax_cpu, r)))(rows)
    np.testing.assert_allclose(scaled, 2 * np.arange(6).reshape(2, 3))
    summed = jax_cpu.vmap(lambda a, b: e2e_cpu.add(a, b, out=like(jax_cpu, a)))(rows, rows)
    np.testing.assert_allclose(summed, 2 * np.arange(6).reshape(2, 3))


def test_user_macros_do_not_reach_generated_code(jax_cpu, e2e_cpu):
    # macro_names.cpp defines T, p, a and e: the library built, and its kernel runs.
    x = jax_cpu.numpy.arange(3, dtype=jax_cpu.numpy.float32)
    y = e2e_cpu.add_three(x, k=1.0, out=jax_cpu.ShapeDtypeStruct(x.shape, x.dtype))
    np.testing.assert_allclose(y, np.arange(3) + 3)


@pytest.mark.parametrize(
    "name, value, error, detail",
    [
        ("h", None, TypeError, "takes a number, got None"),
        ("h", "1.5", TypeError, "takes a number, got '1.5' (str)"),
        ("h", 1e6, ValueError, "out of range for a 16-bit float"),
        ("h", 1 + 2j, TypeError, "takes a real number"),
        ("bf", "x", TypeError, "takes a number"),
        ("bf", 1e39, ValueError, "out of range for a 16-bit float"),
        ("c64", "1+2j", TypeError, "takes a number, got '1+2j' (str)"),
        ("c64", None, TypeError, "takes a number"),
        ("c64", complex(1e39, 0), ValueError, "is out of range"),
        ("c128", [1, 2], TypeError, "takes a number"),
    ],
)
def test_16_bit_and_complex_attrs_are_checked(jax_cpu, e2e_cpu, name, value, error, detail):
    values = {
        "b": True, "i8": 0, "u8": 0, "i16": 0, "u16": 0, "i32": 0, "u32": 0, "i64": 0, "u64": 0,
        "f32": 0.0, "f64": 0.0, "c64": 0j, "c128": 0j, "h": 0.0, "bf": 0.0,
    }
    values[name] = value
    with pytest.raises(error) as info:
        e2e_cpu.all_attrs(**values, out=jax_cpu.ShapeDtypeStruct((17,), jax_cpu.numpy.float64))
    assert str(info.value).startswith(f"all_attrs: attribute '{name}'"), str(info.value)
    assert detail in str(info.value), str(info.value)


def test_kernel_messages_reach_python_as_text(jax_cpu, e2e_cpu):
    out = jax_cpu.ShapeDtypeStruct((1,), "float32")
    with pytest.raises(Exception) as cut:
        e2e_cpu.failing_text(mode=0, out=out).block_until_ready()
    text = str(cut.value)
    assert "a" * 100 in text and "\ufffd" not in text, text[-80:]
    assert not text.rstrip().endswith("end"), "the message was cut at 4 KiB"
    with pytest.raises(Exception, match=r"bad \?\? bytes"):
        e2e_cpu.failing_text(mode=1, out=out).block_until_ready()


def test_many_kernels_split_the_glue_and_all_run(jax_cpu, tmp_path):
    """150 kernels (macro-made): their handlers are in several glue TUs
    (gen/NAME.begen.cc, gen/NAME.partK.begen.cc) compiled apart and linked
    into one library; the first, a middle and the last kernel run."""
    src = tmp_path / "kernels"
    src.mkdir()
    body = ['#include "brainevent/common.h"', "#define ADD(K) \\",
            "    void add_##K(const BE::Tensor x, BE::Tensor y) { \\",
            "        const float* a = static_cast<const float*>(x.data_ptr()); \\",
            "        float* b = static_cast<float*>(y.data_ptr()); \\",
            "        for (size_t i = 0; i < x.numel(); ++i) b[i] = a[i] + K; }"]
    for k in range(150):
        body += [f"// @BE add_{k} arg ret", f"ADD({k})"]
    (src / "many.cpp").write_text("\n".join(body) + "\n")
    out = tmp_path / "out"
    work = tmp_path / "work"
    run_begen("build", src, "--out", out, "--name", "many", "--platform", "cpu", "--work-dir", work, "--quiet")
    parts = sorted(p.name for p in (work / "many" / "gen").glob("many.*begen.cc") if ".cpp." not in p.name)
    assert parts == ["many.begen.cc", "many.part2.begen.cc", "many.part3.begen.cc"], parts
    m = import_module(out, "many")
    x = jax_cpu.numpy.arange(4, dtype="float32")
    shape = jax_cpu.ShapeDtypeStruct((4,), "float32")
    for k in (0, 77, 149):
        np.testing.assert_allclose(getattr(m, f"add_{k}")(x, out=shape), np.arange(4) + k)
    assert len(m.TARGETS) == 150
