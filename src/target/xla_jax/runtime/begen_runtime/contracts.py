"""Section `contracts` (a typed kernel): inputs and outputs checked against
their dtype and shape contracts, consts resolved, outputs inferred.

Above the `# begen: emit below` line: only what this file needs on its own.
"""

import jax as _jax
import numpy as _np

from .core import _begen_dtype, _begen_honest, _begen_show

# begen: emit below

# Tensor contracts (typed tokens). Run at trace time only: under jit they
# cost nothing per call. Every error names the kernel and the parameter.


def _begen_same(a, b):
    # Extents may be symbolic (jax.export): an undecidable comparison is
    # left to the handler, which checks the real values.
    try:
        return bool(a == b)
    except Exception:
        return True


def _begen_match(fn, x, name, dtype, dims, d, c, what):
    # Checks one array or struct against its contract; fills the dimension
    # values `d` and the type consts `c` it determines.
    got = _begen_dtype(x)
    if isinstance(dtype, tuple):
        k = dtype[0]
        if c.get(k) is None:
            c[k] = got
        dtype = c[k]
    if dtype is not None and got != dtype:
        raise TypeError(f"{fn}: {what} '{name}' must be {dtype}, got {got}")
    if dims is None:
        return
    shape = tuple(x.shape)
    lead = 0
    if dims and isinstance(dims[0], str) and dims[0].startswith("..."):
        # A rest (`...` or `rows...`): any leading extents, one shape per
        # kernel and name, then the trailing dimensions.
        rest, dims = dims[0], dims[1:]
        if len(shape) < len(dims):
            raise ValueError(
                f"{fn}: {what} '{name}' must have rank at least {len(dims)} "
                f"(shape [{', '.join(map(str, (_begen_rest_text(rest),) + dims))}]), got shape {shape}"
            )
        lead = len(shape) - len(dims)
        _begen_dim(fn, d, rest, shape[:lead], f"from '{name}'", f"{what} '{name}' has {shape[:lead]}")
        shape = shape[lead:]
    elif len(shape) != len(dims):
        raise ValueError(
            f"{fn}: {what} '{name}' must have rank {len(dims)} (shape [{', '.join(map(str, dims))}]), "
            f"got shape {shape}"
        )
    for axis, (want, v) in enumerate(zip(dims, shape), lead):
        if isinstance(want, int):
            if not _begen_same(v, want):
                raise ValueError(f"{fn}: {what} '{name}' dimension {axis} must be {want}, got {v}")
        else:
            _begen_dim(fn, d, want, v, f"from '{name}' axis {axis}", f"{what} '{name}' has {v} at axis {axis}")


def _begen_rest_text(rest):
    # A rest as the contract writes it: `...` or `rows...`.
    return rest[3:] + "..."


def _begen_dim(fn, d, dim, v, where, said):
    # Records dimension `dim`'s value `v`, found `where`, or checks it against
    # the value recorded first; `said` is how an error quotes `v`. A rest's
    # value is its leading extents, a tuple.
    if dim in d:
        seen, first = d[dim]
        if not _begen_same(v, seen):
            if dim.startswith("..."):
                raise ValueError(f"{fn}: leading dimensions '{_begen_rest_text(dim)}' are {seen} ({first}) but {said}")
            raise ValueError(f"{fn}: dimension '{dim}' is {seen} ({first}) but {said}")
    else:
        d[dim] = (v, where)


