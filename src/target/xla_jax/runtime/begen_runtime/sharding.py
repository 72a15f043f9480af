"""Section `sharding` (every typed kernel): a call on arrays split across
devices runs per shard, as begen.yaml's `shard:` and `reduce:` allow.

A kernel's rule is `(name, params, ins, outs, shard, reduce[, sums])`: its
Python name, its inputs' names, each input's and output's dimension names
(None for a fixed extent), the dimensions that may be split (`shard`) or
whose partial outputs are summed (`reduce`), and, where begen.yaml has
`sum:`, per output the `shard` dimensions that output is a sum over (a
weight gradient beside a batch-split cotangent: split along them, its
partial outputs are added up, the others keep the split). A shape that
starts with a rest writes it `"rows..."` (`"..."` when anonymous); once the
ranks are known (`_begen_expand`) its leading extents are dimensions of
their own, `rows[0]`, `rows[1]`..., each split where `rows` is declared
(the anonymous rest's stay whole). Two mechanisms, both decided at trace
time and costing nothing per call:

- explicit mesh axes (`jax.make_mesh`'s default): the inputs' types say how
  they are split, so the whole function (checks, custom_vjp, primitive and
  all) runs under `jax.shard_map` on each device's block, every input first
  resharded to the split chosen (an unsplit one sliced, one split in a way
  the plan cannot use gathered); derivatives and `vmap` go through
  shard_map's own rules, and it exports.
- auto mesh axes: nothing is known before XLA's partitioner runs, so the
  FFI call itself is a `custom_partitioning` whose Shardy rule comes from
  the contract. That cannot be serialized, so an exported function gets a
  custom call of its own (`_BEGEN_PARTITIONED`) carrying the contract's
  Shardy rule and, as its backend config, everything needed to call the
  kernel on one shard (a JSON text). The partitioner registered under that
  name by `register()` splits it when the deserialized function is
  compiled: the export stays split in any process that imported the module.

A dimension not declared is gathered where an input is split along it, as
XLA does for any custom call; under explicit axes a warning says so once.

A vmap's batch axis split across devices is no dimension of the kernel's:
the batched call runs under a shard_map of that axis (each device its
batch elements). Inside a shard_map manual on only some mesh axes,
explicit ones left are planned as anywhere (a nested shard_map naming
them); auto ones cannot be (no custom_partitioning there), so the call is
the plain one and a warning names the inputs XLA gathers. Outside jit, a
call on split arrays is a jit of its own, lowered (and split) as under jit.

Above the `# begen: emit below` line: only what this file needs on its own.
"""

import jax as _jax
from jax.extend.core import Primitive as _JaxPrimitive

from .core import _begen_batch_front

# begen: emit below

_begen_warned = set()


def _begen_axis_names(entry):
    # The mesh axes of one PartitionSpec entry ('x', ('x', 'y') or None).
    if entry is None:
        return ()
    return tuple(entry) if isinstance(entry, (tuple, list)) else (entry,)


def _begen_manual():
    # Whether this trace runs inside a shard_map manual on every mesh axis
    # of several devices: its arrays are whole blocks already. Inside one
    # manual on only some axes, the others still split arrays, and the call
    # is split along them as anywhere else.
    try:
        mesh = _jax.sharding.get_abstract_mesh()
        sizes = dict(mesh.shape)
        types = [t for n, t in zip(mesh.axis_names, mesh.axis_types) if sizes[n] > 1]
        return bool(types) and not any(t != _jax.sharding.AxisType.Manual for t in types)
    except Exception:
        return False


def _begen_manual_axes():
    # The manual mesh axes of this trace (inside a shard_map): a nested
    # shard_map names the axes it makes manual, the others left as they are.
    try:
        mesh = _jax.sharding.get_abstract_mesh()
        return {n for n, t in zip(mesh.axis_names, mesh.axis_types) if t == _jax.sharding.AxisType.Manual}
    except Exception:
        return set()


def _begen_explicit(x):
    # (mesh, spec padded to x's rank) when x's type says it is split along
    # explicit mesh axes; None otherwise.
    try:
        sharding = _jax.typeof(x).sharding
        mesh, spec = sharding.mesh, tuple(sharding.spec)
    except Exception:
        return None
    if mesh is None or getattr(mesh, "empty", True):
        return None
    sizes = dict(mesh.shape)
    explicit = {
        n for n, t in zip(mesh.axis_names, mesh.axis_types) if t == _jax.sharding.AxisType.Explicit and sizes[n] > 1
    }
    spec = spec + (None,) * (_jax.numpy.ndim(x) - len(spec))
    if not any(set(_begen_axis_names(e)) & explicit for e in spec):
        return None
    return mesh, spec


def _begen_warn(name, param, dim, why):
    _begen_say((name, param, dim), f"{name}: parameter '{param}' is split along dimension '{dim}', {why}")


