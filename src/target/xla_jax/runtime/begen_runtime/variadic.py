"""Section `variadic` (a kernel with XLA FFI types that takes
`ffi::RemainingArgs` or `ffi::RemainingRets`): the list of its variadic
inputs and the `out=` of its variadic outputs checked.

Above the `# begen: emit below` line: only what this file needs on its own.
"""

from .core import _begen_honest, _begen_show

# begen: emit below


def _begen_rest_inputs(fn, xs, name):
    # The variadic inputs of a kernel (`ffi::RemainingArgs`): a list or
    # tuple of arrays (any number), each checked like an input, as 'xs[k]'.
    if not isinstance(xs, (list, tuple)):
        raise TypeError(f"{fn}: parameter '{name}' takes a list or tuple of arrays, got {_begen_show(xs)}")
    _begen_honest(fn, xs, [f"{name}[{k}]" for k in range(len(xs))])


def _begen_rest_out(out, n, message):
    # out= of a kernel with variadic outputs (`ffi::RemainingRets`): a list
    # or tuple of at least `n` structs (the other outputs'), then one per
    # variadic output.
    if not isinstance(out, (list, tuple)) or len(out) < n:
        raise TypeError(f"{message}; got {_begen_show(out)}")
    for s in out:
        if not hasattr(s, "shape") or not hasattr(s, "dtype"):
            raise TypeError(f"{message}; got {_begen_show(s)}")
