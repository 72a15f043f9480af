"""Section `natives` (a kernel with XLA FFI types that takes a string
attribute or an `ffi::Dictionary`): string attributes checked, and the
free keywords of a dictionary checked before XLA gets them.

Above the `# begen: emit below` line: only what this file needs on its own.
"""

import ctypes as _ctypes

import jax as _jax
import numpy as _np

from .core import _begen_show, _begen_text

# begen: emit below


def _begen_str(value, where):
    # A string attribute (`std::string_view`): a str, passed as it is; XLA
    # takes UTF-8 text, which a lone surrogate (`os.fsdecode` of a name
    # that is not UTF-8) has no encoding in.
    if not isinstance(value, str):
        raise TypeError(f"{where} takes a str, got {_begen_show(value)}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(
            f"{where} takes UTF-8 text, got {value!r}: a lone surrogate at index {e.start} (os.fsdecode of "
            f"bytes that are not UTF-8 makes one); decode the bytes with errors='replace', or pass them as an array"
        ) from None
    return str(value)


def _begen_attr_value(where, value):
    # One value of a dictionary attribute, as jax can encode it: a bool, an
    # integer within int64, a float, UTF-8 text, an array, or a dict of
    # these by str keys; anything else is refused here, by name, rather
    # than by jax or XLA without one.
    if isinstance(value, (bool, _np.bool_, float, _np.floating, _np.ndarray)):
        return
    if isinstance(value, (int, _np.integer)):
        if not -(2**63) <= int(value) < 2**63:
            raise ValueError(f"{where} is {value}, outside int64, the range XLA's integer attributes hold")
        return
    if isinstance(value, str):
        _begen_str(value, where)
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"{where} is a dict with the key {_begen_text(k)}: a dictionary attribute's keys are str")
            _begen_attr_value(f"{where}, key '{k}'", v)
        return
    raise TypeError(
        f"{where} takes a bool, an int, a float, a str, a numpy array or a dict of them, got {_begen_show(value)}"
    )


def _begen_attrs(shown, attrs):
    # The free keywords of a kernel that takes an `ffi::Dictionary`: each
    # name an ASCII identifier (XLA's attribute names), each value one jax
    # can encode, passed as it is (jax makes the attribute; the kernel
    # reads it by name).
    for name, value in attrs.items():
        if not (isinstance(name, str) and name.isascii() and name.isidentifier()):
            raise TypeError(f"{shown}: attribute name {_begen_text(name)} is not an ASCII identifier")
        _begen_attr_value(f"{shown}: attribute '{name}'", value)
    return attrs


def _begen_register_stateful(lib, target, symbol, platform, states):
    # Registers one target; a kernel with per-executable state registers its
    # state type first (once per type: kernels may share one), then the
    # bundle of its instantiate and execute handlers.
    state = states.get(symbol)
    if state is None:
        _jax.ffi.register_ffi_target(target, _jax.ffi.pycapsule(getattr(lib, symbol)), platform=platform)
        return
    instantiate, type_id, type_info = state

    def pointer(name):
        fn = getattr(lib, name)
        fn.restype = _ctypes.c_void_p
        return fn()

    key = (pointer(type_id), platform)
    if key not in _begen_state_types:
        # jaxlib registers the targets queued before its backend starts
        # ahead of the queued types, and XLA refuses a handler whose state
        # type it does not know yet: the backend starts first, so both are
        # registered at once, the type first (no such backend: no call runs).
        try:
            _jax.devices(platform.lower())
        except RuntimeError:
            pass
        _jax.ffi.register_ffi_type(
            f"{target}.state",
            {"type_id": _jax.ffi.pycapsule(key[0]), "type_info": _jax.ffi.pycapsule(pointer(type_info))},
            platform=platform,
        )
        _begen_state_types.add(key)
    handlers = {
        "instantiate": _jax.ffi.pycapsule(getattr(lib, instantiate)),
        "execute": _jax.ffi.pycapsule(getattr(lib, symbol)),
    }
    _jax.ffi.register_ffi_target(target, handlers, platform=platform)


# The state types registered with XLA, as (type id address, platform).
_begen_state_types = set()
