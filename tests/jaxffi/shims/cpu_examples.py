"""jax's cpu_examples over begen's generated functions.

Wrappers that remain, and why:
- `array_attr(num)`: the example's API builds the attribute from `num`.
"""

import numpy as np
from begen_ffi_example._lib import lib


def array_attr(num: int):
    return lib.ArrayAttrImpl(array=np.arange(num, dtype=np.int32))


# The generated function itself: its free keywords are the dictionary.
dictionary_attr = lib.DictionaryAttrImpl


def counter(index):
    return lib.CounterImpl(index=int(index))


# The generated function itself: `inout` over the input and its result
# aliases them (`input_output_aliases={0: 0}`).
aliasing = lib.AliasingImpl
