import ctypes as _ctypes
import os as _os

import torch as _torch

#: The torch namespace of this library's ops: torch.ops.<NAMESPACE>.
NAMESPACE = "{NS}"

# The stable ABI's C shims are libtorch's, which torch opens privately
# (RTLD_LOCAL); opened again with RTLD_GLOBAL its symbols are visible to
# the library, which therefore links no libtorch and loads into any torch
# of the stable ABI it was compiled for.
# libtorch_cuda has the current-stream shim that CUDA ops use.
for _lib in ("libtorch_cpu.so", "libtorch_cuda.so"):
    _path = _os.path.join(_os.path.dirname(_torch.__file__), "lib", _lib)
    if _os.path.exists(_path):
        _ctypes.CDLL(_path, mode=_ctypes.RTLD_GLOBAL)
_torch.ops.load_library(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "{LIB}"))
_ops = getattr(_torch.ops, NAMESPACE)


from torch.autograd import forward_ad as _fwAD


def _begen_no_forward_ad(name, *tensors):
    """Refuses forward-mode AD (torch.func.jvp, forward_ad dual tensors):
    torch.library has no forward-mode formula for a custom op, and the
    dispatcher would drop the tangents, giving zeros. The check costs one
    attribute read outside a dual level."""
    if _fwAD._current_level >= 0 and any(_fwAD.unpack_dual(t).tangent is not None for t in tensors):
        raise NotImplementedError(
            f"{name}: no forward-mode derivative in torch (torch.func.jvp, torch.autograd.forward_ad): "
            "torch.library registers reverse mode only for custom ops, and torch would drop the tangents; "
            "use reverse mode (torch.autograd.grad, torch.func.vjp) or the JAX side's jax.jvp"
        )


def _begen_vmap_one(op, outs, in_dims, args, kwargs):
    # One call per element of the batch, the results stacked at axis 0.
    size = next(a.shape[d] for a, d in zip(args, in_dims) if d is not None)
    results = []
    for b in range(size):
        sliced = [a if d is None else a.select(d, b).contiguous() for a, d in zip(args, in_dims)]
        r = op(*sliced, **kwargs)
        results.append(r if isinstance(r, tuple) else (r,))
    stacked = tuple(_torch.stack([r[k] for r in results]) for k in range(outs))
    return (stacked[0], 0) if outs == 1 else (stacked, (0,) * outs)


def _begen_vmap(name, outs, fold=None):
    """torch.func.vmap's rule of op `name` (`outs` outputs): the sequential
    rule (one call per element), or with `fold` ((input, axis) pairs, each
    output's axis) one call with the batch folded into that dimension
    (batch-major), as the JAX side's `vmap: fold`, where only folded inputs
    are batched."""
    op = getattr(_ops, name).default

    def rule(info, in_dims, *args, **kwargs):
        if fold is not None:
            folded, out_axes = fold
            axes = dict(folded)
            if all(d is None or k in axes for k, d in enumerate(in_dims)):
                size = info.batch_size
                new = list(args)
                for k, axis in folded:
                    a, d = args[k], in_dims[k]
                    if d is None:
                        a, d = a.expand(size, *a.shape), 0
                    a = a.movedim(d, axis)
                    s = a.shape
                    new[k] = a.reshape(*s[:axis], s[axis] * s[axis + 1], *s[axis + 2 :]).contiguous()
                r = op(*new, **kwargs)
                r = r if isinstance(r, tuple) else (r,)
                split = tuple(
                    o.reshape(*o.shape[:a], size, o.shape[a] // size, *o.shape[a + 1 :]) for o, a in zip(r, out_axes)
                )
                return (split[0], out_axes[0]) if outs == 1 else (split, tuple(out_axes))
        return _begen_vmap_one(op, outs, in_dims, args, kwargs)

    _torch.library.register_vmap(f"{NAMESPACE}::{name}", rule)

