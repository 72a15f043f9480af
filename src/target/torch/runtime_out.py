# The out= helpers of <NAME>_torch.py, after its loader (runtime.py, which
# imports torch as _torch), in a module that has an out= op.


def _begen_dtype(name, out, dtype):
    # A spec's dtype as torch's: a torch.dtype, or a name torch has one of
    # (a string, a numpy dtype or scalar type, as jax.ShapeDtypeStruct has).
    if isinstance(dtype, _torch.dtype):
        return dtype
    key = dtype if isinstance(dtype, str) else getattr(dtype, "name", getattr(dtype, "__name__", None))
    got = getattr(_torch, key, None) if isinstance(key, str) else None
    if not isinstance(got, _torch.dtype):
        raise TypeError(f"{name}: output '{out}': dtype {dtype!r} is no torch dtype")
    return got


def _begen_outs(name, names, out, like):
    """The outputs of an out= op, one per name in `names`: each given as a
    tensor (written in place, on the device of the first input `like`) or
    as a spec with `.shape` and `.dtype` (a new tensor on that device)."""
    n = len(names)
    takes = (
        "a tensor or a spec with .shape and .dtype"
        if n == 1
        else f"a tuple of {n} tensors or specs with .shape and .dtype, one per output"
    )
    if n == 1:
        out = (out,)
    elif not isinstance(out, (tuple, list)) or len(out) != n:
        raise TypeError(f"{name}: out= takes {takes}; got {type(out).__name__}")
    result = []
    for o, p in zip(out, names):
        if isinstance(o, _torch.Tensor):
            if o.device != like.device:
                raise ValueError(f"{name}: output '{p}' is on {o.device}, but the inputs are on {like.device}")
            result.append(o)
            continue
        shape, dtype = getattr(o, "shape", None), getattr(o, "dtype", None)
        if shape is None or dtype is None:
            raise TypeError(f"{name}: out= takes {takes}; got {type(o).__name__} for output '{p}'")
        try:
            shape = tuple(int(s) for s in shape)
        except (TypeError, ValueError):
            raise TypeError(f"{name}: output '{p}': shape {shape!r} is not a sequence of integers") from None
        if any(s < 0 for s in shape):
            raise ValueError(f"{name}: output '{p}': shape {shape} has a negative extent")
        result.append(_torch.empty(shape, dtype=_begen_dtype(name, p, dtype), device=like.device))
    return result


def _begen_no_autograd(name, inputs, outs):
    """Refuses a call that autograd would need to see through: an out= op
    has no autograd formula (its outputs are the caller's tensors), so a
    gradient through it would be silently missing."""
    if not _torch.is_grad_enabled():
        return
    for t in (*inputs, *outs):
        if t.requires_grad:
            raise NotImplementedError(
                f"{name}: no autograd for an op whose outputs the caller gives (out=): "
                "call it under torch.no_grad() or on tensors that do not require grad"
            )
