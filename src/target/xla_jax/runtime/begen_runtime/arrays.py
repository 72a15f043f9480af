"""Section `arrays` (a kernel with an array attribute): a sequence or a 1-D
array converted element by element into the 1-D array XLA gets.

Above the `# begen: emit below` line: only what this file needs on its own.
"""

import numpy as _np

from .core import _begen_dtype, _begen_show

# begen: emit below


def _begen_array(value, dtype, wire, convert, where):
    # An array attribute: a list or tuple of numbers, each converted like an
    # attribute of the element type, or a 1-D array of exactly that dtype.
    # XLA gets a 1-D numpy array of `wire` (bools as bytes, 16-bit floats as
    # their bits, complex numbers as [real, imag] pairs).
    if isinstance(value, (list, tuple)):
        parts = [convert(v, f"{where}, element {k}") for k, v in enumerate(value)]
        return _np.array(parts, dtype=wire).reshape(-1)
    if not (hasattr(value, "shape") and hasattr(value, "dtype")):
        raise TypeError(f"{where} takes a list, a tuple or a 1-D array, got {_begen_show(value)}")
    try:
        array = _np.asarray(value)
    except Exception as e:  # a tracer: attributes are static
        raise TypeError(f"{where} takes an array known at trace time, got {_begen_show(value)}") from e
    if array.ndim != 1:
        raise ValueError(f"{where} takes a 1-D array, got shape {array.shape}")
    if _begen_dtype(array) != dtype:
        raise TypeError(f"{where} must be an array of {dtype}, got an array of {_begen_dtype(array)}")
    array = _np.ascontiguousarray(array)
    if dtype == "bool":
        return array.astype(_np.uint8)
    return array.view(wire).reshape(-1)
