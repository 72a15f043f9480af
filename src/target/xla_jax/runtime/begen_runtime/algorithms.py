"""Section `algorithms` (begen.yaml's `algorithms:`): an algorithm's call
dispatched to the best implementation that supports it, per platform.

Above the `# begen: emit below` line: only what this file needs on its own.
"""

from typing import NamedTuple as _NamedTuple

import jax as _jax

from .unsupported import _begen_refusal

# The generated module defines this: name -> (fallback, implementations, best first).
_ALGORITHMS = {}

# begen: emit below

# Algorithms. Run at trace time.


class _BegenImplementation(_NamedTuple):
    """One implementation of an algorithm (begen.yaml's `algorithms:`)."""

    algorithm: str
    #: The function's name (`module.function` in a library of modules).
    function: str
    #: "cpu" or "cuda".
    platform: str
    #: Higher wins among the implementations for one platform.
    priority: int
    #: Attribute values it does not support: {attribute: (values, ...)}.
    unsupported: dict
    #: Its Python function.
    call: object
    #: The algorithm's keyword names it spells differently.
    renames: dict
    #: ((input name, dtype or None), ...) it serves, where the algorithm's
    #: implementations differ by input dtypes; () serves any.
    dtypes: tuple = ()


def _begen_platform():
    # The platform name lax.platform_dependent uses for the default backend.
    backend = _jax.default_backend()
    return "cuda" if backend == "gpu" else backend


def _begen_by_dtype(name, implementations, args):
    # The implementations that serve the inputs' dtypes; none: a TypeError
    # naming the function, the first input no implementation serves with
    # the others' dtypes, and every dtype each input is served in.
    got = [_jax.numpy.result_type(a).name for a in args]

    def serves(impl):
        return all(t is None or t == g for (_, t), g in zip(impl.dtypes, got))

    fit = [impl for impl in implementations if serves(impl)]
    if fit:
        return fit
    served = {}
    for impl in implementations:
        for k, (param, t) in enumerate(impl.dtypes):
            served.setdefault((k, param), [])
            if t is not None and t not in served[(k, param)]:
                served[(k, param)].append(t)
    for (k, param), types in served.items():
        if types and got[k] not in types:
            break
    else:
        k, param = next(iter(served))
    combos = "; ".join(
        ", ".join(f"{p}: {t or 'any'}" for p, t in impl.dtypes) + f" ('{impl.function}')" for impl in implementations
    )
    raise TypeError(
        f"{__name__}.{name}: parameter '{param}' is {got[k]} (with inputs {', '.join(got)}), a dtype no "
        f"implementation serves: {', '.join(served[(k, param)])}; the implementations take {combos}"
    )


def _begen_dispatch(name, args, kwargs):
    # Picks, per platform, the best implementation that supports the call's
    # attribute values, and stages them out with lax.platform_dependent:
    # lowering keeps only the branch of the platform it lowers for (no
    # run-time cost; the HLO holds that target only).
    fallback, implementations = _ALGORITHMS[name]
    if any(impl.dtypes for impl in implementations):
        implementations = _begen_by_dtype(name, implementations, args)
    chosen, refused = {}, {}
    for impl in implementations:
        if impl.platform in chosen or (impl.platform in refused and not fallback):
            continue
        kw = {impl.renames.get(k, k): v for k, v in kwargs.items()}
        table = {a: (kw.get(a), values) for a, values in impl.unsupported.items()}
        why = _begen_refusal(f"'{impl.function}' ({impl.platform}, priority {impl.priority})", table)
        if why is None:
            chosen[impl.platform] = impl
        else:
            refused.setdefault(impl.platform, []).append(why)
    here = _begen_platform()
    if not chosen or (here in refused and here not in chosen):
        reasons = refused.get(here) or [r for rs in refused.values() for r in rs]
        tail = "" if fallback else " (the algorithm does not fall back: fallback: false)"
        raise ValueError(f"{__name__}.{name}: no implementation supports this call: {'; '.join(reasons)}{tail}")

    def branch(impl):
        kw = {impl.renames.get(k, k): v for k, v in kwargs.items()}
        return lambda *a: impl.call(*a, **kw)

    # Even with one branch: lowering for a platform without one is then
    # jax's error naming the platform, not a missing FFI handler.
    return _jax.lax.platform_dependent(*args, **{p: branch(impl) for p, impl in chosen.items()})
