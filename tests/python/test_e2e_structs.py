"""Struct and array attributes of annotated C++ kernels end to end on the
CPU: tests/e2e/structs built by the CLI, called from JAX eagerly, under
jit, vmap and export; every bad dict or array raises naming the kernel, the
attribute and the member or element; the handler refuses what bypasses
Python."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import REPO, import_module, run_begen

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane


@pytest.fixture(scope="module")
def structs(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_structs")
    run_begen("build", REPO / "tests/e2e/structs", "--out", out, "--quiet")
    module = import_module(out, "e2e_structs")
    module.OUT = out
    return module


AFFINE = {"scale": 2.0, "shift": 1.0, "limit": 3.0, "clamp": True}


def affine_ref(x, p):
    y = p["scale"] * x.astype(np.float32) + p["shift"]
    return np.clip(y, -p["limit"], p["limit"]) if p["clamp"] else y


def x6():
    return np.arange(6, dtype=np.float32) - 3


def like(x):
    import jax

    return jax.ShapeDtypeStruct(x.shape, x.dtype)


def test_a_struct_from_a_header_is_a_dict_of_its_members(structs, jax_cpu):
    x = x6()
    np.testing.assert_allclose(structs.affine(x, p=AFFINE, out=like(x)), affine_ref(x, AFFINE))
    free = dict(AFFINE, clamp=False)
    np.testing.assert_allclose(
        jax_cpu.jit(lambda v: structs.affine(v, p=free, out=like(v)))(x), affine_ref(x, free)
    )
    # numpy scalars, 0/1 for a bool, an integral float for a float member.
    p = {"scale": np.float32(0.5), "shift": 2, "limit": np.float64(1.5), "clamp": 1}
    np.testing.assert_allclose(structs.affine(x, p=p, out=like(x)), affine_ref(x, dict(p, clamp=True)))
    # By const reference, and through an algorithm whose implementations take it.
    np.testing.assert_allclose(structs.affine_ref(x, p=AFFINE, out=like(x)), affine_ref(x, AFFINE))
    np.testing.assert_allclose(structs.affine_any(x, p=AFFINE, out=like(x)), affine_ref(x, AFFINE))
    # vmap: the struct is the same for every example.
    batch = np.stack([x, -x])
    got = jax_cpu.vmap(lambda v: structs.affine(v, p=free, out=like(x)))(batch)
    np.testing.assert_allclose(got, np.stack([affine_ref(x, free), affine_ref(-x, free)]))


def test_every_integer_member_keeps_its_full_range(structs, jax_cpu):
    v = {"i8": -128, "u8": 255, "i16": -32768, "u16": 65535, "i32": -(2**31), "u32": 2**32 - 1,
         "i64": -(2**63), "u64": 2**63 - 1}
    got = structs.ints(x6(), v=v, out=jax_cpu.ShapeDtypeStruct((8,), np.float64))
    np.testing.assert_array_equal(got, np.array([float(v[k]) for k in v]))


def test_a_template_kernel_takes_the_struct_per_instance(structs):
    p = dict(AFFINE, clamp=False)
    for dtype in (np.float32, np.float64):
        x = x6().astype(dtype)
        got = structs.scale_t(x, p=p)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, 2 * x + 1)


def test_arrays_as_be_span_xla_span_and_vector(structs, jax_cpu):
    x = x6()
    # A struct of the source and a BE::Span beside a typed tensor.
    got = structs.window_sum(x, w={"start": 1, "stop": 5}, weights=[1.0, 2.0])
    assert float(got) == pytest.approx(float((x[1:5] * np.array([1, 2, 1, 2])).sum()))
    # std::vector<double> from a numpy array, a list or a tuple.
    t = np.arange(4.0)
    for c in (np.array([1.0, 0.0, 1.0]), [1.0, 0.0, 1.0], (1, 0, 1)):
        np.testing.assert_allclose(structs.poly(t, c=c, out=like(t)), 1 + t**2)
    # xla::ffi::Span<const int32_t>, also empty, and under jit.
    got = structs.gather(x, idx=[5, 0, 2], out=jax_cpu.ShapeDtypeStruct((3,), np.float32))
    np.testing.assert_allclose(got, x[[5, 0, 2]])
    got = jax_cpu.jit(lambda v: structs.gather(v, idx=np.array([1, 1], np.int32), out=jax_cpu.ShapeDtypeStruct((2,), np.float32)))(x)
    np.testing.assert_allclose(got, x[[1, 1]])
    assert structs.gather(x, idx=[], out=jax_cpu.ShapeDtypeStruct((0,), np.float32)).shape == (0,)


def test_every_element_kind_arrives_as_written(structs, jax_cpu):
    h = [1.0, -2.0, 65504.0]
    got = structs.arrays(
        b=[True, False, 1], h=h, c=[1 + 2j, -0.5], u=[2**63 - 1, 0], d=np.array([-128, 127], np.int8),
        out=jax_cpu.ShapeDtypeStruct((24,), np.float64),
    )
    bits = np.array(h, np.float16).view(np.uint16).astype(np.float64)
    want = [3, 1, 0, 1, 3, *bits, 2, 1, 2, -0.5, 0, 2, float(2**63 - 1), 0, 2, -128, 127]
    np.testing.assert_array_equal(got[: len(want)], np.array(want, np.float64))
    # numpy arrays of exactly the element type, 16-bit floats and complex too.
    got = structs.arrays(
        b=np.array([False]), h=np.array([0.5], np.float16), c=np.array([3j], np.complex64),
        u=np.array([7], np.uint64), d=[], out=jax_cpu.ShapeDtypeStruct((24,), np.float64),
    )
    half = float(np.array([0.5], np.float16).view(np.uint16)[0])
    np.testing.assert_array_equal(got[:12], [1, 0, 1, half, 1, 0, 3, 1, 7, 0, -1, -1])


def test_bad_dicts_raise_naming_the_kernel_attribute_and_member(structs):
    x = x6()
    missing = {"scale": 1.0, "shift": 0.0, "limit": 1.0}
    cases = [
        (missing, TypeError, r"affine: attribute 'p' \(Affine\): member 'clamp' is missing"),
        (dict(AFFINE, bias=1.0), TypeError,
         r"affine: attribute 'p' \(Affine\) has no member 'bias'; its members are scale, shift, limit, clamp"),
        ([1.0, 2.0], TypeError, r"affine: attribute 'p' \(Affine\) takes a dict of the struct's members, got \[1.0, 2.0\]"),
        (dict(AFFINE, scale="big"), TypeError, r"affine: attribute 'p' \(Affine\), member 'scale' \(float32\) takes a number"),
        (dict(AFFINE, clamp=2), ValueError, r"member 'clamp' \(bool\) takes True or False"),
        (dict(AFFINE, scale=1e39), ValueError, r"member 'scale' \(float32\): 1e\+39 is out of range"),
        (dict(AFFINE, limit={"a": 1}), TypeError, r"member 'limit' \(float64\) takes a number"),
    ]
    for p, error, message in cases:
        with pytest.raises(error, match=message):
            structs.affine(x, p=p, out=like(x))
    v = {"i8": 128, "u8": 0, "i16": 0, "u16": 0, "i32": 0, "u32": 0, "i64": 0, "u64": 0}
    with pytest.raises(ValueError, match=r"ints: attribute 'v' \(Ints\), member 'i8' \(int8\): 128 is out of range \[-128, 127\]"):
        structs.ints(x, v=v, out=like(x))
    with pytest.raises(ValueError, match=r"member 'u8' \(uint8\): -1 is out of range"):
        structs.ints(x, v=dict(v, i8=0, u8=-1), out=like(x))


def test_bad_arrays_raise_naming_the_element(structs, jax_cpu):
    x = x6()
    out = jax_cpu.ShapeDtypeStruct((2,), np.float32)
    cases = [
        (np.array([1.0, 2.0]), TypeError, r"gather: attribute 'idx' \(int32\[\]\) must be an array of int32, got an array of float64"),
        (np.zeros((2, 1), np.int32), ValueError, r"takes a 1-D array, got shape \(2, 1\)"),
        ([0, 1.5], ValueError, r"attribute 'idx' \(int32\[\]\), element 1 takes a whole number, got 1.5"),
        ([2**31], ValueError, r"element 0: 2147483648 is out of range"),
        ("01", TypeError, r"takes a list, a tuple or a 1-D array, got '01'"),
        (3, TypeError, r"takes a list, a tuple or a 1-D array, got 3"),
        ([[0, 1]], TypeError, r"element 0 takes a number"),
    ]
    for idx, error, message in cases:
        with pytest.raises(error, match=message):
            structs.gather(x, idx=idx, out=out)
    with pytest.raises(ValueError, match=r"arrays: attribute 'b' \(bool\[\]\), element 0 takes True or False"):
        structs.arrays(b=[2], h=[], c=[], u=[], d=[], out=jax_cpu.ShapeDtypeStruct((8,), np.float64))
    # An array attribute is static: a traced array is refused, naming it.
    with pytest.raises(TypeError, match=r"attribute 'c' \(float64\[\]\) takes an array known at trace time"):
        jax_cpu.jit(lambda c: structs.poly(np.arange(3.0), c=c, out=jax_cpu.ShapeDtypeStruct((3,), np.float64)))(np.ones(2))


def test_the_handler_refuses_what_bypasses_python(structs, jax_cpu):
    import jax

    x = x6()
    call = lambda target, out, **attrs: jax.ffi.ffi_call(structs.TARGETS[target], out)(x, **attrs)
    with pytest.raises(Exception, match="Wrong number of attributes"):
        call("affine", like(x), p={"scale": np.float32(1)}).block_until_ready()
    with pytest.raises(Exception, match="a bool array must hold only 0 and 1"):
        f = jax.ffi.ffi_call(structs.TARGETS["arrays"], jax.ShapeDtypeStruct((8,), np.float64))
        f(b=np.array([2], np.uint8), h=np.zeros(0, np.uint16), c=np.zeros(0, np.float32),
          u=np.zeros(0, np.uint64), d=np.zeros(0, np.int8)).block_until_ready()
    with pytest.raises(Exception, match=r"expected complex numbers as pairs \[real, imag, ...\], got 3 values"):
        f = jax.ffi.ffi_call(structs.TARGETS["arrays"], jax.ShapeDtypeStruct((8,), np.float64))
        f(b=np.zeros(0, np.uint8), h=np.zeros(0, np.uint16), c=np.zeros(3, np.float32),
          u=np.zeros(0, np.uint64), d=np.zeros(0, np.int8)).block_until_ready()
    # The kernel's own check still raises from inside.
    with pytest.raises(Exception, match=r"gather: .*structs.cpp:\d+: check failed: .*index 9 out of range"):
        structs.gather(x, idx=[9], out=jax.ShapeDtypeStruct((1,), np.float32)).block_until_ready()


def test_export_round_trip_in_a_fresh_process(structs):
    script = textwrap.dedent(
        f"""
        import sys
        import numpy as np
        import jax
        sys.path.insert(0, {str(structs.OUT)!r})
        import e2e_structs as m
        x = np.arange(6, dtype=np.float32)
        f = jax.jit(lambda v: m.window_sum(v, w={{"start": 0, "stop": 3}}, weights=np.array([1.0, 10.0], np.float32)))
        blob = jax.export.export(f, disabled_checks=m.export_safety_checks())(x).serialize()
        import importlib
        del sys.modules["e2e_structs"]
        m = importlib.import_module("e2e_structs")
        print(float(m.deserialize(blob).call(x)))
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert float(proc.stdout.strip()) == pytest.approx(0 * 1 + 1 * 10 + 2 * 1)


