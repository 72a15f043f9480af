"""Section `core`: the XLA FFI version gate and the x64 check."""

import types

import numpy as np
import pytest
from begen_runtime import core


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
    assert "BEGEN_PYTHON=" in text and f"whose XLA FFI API is {built}." in text


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
