"""Kernels declared with XLA FFI's own types, and kernels that return a
status, end to end on the CPU: tests/e2e/native built by the CLI."""

import numpy as np
import pytest
from conftest import PER_DEVICE_COUNTS, REPO, counts_per_device, import_module, run_begen

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane


@pytest.fixture(scope="module")
def native(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_native")
    work = tmp_path_factory.mktemp("e2e_native_work")
    run_begen("build", REPO / "tests/e2e/native", "--out", out, "--work-dir", work, "--quiet")
    m = import_module(out, "e2e_native")
    m.out_dir = out
    m.work_dir = work / "e2e_native"
    return m


def test_command_buffer_marks_a_native_handler(native):
    # begen.yaml gives ScaleImpl `command_buffer: true`: its handler carries
    # the trait (and still compiled, as the other tests show); the others don't.
    manifest = (native.out_dir / "e2e_native.yaml").read_text()
    entry = manifest.split("- name: ScaleImpl\n", 1)[1].split("\n- name:", 1)[0]
    assert "command_buffer: true" in entry
    glue = "".join(p.read_text() for p in (native.work_dir / "gen").glob("*.begen.cc"))
    handlers = glue.split("XLA_FFI_DEFINE_HANDLER_SYMBOL(")[1:]
    marked = [h.split(",", 1)[0] for h in handlers if "kCmdBufferCompatible" in h.split(";", 1)[0]]
    assert len(marked) == 1 and "ScaleImpl" in marked[0], marked


def like(jax, x):
    return jax.ShapeDtypeStruct(x.shape, x.dtype)


def test_native_signatures_bind_as_declared(native, jax_cpu):
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_allclose(native.ScaleImpl(x, factor=2.0, out=like(jax_cpu, x)), 2 * x)
    f = jax_cpu.jit(lambda x: native.ScaleImpl(x, factor=3.0, out=like(jax_cpu, x)))
    np.testing.assert_allclose(f(x), 3 * x)
    # A rank-0 result buffer needs no out=; a span attribute from a sequence.
    assert int(native.SumArray(array=np.arange(5, dtype=np.int32))) == 10
    # The whole attribute dictionary: the function's free keywords.
    secret, count = native.DictAttr(secret=5, a_string="hi")
    assert (int(secret), int(count)) == (5, 2)


def test_dictionary_takes_free_keywords(native, jax_cpu):
    secret, count = native.DictAttr(secret=3)
    assert (int(secret), int(count)) == (3, 1)
    f = jax_cpu.jit(lambda: native.DictAttr(secret=7, a_string="hello", an_int=3, a_float=1.5))
    assert tuple(int(v) for v in f()) == (7, 4)
    # Eager calls with the same values under other names are different calls.
    assert int(native.DictAttr(secret=1, a=2)[1]) == 2
    assert int(native.DictAttr(secret=1, b=2, c=3)[1]) == 3
    # The kernel's own error for a missing or mistyped attribute, with its code.
    with pytest.raises(Exception, match="Unexpected attribute"):
        native.DictAttr()
    with pytest.raises(Exception, match="Wrong attribute type"):
        native.DictAttr(secret="invalid")
    # A name that is no identifier never reaches XLA.
    with pytest.raises(TypeError, match="DictAttr: attribute name 'a b' is not an ASCII identifier"):
        native.DictAttr(secret=1, **{"a b": 2})


def test_string_attribute_is_a_str_keyword(native, jax_cpu):
    assert int(native.Greet(word="hello")) == 5
    assert int(jax_cpu.jit(lambda: native.Greet(word="héllo wörld"))()) == len("héllo wörld".encode())
    with pytest.raises(TypeError, match="Greet: attribute 'word' \\(str\\) takes a str, got 3 \\(int\\)"):
        native.Greet(word=3)
    with pytest.raises(Exception, match="INVALID_ARGUMENT: word must not be 'fail'"):
        np.asarray(native.Greet(word="fail"))


def test_result_bound_as_input_by_its_token(native, jax_cpu):
    """`arg` over a `ResultBuffer` binds it as an input: the function takes
    two arrays and returns one; the token's default is the keyword's."""
    a = np.arange(4, dtype=np.float32)
    b = np.full(4, 3.0, dtype=np.float32)
    np.testing.assert_allclose(native.MulAdd(a, b, out=like(jax_cpu, a)), a * b + 2)
    np.testing.assert_allclose(native.MulAdd(a, b, k=5, out=like(jax_cpu, a)), a * b + 5)
    f = jax_cpu.jit(lambda a, b: native.MulAdd(a, b, out=like(jax_cpu, a)))
    np.testing.assert_allclose(f(a, b), a * b + 2)


def test_per_executable_state(native, jax_cpu):
    """Each executable has a state of its own (on each device), made on
    its first call and handed to each later one: a new executable starts
    at 42."""
    f = jax_cpu.jit(native.ReadCounter)
    assert [int(f()) for _ in range(3)] == [42, 43, 44]
    g = jax_cpu.jit(lambda x: (x, native.ReadCounter()))
    assert int(g(1)[1]) == 42


def test_state_not_made_fails_the_call(native, jax_cpu):
    """A state is made on a device's first call: an error the instantiate
    function returns fails that call with its code, and a null state is an
    error naming the function (never a null `T*` for the kernel)."""
    with pytest.raises(Exception, match="UNAVAILABLE: no state today"):
        np.asarray(jax_cpu.jit(native.NativeNoState)())
    with pytest.raises(Exception, match="INTERNAL: MakeNullState\\(\\) returned no state"):
        np.asarray(jax_cpu.jit(native.NativeNullState)())


def test_each_device_has_its_own_native_state(native):
    """A `T*` state is per device too: XLA hands the shards of a shard_map
    and of a pmap over 4 CPU devices one instance at once, and the glue
    gives each device a `T` of its own, made on its first call, so 3 calls
    count 42, 43, 44 on each device (one shared state counts 42..53 over
    the 12 shards). NativeSlowCounter reads the count, waits a millisecond
    and writes it back one higher: threads calling one jitted function take
    turns on its device's state, so 201 calls read 201 counts, and 20 calls
    of the shard_map from 4 threads read 20 counts per device; the 4 shards
    of one shard_map call get 4 states."""
    got = counts_per_device(native.out_dir, "e2e_native", "NativeSlowCounter", serial="NativeStateSerial")
    assert got == {**PER_DEVICE_COUNTS, "serials": "4"}


@pytest.mark.parametrize("name", ["ScaleImpl", "checked_copy", "returns_error", "arg_check"])
def test_returned_and_checked_errors_keep_their_code(native, jax_cpu, name):
    """A 0-d input the kernel rejects raises INVALID_ARGUMENT: never an
    output of uninitialised memory."""
    f = getattr(native, name)
    kw = {"factor": 1.0} if name == "ScaleImpl" else {}
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_allclose(f(x, out=like(jax_cpu, x), **kw), x)
    with pytest.raises(Exception, match="INVALID_ARGUMENT: .*x must be an array"):
        np.asarray(f(np.float32(1), out=jax_cpu.ShapeDtypeStruct((), np.float32), **kw))


def test_plain_check_stays_internal(native, jax_cpu):
    with pytest.raises(Exception, match="INTERNAL: plain_check: .*check failed: x.ndim\\(\\) > 0"):
        np.asarray(native.plain_check(np.float32(1), out=jax_cpu.ShapeDtypeStruct((), np.float32)))
