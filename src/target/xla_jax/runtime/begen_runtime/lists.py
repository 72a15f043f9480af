"""Section `lists` (a binary kernel taking a list of arrays): the list's
elements checked like inputs, and the hidden result its words go to.

Above the `# begen: emit below` line: only what this file needs on its own.
"""

import jax as _jax
import numpy as _np

from .contracts import _begen_inputs

# begen: emit below


def _begen_list_inputs(fn, arrays, specs, consts):
    # _begen_inputs for a kernel with lists of arrays (their specs marked:
    # True, a binary kernel's list of at least one array; False, a
    # `BE::Tensors` that may be empty): each list a list or tuple, each
    # element checked against the list's contract and named 'xs[k]'.
    flat_arrays, flat_specs = [], []
    for x, spec in zip(arrays, specs):
        name, dtype, dims = spec[:3]
        if len(spec) < 4:
            flat_arrays.append(x)
            flat_specs.append(spec)
            continue
        if not isinstance(x, (list, tuple)):
            raise TypeError(f"{fn}: parameter '{name}' takes a list or tuple of arrays, got {type(x).__name__}")
        if not x and spec[3]:
            raise ValueError(f"{fn}: parameter '{name}' is an empty list; the kernel takes at least one array")
        if len(x) > 2**31 - 1:
            raise ValueError(f"{fn}: parameter '{name}' lists {len(x)} arrays; the kernel's length is an int32")
        flat_arrays.extend(x)
        flat_specs.extend((f"{name}[{k}]", dtype, dims) for k in range(len(x)))
    return _begen_inputs(fn, flat_arrays, flat_specs, consts)


def _begen_words(xs, words):
    # The hidden result a list's handler writes its (1 + 2n) 64-bit words
    # per element into: bytes, so that it is the same with x64 off.
    return _jax.ShapeDtypeStruct((8 * words * len(xs),), _np.uint8)
