"""Section `vjp` (a kernel with a backward kernel, begen.yaml's `vjp:`): the
jax.custom_vjp that calls it.

Above the `# begen: emit below` line: only what this file needs on its own.
"""

import jax as _jax

# begen: emit below

# Gradients. Run at trace time.


def _begen_aval(x):
    # The shape/dtype struct of an array or a Python number.
    return _jax.ShapeDtypeStruct(_jax.numpy.shape(x), _jax.numpy.result_type(x))


def _begen_inexact(x):
    return _jax.numpy.issubdtype(_jax.numpy.result_type(x), _jax.numpy.inexact)


def _begen_typed_like(g, x):
    # Cotangent `g` with the sharding type of its primal input `x`: jax
    # requires a custom_vjp's cotangents to have the inputs' types, and
    # under explicit mesh axes a backward kernel that is not split (no
    # `shard:`) returns whole arrays for an input split across devices.
    # Resharded to the input's split where the two differ; as is where the
    # types say nothing (auto axes, one device, a jax without
    # jax.sharding.reshard).
    reshard = getattr(_jax.sharding, "reshard", None)
    if g is None or reshard is None:
        return g
    try:
        want, have = _jax.typeof(x).sharding, _jax.typeof(g).sharding
        mesh = want.mesh
        if mesh is None or getattr(mesh, "empty", True):
            return g
        rank = _jax.numpy.ndim(x)
        pad = lambda spec: tuple(spec) + (None,) * (rank - len(tuple(spec)))
        if pad(want.spec) == pad(getattr(have, "spec", ())):
            return g
    except (AttributeError, TypeError):
        return g
    return reshard(g, want)


def _begen_vjp(primal, backward, args, n_out):
    # A jax.custom_vjp of `primal` whose backward pass calls the backward
    # kernel with the inputs and one cotangent per output. An integer input
    # gets no cotangent (None: zero); an integer output's float0 cotangent
    # reaches the kernel as zeros of its dtype.
    f = _jax.custom_vjp(primal)

    def fwd(*a):
        out = primal(*a)
        outs = out if n_out > 1 else (out,)
        return out, (a, tuple(None if _begen_inexact(o) else _jax.numpy.zeros_like(o) for o in outs))

    def bwd(res, ct):
        a, zeros = res
        cts = tuple(ct) if n_out > 1 else (ct,)
        cts = tuple(z if z is not None else c for c, z in zip(cts, zeros))
        grads = backward(*a, *cts)
        grads = tuple(grads) if len(a) > 1 else (grads,)
        return tuple(_begen_typed_like(g, x) if _begen_inexact(x) else None for x, g in zip(a, grads))

    f.defvjp(fwd, bwd)
    return f(*args)


def _begen_vjp_res(primal, backward, args, public, n_out):
    # A jax.custom_vjp of a kernel whose backward kernel takes residuals:
    # `primal` returns all `n_out` outputs, the function the outputs at the
    # positions `public`; the backward pass calls `backward(*inputs,
    # outputs, cotangents)`, which binds them by name. Integer inputs and
    # outputs are treated as in `_begen_vjp`.
    def split(out):
        outs = tuple(out) if n_out > 1 else (out,)
        kept = tuple(outs[k] for k in public)
        return outs, (kept if len(public) > 1 else kept[0]), kept

    f = _jax.custom_vjp(lambda *a: split(primal(*a))[1])

    def fwd(*a):
        outs, returned, kept = split(primal(*a))
        return returned, (a, outs, tuple(None if _begen_inexact(o) else _jax.numpy.zeros_like(o) for o in kept))

    def bwd(res, ct):
        a, outs, zeros = res
        cts = tuple(ct) if len(public) > 1 else (ct,)
        cts = tuple(z if z is not None else c for c, z in zip(cts, zeros))
        grads = backward(*a, outs, cts)
        grads = tuple(grads) if len(a) > 1 else (grads,)
        return tuple(_begen_typed_like(g, x) if _begen_inexact(x) else None for x, g in zip(a, grads))

    f.defvjp(fwd, bwd)
    return f(*args)
