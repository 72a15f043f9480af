"""jax's rms_norm example over begen's generated functions.

Kept from upstream's Python: the `jax.custom_vjp` (begen's `vjp:` with
residuals is what would replace it) and the output shapes (`out=`), which
begen's functions take where an output is not shaped by a contract.
"""

from functools import partial

import jax
from begen_ffi_example._lib import lib


def _like(x):
    return jax.ShapeDtypeStruct(x.shape, x.dtype)


@partial(jax.custom_vjp, nondiff_argnums=(1,))
def rms_norm(x, eps=1e-5):
    return lib.RmsNormDispatch(x, eps=eps, out=_like(x))


def rms_norm_fwd(x, eps=1e-5):
    y, res = lib.RmsNormFwdDispatch(x, eps=eps, out=(_like(x), jax.ShapeDtypeStruct(x.shape[:-1], x.dtype)))
    return y, (res, x)


def rms_norm_bwd(eps, res, ct):
    del eps
    res, x = res
    return (lib.RmsNormBwdDispatch(res, x, ct, out=_like(ct)),)


rms_norm.defvjp(rms_norm_fwd, rms_norm_bwd)
