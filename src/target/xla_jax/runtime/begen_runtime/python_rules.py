"""Section `python_rules` (a kernel whose backward pass is a Python
function, begen.yaml's `python_vjp: module:function`): the
`jax.custom_vjp` that calls it, and the rule found, called with the
module and checked.

Above the `# begen: emit below` line: only what this file needs on its own.
"""

import sys as _sys
import types as _types

import jax as _jax

from .vjp import _begen_inexact, _begen_typed_like

# The python_vjp: modules that are files beside begen.yaml: module ->
# (path, text). The generated module defines it where it has any.
_BEGEN_RULES = {}

# begen: emit below

# Derivative rules in Python. Run at trace time.

_begen_rule_modules = {}


def _begen_rule_module(module):
    # The rule's module: a file beside begen.yaml (its text, carried in
    # `_BEGEN_RULES`) run once as a module of its own, named under this
    # one; else the module Python imports by that name.
    found = _begen_rule_modules.get(module)
    if found is not None:
        return found
    carried = globals().get("_BEGEN_RULES", {}).get(module)
    if carried is None:
        __import__(module)
        found = _sys.modules[module]
    else:
        path, text = carried
        found = _types.ModuleType(f"{__name__}._begen_rules.{module}")
        found.__file__ = path
        # exec and compile from the builtins module: a kernel of either
        # name is a function of this module, which would hide the builtin.
        run = __import__("builtins")
        run.exec(run.compile(text, path, "exec"), found.__dict__)
    _begen_rule_modules[module] = found
    return found


def _begen_python_rule(rule, shown, names, *args):
    # The backward pass of `shown` through the Python function `rule`
    # (`module:function`): called as fn(module, *inputs, *outputs,
    # *cotangents), where module is the generated module (the rule
    # composes its functions), it returns one cotangent per input (None
    # for one it does not differentiate, as an integer input), each with
    # its input's shape and dtype.
    *inputs, outs, cts = args
    module, name = rule.split(":")
    try:
        fn = getattr(_begen_rule_module(module), name)
    except (ImportError, AttributeError) as e:
        raise ImportError(f"{shown}: its python_vjp rule `{rule}` cannot be found: {e}") from e
    got = fn(_sys.modules[__name__], *inputs, *outs, *cts)
    if len(inputs) == 1 and not isinstance(got, (tuple, list)):
        got = (got,)
    if not isinstance(got, (tuple, list)) or len(got) != len(inputs):
        n = len(got) if isinstance(got, (tuple, list)) else f"a {type(got).__name__}"
        raise TypeError(
            f"{shown}: its python_vjp rule `{rule}` returned {n} cotangents, not one per input "
            f"({len(inputs)}: {', '.join(names)})"
        )
    checked = []
    for name, x, g in zip(names, inputs, got):
        want = (_jax.numpy.shape(x), _jax.numpy.result_type(x))
        if g is None or not _jax.numpy.issubdtype(want[1], _jax.numpy.inexact):
            # No cotangent, or an integer input's, which JAX drops.
            checked.append(None)
            continue
        have = (_jax.numpy.shape(g), _jax.numpy.result_type(g))
        if have != want:
            raise TypeError(
                f"{shown}: its python_vjp rule `{rule}` returned a cotangent for input '{name}' of shape "
                f"{have[0]} and dtype {have[1]}, not its input's {want[0]} and {want[1]}"
            )
        checked.append(g)
    return tuple(checked) if len(inputs) > 1 else checked[0]


def _begen_vjp_rule(primal, backward, args, public, n_out):
    # A jax.custom_vjp of a kernel whose backward pass is a Python rule:
    # `primal` returns all `n_out` outputs, the function those at the
    # positions `public`; the backward pass calls `backward(*inputs,
    # outputs, cotangents)` with one cotangent per returned output. The
    # outputs the rule is handed come from the custom_vjp itself, not from
    # `primal`: a second derivative differentiates them through the same
    # rule (the kernel's own FFI call has no derivative). An integer
    # output's float0 cotangent reaches the rule as zeros of its dtype.
    def whole(*a):
        out = primal(*a)
        return tuple(out) if n_out > 1 else (out,)

    f = _jax.custom_vjp(whole)

    def fwd(*a):
        outs = f(*a)
        return outs, (a, outs)

    def bwd(res, ct):
        a, outs = res
        cts = tuple(ct[k] if _begen_inexact(outs[k]) else _jax.numpy.zeros_like(outs[k]) for k in public)
        grads = backward(*a, outs, cts)
        grads = tuple(grads) if len(a) > 1 else (grads,)
        return tuple(_begen_typed_like(g, x) if _begen_inexact(x) else None for x, g in zip(a, grads))

    f.defvjp(fwd, bwd)
    outs = f(*args)
    kept = tuple(outs[k] for k in public)
    return kept if len(public) > 1 else kept[0]
