"""Section `primitives` (a kernel with begen.yaml's `linear:` or `jvp:`): the
kernel as a JAX primitive with jvp, transpose, batching and lowering rules.

Above the `# begen: emit below` line: only what this file needs on its own.
"""

import threading as _threading

import jax as _jax
from jax.extend.core import Primitive as _JaxPrimitive

from .core import _begen_batch_front

# begen: emit below

# Kernels as JAX primitives. One primitive per FFI target, made on first use;
# each call binds it with its arrays and two parameters: `call` (this call's
# closures: the FFI call itself, the tangent and transpose kernels with the
# attributes given) and `batch` (one leading axis per vmap that batched it).
# Lowering traces the FFI call: the primal's HLO is the same custom call.

_begen_primitives = {}

# The inputs of the next kernel bound on this thread that hold zeros a jvp
# rule filled in (their tangents were symbolic zeros): set around a call of
# a tangent kernel, taken by its bind (section `joint` marks them, so that
# its group's transpose drops their cotangents instead of refusing an input
# of the group held fixed).
_begen_filled = _threading.local()


def _begen_take_filled():
    # The positions `_begen_filled` holds for this bind, once.
    zeros = getattr(_begen_filled, "zeros", ())
    _begen_filled.zeros = ()
    return zeros


class _BegenCall:
    # One call of a kernel. `raw(*arrays)` is its FFI call; `ins` and `outs`
    # its inputs' and outputs' (shape, dtype), unbatched; `linear` the inputs
    # it is linear in; `jvp(*a, *t, out=)` its tangent kernel (one tangent
    # per float input) or None; `transposes`: (k, the transpose kernel of
    # input k, `(*others, *cts, out=)`); `names` its inputs' names, for
    # errors; `fold` begen.yaml's `vmap: fold` or None: (the kernel's own
    # function `(*arrays, out=)`, (input position, axis) pairs, each
    # output's axis). Compared by identity, as a jaxpr's parameter.
    __slots__ = ("fold", "ins", "jvp", "linear", "name", "names", "outs", "raw", "transposes")

    def __init__(self, name, raw, ins, outs, linear, jvp, transposes, names, fold=None):
        self.name = name
        self.raw = raw
        self.ins = ins
        self.outs = outs
        self.linear = linear
        self.jvp = jvp
        self.transposes = transposes
        self.names = names
        self.fold = fold

    def __repr__(self):
        return self.name


def _begen_batched(fn, batch):
    # `fn` over leading batch axes, one per vmap; a tuple of results.
    for _ in batch:
        fn = _jax.vmap(fn)

    def run(*args):
        out = fn(*args)
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)

    return run


