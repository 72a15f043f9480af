"""Section `core`: the XLA FFI version gate and the x64 check."""

import types

import numpy as np
import pytest
from begen_runtime import core

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane


@pytest.mark.parametrize(
    ("text", "want"),
    [("0.3", (0, 3)), ("12.40", (12, 40)), ("1", None), ("1.2.3", None), ("a.b", None), (None, None), ("", None)],
)
def test_api_versions_parse(text, want):
    assert core._begen_parse_api(text) == want


@pytest.mark.parametrize(
    ("built", "running", "refused"),
    [("0.1", "0.1", False), ("0.1", "0.3", False), ("0.4", "0.3", True), ("1.0", "0.9", True), ("0.3", "1.3", True),
     (None, "0.3", False), ("0.3", None, False), ("junk", "0.3", False)],
)
def test_the_gate_refuses_a_newer_minor_or_another_major(monkeypatch, built, running, refused):
    monkeypatch.setattr(core, "_begen_built_ffi_api", lambda: built)
    monkeypatch.setattr(core, "_begen_running_ffi_api", lambda: running)
    if not refused:
        assert core._begen_check_ffi_api() is None
        return
    with pytest.raises(RuntimeError) as e:
        core._begen_check_ffi_api()
    text = str(e.value)
    assert text.startswith(f"begen_runtime.core: libbegen_runtime.so was built against XLA FFI API {built}, ")
    assert f"has XLA FFI API {running}, so XLA would not register its handlers" in text
    assert "nothing was registered" in text
    assert "`begen build --jax-min " in text
    assert "BEGEN_PYTHON=" in text and f"whose XLA FFI API is {built} or newer." in text


def test_a_forged_newer_api_is_refused_with_the_running_jaxlib_named(monkeypatch):
    # The library says it was built against an API one minor newer than the
    # running jaxlib's: the message names both versions and --jax-min.
    import jaxlib

    running = core._begen_running_ffi_api()
    major, minor = core._begen_parse_api(running)
    forged = f"{major}.{minor + 1}"
    monkeypatch.setattr(core, "_lib", types.SimpleNamespace(**{core._FFI_API_SYMBOL: _Forged(forged)}))
    with pytest.raises(RuntimeError) as e:
        core._begen_check_ffi_api()
    text = str(e.value)
    assert f"built against XLA FFI API {forged}, but the running jaxlib {jaxlib.__version__} has XLA FFI API {running}" in text
    assert f"`begen build --jax-min {jaxlib.__version__}`" in text
    assert f'begen.yaml `jax_min: "{jaxlib.__version__}"`' in text


class _Forged:
    restype = None

    def __init__(self, version):
        self.version = version

    def __call__(self):
        return self.version.encode()


class _Symbol:
    restype = None

    def __call__(self):
        assert self.restype is not None, "restype must be set before the call"
        return b"0.7"


def test_the_built_version_comes_from_the_library(monkeypatch):
    assert core._begen_built_ffi_api() is None  # not loaded
    monkeypatch.setattr(core, "_lib", types.SimpleNamespace(**{core._FFI_API_SYMBOL: _Symbol()}))
    assert core._begen_built_ffi_api() == "0.7"
    monkeypatch.setattr(core, "_lib", types.SimpleNamespace())  # an older library without the symbol
    assert core._begen_built_ffi_api() is None


def test_the_running_version_comes_from_jaxlibs_headers(monkeypatch, tmp_path):
    header = tmp_path / "xla" / "ffi" / "api" / "c_api.h"
    header.parent.mkdir(parents=True)
    header.write_text("#define XLA_FFI_API_MAJOR 7\n#define  XLA_FFI_API_MINOR   9\n#define OTHER 1\n")
    fake = types.SimpleNamespace(ffi=types.SimpleNamespace(include_dir=lambda: str(tmp_path)))
    monkeypatch.setattr(core, "_jax", fake)
    assert core._begen_running_ffi_api() == "7.9"
    header.write_text("#define XLA_FFI_API_MAJOR 7\n")
    assert core._begen_running_ffi_api() is None
    header.unlink()
    assert core._begen_running_ffi_api() is None


def test_the_real_jaxlib_has_a_version():
    assert core._begen_parse_api(core._begen_running_ffi_api()) is not None


@pytest.mark.parametrize("x64", [False, True])
def test_64_bit_inputs_are_refused_when_x64_is_off(monkeypatch, x64):
    monkeypatch.setattr(core, "_jax", types.SimpleNamespace(config=types.SimpleNamespace(jax_enable_x64=x64)))
    core._begen_honest("f", (np.zeros(2, np.float32), 1.0), ("x", "y"))
    for dtype in core._BEGEN_WIDE:
        arrays = (np.zeros(2, np.float32), np.zeros(2, dtype))
        if x64:
            core._begen_honest("f", arrays, ("x", "y"))
        else:
            with pytest.raises(TypeError, match=f"^f: parameter 'y' is {dtype}, but JAX's x64 mode is off"):
                core._begen_honest("f", arrays, ("x", "y"))