def _begen_say(key, message):
    # A UserWarning, once per key.
    if key in _begen_warned:
        return
    _begen_warned.add(key)
    import sys
    import warnings

    # Shown at the caller's line: the first frame outside this module and JAX.
    level, frame = 2, sys._getframe(1)
    while frame is not None and (frame.f_code.co_filename == __file__ or "/jax/" in frame.f_code.co_filename):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, stacklevel=level)


def _begen_warn_manual(rule, manual):
    # Inside a shard_map manual on only some mesh axes, the others auto:
    # XLA's partitioner cannot hand a custom_partitioning such a call, so it
    # is the plain call, its inputs gathered along the auto axes. Said once
    # per kernel and axes, naming the inputs with a declared dimension (an
    # undeclared one is gathered in any case). Whether the call must be the
    # plain one: not where every axis left is explicit.
    try:
        mesh = _jax.sharding.get_abstract_mesh()
        sizes = dict(mesh.shape)
        auto = [
            n for n, t in zip(mesh.axis_names, mesh.axis_types) if t == _jax.sharding.AxisType.Auto and sizes[n] > 1
        ]
    except Exception:
        return True
    declared = set(rule[4]) | set(rule[5])
    params = [p for p, dims in zip(rule[1], rule[2]) if declared & set(dims)]
    if not auto:
        # Explicit axes only: the call is planned (and a vmap's split batch
        # axis run per block) as outside the shard_map.
        return False
    if not params:
        return True
    quoted = lambda names: ", ".join(repr(n) for n in sorted(names))
    _begen_say(
        (rule[0], "manual", tuple(sorted(manual)), tuple(auto)),
        f"{rule[0]}: called inside a shard_map manual on mesh axes {quoted(manual)} only, so it cannot be split "
        f"along the auto axes {quoted(auto)}: parameter{'s' if len(params) > 1 else ''} {quoted(params)}, where "
        f"split along them, {'is' if len(params) == 1 else 'are'} gathered on every device (all-gather) "
        "before the call "
        "(make the shard_map manual on every axis, or the mesh's axes explicit)",
    )
    return True


def _begen_expand(rule, arrays):
    # The rule for these inputs, each rest (a first entry "rows..." or
    # "...") its leading extents, one name each ("rows[0]", "rows[1]"...;
    # None for the anonymous rest's: never split), a declared rest
    # declaring every one of them. The rule itself where there is none.
    is_rest = lambda dims: bool(dims) and isinstance(dims[0], str) and dims[0].endswith("...")
    if not any(is_rest(dims) for dims in (*rule[2], *rule[3])):
        return rule
    counts = {}
    for dims, x in zip(rule[2], arrays):
        if is_rest(dims):
            counts.setdefault(dims[0][:-3], max(_jax.numpy.ndim(x) - (len(dims) - 1), 0))

    def expand(dims):
        if not is_rest(dims):
            return tuple(dims)
        name = dims[0][:-3]
        return tuple(f"{name}[{i}]" if name else None for i in range(counts.get(name, 0))) + tuple(dims[1:])

    def names(declared):
        return tuple(e for d in declared for e in ((f"{d}[{i}]" for i in range(counts[d])) if d in counts else (d,)))

    expanded = (rule[0], rule[1], tuple(map(expand, rule[2])), tuple(map(expand, rule[3])))
    return expanded + tuple(names(d) for d in rule[4:6]) + tuple(tuple(names(d) for d in per) for per in rule[6:])


def _begen_factor(d):
    # The Shardy factor of dimension d: `d_<name>`, a rest's extent i
    # (`rows[i]`) `r<i>_rows` (factor names are identifiers).
    if d.endswith("]"):
        name, i = d[:-1].split("[")
        return f"r{i}_{name}"
    return f"d_{d}"


def _begen_sums(rule):
    # Per output, the dimensions its partial outputs are summed over when
    # split: `reduce`'s, and the `shard` ones `sum:` gives that output.
    per = rule[6] if len(rule) > 6 else ((),) * len(rule[3])
    return tuple((*rule[5], *tuple(own)) for own in per)


def _begen_choose(rule, specs, extent_of, mesh_shape):
    # The mesh axes each declared dimension is split along, from the first
    # input split along it: {dim: entry}. Other splits are gathered; each
    # (param, dim, why) gathered is listed.
    params, ins, shard, reduce = rule[1], rule[2], rule[4], rule[5]
    axes, used, gathered = {}, set(), []
    for param, dims, spec in zip(params, ins, specs):
        for i, (d, entry) in enumerate(zip(dims, spec)):
            # An axis of one device splits nothing.
            names = tuple(n for n in _begen_axis_names(entry) if mesh_shape[n] > 1)
            if not names:
                continue
            entry = names if len(names) > 1 else names[0]
            shown = d if d is not None else str(i)
            if d is None or (d not in shard and d not in reduce):
                gathered.append((param, shown, "which begen.yaml does not declare in `shard:` or `reduce:`"))
                continue
            if d in axes:
                continue  # another split of the same dimension: resharded to the first
            size = 1
            for n in names:
                size *= mesh_shape[n]
            if used & set(names):
                gathered.append((param, shown, f"but mesh axis {entry!r} splits another dimension already"))
                continue
            if extent_of(param, i) % size:
                gathered.append((param, shown, f"but its extent is not a multiple of the {size} devices of {entry!r}"))
                continue
            axes[d] = entry
            used |= set(names)
    return axes, gathered


