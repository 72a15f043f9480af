"""Section `tune_algorithms` (an algorithm under `tune:` with
`implementations: true`): which of its implementations a call runs, per
platform, chosen when the call is traced, never per call.

Above the `# begen: emit below` line: only what this file needs on its own.
"""

import os as _os

import jax as _jax
import numpy as _np

from .algorithms import _ALGORITHMS, _begen_platform
from .tuning import (
    _BEGEN_TUNE,
    _begen_tune_bucket,
    _begen_tune_device,
    _begen_tune_distance,
    _begen_tune_dtypes,
    _begen_tune_entries,
    _begen_tune_record,
    _begen_tune_shipped_table,
    _begen_tune_user_table,
    _begen_tune_warn,
)
from .unsupported import _begen_refusal

# begen: emit below

# The choice of a tuned algorithm's implementation. Per platform, among its
# implementations for that platform that support the call's attribute
# values, the first of: `config={"implementation": NAME}`,
# BEGEN_TUNE=default|off (the priority order), the user's table, the table
# shipped beside the module, the entry of the nearest bucket on the same
# device, the priority order. An implementation that refuses the call is
# never chosen. It runs at trace time only: the lowered HLO calls the
# chosen implementation's target, and the choice costs nothing per call.


def _begen_tune_extents(name, args):
    # The key dims' extents of a call: each read from an input's shape
    # (None where the input has no such axis).
    out = {}
    for dim, i, axis in _BEGEN_TUNE[name].get("key_at", ()):
        shape = _np.shape(args[i])
        out[dim] = shape[axis] if axis < len(shape) else None
    return out


def _begen_tune_algorithm_key(name, platform, args):
    # (device kind, dtypes, bucketed key dims) of a call lowered for
    # `platform`; None when a key dim has no bucket (a symbolic extent
    # under jax.export, a missing axis) or the platform has no device here.
    dims = {}
    for dim, v in _begen_tune_extents(name, args).items():
        try:
            dims[dim] = _begen_tune_bucket(v)
        except Exception:
            return None
    device = _begen_tune_device(platform)
    return None if device is None else (device, _begen_tune_dtypes(args), dims)


def _begen_tune_algorithm_pick(name, platform, supported, args):
    # The implementation the tables choose for a call on `platform`:
    # `supported` holds the platform's implementations that support the
    # call, best first (the priority order's choice).
    spec = _BEGEN_TUNE[name]
    if len(supported) < 2 or _os.environ.get("BEGEN_TUNE"):
        return supported[0]
    key = _begen_tune_algorithm_key(name, platform, args)
    if key is None:
        return supported[0]
    built = spec["implementations"].get(platform, ())
    nearest = None
    for path in (_begen_tune_user_table(), _begen_tune_shipped_table()):
        for e in _begen_tune_entries(path):
            if e["kernel"] != spec["target"] or e["device"] != key[0] or tuple(e["dtypes"]) != key[1]:
                continue
            if set(e["key"]) != set(key[2]):
                continue
            if e["hash"] != spec["hash"]:
                _begen_tune_warn(
                    path, name, "the algorithm's implementations changed since it was tuned (tune it again)"
                )
                continue
            chosen = e["config"].get("implementation")
            if set(e["config"]) != {"implementation"} or chosen not in built:
                _begen_tune_warn(path, name, f"its candidate {e['config']} is not one this build holds")
                continue
            impl = next((i for i in supported if i.function == chosen), None)
            if impl is None:
                # It refuses this call's attribute values.
                continue
            if e["key"] == key[2]:
                return impl
            far = _begen_tune_distance(e["key"], key[2])
            if nearest is None or far < nearest[0]:
                nearest = (far, impl)
    return supported[0] if nearest is None else nearest[1]


def _begen_dispatch_tuned(name, args, kwargs):
    # `_begen_dispatch` for a tuned algorithm: per platform, every
    # implementation that supports the call's attribute values is a
    # candidate, and the tables (or `config=`) choose among them; the
    # choices are staged out with lax.platform_dependent, so the HLO holds
    # the chosen target only.
    fallback, implementations = _ALGORITHMS[name]
    kwargs = dict(kwargs)
    config = kwargs.pop("config", None)
    wanted = None
    if config is not None:
        if not isinstance(config, dict):
            raise TypeError(f"{__name__}.{name}: config= takes a dict, got {type(config).__name__}")
        config = dict(config)
        wanted = config.pop("implementation", None)
        if config:
            # The rest: the implementation's own tuned parameters.
            kwargs["config"] = config
        names = [impl.function for impl in implementations]
        if wanted is not None and wanted not in names:
            raise ValueError(
                f"{__name__}.{name}: config= names implementation {wanted!r}, which is not one of {name}'s "
                f"({', '.join(names)})"
            )
    mode = _os.environ.get("BEGEN_TUNE", "")
    if mode not in ("", "default", "off"):
        raise ValueError(f"BEGEN_TUNE={mode!r}: it takes 'default' or 'off' (or is unset)")
    record = _os.environ.get("BEGEN_TUNE_RECORD")
    if record:
        extents = {dim: (v, None) for dim, v in _begen_tune_extents(name, args).items()}
        _begen_tune_record(record, name, extents, _begen_tune_dtypes(args), None)
    supported, refused = {}, {}
    for impl in implementations:
        if impl.platform in refused and not fallback:
            continue
        kw = {impl.renames.get(k, k): v for k, v in kwargs.items()}
        table = {a: (kw.get(a), values) for a, values in impl.unsupported.items()}
        why = _begen_refusal(f"'{impl.function}' ({impl.platform}, priority {impl.priority})", table)
        if why is None:
            supported.setdefault(impl.platform, []).append(impl)
        elif impl.platform not in supported:
            refused.setdefault(impl.platform, []).append(why)
            if impl.function == wanted:
                raise ValueError(f"{__name__}.{name}: config= names implementation {wanted!r}, but {why}")
        elif impl.function == wanted:
            raise ValueError(f"{__name__}.{name}: config= names implementation {wanted!r}, but {why}")
    here = _begen_platform()
    if not supported or (here in refused and here not in supported):
        reasons = refused.get(here) or [r for rs in refused.values() for r in rs]
        tail = "" if fallback else " (the algorithm does not fall back: fallback: false)"
        raise ValueError(f"{__name__}.{name}: no implementation supports this call: {'; '.join(reasons)}{tail}")
    chosen = {}
    for platform, impls in supported.items():
        fixed = [impl for impl in impls if impl.function == wanted]
        chosen[platform] = fixed[0] if fixed else _begen_tune_algorithm_pick(name, platform, impls, args)

    def branch(impl):
        kw = {impl.renames.get(k, k): v for k, v in kwargs.items()}
        return lambda *a: impl.call(*a, **kw)

    return _jax.lax.platform_dependent(*args, **{p: branch(impl) for p, impl in chosen.items()})