def _begen_fold(args, dims, call):
    # One call for a vmap whose batched inputs are all folded (`vmap:
    # fold`): each folded input's batch axis joins its dimension's axis
    # (batch-major, an unbatched one broadcast first), the kernel's own
    # function runs once on the larger dimension, and each output's axis
    # splits back into (batch, dimension). None where an input outside the
    # fold is batched: the call is then batched as any other.
    again, folded, out_axes = call.fold
    axes = dict(folded)
    if any(d is not None and k not in axes for k, d in enumerate(dims)):
        return None
    jnp = _jax.numpy
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    new = list(args)
    for k, axis in folded:
        a, d = args[k], dims[k]
        if d is None:
            a, d = jnp.broadcast_to(a, (size, *jnp.shape(a))), 0
        a = jnp.moveaxis(a, d, axis)
        s = a.shape
        new[k] = a.reshape((*s[:axis], s[axis] * s[axis + 1], *s[axis + 2 :]))
    structs = []
    for (shape, dtype), axis in zip(call.outs, out_axes):
        structs.append(_jax.ShapeDtypeStruct((*shape[:axis], size * shape[axis], *shape[axis + 1 :]), dtype))
    out = again(*new, out=structs[0] if len(structs) == 1 else tuple(structs))
    out = out if isinstance(out, (tuple, list)) else (out,)
    unfolded = [o.reshape((*o.shape[:a], size, o.shape[a] // size, *o.shape[a + 1 :])) for o, a in zip(out, out_axes)]
    return unfolded, list(out_axes)


def _begen_floating(x):
    return _jax.numpy.issubdtype(_jax.numpy.result_type(x), _jax.numpy.inexact)


def _begen_zero(x):
    # The symbolic zero tangent of `x`.
    from jax.interpreters import ad

    return ad.Zero(_jax.typeof(x).to_tangent_aval())


def _begen_jvp_result(out, tout):
    # A jvp rule's answer: the outputs and their tangents, `tout` where an
    # output is floating, symbolic zeros elsewhere and where no input had a
    # tangent (`tout` None).
    if tout is None:
        return out, [_begen_zero(o) for o in out]
    return out, [t if _begen_floating(o) else _begen_zero(o) for o, t in zip(out, tout)]


def _begen_call_types(arrays, outs):
    # The inputs as arrays, and the (shape, dtype) of each input and output.
    arrays = [_jax.numpy.asarray(a) for a in arrays]
    ins = tuple((tuple(a.shape), a.dtype) for a in arrays)
    return arrays, ins, tuple((tuple(o.shape), o.dtype) for o in outs)


# Held while a primitive is made: two threads making the first call of one
# kernel at once make it once, and each primitive is published (in
# `_begen_primitives`) only with all of its rules.
_begen_primitive_lock = _threading.RLock()


def _begen_primitive(name, rules=None):
    # The primitive of FFI target `name`, made once; `rules(p)` replaces
    # some of its rules before it is published (section `joint`).
    p = _begen_primitives.get(name)
    if p is not None:
        return p
    with _begen_primitive_lock:
        p = _begen_primitives.get(name)
        if p is None:
            p = _begen_make_primitive(name, rules)
            _begen_primitives[name] = p
    return p


def _begen_make_primitive(name, rules):
    from jax.interpreters import ad, batching, mlir

    p = _JaxPrimitive(name)
    p.multiple_results = True

    def apply(*args, call, batch):
        return list(_begen_batched(call.raw, batch)(*args))

    def abstract(*args, call, batch):
        return [_jax.typeof(_jax.ShapeDtypeStruct((*batch, *shape), dtype)) for shape, dtype in call.outs]

    def jvp(primals, tangents, *, call, batch):
        out = p.bind(*primals, call=call, batch=batch)
        if call.jvp is not None:
            pairs = [(x, t) for x, t in zip(primals, tangents) if _begen_floating(x)]
            ts = [ad.instantiate_zeros(t) for _, t in pairs]
            # The tangent kernel's inputs are the primals, then one tangent
            # per float input: those filled with zeros, by position.
            filled = tuple(len(primals) + i for i, (_, t) in enumerate(pairs) if type(t) is ad.Zero)
            structs = [_jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in call.outs]
            out_ = structs[0] if len(structs) == 1 else tuple(structs)

            def tangent(*a):
                _begen_filled.zeros = filled
                try:
                    return call.jvp(*a, out=out_)
                finally:
                    _begen_filled.zeros = ()

            tout = _begen_batched(tangent, batch)(*primals, *ts)
        else:
            # Linear in each listed input: the kernel on each tangent, summed.
            tout = None
            for k, (x, t) in enumerate(zip(primals, tangents)):
                if type(t) is ad.Zero or not _begen_floating(x):
                    continue
                if k not in call.linear:
                    raise TypeError(
                        f"{call.name}: no derivative in '{call.names[k]}': begen.yaml declares it neither "
                        f"`linear` nor gives the kernel a `jvp`"
                    )
                args = list(primals)
                args[k] = t
                term = p.bind(*args, call=call, batch=batch)
                tout = term if tout is None else [a + b for a, b in zip(tout, term)]
        return _begen_jvp_result(out, tout)

    def transpose(cts, *args, call, batch):
        undefined = [k for k, a in enumerate(args) if ad.is_undefined_primal(a)]
        if len(undefined) != 1:
            names = ", ".join(call.names[k] for k in undefined)
            raise NotImplementedError(f"{call.name}: not linear in {names} together (linear in each alone)")
        k = undefined[0]
        kernel = dict(call.transposes).get(k)
        if kernel is None:
            raise NotImplementedError(
                f"{call.name}: no transpose for '{call.names[k]}': begen.yaml gives it no `transpose:` kernel"
            )
        cts = [ad.instantiate_zeros(c) for c in cts]
        others = [a for j, a in enumerate(args) if j != k]
        out = [None] * len(args)
        struct = _jax.ShapeDtypeStruct(*call.ins[k])
        out[k] = _begen_batched(lambda *a: kernel(*a, out=struct), batch)(*others, *cts)[0]
        return out

    def batcher(args, dims, *, call, batch):
        if call.fold is not None and not batch:
            folded = _begen_fold(args, dims, call)
            if folded is not None:
                return folded
        # The FFI call's own vmap_method runs the new batch axis.
        size, moved = _begen_batch_front(args, dims)
        return p.bind(*moved, call=call, batch=(size, *batch)), [0] * len(call.outs)

    p.def_impl(apply)
    p.def_abstract_eval(abstract)
    ad.primitive_jvps[p] = jvp
    ad.primitive_transposes[p] = transpose
    batching.primitive_batchers[p] = batcher
    mlir.register_lowering(p, mlir.lower_fun(apply, multiple_results=True))
    try:
        # Its lowering may partition the FFI call (section `sharding`),
        # which needs the devices (JAX's own list; private, so guarded).
        from jax._src import dispatch

        dispatch.prim_requires_devices_during_lowering.add(p)
    except (ImportError, AttributeError):
        pass
    if rules is not None:
        rules(p)
    return p


def _begen_bind(name, raw, arrays, outs, linear, jvp, transposes, names, fold=None):
    # Calls kernel `name` through its primitive: the outputs, one array or a tuple.
    _begen_take_filled()
    arrays, ins, outs = _begen_call_types(arrays, outs)
    call = _BegenCall(name, raw, ins, outs, linear, jvp, transposes, names, fold)
    out = _begen_primitive(name).bind(*arrays, call=call, batch=())
    return out[0] if len(out) == 1 else tuple(out)