def _begen_split(rule, arrays):
    # The plan to call a kernel per shard under explicit mesh axes, or None
    # to call it as is: (mesh, in_specs, out_specs, psum axes per output, {dim: entry},
    # whether each input must be resharded to its in_spec first, the rule
    # with its rests expanded).
    if len(rule[2]) != len(arrays) or _begen_manual():
        return None
    rule = _begen_expand(rule, arrays)
    # An empty array is not split (XLA's partitioner mishandles zero-sized
    # blocks): the plain call, which has nothing to gather.
    if any(0 in _jax.numpy.shape(x) for x in arrays):
        return None
    found = [_begen_explicit(x) for x in arrays]
    meshes = [f[0] for f in found if f is not None]
    if not meshes:
        return None
    mesh = meshes[0]
    specs = [f[1] if f is not None else (None,) * _jax.numpy.ndim(x) for f, x in zip(found, arrays)]
    index = {p: k for k, p in enumerate(rule[1])}
    mesh_shape = dict(mesh.shape)
    axes, gathered = _begen_choose(rule, specs, lambda p, i: _jax.numpy.shape(arrays[index[p]])[i], mesh_shape)
    for param, dim, why in gathered:
        _begen_warn(rule[0], param, dim, why + ": it is gathered on every device (all-gather) before the call")
    if not axes:
        return None
    from jax.sharding import PartitionSpec

    in_specs = tuple(PartitionSpec(*(axes.get(d) for d in dims)) for dims in rule[2])
    out_specs = tuple(PartitionSpec(*(axes.get(d) if d in rule[4] else None for d in dims)) for dims in rule[3])
    psum = tuple(tuple(n for d in dims for n in _begen_axis_names(axes.get(d))) for dims in _begen_sums(rule))
    # shard_map takes each input only as its type says it is split: an
    # input split otherwise (gathered, or split along another axis) or not
    # split where the plan splits it (a replicated array, a numpy constant)
    # is resharded to its in_spec first. Without jax.sharding.reshard, the
    # plain call (XLA gathers every input: right, not split).
    moves = tuple(_begen_differs(spec, want) for spec, want in zip(specs, in_specs))
    if any(moves) and getattr(_jax.sharding, "reshard", None) is None:
        return None
    return mesh, in_specs, out_specs, psum, axes, moves, rule


def _begen_differs(spec, want):
    # Whether an input split as `spec` (its type's, padded) must be
    # resharded to be split as `want` (its in_spec).
    want = tuple(want) + (None,) * (len(spec) - len(tuple(want)))
    return any(_begen_axis_names(a) != _begen_axis_names(b) for a, b in zip(spec, want))


def _begen_local(struct, dims, axes, mesh_shape):
    # A global output's ShapeDtypeStruct as one device's block.
    shape = list(struct.shape)
    for i, d in enumerate(dims):
        for n in _begen_axis_names(axes.get(d)):
            shape[i] //= mesh_shape[n]
    return _jax.ShapeDtypeStruct(tuple(shape), struct.dtype)


def _begen_shard_map(plan, rule, call, arrays, out, public=None):
    # call(*blocks, out) on each device's blocks, under jax.shard_map; each
    # output's partial sums added up over its summed dimensions' axes.
    # `public`: the positions of the outputs the call returns, where it
    # returns only some (a kernel with `residuals:`); `out` is every one.
    mesh, in_specs, out_specs, psum, axes, moves, rule = plan
    if public is not None:
        out_specs = tuple(out_specs[k] for k in public)
        psum = tuple(psum[k] for k in public)
    mesh_shape = dict(mesh.shape)
    given = arrays, out
    if any(moves):
        from jax.sharding import NamedSharding

        arrays = tuple(
            _jax.sharding.reshard(x, NamedSharding(mesh, spec)) if move else x
            for x, spec, move in zip(arrays, in_specs, moves)
        )
    if out is not None:
        many = isinstance(out, (tuple, list))
        blocks = [
            _begen_local(o, dims, {d: e for d, e in axes.items() if d in rule[4]}, mesh_shape)
            for o, dims in zip(out if many else (out,), rule[3])
        ]
        out = tuple(blocks) if many else blocks[0]
    single = len(out_specs) == 1

    def body(*blocks):
        result = call(*blocks, out)
        if not any(psum):
            return result
        if len(set(psum)) == 1:
            # The same axes for every output (`reduce:` only).
            return _jax.tree_util.tree_map(lambda y: _jax.lax.psum(y, psum[0]), result)
        return type(result)(_jax.lax.psum(y, axes) if axes else y for y, axes in zip(result, psum))

    extra = {}
    if _begen_manual_axes():
        # Inside a shard_map manual on other axes: manual on the plan's too.
        extra["axis_names"] = {n for e in axes.values() for n in _begen_axis_names(e)}
    try:
        return _jax.shard_map(
            body,
            mesh=mesh,
            in_specs=in_specs,
            out_specs=out_specs[0] if single else out_specs,
            check_vma=False,
            **extra,
        )(*arrays)
    except (TypeError, ValueError):
        # The kernel's checks ran on each device's blocks: an error of the
        # call is said again in the shapes the caller gave.
        _begen_whole(call, *given)
        raise