@pytest.fixture()
def shared(monkeypatch):
    # A fresh process-wide table, and this runtime standing for a library at LIBRARY.
    import sys

    monkeypatch.delitem(sys.modules, core._begen_table_name, raising=False)
    yield core._begen_shared_targets()
    sys.modules.pop(core._begen_table_name, None)


HANDLERS = (("lib.a", "begen_a", "cpu"), ("lib.b", "begen_b", "cpu"))


def test_targets_are_registered_once_and_recorded_by_library(shared, monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(core, "LIBRARY", str(tmp_path / "liblib.so"))
    core._begen_register_targets(HANDLERS, lambda *a: calls.append(a))
    assert calls == list(HANDLERS)
    assert shared.targets == {("lib.a", "cpu"): str(tmp_path / "liblib.so"), ("lib.b", "cpu"): str(tmp_path / "liblib.so")}
    # The same library again (a reloaded module): nothing reaches XLA twice.
    core._begen_register_targets(HANDLERS, lambda *a: calls.append(a))
    assert len(calls) == 2
    # The table is one per process, whichever module asks.
    assert core._begen_shared_targets() is shared


def test_a_duplicate_target_from_another_library_is_refused_by_name(shared, monkeypatch, tmp_path):
    first, second = tmp_path / "dev" / "liblib.so", tmp_path / "wheel" / "liblib.so"
    monkeypatch.setattr(core, "LIBRARY", str(first))
    core._begen_register_targets(HANDLERS[:1], lambda *a: None)
    calls = []
    monkeypatch.setattr(core, "LIBRARY", str(second))
    with pytest.raises(RuntimeError) as e:
        core._begen_register_targets(HANDLERS, lambda *a: calls.append(a))
    text = str(e.value)
    assert text.startswith(f"begen_runtime.core: cannot register liblib.so ({second}): its FFI target 'lib.a' (cpu) ")
    assert f"is already registered by {first}, and XLA takes one handler per target." in text
    assert "prefix:" in text
    # Nothing of the refused library was registered, not even its free target.
    assert calls == []
    assert shared.targets == {("lib.a", "cpu"): str(first)}


def test_a_refusal_counts_every_taken_target(shared, monkeypatch, tmp_path):
    monkeypatch.setattr(core, "LIBRARY", str(tmp_path / "one.so"))
    core._begen_register_targets(HANDLERS, lambda *a: None)
    monkeypatch.setattr(core, "LIBRARY", str(tmp_path / "two.so"))
    with pytest.raises(RuntimeError, match=r"'lib.a' \(cpu\) \(and 1 more of its targets\) is already registered"):
        core._begen_register_targets(HANDLERS, lambda *a: None)


def test_the_same_target_on_another_platform_is_not_a_duplicate(shared, monkeypatch, tmp_path):
    monkeypatch.setattr(core, "LIBRARY", str(tmp_path / "cpu.so"))
    core._begen_register_targets((("lib.a", "s", "cpu"),), lambda *a: None)
    monkeypatch.setattr(core, "LIBRARY", str(tmp_path / "cuda.so"))
    core._begen_register_targets((("lib.a", "s", "CUDA"),), lambda *a: None)
    assert len(shared.targets) == 2


def test_a_failed_registration_is_not_recorded(shared, monkeypatch, tmp_path):
    monkeypatch.setattr(core, "LIBRARY", str(tmp_path / "lib.so"))

    def fail(target, symbol, platform):
        if target == "lib.b":
            raise ValueError("XLA said no")

    with pytest.raises(ValueError, match="XLA said no"):
        core._begen_register_targets(HANDLERS, fail)
    assert set(shared.targets) == {("lib.a", "cpu")}


def test_the_batching_rule_puts_the_new_axis_in_front(jax_cpu):
    # vmap of `primitives`' and `sharding`'s primitives: a batched input's
    # axis moves to the front, an unbatched input is broadcast to its size.
    a = np.arange(24.0).reshape(2, 3, 4)
    b = np.arange(5.0)
    c = np.arange(6.0).reshape(3, 2)
    size, moved = core._begen_batch_front([a, b, c], [1, None, 0])
    assert size == 3
    assert [m.shape for m in moved] == [(3, 2, 4), (3, 5), (3, 2)]
    np.testing.assert_array_equal(moved[0], np.moveaxis(a, 1, 0))
    np.testing.assert_array_equal(moved[1], np.broadcast_to(b, (3, 5)))
    np.testing.assert_array_equal(moved[2], c)
