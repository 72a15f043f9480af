"""Section `joint` (a kernel with begen.yaml's `linear: [[a, b]]`: groups of
inputs linear together, or `vjp:` beside `linear:`): its primitive's jvp and
transpose rules.

Above the `# begen: emit below` line: only what this file needs on its own.
"""

import jax as _jax
from jax.extend.core import Primitive as _JaxPrimitive

from .core import _begen_batch_front
from .primitives import (
    _begen_batched,
    _begen_call_types,
    _begen_floating,
    _begen_jvp_result,
    _begen_primitive,
    _begen_primitive_lock,
    _begen_primitives,
    _begen_take_filled,
    _BegenCall,
)

# begen: emit below

# Kernels linear in groups of inputs together. Such a kernel binds the
# primitive of section `primitives` with these jvp and transpose rules in
# place of its own. `call.linear` holds, for each input linear alone, its
# position, and for each group, the tuple of its positions; a transpose is
# keyed the same way. A group's jvp runs the kernel once on all of the
# group's tangents (zeros where one has none); its transpose kernel returns
# one cotangent per input of the group. With a backward kernel (`vjp:`
# beside `linear:`), the tangents of the other float inputs go through a
# second primitive, `<name>:lin`, linear in them: JAX transposes it with the
# backward kernel (reverse mode) and refuses to evaluate it (forward mode),
# as jax.custom_vjp does.

class _BegenJointCall(_BegenCall):
    # A call with `backward(*inputs, *cts)`, its backward kernel (one
    # cotangent per input) or None; its group inputs at the positions
    # `zeros` hold zeros the jvp filled in (they had no tangent): their
    # cotangents are dropped.
    __slots__ = ("backward", "zeros")

    def __init__(self, *args, backward=None, zeros=()):
        super().__init__(*args)
        self.backward = backward
        self.zeros = zeros

    def with_zeros(self, zeros):
        return _BegenJointCall(
            self.name,
            self.raw,
            self.ins,
            self.outs,
            self.linear,
            self.jvp,
            self.transposes,
            self.names,
            backward=self.backward,
            zeros=zeros,
        )


def _begen_joint_backward(call, batch, args, cts):
    # The backward kernel's cotangents of every input, on `args` (every
    # input) and the outputs' cotangents; an integer output's cotangent
    # reaches it as zeros of its dtype.
    from jax.interpreters import ad

    cts = [
        ad.instantiate_zeros(c) if _jax.numpy.issubdtype(d, _jax.numpy.inexact) else _jax.numpy.zeros((*batch, *s), d)
        for c, (s, d) in zip(cts, call.outs)
    ]
    return _begen_batched(call.backward, batch)(*args, *cts)


def _begen_lin_primitive(name):
    # The primitive `<name>:lin` of a kernel with a backward kernel: its
    # outputs' tangent from the tangents of the inputs at positions `rest`
    # (the ones it is not linear in). Bound with the primal inputs, then
    # those tangents.
    key = f"{name}:lin"
    p = _begen_primitives.get(key)
    if p is not None:
        return p
    with _begen_primitive_lock:
        p = _begen_primitives.get(key)
        if p is None:
            p = _begen_make_lin_primitive(key)
            _begen_primitives[key] = p
    return p


def _begen_make_lin_primitive(key):
    from jax.interpreters import ad, batching, mlir

    p = _JaxPrimitive(key)
    p.multiple_results = True

    def refuse(*args, call, batch, rest):
        names = ", ".join(f"'{call.names[k]}'" for k in rest)
        raise TypeError(
            f"{call.name}: no forward mode in {names}: begen.yaml gives the kernel a `vjp` backward kernel, which "
            f"differentiates in reverse mode only (jax.grad, jax.vjp); forward mode works in its `linear` inputs"
        )

    def abstract(*args, call, batch, rest):
        return [_jax.typeof(_jax.ShapeDtypeStruct((*batch, *shape), dtype)) for shape, dtype in call.outs]

    def jvp(primals, tangents, *, call, batch, rest):
        raise TypeError(
            f"{call.name}: no second derivative through its backward kernel: begen.yaml declares no derivative of "
            f"the `vjp` kernel's pass"
        )

    def transpose(cts, *args, call, batch, rest):
        n = len(call.ins)
        grads = _begen_joint_backward(call, batch, args[:n], cts)
        return [None] * n + [grads[k] for k in rest]

    def batcher(args, dims, *, call, batch, rest):
        size, moved = _begen_batch_front(args, dims)
        return p.bind(*moved, call=call, batch=(size, *batch), rest=rest), [0] * len(call.outs)

    p.def_impl(refuse)
    p.def_abstract_eval(abstract)
    ad.primitive_jvps[p] = jvp
    ad.primitive_transposes[p] = transpose
    batching.primitive_batchers[p] = batcher
    mlir.register_lowering(p, mlir.lower_fun(refuse, multiple_results=True))
    return p