def _begen_whole(call, arrays, out):
    # Traces call(*arrays, out) on the whole arrays, unsplit, without
    # running it: its contract errors quote the caller's shapes.
    traced = [i for i, x in enumerate(arrays) if isinstance(x, _jax.Array)]

    def whole(*xs):
        full = list(arrays)
        for i, x in zip(traced, xs):
            full[i] = x
        return call(*full, out)

    _jax.eval_shape(whole, *(_jax.ShapeDtypeStruct(_jax.numpy.shape(arrays[i]), arrays[i].dtype) for i in traced))


# Auto mesh axes: the FFI call as a custom_partitioning, decided when the
# call is lowered (for export: the plain call). One primitive carries it, so
# that vmap and export can see it: `fn(structs, *arrays)` is the FFI call for
# `structs` (one ShapeDtypeStruct per output, unbatched), `batch` one leading
# axis per vmap.

_begen_partitioned_p = []


def _begen_vmapped(fn, structs, batch):
    # fn(structs, *arrays) over leading batch axes, one per vmap: a tuple.
    def run(*args):
        return tuple(fn(structs, *args))

    for _ in batch:
        run = _jax.vmap(run)
    return run


def _begen_partition_primitive():
    if _begen_partitioned_p:
        return _begen_partitioned_p[0]
    from jax.interpreters import ad, batching, mlir

    p = _JaxPrimitive("begen_partitioned")
    p.multiple_results = True

    def apply(*args, fn, structs, rule, batch, spec, shard):
        return list(_begen_vmapped(fn, structs, batch)(*args))

    def abstract(*args, fn, structs, rule, batch, spec, shard):
        return [_jax.typeof(_jax.ShapeDtypeStruct((*batch, *s.shape), s.dtype)) for s in structs]

    def lower(ctx, *args, fn, structs, rule, batch, spec, shard):
        params = {"fn": fn, "structs": structs, "rule": rule, "batch": batch, "spec": spec, "shard": shard}
        devices = getattr(ctx.module_context.axis_context, "device_assignment", ())
        if ctx.module_context.lowering_parameters.for_export:
            exported = _begen_export_lowering(ctx, args, spec, rule, batch, shard)
            if exported is not None:
                return exported
        # Inside a shard_map manual on some axes, XLA's partitioner cannot
        # hand the call to a custom_partitioning: the plain call.
        manual = getattr(ctx.module_context.axis_context, "manual_axes", None)
        if ctx.module_context.lowering_parameters.for_export or devices is None or manual:
            return mlir.lower_fun(lambda *a: apply(*a, **params), multiple_results=True)(ctx, *args)
        partitioned = _begen_custom_partitioning(fn, structs, rule, batch, shard)
        return mlir.lower_fun(lambda *a: list(partitioned(*a)), multiple_results=True)(ctx, *args)

    def batcher(args, dims, *, fn, structs, rule, batch, spec, shard):
        size, moved = _begen_batch_front(args, dims)
        params = {"fn": fn, "structs": structs, "rule": rule, "batch": (size, *batch), "spec": spec, "shard": shard}
        split = _begen_batch_split(moved)
        if split is None:
            return p.bind(*moved, **params), [0] * len(structs)
        return _begen_batch_shard_map(split, moved, params), [0] * len(structs)

    def no_derivative(primals, tangents, *, fn, structs, rule, batch, spec, shard):
        raise ValueError(
            f"{rule[0]}: the FFI call cannot be differentiated (begen.yaml gives it no vjp:, jvp: or linear:); "
            "you can use jax.custom_jvp or jax.custom_vjp to add support"
        )

    def eager(*args, **params):
        # Run outside jit (inside an eager vmap or grad, say): on arrays
        # split over several devices, as a jit of its own, so that it is
        # lowered, and partitioned, as under the caller's jit; the plain
        # call (XLA gathering every input) otherwise.
        if any(_begen_split_array(a) for a in args):
            return _jax.jit(lambda *a: p.bind(*a, **params))(*args)
        return apply(*args, **params)

    p.def_impl(eager)
    p.def_abstract_eval(abstract)
    ad.primitive_jvps[p] = no_derivative
    mlir.register_lowering(p, lower)
    try:
        # jit lowers without its devices unless a primitive needs them, as
        # custom_partitioning does (JAX's own list; private, so guarded).
        from jax._src import dispatch

        dispatch.prim_requires_devices_during_lowering.add(p)
    except (ImportError, AttributeError):
        pass
    batching.primitive_batchers[p] = batcher
    _begen_partitioned_p.append(p)
    return p


