"""`inputs:` of tests/e2e/tune_untyped: the kernel takes BE::Tensor, so begen
tune cannot make its inputs; this gives them, `out=`, and which output to
check (the transpose; output 1 is workspace each candidate fills its own
way)."""

import jax
import numpy as np


def transpose(kernel, dims, dtypes):
    n, m = int(dims["n"]), int(dims["m"])
    x = np.arange(n * m, dtype=np.float32).reshape(n, m)
    out = (jax.ShapeDtypeStruct((m, n), np.float32), jax.ShapeDtypeStruct((1,), np.int32))
    return (x,), {"out": out}, (0,)
