"""jax's cpu_examples over begen's generated functions.

Wrappers that remain, and why:
- `array_attr(num)`: the example's API builds the attribute from `num`;
- `aliasing(x)`: the alias of a native kernel's input to its output is not
  declared to begen yet (`input_output_aliases` given here).
"""

import jax
import numpy as np
from begen_ffi_example._lib import lib


def array_attr(num: int):
    return lib.ArrayAttrImpl(array=np.arange(num, dtype=np.int32))


# The generated function itself: its free keywords are the dictionary.
dictionary_attr = lib.DictionaryAttrImpl


def counter(index):
    return lib.CounterImpl(index=int(index))


def aliasing(x):
    lib.register()
    return jax.ffi.ffi_call(
        lib.TARGETS["AliasingImpl"], jax.ShapeDtypeStruct(x.shape, x.dtype), input_output_aliases={0: 0}
    )(x)
