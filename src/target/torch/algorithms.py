# Algorithms (begen.yaml's `algorithms:`): a call dispatched to the best
# implementation's op for its inputs' device, dtypes and attribute values.
import math as _math
from typing import NamedTuple as _NamedTuple


class _BegenTorchImplementation(_NamedTuple):
    """One implementation of an algorithm."""

    #: The kernel's name.
    function: str
    #: "cpu" or "cuda".
    platform: str
    #: Higher wins among the implementations for one platform.
    priority: int
    #: Attribute values it does not support: {keyword: (values, ...)}.
    unsupported: dict
    #: Its typed function.
    call: object
    #: The algorithm's keywords it names otherwise.
    renames: dict
    #: Each input's dtype name (None: any), where the algorithm's
    #: implementations differ by input dtypes; () serves any.
    dtypes: tuple


def _begen_same(value, unsupported):
    # NaN (begen.yaml `.nan`) equals nothing, itself included: compared by isnan.
    if isinstance(unsupported, float) and _math.isnan(unsupported):
        return isinstance(value, float) and _math.isnan(value)
    return value == unsupported


def _begen_algorithm(name, args, kwargs, config):
    fallback, tuned, implementations = _BEGEN_ALGORITHMS[name]
    here = args[0].device.type
    mine = [i for i in implementations if i.platform == here]
    if not mine:
        served = sorted({i.platform for i in implementations})
        raise ValueError(
            f"{__name__}.{name}: no implementation runs on {here} (the inputs' device); "
            f"its implementations run on {', '.join(served)}"
        )
    got = [str(a.dtype).removeprefix("torch.") for a in args]
    fit = [i for i in mine if all(t is None or t == g for t, g in zip(i.dtypes, got))]
    if not fit:
        served = "; ".join(f"{', '.join(t or 'any' for t in i.dtypes)} ('{i.function}')" for i in mine)
        raise TypeError(f"{__name__}.{name}: inputs of dtypes {', '.join(got)}: no implementation serves them; they take {served}")
    if config is not None:
        wanted = config.get("implementation") if isinstance(config, dict) else None
        if wanted is None or set(config) != {"implementation"}:
            raise ValueError(f"{__name__}.{name}: config={config!r} names no implementation: config={{'implementation': NAME}}")
        fit = [i for i in fit if i.function == wanted]
        if not fit:
            names = ", ".join(i.function for i in mine)
            raise ValueError(f"{__name__}.{name}: config implementation {wanted!r} is not one for {here}: {names}")
    refused, supported = [], []
    for impl in fit:
        kw = {impl.renames.get(k, k): v for k, v in kwargs.items()}
        bad = next((k for k, values in impl.unsupported.items() if any(_begen_same(kw.get(k), u) for u in values)), None)
        if bad is None:
            supported.append((impl, kw))
            if not tuned or config is not None:
                break
            continue
        refused.append(
            f"'{impl.function}' ({impl.platform}, priority {impl.priority}) does not support "
            f"{bad}={kw[bad]!r} (begen.yaml: unsupported)"
        )
        if not fallback and not supported:
            break
    if not supported:
        tail = "" if fallback else " (the algorithm does not fall back: fallback: false)"
        raise ValueError(f"{__name__}.{name}: no implementation supports this call: {'; '.join(refused)}{tail}")
    impl, kw = supported[0]
    if tuned and config is None and len(supported) > 1:
        dims = _begen_algorithm_extents(name, args)
        names = tuple(i.function for i, _ in supported)
        chosen = _begen_algorithm_pick(name, here, names, dims, tuple(got))
        impl, kw = supported[names.index(chosen)]
    return impl.call(*args, **kw)


