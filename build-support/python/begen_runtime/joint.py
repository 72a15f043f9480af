"""Section `joint` (a kernel with begen.yaml's `linear: [[a, b]]`: groups of
inputs linear together): its primitive's jvp and transpose rules.

Above the `# begen: emit below` line: only what this file needs on its own.
"""

import jax as _jax

from .primitives import _begen_batched, _begen_floating, _begen_primitive, _BegenCall

# begen: emit below

# Kernels linear in groups of inputs together. Such a kernel binds the
# primitive of section `primitives` with these jvp and transpose rules in
# place of its own. `call.linear` holds, for each input linear alone, its
# position, and for each group, the tuple of its positions; a transpose is
# keyed the same way. A group's jvp runs the kernel once on all of the
# group's tangents (zeros where one has none); its transpose kernel returns
# one cotangent per input of the group.

_begen_joint_done = set()


class _BegenJointCall(_BegenCall):
    # A call whose group inputs at the positions `zeros` hold zeros the jvp
    # filled in (they had no tangent): their cotangents are dropped.
    __slots__ = ("zeros",)

    def __init__(self, *args, zeros=()):
        super().__init__(*args)
        self.zeros = zeros


def _begen_joint_items(call):
    # Each item of `call.linear` as a tuple of positions.
    return [item if isinstance(item, tuple) else (item,) for item in call.linear]


def _begen_joint_primitive(name):
    # The primitive of FFI target `name` with the rules of groups.
    p = _begen_primitive(name)
    if name in _begen_joint_done:
        return p
    from jax.interpreters import ad

    def zero(x):
        return ad.Zero(_jax.typeof(x).to_tangent_aval())

    def jvp(primals, tangents, *, call, batch):
        out = p.bind(*primals, call=call, batch=batch)
        given = [k for k, (x, t) in enumerate(zip(primals, tangents)) if type(t) is not ad.Zero and _begen_floating(x)]
        items = _begen_joint_items(call)
        covered = {k for item in items for k in item}
        rest = [k for k in given if k not in covered]
        if rest:
            names = ", ".join(f"'{call.names[k]}'" for k in rest)
            raise TypeError(
                f"{call.name}: no derivative in {names}: begen.yaml declares it neither `linear` (alone or in a "
                f"group) nor gives the kernel a `jvp`"
            )
        tout = None
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
            c = _BegenJointCall(
                call.name,
                call.raw,
                call.ins,
                call.outs,
                call.linear,
                call.jvp,
                call.transposes,
                call.names,
                zeros=tuple(filled),
            )
            term = p.bind(*args, call=c, batch=batch)
            tout = term if tout is None else [a + b for a, b in zip(tout, term)]
        if tout is None:
            return out, [zero(o) for o in out]
        return out, [t if _begen_floating(o) else zero(o) for o, t in zip(out, tout)]

    def transpose(cts, *args, call, batch):
        undefined = [k for k, a in enumerate(args) if ad.is_undefined_primal(a)]
        shown = ", ".join(call.names[k] for k in undefined)
        item = next((i for i in _begen_joint_items(call) if set(undefined) <= set(i)), None)
        if item is None:
            raise NotImplementedError(f"{call.name}: not linear in {shown} together (linear in each alone)")
        zeros = getattr(call, "zeros", ())
        fixed = [k for k in item if k not in undefined and k not in zeros]
        if fixed:
            group = ", ".join(call.names[k] for k in item)
            raise NotImplementedError(
                f"{call.name}: not linear in {shown} with {', '.join(call.names[k] for k in fixed)} fixed: begen.yaml "
                f"declares it linear in {group} together (transpose with respect to all of them)"
            )
        key = item if len(item) > 1 else item[0]
        kernel = dict(call.transposes).get(key)
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
        out = [None] * len(args)
        for k, g in zip(item, got):
            if k in undefined:
                out[k] = g
        return out

    ad.primitive_jvps[p] = jvp
    ad.primitive_transposes[p] = transpose
    _begen_joint_done.add(name)
    return p


def _begen_bind_joint(name, raw, arrays, outs, linear, jvp, transposes, names):
    # Calls kernel `name` through its primitive with the rules of groups:
    # the outputs, one array or a tuple.
    arrays = [_jax.numpy.asarray(a) for a in arrays]
    ins = tuple((tuple(a.shape), a.dtype) for a in arrays)
    outs = tuple((tuple(o.shape), o.dtype) for o in outs)
    call = _BegenJointCall(name, raw, ins, outs, linear, jvp, transposes, names)
    out = _begen_joint_primitive(name).bind(*arrays, call=call, batch=())
    return out[0] if len(out) == 1 else tuple(out)
