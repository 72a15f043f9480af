"""Section `natives` (a kernel with XLA FFI types that takes a string
attribute or an `ffi::Dictionary`): string attributes checked, and the
free keywords of a dictionary checked before XLA gets them.

Above the `# begen: emit below` line: only what this file needs on its own.
"""

from .core import _begen_show, _begen_text

# begen: emit below


def _begen_str(value, where):
    # A string attribute (`std::string_view`): a str, passed as it is.
    if not isinstance(value, str):
        raise TypeError(f"{where} takes a str, got {_begen_show(value)}")
    return str(value)


def _begen_attrs(shown, attrs):
    # The free keywords of a kernel that takes an `ffi::Dictionary`: each
    # name an ASCII identifier (XLA's attribute names), each value passed
    # as it is (jax makes the attribute; the kernel reads it by name).
    for name in attrs:
        if not (isinstance(name, str) and name.isascii() and name.isidentifier()):
            raise TypeError(f"{shown}: attribute name {_begen_text(name)} is not an ASCII identifier")
    return attrs
