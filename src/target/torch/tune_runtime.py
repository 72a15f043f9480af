# The torch module's side of the tuning section above: the device kind
# and dtype names from torch (as jax names them: "cpu", the CUDA device's
# name, "float32"), so a table `begen tune` wrote for the JAX module
# applies here unchanged.


from torch.fx.experimental.symbolic_shapes import has_static_value as _has_static_value


def _begen_tune_device(platform):
    kind = _begen_tune_kinds.get(platform)
    if kind is None:
        if platform == "cuda":
            if not _torch.cuda.is_available():
                return None
            kind = _torch.cuda.get_device_name()
        else:
            kind = "cpu"
        _begen_tune_kinds[platform] = kind
    return kind


def _begen_tune_dtypes(dtypes):
    # Here the call passes its inputs' dtype names already.
    return tuple(dtypes)


# (kernel, key dims, dtypes, fixed consts, BEGEN_TUNE state) -> the tuned
# consts' values: an eager call chooses once per key, then looks it up.
_begen_tune_cache = {}


def _begen_tune_choose(fn, dims, dtypes, config, given):
    # The tuned consts of a call of `fn` (each as its keyword takes it):
    # `dims` the key dims' extents, `dtypes` the inputs' dtype names,
    # `given` the const keywords (None where not given). Under
    # torch.compile it runs while dynamo traces, with static extents; an
    # extent that is not an integer has no bucket (the default is taken).
    state = _begen_tune_state()
    key = None
    if state is not None and isinstance(config, (dict, type(None))):
        key = (fn, tuple(dims.items()), dtypes, tuple(sorted((config or {}).items())), tuple(given.items()), state)
        hit = _begen_tune_cache.get(key)
        if hit is not None:
            return hit
    values, fixed = _begen_tune_fixed(fn, config, given)
    consts = _BEGEN_TUNE[fn]["consts"]
    c = {n: _begen_tune_text(fn, consts[n][0], v) for n, v in values.items()}
    d = {n: (v if isinstance(v, int) else None, None) for n, v in dims.items()}
    out = _begen_tune_pick(fn, c, d, dtypes, fixed)
    chosen = {n: _begen_tune_value(consts[n][0], out[n]) for n in consts}
    if key is not None and None not in [d[n][0] for n in d]:
        _begen_tune_cache[key] = chosen
    return chosen


def _begen_tune_static(dims):
    # The key dims' extents the choice may bucket: a symbolic one (under
    # torch.compile with dynamic shapes, mark_dynamic) is None, so the call
    # takes the given consts or the declared default, as the JAX side does
    # for a symbolic extent under jax.export. Dynamo traces this function
    # (it answers has_static_value itself; isinstance sees an int), so the
    # choice below is handed only constants. Eagerly every extent is an int.
    if not _torch.compiler.is_compiling():
        return dims
    return {n: (int(v) if _has_static_value(v) else None) for n, v in dims.items()}


# Under torch.compile dynamo does not trace the choice (it reads files):
# it calls it once while tracing, with the call's static extents, and
# takes the result as a constant of the graph.
_begen_tune_choose_eager = _begen_tune_choose
_begen_tune_choose = _torch._dynamo.assume_constant_result(_begen_tune_choose_eager)