def _begen_joint_items(call):
    # Each item of `call.linear` as a tuple of positions.
    return [item if isinstance(item, tuple) else (item,) for item in call.linear]


def _begen_joint_primitive(name):
    # The primitive of FFI target `name` with the rules of groups, which
    # replace its own before it is published: a thread never sees it
    # without them.
    return _begen_primitive(name, _begen_joint_rules)


def _begen_joint_rules(p):
    # Gives primitive `p` the jvp and transpose rules of groups.
    from jax.interpreters import ad

    def jvp(primals, tangents, *, call, batch):
        out = p.bind(*primals, call=call, batch=batch)
        given = [k for k, (x, t) in enumerate(zip(primals, tangents)) if type(t) is not ad.Zero and _begen_floating(x)]
        items = _begen_joint_items(call)
        covered = {k for item in items for k in item}
        rest = tuple(k for k in given if k not in covered)
        if rest and call.backward is None:
            names = ", ".join(f"'{call.names[k]}'" for k in rest)
            raise TypeError(
                f"{call.name}: no derivative in {names}: begen.yaml declares it neither `linear` (alone or in a "
                f"group) nor gives the kernel a `jvp`"
            )
        tout = None
        if rest:
            # The other inputs' tangents, for the backward kernel.
            lin = _begen_lin_primitive(call.name).bind(
                *primals, *(tangents[k] for k in rest), call=call, batch=batch, rest=rest
            )
            tout = list(lin)
        for item in items:
            if not any(k in given for k in item):
                continue
            args = list(primals)
            filled = []
            for k in item:
                args[k] = ad.instantiate_zeros(tangents[k])
                if k not in given:
                    filled.append(k)
            # The kernel on the group's tangents at once; its inputs that had
            # no tangent are zeros, marked so that a transpose drops them.
            term = p.bind(*args, call=call.with_zeros(tuple(filled)), batch=batch)
            tout = term if tout is None else [a + b for a, b in zip(tout, term)]
        return _begen_jvp_result(out, tout)

    def transpose(cts, *args, call, batch):
        undefined = [k for k, a in enumerate(args) if ad.is_undefined_primal(a)]
        shown = ", ".join(call.names[k] for k in undefined)
        item = next((i for i in _begen_joint_items(call) if set(undefined) <= set(i)), None)
        if item is None:
            raise NotImplementedError(f"{call.name}: not linear in {shown} together (linear in each alone)")
        zeros = call.zeros
        fixed = [k for k in item if k not in undefined and k not in zeros]
        if fixed:
            group = ", ".join(call.names[k] for k in item)
            raise NotImplementedError(
                f"{call.name}: not linear in {shown} with {', '.join(call.names[k] for k in fixed)} fixed: begen.yaml "
                f"declares it linear in {group} together (transpose with respect to all of them)"
            )
        key = item if len(item) > 1 else item[0]
        kernel = dict(call.transposes).get(key)
        out = [None] * len(args)
        if kernel is None and call.backward is not None:
            # The backward kernel, with zeros for the inputs transposed: the
            # kernel is linear in them, so their cotangents do not depend on
            # their values.
            filled = [_jax.numpy.zeros(a.aval.shape, a.aval.dtype) if ad.is_undefined_primal(a) else a for a in args]
            grads = _begen_joint_backward(call, batch, filled, cts)
            for k in undefined:
                out[k] = grads[k]
            return out
        if kernel is None:
            group = ", ".join(call.names[k] for k in item)
            raise NotImplementedError(
                f"{call.name}: no transpose for '{group}': begen.yaml gives it no `transpose:` kernel"
            )
        cts = [ad.instantiate_zeros(c) for c in cts]
        others = [a for j, a in enumerate(args) if j not in item]
        structs = tuple(_jax.ShapeDtypeStruct(*call.ins[k]) for k in item)
        struct = structs[0] if len(structs) == 1 else structs
        got = _begen_batched(lambda *a: kernel(*a, out=struct), batch)(*others, *cts)
        for k, g in zip(item, got):
            if k in undefined:
                out[k] = g
        return out

    ad.primitive_jvps[p] = jvp
    ad.primitive_transposes[p] = transpose


def _begen_bind_joint(name, raw, arrays, outs, linear, jvp, transposes, names, backward=None):
    # Calls kernel `name` through its primitive with the rules of groups and
    # of a backward kernel: the outputs, one array or a tuple.
    # Called as another kernel's tangent kernel: the inputs that rule filled
    # with zeros are marked as the group jvp below marks its own.
    zeros = _begen_take_filled()
    arrays, ins, outs = _begen_call_types(arrays, outs)
    call = _BegenJointCall(name, raw, ins, outs, linear, jvp, transposes, names, backward=backward, zeros=zeros)
    out = _begen_joint_primitive(name).bind(*arrays, call=call, batch=())
    return out[0] if len(out) == 1 else tuple(out)
