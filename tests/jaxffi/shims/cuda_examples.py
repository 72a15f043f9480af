"""jax's cuda_examples over begen's generated functions.

Kept from upstream's Python: the `jax.custom_vjp` and the `n` attribute
computed from the shape. Upstream's `FooBwdHost` declares `b_plus_1` as a
`ffi::ResultBuffer` but binds it as an input; its annotation's tokens bind
it so (prepare.py), and the backward call passes it as an input.
"""

import jax
import jax.numpy as jnp
import numpy as np
from begen_ffi_example._lib import lib


def foo_fwd(a, b):
    assert a.dtype == jnp.float32
    assert a.shape == b.shape
    n = int(np.prod(a.shape))
    like = jax.ShapeDtypeStruct(a.shape, a.dtype)
    c, b_plus_1 = lib.FooFwdHost(a, b, n=n, out=(like, like))
    return c, (a, b_plus_1)


def foo_bwd(res, c_grad):
    a, b_plus_1 = res
    n = int(np.prod(a.shape))
    like = jax.ShapeDtypeStruct(a.shape, a.dtype)
    return lib.FooBwdHost(c_grad, a, b_plus_1, n=n, out=(like, like))


@jax.custom_vjp
def foo(a, b):
    c, _ = foo_fwd(a, b)
    return c


foo.defvjp(foo_fwd, foo_bwd)