def _begen_split_array(x):
    # Whether x is a concrete array split over several devices.
    sharding = getattr(x, "sharding", None) if isinstance(x, _jax.Array) else None
    try:
        return sharding is not None and len(sharding.device_set) > 1 and not sharding.is_fully_replicated
    except Exception:
        return False


def _begen_batch_split(moved):
    # (mesh, entry) when a vmapped call's new batch axis (in front of
    # `moved`) is split along explicit mesh axes; None otherwise.
    for x in moved:
        found = _begen_explicit(x)
        if found is not None and found[1][0] is not None:
            mesh, spec = found
            sizes = dict(mesh.shape)
            names = tuple(n for n in _begen_axis_names(spec[0]) if sizes[n] > 1)
            if names:
                return mesh, names if len(names) > 1 else names[0]
    return None


def _begen_batch_shard_map(split, moved, params):
    # The call on each device's block of the batch axis, under jax.shard_map:
    # a batch element needs only itself, so nothing is gathered along it.
    # (The FFI call's own vmap_method, a scan, cannot run over a split axis.)
    # Every input is resharded to be split along the batch axis only: a
    # split of another axis here is along a dimension the call does not
    # split (the trace saw none), so it is gathered, as it would be anyway.
    from jax.sharding import NamedSharding, PartitionSpec

    mesh, entry = split
    count = 1
    for n in _begen_axis_names(entry):
        count *= dict(mesh.shape)[n]
    # (Explicit axes divide the axes they split: the blocks are equal.)
    want = PartitionSpec(entry)
    moved = [
        _jax.sharding.reshard(x, NamedSharding(mesh, want)) if _begen_differs(_begen_spec(x), want) else x
        for x in moved
    ]
    local = dict(params, batch=(params["batch"][0] // count, *params["batch"][1:]))

    def body(*blocks):
        return tuple(_begen_vmapped(params["fn"], params["structs"], local["batch"])(*blocks))

    outs = tuple(want for _ in params["structs"])
    # Inside a shard_map manual on other axes: manual on the batch's too.
    extra = {"axis_names": set(_begen_axis_names(entry))} if _begen_manual_axes() else {}
    return list(
        _jax.shard_map(body, mesh=mesh, in_specs=tuple(want for _ in moved), out_specs=outs, check_vma=False, **extra)(
            *moved
        )
    )


def _begen_spec(x):
    # x's PartitionSpec over explicit mesh axes, padded to its rank.
    found = _begen_explicit(x)
    return found[1] if found is not None else (None,) * _jax.numpy.ndim(x)


def _begen_factors(rule, batch):
    # The Shardy factors of each input and output (batch axes first), and
    # the reduction and need-replication factors. A fixed extent, an
    # undeclared dimension and a repeat within one array are each a factor
    # of their own that must stay whole.
    ins, outs, shard, reduce = rule[2], rule[3], rule[4], rule[5]
    lead = tuple(f"b{i}" for i in range(len(batch)))
    whole = []

    def factors(dims):
        seen, names = set(), []
        for d in dims:
            if d is None or d in seen:
                names.append(f"w{len(whole)}")
                whole.append(names[-1])
                continue
            seen.add(d)
            names.append(_begen_factor(d))
            if d not in shard and d not in reduce and names[-1] not in whole:
                whole.append(names[-1])
        return lead + tuple(names)

    in_maps = tuple(factors(dims) for dims in ins)
    out_maps = tuple(factors(dims) for dims in outs)
    reduction = tuple(_begen_factor(d) for d in reduce)
    return in_maps, out_maps, reduction, tuple(whole)


def _begen_custom_partitioning(fn, structs, rule, batch, shard=None):
    # `shard` (a tuned kernel's): {dim: per-shard extent} -> the FFI target
    # of the candidate the tuning tables give for one shard, asked when
    # XLA's partitioner has decided the split; None: `fn` on every shard.
    from jax.experimental.custom_partitioning import SdyShardingRule, custom_partitioning
    from jax.sharding import NamedSharding, PartitionSpec

    in_maps, out_maps, reduction, whole = _begen_factors(rule, batch)
    splittable = {f for maps in in_maps for f in maps} - set(whole)

    @custom_partitioning
    def call(*args):
        return _begen_vmapped(fn, structs, batch)(*args)

    def partition(mesh, arg_shapes, result_shape):
        axes, used = {}, set()
        for maps, a in zip(in_maps, arg_shapes):
            spec = tuple(a.sharding.spec) + (None,) * (len(maps) - len(tuple(a.sharding.spec)))
            for f, entry in zip(maps, spec):
                names = set(_begen_axis_names(entry))
                if names and f in splittable and f not in axes and not (names & used):
                    axes[f] = entry
                    used |= names
        in_shardings = tuple(NamedSharding(mesh, PartitionSpec(*(axes.get(f) for f in maps))) for maps in in_maps)
        out_shardings = tuple(
            NamedSharding(mesh, PartitionSpec(*(axes.get(f) if f not in reduction else None for f in maps)))
            for maps in out_maps
        )
        psum = tuple(
            tuple(n for d in dims for n in _begen_axis_names(axes.get(_begen_factor(d)))) for dims in _begen_sums(rule)
        )
        # One device's outputs: each unbatched output's factors name its dimensions.
        local = tuple(_begen_local(s, maps[len(batch) :], axes, dict(mesh.shape)) for s, maps in zip(structs, out_maps))

        call = fn
        if shard is not None:
            target = shard(_begen_shard_extents(in_maps, arg_shapes, axes, dict(mesh.shape)))
            call = lambda local, *a: fn(local, *a, target=target)

        def lower(*args):
            out = _begen_vmapped(call, local, batch)(*args)
            return tuple(_jax.lax.psum(y, a) if a else y for y, a in zip(out, psum))

        return mesh, lower, out_shardings, in_shardings

    rule_ = SdyShardingRule(in_maps, out_maps, reduction_factors=reduction, need_replication_factors=whole)
    call.def_partition(partition, sharding_rule=rule_)
    return call


def _begen_shard_extents(in_maps, arg_shapes, axes, mesh_shape):
    # Each declared dimension's extent on one shard ({dim: extent}): its
    # global extent, from the first input that has it, over the devices of
    # the mesh axes the partition splits it along.
    extents = {}
    for maps, a in zip(in_maps, arg_shapes):
        for f, extent in zip(maps, a.shape):
            if not f.startswith("d_") or f[2:] in extents:
                continue
            for n in _begen_axis_names(axes.get(f)):
                extent //= mesh_shape[n]
            extents[f[2:]] = extent
    return extents


def _begen_ffi_call(rule, target, result, pick=None, **options):
    # jax.ffi.ffi_call(target, result, **options), split by `rule` under auto
    # mesh axes when there are several devices; the plain call otherwise.
    # `pick` (a tuned kernel's): {dim: per-shard extent} -> the target of
    # the candidate for one shard, asked when the call is partitioned, so
    # that each device runs the candidate its block's extents select.
    plain = _jax.ffi.ffi_call(target, result, **options)
    if _jax.device_count() < 2 or _begen_manual():
        return plain
    many = isinstance(result, (tuple, list))
    structs = tuple(result) if many else (result,)

    manual = _begen_manual_axes()

    def call(*arrays, **attrs):
        ruled = _begen_expand(rule, arrays)
        if manual and _begen_warn_manual(ruled, manual):
            return plain(*arrays, **attrs)
        if len(arrays) != len(rule[2]) or any(_begen_explicit(x) is not None for x in arrays):
            return plain(*arrays, **attrs)

        def fn(local, *a, target=target):
            out = _jax.ffi.ffi_call(target, local if many else local[0], **options)(*a, **attrs)
            return tuple(out) if many else (out,)

        spec = _begen_export_spec(target, structs, many, options, attrs)
        out = _begen_partition_primitive().bind(
            *arrays, fn=fn, structs=structs, rule=ruled, batch=(), spec=spec, shard=pick
        )
        return tuple(out) if many else out[0]

    return call


# Export under auto mesh axes. The exported custom call names no Python
# object: its backend config is a JSON text of the FFI target, its options
# and attributes, the outputs' global structs and the contract's rule, and
# the partitioner registered under `_BEGEN_PARTITIONED` (by the library's
# `register()`, in whatever process compiles it) rebuilds the per-shard call
# from it. A call whose attributes JSON cannot hold exactly gets the plain
# call in the export (every input gathered: right, not split).

_BEGEN_PARTITIONED = "begen_partitioned_v1"


def _begen_encode_attr(value):
    # One attribute as JSON, exactly; None when JSON cannot hold it.
    import numpy as np

    if isinstance(value, (bool, int, str)) and not isinstance(value, np.generic):
        return {"py": value}
    if isinstance(value, float):
        return {"py": value}
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return {"dtype": value.dtype.str, "value": value.item()}
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return {"dtype": value.dtype.str, "array": value.tolist(), "shape": list(value.shape)}
    return None


def _begen_decode_attr(entry):
    import numpy as np

    if "py" in entry:
        return entry["py"]
    dtype = np.dtype(entry["dtype"])
    if "array" in entry:
        return np.asarray(entry["array"], dtype=dtype).reshape(entry["shape"])
    return dtype.type(entry["value"])


def _begen_export_spec(target, structs, many, options, attrs):
    # The JSON text the exported custom call carries, or None.
    import json

    encoded = {}
    for name, value in attrs.items():
        entry = _begen_encode_attr(value)
        if entry is None:
            return None
        encoded[name] = entry
    opts = {}
    for name, value in options.items():
        if name == "input_output_aliases" and isinstance(value, dict):
            opts[name] = [[int(k), int(v)] for k, v in value.items()]
        elif isinstance(value, (bool, int, str)) or value is None:
            opts[name] = value
        else:
            return None
    return json.dumps(
        {
            "target": target,
            "many": many,
            "structs": [[list(s.shape), _jax.numpy.dtype(s.dtype).str] for s in structs],
            "options": opts,
            "attrs": encoded,
        },
        sort_keys=True,
    )


def _begen_export_shards(ctx, rule, batch, shard, target, num):
    # A tuned call's candidates per split, chosen now for the exported call
    # (the process that compiles it may hold other tables, or none): for
    # each way the partitioner may split the declared dimensions over `num`
    # devices, [{dim: per-shard extent}, target] where the tables give
    # another candidate than `target`. [] for a symbolic extent, or past
    # 256 ways (the export's choice then is `target` on every shard).
    in_maps, _, _, whole = _begen_factors(rule, batch)
    extents = {}
    for maps, a in zip(in_maps, ctx.avals_in):
        for f, extent in zip(maps, a.shape):
            if f.startswith("d_") and f[2:] not in extents:
                if not isinstance(extent, int):
                    return []
                extents[f[2:]] = extent
    ways = [({}, 1)]
    for d, extent in extents.items():
        if f"d_{d}" in whole:
            continue
        ways = [
            ({**w, d: t}, used * t)
            for w, used in ways
            for t in range(1, num + 1)
            if num % (used * t) == 0 and extent % t == 0
        ]
        if len(ways) > 256:
            return []
    shards = []
    for w, used in ways:
        if used == 1:
            continue
        local = {d: extent // w.get(d, 1) for d, extent in extents.items()}
        chosen = shard(local)
        if chosen != target:
            shards.append([local, chosen])
    return shards


def _begen_export_lowering(ctx, args, spec, rule, batch, shard=None):
    # The export's custom call: `_BEGEN_PARTITIONED`, with the contract's
    # Shardy rule and `spec` (plus the rule and batch) as backend config;
    # a tuned call's (`shard`) per-split candidates too.
    # None where it cannot be written (no spec, one device, a JAX without
    # the pieces): the caller lowers the plain call.
    import json

    num = getattr(ctx.module_context.axis_context, "num_devices", 1)
    if spec is None or num is None or num < 2:
        return None
    try:
        from jax._src.custom_partitioning_sharding_rule import sdy_sharding_rule_to_mlir
        from jax._src.lib.mlir import ir
        from jax._src.lib.mlir.dialects import hlo
        from jax.experimental.custom_partitioning import SdyShardingRule
        from jax.interpreters import mlir
    except ImportError:
        return None
    config = dict(json.loads(spec), rule=list(rule), batch=list(batch), platforms=list(ctx.module_context.platforms))
    shards = [] if shard is None else _begen_export_shards(ctx, rule, batch, shard, config["target"], num)
    if shards:
        config["shards"] = shards
    in_types = [mlir.aval_to_ir_type(ctx.module_context, a) for a in ctx.avals_in]
    out_types = [mlir.aval_to_ir_type(ctx.module_context, a) for a in ctx.avals_out]
    op = hlo.CustomCallOp(
        out_types,
        list(args),
        call_target_name=ir.StringAttr.get(_BEGEN_PARTITIONED),
        has_side_effect=ir.BoolAttr.get(False),
        api_version=mlir.i32_attr(2),
        called_computations=ir.ArrayAttr.get([]),
        backend_config=ir.StringAttr.get(json.dumps(config, sort_keys=True)),
        operand_layouts=None,
        result_layouts=None,
    )
    in_maps, out_maps, reduction, whole = _begen_factors(rule, batch)
    sdy = SdyShardingRule(in_maps, out_maps, reduction_factors=reduction, need_replication_factors=whole)
    op.attributes["sdy.sharding_rule"] = sdy_sharding_rule_to_mlir(sdy, in_types, out_types)
    return list(op.results)


def _begen_untuple(rule):
    # The rule as the JSON text held it (lists) back in its tuple form.
    name, params, ins, outs, shard, reduce = rule[:6]
    return (
        name,
        tuple(params),
        tuple(tuple(d) for d in ins),
        tuple(tuple(d) for d in outs),
        tuple(shard),
        tuple(reduce),
    ) + tuple(tuple(tuple(d) for d in per) for per in rule[6:])


def _begen_export_partition(arg_shapes, arg_shardings, result_shape, result_sharding, backend_config):
    # XLA's partitioner asks how to split one exported call. The factors
    # split are those the operands are tiled along (the first operand's
    # tiling of a factor wins; XLA moves any other to match), each on a
    # mesh axis of its own named after it; the per-shard call is the FFI
    # call on the blocks, its partial sums added over the reduced factors.
    import json

    import numpy as np
    from jax._src import core, sharding_impls
    from jax._src.interpreters import mlir
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    config = json.loads(backend_config)
    rule, batch = _begen_untuple(config["rule"]), tuple(config["batch"])
    in_maps, out_maps, reduction, whole = _begen_factors(rule, batch)
    splittable = {f for maps in in_maps for f in maps} - set(whole)
    total, tiles = 1, {}
    for s in arg_shardings:
        if not s.is_replicated() and len(s.tile_assignment_devices()) > total:
            total = len(s.tile_assignment_devices())
    for maps, s, shape in zip(in_maps, arg_shardings, arg_shapes):
        if s.is_replicated():
            continue
        for f, t, extent in zip(maps, s.tile_assignment_dimensions(), shape.dimensions()):
            used = int(np.prod(list(tiles.values()))) if tiles else 1
            if t > 1 and f in splittable and f not in tiles and extent % t == 0 and total % (used * t) == 0:
                tiles[f] = t
    names = tuple(tiles)
    sizes = tuple(tiles[f] for f in names)
    rest = total // (int(np.prod(sizes)) if sizes else 1)
    if rest > 1:
        names, sizes = names + ("begen_rest",), sizes + (rest,)
    if not names:
        names, sizes = ("begen_rest",), (1,)
    mesh = Mesh(np.array(_jax.devices()[: int(np.prod(sizes))]).reshape(sizes), names)
    in_shardings = [NamedSharding(mesh, PartitionSpec(*(f if f in tiles else None for f in maps))) for maps in in_maps]
    out_shardings = [
        NamedSharding(mesh, PartitionSpec(*(f if f in tiles and f not in reduction else None for f in maps)))
        for maps in out_maps
    ]
    psum = tuple(tuple(_begen_factor(d) for d in dims if _begen_factor(d) in tiles) for dims in _begen_sums(rule))
    structs = tuple(_jax.ShapeDtypeStruct(tuple(shape), dtype) for shape, dtype in config["structs"])
    local = tuple(
        _begen_local(s, maps[len(batch) :], {f: f for f in tiles if f not in reduction}, tiles)
        for s, maps in zip(structs, out_maps)
    )
    options = dict(config["options"])
    if "input_output_aliases" in options:
        options["input_output_aliases"] = {k: v for k, v in options["input_output_aliases"]}
    attrs = {k: _begen_decode_attr(v) for k, v in config["attrs"].items()}
    many, target = config["many"], config["target"]
    if config.get("shards"):
        # A tuned call: the candidate chosen at export for this split.
        blocks = {}
        for maps, shape in zip(in_maps, arg_shapes):
            for f, extent in zip(maps, shape.dimensions()):
                if f.startswith("d_") and f[2:] not in blocks:
                    blocks[f[2:]] = extent // tiles.get(f, 1)
        for extents, chosen in config["shards"]:
            if extents == blocks:
                target = chosen

    def fn(outs, *a):
        out = _jax.ffi.ffi_call(target, outs if many else outs[0], **options)(*a, **attrs)
        return tuple(out) if many else (out,)

    def lower(*args):
        out = _begen_vmapped(fn, local, batch)(*args)
        return tuple(_jax.lax.psum(y, a) if a else y for y, a in zip(out, psum))

    hlo_in = [sh._to_xla_hlo_sharding(len(s.dimensions())) for sh, s in zip(in_shardings, arg_shapes)]
    results = result_shape.tuple_shapes() if result_shape.is_tuple() else (result_shape,)
    hlo_out = [sh._to_xla_hlo_sharding(len(s.dimensions())) for sh, s in zip(out_shardings, results)]
    blocks = [core.ShapedArray(h.tile(s).dimensions(), s.numpy_dtype()) for h, s in zip(hlo_in, arg_shapes)]
    closed = _jax.make_jaxpr(lower, axis_env=list(mesh.shape.items()))(*blocks)
    platforms = config["platforms"]
    if len(platforms) != 1:
        platforms = ["cuda" if _jax.default_backend() == "gpu" else _jax.default_backend()]
    context = sharding_impls.SPMDAxisContext(mesh, frozenset(mesh.axis_names))
    with core.extend_axis_env_nd(mesh.shape.items()):
        if getattr(closed, "is_high", False):
            from jax._src.interpreters import partial_eval as pe

            closed = pe.lower_jaxpr2(closed)
        module = mlir.build_mlir_module_helper(
            closed, name="begen_shard", platforms=platforms, backend=None, axis_context=context
        )
    if result_shape.is_tuple():
        from jax._src.lib import xla_client as xc

        out_sharding = xc.HloSharding.tuple_sharding(result_shape, hlo_out)
    else:
        out_sharding = hlo_out[0]
    return mlir.module_to_bytecode(module), hlo_in, out_sharding


def _begen_register_partitioner():
    # Registers `_BEGEN_PARTITIONED`'s partitioner with XLA (and with the
    # PJRT plugins, as they load). Registering it again, from another begen
    # library in the process, replaces it with the same code.
    try:
        from functools import partial

        from jax._src import xla_bridge
        from jax._src.lib import xla_client as xc
    except ImportError:
        return

    def keep(user_sharding, shape, backend_config):
        return user_sharding

    def infer(arg_shapes, arg_shardings, result_shape, backend_config):
        return None

    args = {
        "prop_user_sharding": keep,
        "partition": _begen_export_partition,
        "infer_sharding_from_operands": infer,
        "can_side_effecting_have_replicated_sharding": True,
    }
    xc.register_custom_call_partitioner(_BEGEN_PARTITIONED, **args)
    xla_bridge.register_plugin_callbacks(partial(xc.register_custom_call_partitioner, name=_BEGEN_PARTITIONED, **args))
