"""jax's cpu_examples over begen's generated functions.

Wrappers that remain, and why:
- `array_attr(num)`: the example's API builds the attribute from `num`;
- `dictionary_attr(**kwargs)`: begen's generated function does not yet take
  free keywords for an `ffi::Dictionary`, so it calls the target directly;
- `aliasing(x)`: the alias of a native kernel's input to its output is not
  declared to begen yet (`input_output_aliases` given here).
"""

import jax
import numpy as np
from begen_ffi_example._lib import lib


def array_attr(num: int):
    return lib.ArrayAttrImpl(array=np.arange(num, dtype=np.int32))


def dictionary_attr(**kwargs):
    lib.register()
    return jax.ffi.ffi_call(
        lib.TARGETS["DictionaryAttrImpl"],
        (jax.ShapeDtypeStruct((), np.int32), jax.ShapeDtypeStruct((), np.int32)),
    )(**kwargs)


def counter(index):
    return lib.CounterImpl(index=int(index))


def aliasing(x):
    lib.register()
    return jax.ffi.ffi_call(
        lib.TARGETS["AliasingImpl"], jax.ShapeDtypeStruct(x.shape, x.dtype), input_output_aliases={0: 0}
    )(x)
