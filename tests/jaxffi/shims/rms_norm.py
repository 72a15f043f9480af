"""jax's rms_norm example over begen's generated functions.

The `jax.custom_vjp` is begen's: `RmsNormFwdDispatch` has
`vjp: RmsNormBwdDispatch` and `residuals: [res]` (prepare.py's begen.yaml),
so it returns `y` only, keeps `res` for the backward kernel, and binds
upstream's residual-first `RmsNormBwdDispatch(res, x, ct_y)` by name. Kept
from upstream's Python: the output shapes (`out=`), which begen's functions
take where an output is not shaped by a contract (upstream's buffers are
`ffi::AnyBuffer`).
"""

import jax
from begen_ffi_example._lib import lib


def rms_norm(x, eps=1e-5):
    shapes = (jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct(x.shape[:-1], x.dtype))
    return lib.RmsNormFwdDispatch(x, eps=eps, out=shapes)