def _begen_inputs(fn, arrays, specs, consts):
    # Checks the inputs against their contracts and resolves the consts:
    # returns (dimension values, const values as canonical text).
    _begen_honest(fn, arrays, [spec[0] for spec in specs])
    c = {}
    for name, py, kind, given, allowed in consts:
        if given is None:
            c[name] = None
        elif kind == "type":
            try:
                c[name] = _np.dtype(given).name
            except TypeError:
                raise TypeError(f"{fn}: {py}= takes a dtype, one of {', '.join(allowed)}; got {given!r}") from None
        elif kind == "bool":
            if not isinstance(given, (bool, _np.bool_)):
                raise TypeError(f"{fn}: {py}= takes True or False, got {given!r}")
            c[name] = "true" if given else "false"
        else:
            if isinstance(given, bool) or not isinstance(given, (int, _np.integer)):
                raise TypeError(f"{fn}: {py}= takes an integer, one of {', '.join(allowed)}; got {given!r}")
            c[name] = str(int(given))
    d = {}
    for x, (name, dtype, dims) in zip(arrays, specs):
        if not hasattr(x, "dtype") or not hasattr(x, "shape"):
            x = _jax.numpy.asarray(x)
        _begen_match(fn, x, name, dtype, dims, d, c, "parameter")
    for name, py, kind, given, allowed in consts:
        if c[name] not in allowed:
            what = f"dtype {c[name]}" if kind == "type" and given is None else f"{py}={c[name]}"
            raise ValueError(f"{fn}: {what} is not instantiated; {py} is one of {', '.join(allowed)}")
    return d, c


def _begen_outputs(fn, out, specs, d, c):
    # The outputs' shape/dtype structs: checked against their contracts
    # when given, inferred from the inputs when not.
    n = len(specs)
    if out is None:
        structs = []
        for name, dtype, dims in specs:
            if isinstance(dtype, tuple):
                dtype = c[dtype[0]]
            unknown = [w for w in dims if not isinstance(w, int) and w not in d] if dims is not None else None
            if dtype is None or dims is None or unknown:
                if unknown and unknown[0].startswith("..."):
                    why = f"leading dimensions '{_begen_rest_text(unknown[0])}' are"
                else:
                    why = f"dimension '{unknown[0]}' is" if unknown else "its shape is"
                raise TypeError(f"{fn}: out= is required: {why} not known from the inputs for output '{name}'")
            shape = ()
            for w in dims:
                if isinstance(w, int):
                    shape += (w,)
                elif w.startswith("..."):
                    shape += tuple(d[w][0])
                else:
                    shape += (d[w][0],)
            structs.append(_jax.ShapeDtypeStruct(shape, dtype))
        return structs
    if n == 1:
        out = (out,)
    elif not isinstance(out, (tuple, list)) or len(out) != n:
        raise TypeError(f"{fn}: out= takes a tuple of {n} jax.ShapeDtypeStruct, one per output")
    for s, (name, _, _) in zip(out, specs):
        if not hasattr(s, "shape") or not hasattr(s, "dtype"):
            takes = "a jax.ShapeDtypeStruct" if n == 1 else f"a tuple of {n} jax.ShapeDtypeStruct, one per output"
            raise TypeError(f"{fn}: out= takes {takes}; got {_begen_show(s)} for output '{name}'")
    for s, (name, dtype, dims) in zip(out, specs):
        _begen_match(fn, s, name, dtype, dims, d, c, "output")
    return list(out)


def _begen_size(fn, d, name, value):
    # An integer attribute named like a dimension: it gives an output's
    # dimension its value, and must agree with an input's extent (a kernel
    # told a larger `n` than its input has would read past the buffer).
    if isinstance(value, bool) or not isinstance(value, (int, _np.integer)):
        raise TypeError(f"{fn}: attribute '{name}' sizes dimension '{name}': it takes an integer, got {value!r}")
    if value < 0:
        raise ValueError(f"{fn}: attribute '{name}' sizes dimension '{name}': it must not be negative, got {value}")
    _begen_dim(fn, d, name, int(value), f"from attribute '{name}'", f"attribute '{name}' is {value}")


def _begen_like(x):
    # The struct of an in-place tensor's result, or of an output like a
    # list's element: its input's. A Python number is an array of the
    # dtype the FFI call gives it (JAX's default for its kind).
    dtype = x.dtype if hasattr(x, "dtype") else _jax.numpy.result_type(x)
    return _jax.ShapeDtypeStruct(_np.shape(x), dtype)


def _begen_key(name, c):
    # The TARGETS key of a template kernel's instance.
    return f"{name}[{','.join(f'{k}={v}' for k, v in c.items())}]"
