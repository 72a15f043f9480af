# Tuned algorithms (`tune: {NAME: {implementations: true}}`): which
# implementation a call runs on its platform, among those that support it,
# the first of: `config={"implementation": NAME}`, BEGEN_TUNE=default|off
# (the priority order), the user's table, the table shipped beside the
# module, the entry of the nearest bucket on the same device, the priority
# order; the same tables and entries as the JAX module's. Cached per key, as
# a tuned kernel's choice is; under torch.compile made while dynamo traces,
# from the static extents (a symbolic one: the priority order).


def _begen_algorithm_extents(name, args):
    # The key dims' extents of a call, each read from an input's shape.
    dims = {}
    for dim, i, axis in _BEGEN_TUNE_ALGORITHMS[name]["key_at"]:
        shape = args[i].shape
        dims[dim] = shape[axis] if axis < len(shape) else None
    return _begen_tune_static(dims)


_begen_algorithm_cache = {}


def _begen_algorithm_pick(name, platform, supported, dims, dtypes):
    # The name of the implementation the tables choose among `supported`
    # (the platform's implementations that support the call, best first).
    state = _begen_tune_state()
    key = (name, platform, supported, tuple(dims.items()), dtypes, state)
    hit = _begen_algorithm_cache.get(key) if state is not None else None
    if hit is not None:
        return hit
    chosen = _begen_algorithm_lookup(name, platform, supported, dims, dtypes)
    if state is not None and None not in dims.values():
        _begen_algorithm_cache[key] = chosen
    return chosen


def _begen_algorithm_lookup(name, platform, supported, dims, dtypes):
    if len(supported) < 2 or _os.environ.get("BEGEN_TUNE"):
        return supported[0]
    try:
        buckets = {d: _begen_tune_bucket(v) for d, v in dims.items()}
    except (TypeError, ValueError):
        return supported[0]
    device = _begen_tune_device(platform)
    if device is None:
        return supported[0]
    spec = _BEGEN_TUNE_ALGORITHMS[name]
    nearest = None
    for path in (_begen_tune_user_table(), _begen_tune_shipped_table()):
        for e in _begen_tune_entries(path):
            if e["kernel"] != spec["target"] or e["device"] != device or tuple(e["dtypes"]) != dtypes:
                continue
            if set(e["key"]) != set(buckets):
                continue
            if e["hash"] != spec["hash"]:
                _begen_tune_warn(path, name, "the algorithm's implementations changed since it was tuned (tune it again)")
                continue
            chosen = e["config"].get("implementation")
            if set(e["config"]) != {"implementation"} or chosen not in spec["implementations"].get(platform, ()):
                _begen_tune_warn(path, name, f"its candidate {e['config']} is not one this build holds")
                continue
            if chosen not in supported:
                # It refuses this call's attribute values.
                continue
            if e["key"] == buckets:
                return chosen
            far = _begen_tune_distance(e["key"], buckets)
            if nearest is None or far < nearest[0]:
                nearest = (far, chosen)
    return supported[0] if nearest is None else nearest[1]


# Dynamo does not trace the choice (it reads files): it calls it once while
# tracing and takes the result as a constant of the graph.
_begen_algorithm_pick_eager = _begen_algorithm_pick
_begen_algorithm_pick = _torch._dynamo.assume_constant_result(_begen_algorithm_pick_eager)
