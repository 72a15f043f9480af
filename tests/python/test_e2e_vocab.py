"""begen's own vocabulary (`BE::Tensor` kernels and typed pointers) with
the capabilities of XLA FFI's own types, end to end on the CPU:
tests/e2e/vocab built by the CLI."""

import os

import numpy as np
import pytest
from conftest import REPO, import_module, run_begen

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane


@pytest.fixture(scope="module")
def vocab(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_vocab")
    run_begen("build", REPO / "tests/e2e/vocab", "--out", out, "--quiet")
    return import_module(out, "e2e_vocab")


def like(jax, x):
    return jax.ShapeDtypeStruct(x.shape, x.dtype)


@pytest.mark.parametrize("mode,want", [("double", lambda x: 2 * x), ("square", np.square), ("negate", np.negative)])
def test_string_attribute_of_a_tensor_kernel(vocab, jax_cpu, mode, want):
    x = np.arange(-3, 5, dtype=np.float32)
    np.testing.assert_allclose(vocab.Apply(x, mode=mode, out=like(jax_cpu, x)), want(x))
    f = jax_cpu.jit(lambda x: vocab.Apply(x, mode=mode, out=like(jax_cpu, x)))
    np.testing.assert_allclose(f(x), want(x))


def test_string_attribute_errors(vocab, jax_cpu):
    x = np.arange(3, dtype=np.float32)
    with pytest.raises(Exception, match="INVALID_ARGUMENT: Apply: unknown mode 'cube'"):
        np.asarray(vocab.Apply(x, mode="cube", out=like(jax_cpu, x)))
    with pytest.raises(TypeError, match="Apply: attribute 'mode' \\(str\\) takes a str, got 3 \\(int\\)"):
        vocab.Apply(x, mode=3, out=like(jax_cpu, x))


def test_string_attribute_of_typed_pointers(vocab, jax_cpu):
    x = np.arange(4, dtype=np.float32)
    word = "héllo"  # 6 UTF-8 bytes
    np.testing.assert_allclose(vocab.AddLength(x, word=word, scale=0.5), x + 3.0)
    f = jax_cpu.jit(lambda x: vocab.AddLength(x, word="", scale=2.0))
    np.testing.assert_allclose(f(x), x)


def test_dictionary_of_a_tensor_kernel(vocab, jax_cpu):
    x = np.arange(-3, 5, dtype=np.float32)
    np.testing.assert_allclose(vocab.Affine(x, scale=2.0, out=like(jax_cpu, x)), 2 * x)
    np.testing.assert_allclose(vocab.Affine(x, scale=2, shift=1.5, out=like(jax_cpu, x)), 2 * x + 1.5)
    np.testing.assert_allclose(
        vocab.Affine(x, scale=np.float32(-1), mode="abs", out=like(jax_cpu, x)), np.abs(x)
    )
    f = jax_cpu.jit(lambda x: vocab.Affine(x, scale=0.5, shift=-1.0, mode="abs", out=like(jax_cpu, x)))
    np.testing.assert_allclose(f(x), np.abs(0.5 * x - 1.0))


def test_dictionary_of_typed_pointers(vocab, jax_cpu):
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_allclose(vocab.CountAttrs(x, repeat=3), x + 3)
    np.testing.assert_allclose(vocab.CountAttrs(x, repeat=2, other="x", more=1.0), x + 6)
    f = jax_cpu.jit(lambda x: vocab.CountAttrs(x, repeat=np.int8(1), a=1))
    np.testing.assert_allclose(f(x), x + 2)


def test_dictionary_errors_name_the_key(vocab, jax_cpu):
    x = np.arange(3, dtype=np.float32)
    with pytest.raises(Exception, match="INVALID_ARGUMENT: .*attribute 'scale' is missing"):
        np.asarray(vocab.Affine(x, out=like(jax_cpu, x)))
    with pytest.raises(Exception, match="INVALID_ARGUMENT: .*attribute 'scale' is not a float32"):
        np.asarray(vocab.Affine(x, scale="big", out=like(jax_cpu, x)))
    with pytest.raises(Exception, match="INVALID_ARGUMENT: .*attribute 'mode' is not a string"):
        np.asarray(vocab.Affine(x, scale=1.0, mode=3, out=like(jax_cpu, x)))
    with pytest.raises(Exception, match="INVALID_ARGUMENT: .*attribute 'repeat' is out of range for an int8"):
        np.asarray(vocab.CountAttrs(x, repeat=300))
    with pytest.raises(Exception, match="INVALID_ARGUMENT: .*attribute 'repeat' is not an int8"):
        np.asarray(vocab.CountAttrs(x, repeat=1.5))
    with pytest.raises(TypeError, match="attribute name 'a b' is not an ASCII identifier"):
        vocab.Affine(x, scale=1.0, out=like(jax_cpu, x), **{"a b": 2})


def test_values_jax_cannot_encode_are_refused_by_name(vocab, jax_cpu):
    # Each refused before jax sees it, naming the kernel and the attribute
    # (jax or XLA would say "incompatible function arguments", "Python int
    # too large to convert to C long", "std::bad_cast").
    x = np.arange(3, dtype=np.float32)
    out = like(jax_cpu, x)
    name = os.fsdecode(b"ab\xff")  # a lone surrogate
    with pytest.raises(ValueError, match=r"^Apply: attribute 'mode' \(str\) takes UTF-8 text, got 'ab\\udcff': a lone"):
        vocab.Apply(x, mode=name, out=out)
    with pytest.raises(ValueError, match=r"^AddLength: attribute 'word' \(str\) takes UTF-8 text"):
        vocab.AddLength(x, word=name, scale=1.0)
    cases = [
        ({"mode": name}, ValueError, r"^Affine: attribute 'mode' takes UTF-8 text"),
        ({"shift": 2**70}, ValueError, r"^Affine: attribute 'shift' is 1180591620717411303424, outside int64"),
        ({"big": np.uint64(2**64 - 1)}, ValueError, r"^Affine: attribute 'big' is 18446744073709551615, outside int64"),
        ({"shift": None}, TypeError, r"^Affine: attribute 'shift' takes a bool, an int, .* got None \(NoneType\)"),
        ({"shift": {1: 2}}, TypeError, r"^Affine: attribute 'shift' is a dict with the key 1: .* keys are str"),
        ({"shift": {"a": None}}, TypeError, r"^Affine: attribute 'shift', key 'a' takes a bool"),
        ({"shift": 1j}, TypeError, r"^Affine: attribute 'shift' takes a bool, .* got 1j \(complex\)"),
    ]
    for given, error, said in cases:
        with pytest.raises(error, match=said):
            vocab.Affine(x, scale=1.0, out=out, **given)
        with pytest.raises(error, match=said):
            jax_cpu.jit(lambda v, given=given: vocab.Affine(v, scale=1.0, out=out, **given))(x)
    # The edges of int64 and a nested dict of str keys still reach the kernel.
    np.testing.assert_allclose(vocab.Affine(x, scale=1.0, big=2**63 - 1, small=-(2**63), out=out), x)
    np.testing.assert_allclose(vocab.CountAttrs(x, repeat=1, d={"a": 1, "b": "text"}), x + 2)