def test_the_stub_and_the_scan_show_the_structs(structs):
    stub = (structs.OUT / "e2e_structs.pyi").read_text()
    assert "def affine(x: ArrayLike, /, *, p: dict[str, Any], out: jax.ShapeDtypeStruct) -> jax.Array:" in stub, stub
    assert "weights: ArrayLike" in stub, stub
    scan = run_begen("scan", REPO / "tests/e2e/structs", "--format", "json").stdout
    assert '"members": [\n            "scale:float32",' in scan, scan


def test_two_structs_of_one_name_in_two_modules(jax_cpu, tmp_path):
    # Each module's `Params` is its own: begen's copies in the one glue TU
    # get distinct names, and XLA decodes each call's dict into the right one.
    src = tmp_path / "kernels"
    (src / "a").mkdir(parents=True)
    (src / "b").mkdir()
    (src / "begen.yaml").write_text("name: two_params\nmodules: {per-file: true}\n")
    (src / "a" / "k.cpp").write_text(textwrap.dedent(
        """
        #include "brainevent/common.h"
        struct Params { float scale; };
        // @BE run
        void run(const BE::Tensor x, BE::Tensor y, Params p) {
            for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = p.scale * x.data_ptr<float>()[i];
        }
        """
    ))
    (src / "b" / "k.cpp").write_text(textwrap.dedent(
        """
        #include "brainevent/common.h"
        struct Params { int32_t offset; double scale; };
        // @BE run
        void run(const BE::Tensor x, BE::Tensor y, const Params& p) {
            for (int64_t i = 0; i < x.numel(); ++i)
                y.data_ptr<float>()[i] = static_cast<float>(p.scale * x.data_ptr<float>()[i] + p.offset);
        }
        """
    ))
    out = tmp_path / "out"
    run_begen("build", src, "--out", out, "--work-dir", tmp_path / "work", "--quiet")
    glue = next((tmp_path / "work" / "two_params" / "gen").glob("two_params.begen.cc")).read_text()
    assert "struct begen_struct_Params {" in glue and "struct begen_struct_Params_2 {" in glue, glue
    m = import_module(out, "two_params")
    x = x6()
    np.testing.assert_allclose(m.a_k.run(x, p={"scale": 3.0}, out=like(x)), 3 * x)
    np.testing.assert_allclose(m.b_k.run(x, p={"offset": 1, "scale": 0.5}, out=like(x)), 0.5 * x + 1)
    with pytest.raises(TypeError, match=r"b_k.run: attribute 'p' \(Params\): member 'offset' is missing"):
        m.b_k.run(x, p={"scale": 3.0}, out=like(x))
