"""Section `scalars` (a kernel with an attribute): converting an attribute
value to its declared type.

Above the `# begen: emit below` line: only what this file needs on its own.
"""

import numpy as _np

from .core import _begen_show, _begen_text

# begen: emit below

# Attribute conversion. Values must fit the declared type exactly: a
# fraction, an out-of-range value, an integer a float type cannot hold or a
# non-number is an error naming the kernel, the attribute and its type
# (`where`), raised before XLA sees it. A float is rounded to a narrower
# float type (rounding is not range).
# Runs at trace time only.


def _begen_kind(value, where):
    # (numpy kind letter, plain Python value) of a number or a 0-d array.
    if isinstance(value, bool):
        return "b", value
    if isinstance(value, int):
        return "i", value
    if isinstance(value, float):
        return "f", value
    if isinstance(value, complex):
        return "c", value
    if getattr(value, "shape", None) == () and hasattr(value, "dtype"):
        try:
            array = _np.asarray(value)
        except Exception as e:  # a tracer: attributes are static
            raise TypeError(f"{where} takes a number known at trace time, got {_begen_show(value)}") from e
        kind = array.dtype.kind
        if kind in "biufc":
            return kind, array.item()
        if kind == "V" and array.dtype.name.startswith(("float", "bfloat")):  # ml_dtypes
            return "f", float(array.astype(_np.float64))
    raise TypeError(f"{where} takes a number, got {_begen_show(value)}")


def _begen_int(value, dtype, where):
    kind, v = _begen_kind(value, where)
    if kind == "f" and v.is_integer():
        v = int(v)
    elif kind not in "biu":
        raise (ValueError if kind == "f" else TypeError)(
            f"{where} takes a whole number, got {_begen_show(value)}"
        )
    info = _np.iinfo(dtype)
    if not info.min <= v <= info.max:
        raise ValueError(f"{where}: {_begen_text(v)} is out of range [{info.min}, {info.max}]")
    if v > 2**63 - 1:
        # JAX builds integer attributes through int64 (MLIR's Python API) and
        # fails with std::bad_cast on larger uint64 values.
        raise ValueError(f"{where}: {v} is above 2**63 - 1, the largest integer JAX can pass as an attribute")
    return dtype(v)


def _begen_bool(value, where):
    kind, v = _begen_kind(value, where)
    if kind not in "biu":
        raise TypeError(f"{where} takes True or False, got {_begen_show(value)}")
    if v not in (0, 1):
        raise ValueError(f"{where} takes True or False (or 0/1), got {_begen_show(value)}")
    return _np.bool_(v)


def _begen_real(kind, v, value, where):
    # A real number as a Python float: one too large for a float64 (a huge
    # int, a longdouble) is out of range, never silently infinite.
    try:
        f = float(v)
    except OverflowError:
        raise ValueError(f"{where}: {_begen_text(value)} is out of range") from None
    if _np.isinf(f) and not (kind == "f" and _np.isinf(v)):
        raise ValueError(f"{where}: {_begen_text(value)} is out of range")
    return f


def _begen_exact(kind, v, out, dtype, where):
    # An integer must reach a float type exactly: 16777217 has no float32.
    if kind in "iu" and _np.isfinite(out) and int(out) != v:
        name = _np.dtype(dtype).name
        raise ValueError(
            f"{where}: the integer {v} has no exact {name} value (it would round to {float(out)!r}); "
            "pass a float to accept the rounding"
        )


def _begen_float(value, dtype, where):
    kind, v = _begen_kind(value, where)
    if kind not in "biuf":
        raise TypeError(f"{where} takes a real number, got {_begen_show(value)}")
    f = _begen_real(kind, v, value, where)
    with _np.errstate(over="ignore"):
        out = dtype(f)
    if _np.isinf(out) and not _np.isinf(f):
        raise ValueError(f"{where}: {f!r} is out of range (largest {_np.finfo(dtype).max!r})")
    _begen_exact(kind, v, out, dtype, where)
    return out


def _begen_half(value, dtype, wire, where):
    # A float C++ takes as its bits travels as them: checked like float32
    # (a real number, a finite one staying finite), then viewed as `wire`,
    # the unsigned integer dtype of its size.
    kind, v = _begen_kind(value, where)
    if kind not in "biuf":
        raise TypeError(f"{where} takes a real number, got {_begen_show(value)}")
    f = _begen_real(kind, v, value, where)
    with _np.errstate(over="ignore"):
        out = _np.asarray(f, dtype=dtype)
    if not _np.isfinite(out.astype(_np.float32)) and _np.isfinite(f):  # inf, or NaN where there is no inf
        raise ValueError(f"{where}: {f!r} is out of range for a 16-bit float")
    _begen_exact(kind, v, out.astype(_np.float64)[()], dtype, where)
    return out.view(wire)[()]


def _begen_complex(value, dtype, where):
    # XLA attributes have no complex scalars: send [real, imag], each
    # checked like a float.
    kind, v = _begen_kind(value, where)
    if kind not in "biufc":
        raise TypeError(f"{where} takes a number, got {_begen_show(value)}")
    # An integer is the real part as itself, so that it is checked exactly.
    real, imag = (v, 0) if kind in "iu" else (complex(v).real, complex(v).imag)
    parts = _np.array([_begen_float(real, dtype, where), _begen_float(imag, dtype, where)], dtype=dtype)
    return parts
