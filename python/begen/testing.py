"""Gradient checks of a begen-built module's declared derivatives.

:func:`check_grads` checks every kernel whose ``begen.yaml`` declares a
derivative (``vjp:``, ``jvp:``, ``linear:``, ``transpose:``) against finite
differences, with :func:`jax.test_util.check_grads`, in each mode the
declarations support: forward (``fwd``) and reverse (``rev``) mode, and a
second order in each where the kernels the first order runs are
differentiable in turn. It reads what the generated module declares in
``_BEGEN_GRADS`` (the kernels, their inputs' contracts, their attributes,
their declarations), builds inputs from the contracts unless given a
generator, and returns a table: one row per mode and inputs differentiated
(all float inputs together, then each alone), each checked on every draw
of inputs, and the draws::

    kernel  mode          wrt   max error  result
    mulsum  rev           x, y  2.2e-16    pass
    mulsum  rev           x     1.1e-16    pass
    mulsum  rev           y     1.1e-16    pass
    mulsum  rev, order 2  x, y  -          n/a: not declared (...)

    drawn (every row of a kernel ran on each of its draws):
      mulsum  n=3 neg=False | n=3 neg=True | n=17 neg=False | n=17 neg=True

From pytest::

    from begen.testing import check_grads
    import mypkg

    def test_gradients():
        check_grads(mypkg._kernels)      # raises AssertionError with the table

From the command line, on a build's OUT folder::

    python -m begen check-grads OUT [--kernels a,b] [--order 1] [--inputs mygens:inputs]

It needs jax and numpy, and nothing else of begen: it runs where the
package's kernels are installed.

:func:`check_torch` checks the PyTorch ops of a ``<NAME>_torch`` module
(``begen build --target jax,torch``) from what it declares in
``_begen_ops``: on inputs drawn the same way, ``torch.library.opcheck`` on
every op, and ``torch.autograd.gradcheck`` on every op with ``vjp:`` (its
float inputs together, then each alone), in float64 where there is a
float64 instance::

    op      check                       wrt   result
    mulsum  test_schema                 -     pass
    ...
    mulsum  gradcheck                   x, y  pass: float64

    python -m begen check-grads --torch OUT [--name NAME] [--kernels a,b]

It needs torch and numpy, not jax (nothing of this module imports jax
until :func:`check_grads` runs).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib
import math
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable, Union

__all__ = [
    "GradReport",
    "GradRow",
    "TorchReport",
    "TorchRow",
    "check_grads",
    "check_torch",
    "declared_kernels",
    "main",
    "torch_ops",
]

#: The modes checked, in order: (mode, order). A second order runs only
#: where the first order of its mode passed.
ATTEMPTS = (("fwd", 1), ("rev", 1), ("fwd", 2), ("rev", 2))

# What JAX and begen's runtime say when a derivative is not declared (a
# custom_vjp in forward mode, an FFI call without rules, an input with no
# transpose, forward mode through a backward kernel beside `linear:`): such
# a mode is not applicable, not a failure.
_NOT_DECLARED = (
    "can't apply forward-mode autodiff (jvp) to a custom_vjp function",
    "cannot be differentiated",
    "Differentiation rule for",
    "Transpose rule (for reverse-mode differentiation) for",
    "not linear in",
    "no transpose for",
    "nor gives the kernel a `jvp`",
    "gives it no",
    "no forward mode in",
    "no second derivative through its backward kernel",
)

Inputs = Union[tuple[Any, ...], tuple[tuple[Any, ...], Mapping[str, Any]]]
Generator = Callable[..., Inputs]


class _Row:
    """What a row of either table has: a result (``pass``, ``FAIL``,
    ``ERROR``, ``n/a``, ``skipped``) and a note; the row failed when the
    result is ``FAIL`` or ``ERROR``."""

    result: str
    note: str

    @property
    def failed(self) -> bool:
        return self.result in ("FAIL", "ERROR")


def _with_note(r: _Row) -> str:
    return f"{r.result}: {r.note}" if r.note else r.result


@dataclass
class _Report:
    """What both reports share: the module, the rows, per kernel or op the
    draws its rows ran on, ``ok``, ``failures``, and the table: one column
    per name of ``_HEAD``, padded to its widest cell (the last, the result,
    unpadded), then the draws; ``str(report)`` heads it with ``_CHECKS``
    and the verdict. Each report names its columns and gives a row's cells
    (``_cells``)."""

    module: str
    rows: list = field(default_factory=list)
    drawn: dict = field(default_factory=dict)

    _CHECKS = "checks"
    _HEAD = ("result",)
    _EACH = "a kernel"

    @property
    def ok(self) -> bool:
        return not any(r.failed for r in self.rows)

    @property
    def failures(self) -> list:
        return [r for r in self.rows if r.failed]

    def _cells(self, r: Any) -> tuple:
        raise NotImplementedError

    def table(self) -> str:
        head = self._HEAD
        body = [self._cells(r) for r in self.rows]
        last = len(head) - 1
        widths = [max(len(line[k]) for line in [head, *body]) for k in range(last)]
        lines = [
            "  ".join(c.ljust(w) for c, w in zip(line[:last], widths)) + "  " + line[last] for line in [head, *body]
        ]
        if self.drawn:
            lines.append("")
            lines.append(f"drawn (every row of {self._EACH} ran on each of its draws):")
            width = max(len(k) for k in self.drawn)
            for name, draws in self.drawn.items():
                lines.append(f"  {name.ljust(width)}  " + " | ".join(draws))
        return "\n".join(x.rstrip() for x in lines)

    def __str__(self) -> str:
        failed = len(self.failures)
        verdict = f"{failed} failed" if failed else "all passed"
        return f"{self._CHECKS} of {self.module}: {verdict}\n{self.table()}"


@dataclass
class GradRow(_Row):
    """One line of the table: a kernel, a mode, the inputs differentiated
    (``wrt``: all of them, or one alone), the largest difference between
    the derivative and finite differences over every draw, and the result
    (``pass``, ``FAIL``, ``ERROR``, ``n/a``, ``skipped``) with a note (a
    failure names the draw it failed on)."""

    kernel: str
    mode: str
    max_error: float | None
    result: str
    note: str = ""
    wrt: str = "-"


@dataclass
class GradReport(_Report):
    """What :func:`check_grads` found: one :class:`GradRow` per kernel,
    mode and inputs differentiated, and, per kernel, the draws it was
    checked on (``drawn``: each the extents and attribute values of one
    set of inputs). ``str(report)`` is the table and the draws;
    ``report.ok`` says whether nothing failed."""

    _CHECKS = "gradient checks"
    _HEAD = ("kernel", "mode", "wrt", "max error", "result")
    _EACH = "a kernel"

    def _cells(self, r: GradRow) -> tuple:
        return (r.kernel, r.mode, r.wrt, "-" if r.max_error is None else f"{r.max_error:.3g}", _with_note(r))


def declared_kernels(module) -> dict:
    """The kernels of ``module`` (a begen-built module) that declare
    derivatives, by name, each with what the module says of it (its
    function's path, platform, inputs' contracts, attributes and
    declarations)."""
    grads = getattr(module, "_BEGEN_GRADS", None)
    if grads is None:
        if not hasattr(module, "TARGETS") or not hasattr(module, "register"):
            raise TypeError(f"{getattr(module, '__name__', module)!r} is not a module begen generated")
        return {}
    return dict(grads)


def check_grads(
    module,
    kernels: Iterable[str] | None = None,
    *,
    inputs: Generator | Mapping[str, Generator] | None = None,
    order: int = 2,
    modes: Sequence[str] = ("fwd", "rev"),
    atol: float | None = None,
    rtol: float | None = None,
    eps: float | None = None,
    seed: int = 0,
    raise_on_failure: bool = True,
) -> GradReport:
    """Checks the declared derivatives of ``module``'s kernels (all that
    declare one, or those named in ``kernels``) and returns the table.

    Inputs come from each kernel's contract, in the draws of ``DRAWS``:
    named dimensions get distinct extents, small (3, 4, 5, ...) and past a
    small kernel's threshold (17, 33, 19, 35, ...); float inputs standard
    normal values, integer and boolean inputs zeros, which keeps index
    arrays in bounds; an integer attribute named like a dimension its
    extent, any other a positive count; a boolean attribute False and True;
    a float attribute 0.75, -1.25, 1.5 and -0.5. A draw of values the
    kernel declares ``unsupported:`` is left out (the table says so).
    ``inputs`` gives them instead (one draw): a callable ``inputs(kernel,
    rng)`` or a dict of callables ``rng -> ...`` by kernel name, returning
    the positional arrays, or ``(arrays, keywords)``: the attributes by
    name and, for a kernel whose outputs have no typed contract, ``out=``
    (a ``jax.ShapeDtypeStruct`` or a tuple of them); ``rng`` is a
    ``numpy.random.Generator``. The derivative is taken with respect to the
    float inputs together and to each alone (for a kernel that declares
    only ``linear:``, the inputs it is linear in); the second order with
    respect to all together. A derivative refused as not declared for one
    input alone, though it runs for all together, is an error.
    ``order``, ``modes``, ``atol``, ``rtol`` and ``eps`` are
    :func:`jax.test_util.check_grads`'s.

    Raises ``AssertionError`` with the table when a check fails (unless
    ``raise_on_failure`` is false), ``ValueError`` for a kernel name the
    module does not declare.
    """
    declared = declared_kernels(module)
    name = getattr(module, "__name__", str(module))
    if kernels is None:
        chosen = list(declared)
    else:
        chosen = [kernels] if isinstance(kernels, str) else list(kernels)
        for k in chosen:
            if k not in declared:
                raise ValueError(_unknown(name, k, declared))
    for m in modes:
        if m not in ("fwd", "rev"):
            raise ValueError(f"mode {m!r}: the modes are 'fwd' and 'rev'")
    if order not in (1, 2):
        raise ValueError(f"order {order!r}: check_grads checks order 1 or 2")
    report = GradReport(name)
    if not declared:
        report.rows.append(GradRow("-", "-", None, "n/a", "the module declares no derivatives (vjp:, jvp:, linear:)"))
    for k in chosen:
        rows, drawn = _check_kernel(module, k, declared[k], inputs, order, modes, atol, rtol, eps, seed)
        report.rows.extend(rows)
        if drawn:
            report.drawn[k] = drawn
    if raise_on_failure and not report.ok:
        raise AssertionError(str(report))
    return report


def _unknown(module_name, kernel, declared):
    near = difflib.get_close_matches(kernel, list(declared), n=1)
    hint = f"; did you mean '{near[0]}'?" if near else ""
    known = ", ".join(declared) or "none"
    return f"{module_name}: no kernel '{kernel}' declares a derivative (those that do: {known}){hint}"


def _resolve(module, dotted):
    obj = module
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def _platform_devices(platform):
    import jax

    try:
        return jax.devices("gpu" if platform == "cuda" else platform)
    except RuntimeError:
        return []


def _check_kernel(module, key, spec, inputs, order, modes, atol, rtol, eps, seed):
    import numpy as np

    declares = ", ".join(f"{k}: {_show(v)}" for k, v in spec.get("declares", {}).items())
    platform = spec.get("platform", "cpu")
    if not _platform_devices(platform):
        return [GradRow(key, "-", None, "skipped", f"a {platform} kernel, and JAX has no {platform} device")], []
    fn = _resolve(module, spec["call"])
    rng = np.random.default_rng(seed)
    try:
        draws = _draws(key, spec, inputs, rng)
    except _NeedsInputs as e:
        return [GradRow(key, "-", None, "ERROR", f"{e}; give its inputs with inputs={{'{key}': ...}}")], []
    except Exception as e:
        return [GradRow(key, "-", None, "ERROR", f"its inputs generator raised {type(e).__name__}: {e}")], []
    names = [arg[0] for arg in spec["args"]]
    # What each draw ran: {(label, wrt shown): [(draw, row)]}, in order.
    ran = {}
    shown = []
    refused = []
    for arrays, attrs, described in draws:
        wrt = _differentiable(spec, arrays)
        if not wrt:
            return [GradRow(key, "-", None, "ERROR", "no float input to differentiate")], shown
        arrays, d_atol, d_rtol, d_eps, precision = _precision(spec, arrays, atol, rtol, eps)
        with _x64_if_needed(arrays):
            arrays = [_device(a) for a in arrays]
            why = _refused(fn, arrays, attrs)
            if why is not None:
                # A value the kernel declares it does not support: not drawn.
                refused.append(f"{described}: {why}")
                continue
            shown.append(described)
            # Every float input together, then each alone: a derivative
            # with respect to one input runs other rules (the zeros filled
            # in for the rest of a group) than one with respect to all.
            subsets = [tuple(wrt)] + ([(k,) for k in wrt] if len(wrt) > 1 else [])
            for mode, k in ATTEMPTS:
                if mode not in modes or k > order:
                    continue
                label = mode if k == 1 else f"{mode}, order 2"
                for subset in subsets if k == 1 else subsets[:1]:
                    if k == 2 and not _passed(ran.get((mode, _wrt(names, wrt)), [])):
                        continue
                    f, primal = _restricted(fn, arrays, attrs, subset)
                    row = _attempt(key, label, f, primal, mode, k, d_atol, d_rtol, d_eps)
                    row.wrt = _wrt(names, subset)
                    ran.setdefault((label, row.wrt), []).append((described, row))
    if not shown:
        note = "; ".join(refused) or "no draw"
        return [GradRow(key, "-", None, "ERROR", f"every draw was refused ({note}); give its inputs")], shown
    everything = _wrt(names, _differentiable(spec, draws[0][0]))
    rows = [_merged(key, label, wrt, got, everything, ran) for (label, wrt), got in ran.items()]
    if not any(r.result == "pass" for r in rows) and not any(r.failed for r in rows):
        rows.append(GradRow(key, "-", None, "FAIL", f"no mode runs, though begen.yaml declares {declares}"))
    for r in rows:
        if precision and r.result in ("pass", "FAIL"):
            r.note = f"{r.note}; {precision}" if r.note else precision
    shown += [f"(refused: {r})" for r in refused]
    return rows, shown


def _refused(fn, arrays, attrs):
    # Why the kernel refuses these attribute values (begen.yaml's
    # `unsupported:`), or None; any other error is the attempts' to report.
    try:
        fn(*arrays, **attrs)
    except ValueError as e:
        return _first_line(e) if "(begen.yaml: unsupported)" in str(e) else None
    except Exception:
        return None
    return None


def _wrt(names, subset):
    return ", ".join(names[k] if k < len(names) else f"#{k}" for k in subset)


def _passed(got):
    return bool(got) and all(row.result == "pass" for _, row in got)


def _restricted(fn, arrays, attrs, subset):
    # `fn` as a function of the inputs at `subset`, the others fixed.
    def f(*diff):
        args = list(arrays)
        for k, x in zip(subset, diff):
            args[k] = x
        return fn(*args, **attrs)

    return f, tuple(arrays[k] for k in subset)


def _merged(key, label, wrt, got, everything, ran):
    # One row for a mode and inputs over every draw: its first failure (with
    # the draw it failed on), else pass or n/a. A derivative that is not
    # declared for one input alone while it runs for all inputs together,
    # or on one draw and not another, is an error: JAX took other rules
    # for it than the ones the passing rows checked.
    worst = [row.max_error for _, row in got if row.max_error is not None]
    error = max(worst) if worst else None
    for described, row in got:
        if row.failed:
            return GradRow(key, label, error, row.result, f"at {described}: {row.note}", wrt)
    results = {row.result for _, row in got}
    together = ran.get((label, everything), [])
    if "n/a" in results and (results != {"n/a"} or (wrt != everything and _passed(together))):
        described, row = next((d, r) for d, r in got if r.result == "n/a")
        why = (
            f"fails with respect to {wrt} alone, though it runs with respect to {everything} together"
            if wrt != everything and _passed(together)
            else "fails on this draw, though it runs on another"
        )
        return GradRow(key, label, error, "ERROR", f"at {described}: {why}; {row.note}", wrt)
    if results == {"n/a"}:
        return GradRow(key, label, None, "n/a", got[0][1].note, wrt)
    return GradRow(key, label, error, "pass", "", wrt)


# Finite differences in 16-bit floats are noise at float32's step (1e-4 is
# below bfloat16's spacing near 1): (eps, atol and rtol) per dtype, wide
# enough for its rounding of each evaluation.
_LOW_PRECISION = {"bfloat16": (2.0**-3, 0.1), "float16": (2.0**-6, 5e-2)}


def _precision(spec, arrays, atol, rtol, eps):
    """How a kernel with bfloat16 or float16 inputs is checked:
    (arrays, atol, rtol, eps, what the table says). A template whose every
    such input's type parameter has a float32 instance is checked in
    float32 (those inputs cast, so its float32 instance runs); another at
    its dtype's tolerance (`_LOW_PRECISION`, where atol/rtol/eps are not
    given). Unchanged, saying nothing, without such inputs."""
    import numpy as np

    low = [k for k, a in enumerate(arrays) if str(getattr(a, "dtype", "")) in _LOW_PRECISION]
    if not low:
        return arrays, atol, rtol, eps, ""
    names = sorted({str(arrays[k].dtype) for k in low})
    args, types = spec.get("args", ()), spec.get("types", {})
    param = lambda k: args[k][1][0] if k < len(args) and isinstance(args[k][1], (tuple, list)) else None
    if all(param(k) is not None and "float32" in types.get(param(k), ()) for k in low):
        params = {param(k) for k in low}
        arrays = [np.asarray(a, np.float32) if param(k) in params else a for k, a in enumerate(arrays)]
        return arrays, atol, rtol, eps, f"checked in float32, its float32 instance ({', '.join(names)} inputs cast)"
    step, tol = max(_LOW_PRECISION[n] for n in names)
    atol, rtol, eps = (tol if atol is None else atol), (tol if rtol is None else rtol), (step if eps is None else eps)
    return arrays, atol, rtol, eps, f"{', '.join(names)} tolerance (eps {eps:g}, atol {atol:g}, rtol {rtol:g})"


def _show(v):
    if isinstance(v, dict):
        return "{" + ", ".join(f"{a}: {b}" for a, b in v.items()) + "}"
    if isinstance(v, (tuple, list)):
        return "[" + ", ".join(map(str, v)) + "]"
    return str(v)


def _attempt(key, label, f, primal, mode, order, atol, rtol, eps):
    from jax.test_util import check_grads as jax_check_grads

    with _recording() as errors:
        try:
            jax_check_grads(f, primal, order, modes=[mode], atol=atol, rtol=rtol, eps=eps)
        except AssertionError as e:
            return GradRow(key, label, _largest(errors), "FAIL", _first_line(e))
        except Exception as e:
            text = f"{type(e).__name__}: {e}"
            if isinstance(e, NotImplementedError) or any(s in str(e) for s in _NOT_DECLARED):
                return GradRow(key, label, None, "n/a", f"not declared ({_first_line(e)})")
            return GradRow(key, label, _largest(errors), "ERROR", _first_line(text))
    return GradRow(key, label, _largest(errors), "pass")


def _first_line(e):
    text = str(e).strip()
    line = text.splitlines()[0] if text else type(e).__name__
    return line if len(line) <= 160 else line[:157] + "..."


def _largest(errors):
    return max(errors) if errors else None


@contextlib.contextmanager
def _recording():
    """Records the largest absolute difference of each comparison
    jax.test_util.check_grads makes (through the module that implements
    it); where that module is not there, records nothing."""
    errors = []
    try:
        from jax._src import public_test_util as impl
    except ImportError:
        yield errors
        return
    original = getattr(impl, "check_close", None)
    if original is None:
        yield errors
        return

    def check_close(xs, ys, *args, **kwargs):
        with contextlib.suppress(Exception):
            errors.append(_max_difference(xs, ys))
        return original(xs, ys, *args, **kwargs)

    impl.check_close = check_close
    try:
        yield errors
    finally:
        impl.check_close = original


def _max_difference(xs, ys):
    import jax
    import numpy as np

    worst = 0.0
    for x, y in zip(jax.tree_util.tree_leaves(xs), jax.tree_util.tree_leaves(ys)):
        x = np.asarray(x, dtype=np.complex128 if np.iscomplexobj(x) else np.float64)
        y = np.asarray(y, dtype=x.dtype)
        if x.size:
            d = float(np.max(np.abs(x - y)))
            worst = d if math.isnan(d) else max(worst, d)
    return worst


class _NeedsInputs(Exception):
    pass


#: The draws of inputs built from a contract: (extents, attribute
#: variant). Small extents (3, 4, 5, ...) and ones past a small kernel's
#: threshold (17, 33, 19, 35, ...), each with the attributes' first and
#: second variant (booleans False then True; floats 0.75, -1.25, 1.5, -0.5).
DRAWS = (("small", 0), ("small", 1), ("large", 2), ("large", 3))

_FLOATS = (0.75, -1.25, 1.5, -0.5)


def _draws(key, spec, inputs, rng):
    # [(arrays, keywords, what was drawn)]: one draw of a generator's, else
    # each of DRAWS from the contracts.
    if inputs is not None:
        gen = inputs.get(key) if isinstance(inputs, Mapping) else (lambda r, _g=inputs: _g(key, r))
        if gen is not None:
            arrays, keywords = _generated(key, gen(rng))
            return [(arrays, keywords, _described_given(arrays, keywords))]
    draws = {}
    for extents, variant in DRAWS:
        arrays, keywords, described = _from_contracts(spec, rng, extents, variant)
        # Draws that differ in nothing shown (no attribute to vary) run once.
        draws.setdefault(described, (arrays, keywords, described))
    return list(draws.values())


def _generated(key, made):
    # A generator's answer: the positional arrays, or (arrays, keywords),
    # the keywords the attributes and, for a kernel whose outputs have no
    # typed contract, `out=`.
    if isinstance(made, tuple) and len(made) == 2 and isinstance(made[1], Mapping):
        return list(made[0]), dict(made[1])
    if isinstance(made, (tuple, list)):
        return list(made), {}
    raise TypeError(
        f"the inputs of '{key}': a generator returns the positional arrays, or (arrays, keywords) with the "
        f"attributes and out= among the keywords; got {type(made).__name__}"
    )


def _described_given(arrays, keywords):
    import numpy as np

    shapes = "x".join(str(tuple(np.shape(a))) for a in arrays) if arrays else "()"
    attrs = " ".join(f"{k}={_shown_value(v)}" for k, v in keywords.items() if k != "out")
    return f"given: shapes {shapes}" + (f" {attrs}" if attrs else "")


def _shown_value(v):
    if isinstance(v, float):
        return f"{v:g}"
    text = repr(v)
    return text if len(text) <= 24 else text[:21] + "..."


def _from_contracts(spec, rng, size, variant):
    import numpy as np

    extents = {}
    dims = []

    def extent(d):
        if isinstance(d, int):
            return d
        if d not in extents:
            i = len(extents)
            extents[d] = 3 + i if size == "small" else 17 + 16 * (i % 2) + 2 * (i // 2)
            if not d.endswith(":2"):
                dims.append(d)
        return extents[d]

    types = {t: allowed[0] for t, allowed in spec.get("types", {}).items()}
    arrays = []
    for arg in spec["args"]:
        name, dtype, shape_of = arg[0], arg[1], arg[2]
        if len(arg) > 3 and arg[3]:
            raise _NeedsInputs(f"input '{name}' is a list of arrays")
        if isinstance(dtype, (tuple, list)):
            dtype = types.get(dtype[0])
        if dtype is None or shape_of is None:
            raise _NeedsInputs(f"input '{name}' has no typed contract (dtype and shape)")
        shape = ()
        for d in shape_of:
            # A rest (`...`, `rows...`): two leading dimensions, the same per rest.
            shape += (extent(d), extent(d + ":2")) if isinstance(d, str) and d.startswith("...") else (extent(d),)
        arrays.append(_random(rng, np, dtype, shape))
    attrs = {}
    for name, kind in spec.get("attrs", ()):
        if kind == "int":
            # A size (named like a dimension) gets its extent; so does any
            # other integer, a positive count.
            attrs[name] = extent(name)
        elif kind == "bool":
            attrs[name] = variant % 2 == 1
        elif kind == "float":
            attrs[name] = _FLOATS[variant % len(_FLOATS)]
        elif kind == "str":
            # Which strings a kernel takes is its own (a mode's name).
            raise _NeedsInputs(f"attribute '{name}' is a string")
        elif kind == "int[]":
            attrs[name] = [1 + (variant + k) % 3 for k in range(3)]
        elif kind == "bool[]":
            attrs[name] = [(variant + k) % 2 == 1 for k in range(3)]
        elif kind == "float[]":
            attrs[name] = [_FLOATS[(variant + k) % len(_FLOATS)] for k in range(3)]
        else:
            raise _NeedsInputs(f"attribute '{name}' is of kind {kind}")
    shown = [f"{d.lstrip('.') or '...'}={extents[d]}" for d in dims if d not in attrs]
    shown += [f"{k}={_shown_value(v)}" for k, v in attrs.items()]
    return arrays, attrs, " ".join(shown) or "no extents or attributes"


def _random(rng, np, dtype, shape):
    if dtype in ("float16", "bfloat16", "float32", "float64"):
        a = rng.standard_normal(shape)
        if dtype == "bfloat16":
            import ml_dtypes

            return a.astype(ml_dtypes.bfloat16)
        return a.astype(dtype)
    if dtype in ("complex64", "complex128"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    # Integers and booleans could be indices or masks: zeros stay in bounds.
    return np.zeros(shape, dtype)


def _is_float(a):
    import numpy as np

    kind = np.dtype(getattr(a, "dtype", np.asarray(a).dtype)).kind
    return kind in "fc" or str(getattr(a, "dtype", "")) == "bfloat16"


def _differentiable(spec, arrays):
    declares = spec.get("declares", {})
    names = [arg[0] for arg in spec["args"]]
    floats = [k for k, a in enumerate(arrays) if _is_float(a)]
    if "linear" in declares and "jvp" not in declares and "vjp" not in declares:
        # An input linear alone (a name) or in a group linear together (a
        # tuple of names): the group's inputs are differentiated together.
        linear = {n for item in declares["linear"] for n in ((item,) if isinstance(item, str) else item)}
        return [k for k in floats if k < len(names) and names[k] in linear]
    return floats


def _device(a):
    import jax

    return jax.device_put(a)


@contextlib.contextmanager
def _x64_if_needed(arrays):
    import jax
    import numpy as np

    wide = any(np.dtype(getattr(a, "dtype", "float32")).itemsize == 8 for a in arrays if _is_float(a))
    wide |= any(np.dtype(getattr(a, "dtype", "float32")) == np.complex128 for a in arrays)
    if not wide or jax.config.jax_enable_x64:
        yield
        return
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", False)


class _Usage(Exception):
    """A command-line mistake: printed as `check-grads: ...`, exit status 2."""


def _modules_in(out):
    return sorted(
        f[:-3]
        for f in os.listdir(out)
        if f.endswith(".py") and f != "__init__.py" and os.path.isfile(os.path.join(out, f))
    )


def _load(out, name):
    out = os.path.abspath(out)
    found = _modules_in(out)
    if name is None:
        # A build for jax and torch holds NAME.py and NAME_torch.py: the
        # JAX check's module is NAME.
        found = [m for m in found if not (m.endswith("_torch") and m[: -len("_torch")] in found)]
        if len(found) != 1:
            listed = ", ".join(found) or "none"
            raise _Usage(f"{out} holds {len(found)} Python modules ({listed}); name one with --name")
        name = found[0]
    if not all(part.isidentifier() for part in name.split(".")):
        raise _Usage(
            f"--name {name!r} is not a module name: give the generated module's name (a Python identifier, "
            f"such as {found[0] if found else 'mykernels'}), not a path"
        )
    sys.path.insert(0, out)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name != name.split(".")[0] and e.name != name:
            raise
        near = difflib.get_close_matches(name, found, n=1)
        hint = f"; did you mean '{near[0]}'?" if near else ""
        raise _Usage(f"no module '{name}' in {out} (its modules: {', '.join(found) or 'none'}){hint}") from None


def _generator(spec):
    # The generator `module:function` names: importable from the current
    # folder or sys.path.
    module_name, colon, attr = spec.partition(":")
    if not colon or not module_name or not attr:
        raise _Usage(f"--inputs {spec!r}: give module:function, e.g. --inputs mygens:inputs")
    if not all(p.isidentifier() for p in module_name.split(".")) or not all(p.isidentifier() for p in attr.split(".")):
        raise _Usage(f"--inputs {spec!r}: module and function are Python names (module:function), not paths")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name != module_name.split(".")[0] and e.name != module_name:
            raise
        raise _Usage(f"--inputs {spec!r}: no module '{module_name}' (looked in {os.getcwd()} and sys.path)") from None
    try:
        obj = _resolve(obj, attr)
    except AttributeError:
        raise _Usage(f"--inputs {spec!r}: module '{module_name}' has no '{attr}'") from None
    if not callable(obj) and not isinstance(obj, Mapping):
        raise _Usage(
            f"--inputs {spec!r}: '{attr}' is a {type(obj).__name__}; give a function (kernel, rng) or a dict of "
            f"functions rng -> inputs by kernel name"
        )
    return obj


def _load_torch(out, name):
    # The torch module of OUT: <NAME>_torch.py (NAME the library's name, or
    # the module's own), by default the one such module there.
    found = [m for m in _modules_in(os.path.abspath(out)) if m.endswith("_torch")]
    if name is None:
        if len(found) != 1:
            listed = ", ".join(found) or "none"
            raise _Usage(
                f"{os.path.abspath(out)} holds {len(found)} torch modules ({listed}); name one with --name "
                f"(a torch module is built by `begen build ... --target jax,torch`)"
            )
        return _load(out, found[0])
    if f"{name}_torch" in found:
        return _load(out, f"{name}_torch")
    if name in found:
        return _load(out, name)
    near = difflib.get_close_matches(f"{name}_torch", found, n=1)
    hint = f"; did you mean --name {near[0][: -len('_torch')]}?" if near else ""
    raise _Usage(
        f"no torch module '{name}_torch' in {os.path.abspath(out)} (its torch modules: {', '.join(found) or 'none'})"
        f"{hint}"
    )


_EPILOG = """\
examples:
  python -m begen check-grads out/                       # the JAX module's declared derivatives
  python -m begen check-grads out/ --kernels mv --order 1
  python -m begen check-grads --torch out/               # the torch ops: opcheck and gradcheck
  python -m begen check-grads --torch out/ --name mykernels --kernels square

--torch checks OUT/<NAME>_torch.py (begen build --target jax,torch) in this
Python, which needs torch and numpy, not jax: every op gets
torch.library.opcheck (test_schema, test_faketensor,
test_autograd_registration, test_aot_dispatch_dynamic), and every op with
vjp: torch.autograd.gradcheck in float64 with respect to its float inputs
together and each alone, on inputs drawn from the contracts (extents 3, 4,
... and 17, 33, ...; both booleans; floats 0.75, -1.25, 1.5, -0.5).

exit status: 0 all passed, 1 a check failed (the table says which, and on
what draw), 2 a mistake in the command line.
"""


def main(argv=None) -> int:
    """``python -m begen check-grads OUT [--name NAME] [--inputs
    MODULE:FUNCTION] [--kernels a,b] [--order N] [--modes fwd,rev]``, or
    ``python -m begen check-grads --torch OUT [--name NAME] [--kernels
    a,b]``: prints the table; exit status 1 when a check failed, 2 for a
    mistake in the command line."""
    p = argparse.ArgumentParser(
        prog="python -m begen check-grads",
        description="Checks every declared vjp, jvp, linear and transpose of a begen-built module against "
        "finite differences (jax.test_util.check_grads), with inputs built from the typed contracts; with "
        "--torch, the torch module's ops (torch.library.opcheck, torch.autograd.gradcheck).",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("out", help="the build's OUT folder (the generated module and its library)")
    p.add_argument(
        "--torch",
        action="store_true",
        help="check OUT's torch module (<NAME>_torch.py) instead: opcheck on every op, gradcheck on every op "
        "with vjp:; needs torch, not jax",
    )
    p.add_argument(
        "--name",
        help="the module's name (default: the one Python module in OUT; needed in an installed package's folder); "
        "with --torch the library's name (NAME of NAME_torch.py)",
    )
    p.add_argument(
        "--inputs",
        metavar="MODULE:FUNCTION",
        help="a generator of inputs: FUNCTION(kernel, rng) in MODULE (importable from here), returning the "
        "arrays or (arrays, keywords) with the attributes and out=; or a dict of rng -> inputs by kernel",
    )
    p.add_argument(
        "--kernels",
        help="comma-separated kernel names (default: every kernel that declares one; with --torch every op)",
    )
    p.add_argument("--order", type=int, choices=(1, 2), help="the highest order checked (default 2)")
    p.add_argument("--modes", help="fwd, rev or both (default fwd,rev)")
    p.add_argument("--atol", type=float, help="absolute tolerance (with --torch, gradcheck's)")
    p.add_argument("--rtol", type=float, help="relative tolerance (with --torch, gradcheck's)")
    p.add_argument("--seed", type=int, default=0, help="the seed of the drawn inputs (default 0)")
    a = p.parse_args(argv)
    if not os.path.isdir(a.out):
        print(f"check-grads: {a.out}: no such folder (give the OUT folder of `begen build`)", file=sys.stderr)
        return 2
    kernels = [k for k in a.kernels.split(",") if k] if a.kernels else None
    if a.torch:
        return _main_torch(a, kernels)
    try:
        module = _load(a.out, a.name)
        inputs = _generator(a.inputs) if a.inputs else None
    except _Usage as e:
        print(f"check-grads: {e}", file=sys.stderr)
        return 2
    try:
        report = check_grads(
            module,
            kernels,
            inputs=inputs,
            order=2 if a.order is None else a.order,
            modes=[m for m in (a.modes or "fwd,rev").split(",") if m],
            atol=a.atol,
            rtol=a.rtol,
            seed=a.seed,
            raise_on_failure=False,
        )
    except (ValueError, TypeError) as e:
        print(f"check-grads: {e}", file=sys.stderr)
        return 2
    print(report)
    return 0 if report.ok else 1


def _main_torch(a, kernels) -> int:
    # `check-grads --torch`: the JAX check's own options have no meaning here.
    for option, given in (("--inputs", a.inputs), ("--order", a.order), ("--modes", a.modes)):
        if given is not None:
            print(
                f"check-grads: {option} is the JAX check's; --torch checks every op on inputs drawn from its "
                f"contract (leave {option} out, or drop --torch)",
                file=sys.stderr,
            )
            return 2
    try:
        module = _load_torch(a.out, a.name)
    except _Usage as e:
        print(f"check-grads: {e}", file=sys.stderr)
        return 2
    try:
        report = check_torch(module, kernels, atol=a.atol, rtol=a.rtol, seed=a.seed, raise_on_failure=False)
    except (ValueError, TypeError) as e:
        print(f"check-grads: {e}", file=sys.stderr)
        return 2
    print(report)
    return 0 if report.ok else 1


# ---- the torch target: check_torch ------------------------------------------

#: What torch.library.opcheck runs on every op, in order.
OPCHECKS = ("test_schema", "test_faketensor", "test_autograd_registration", "test_aot_dispatch_dynamic")

# gradcheck where an op has no float64 instance: (eps, atol, rtol) per
# dtype, wide enough for its rounding of each evaluation (the 16-bit ones
# as check_grads takes them, `_LOW_PRECISION`).
_TORCH_TOLERANCE = {
    "float32": (1e-3, 1e-2, 1e-2),
    "complex64": (1e-3, 1e-2, 1e-2),
    "float16": (_LOW_PRECISION["float16"][0], _LOW_PRECISION["float16"][1], _LOW_PRECISION["float16"][1]),
    "bfloat16": (_LOW_PRECISION["bfloat16"][0], _LOW_PRECISION["bfloat16"][1], _LOW_PRECISION["bfloat16"][1]),
}


@dataclass
class TorchRow(_Row):
    """One line of :func:`check_torch`'s table: an op, a check (one of
    ``OPCHECKS`` or ``gradcheck``), the inputs a gradcheck differentiates
    (``wrt``), the result (``pass``, ``FAIL``, ``ERROR``, ``skipped``) and
    a note (a failure names the draw it failed on)."""

    op: str
    check: str
    result: str
    note: str = ""
    wrt: str = "-"


@dataclass
class TorchReport(_Report):
    """What :func:`check_torch` found: one :class:`TorchRow` per op and
    check, and per op the draws of inputs every row ran on. ``str(report)``
    is the table and the draws; ``report.ok`` says whether nothing failed."""

    _CHECKS = "torch checks"
    _HEAD = ("op", "check", "wrt", "result")
    _EACH = "an op"

    def _cells(self, r: TorchRow) -> tuple:
        return (r.op, r.check, r.wrt, _with_note(r))


def torch_ops(module) -> dict:
    """The ops of ``module`` (a ``<NAME>_torch`` module begen generated),
    by name, each with what the module says of it (``_begen_ops``: its
    typed function, platform, inputs' contracts, constants, attributes,
    differentiable inputs and backward op)."""
    ops = getattr(module, "_begen_ops", None)
    if ops is None:
        name = getattr(module, "__name__", module)
        if hasattr(module, "NAMESPACE") and hasattr(module, "_ops"):
            raise TypeError(f"{name!r} was generated by an older begen (no _begen_ops): rebuild it")
        raise TypeError(f"{name!r} is not a torch module begen generated (OUT/<NAME>_torch.py)")
    return dict(ops)


def check_torch(
    module,
    ops: Iterable[str] | None = None,
    *,
    atol: float | None = None,
    rtol: float | None = None,
    eps: float | None = None,
    seed: int = 0,
    raise_on_failure: bool = True,
) -> TorchReport:
    """Checks the ops of ``module`` (an imported ``<NAME>_torch``; all its
    ops, or those named in ``ops``) and returns the table.

    Each op runs on inputs drawn from its contract as :func:`check_grads`
    draws them (``DRAWS``: extents 3, 4, ... and 17, 33, ...; booleans
    False and True, floats 0.75, -1.25, 1.5, -0.5; a value constant each
    of its values in turn), in its float64 instance where it has one. On
    every draw ``torch.library.opcheck`` runs each of ``OPCHECKS`` on the
    op; an op with ``vjp:`` gets float inputs that require grad there, and
    ``torch.autograd.gradcheck`` of its typed function with respect to its
    float inputs together and to each alone. Without a float64 instance
    gradcheck runs in the op's dtype at ``_TORCH_TOLERANCE`` (the row says
    at what tolerance). ``atol``, ``rtol`` and ``eps`` are gradcheck's.

    Raises ``AssertionError`` with the table when a check fails (unless
    ``raise_on_failure`` is false), ``ValueError`` for an op the module
    does not have. Needs torch and numpy; not jax.
    """
    declared = torch_ops(module)
    name = getattr(module, "__name__", str(module))
    if ops is None:
        chosen = list(declared)
    else:
        chosen = [ops] if isinstance(ops, str) else list(ops)
        for k in chosen:
            if k not in declared:
                near = difflib.get_close_matches(k, list(declared), n=1)
                hint = f"; did you mean '{near[0]}'?" if near else ""
                raise ValueError(f"{name}: no op '{k}' (its ops: {', '.join(declared) or 'none'}){hint}")
    report = TorchReport(name)
    if not declared:
        report.rows.append(TorchRow("-", "-", "n/a", "the module has no ops"))
    for k in chosen:
        rows, drawn = _check_op(module, k, declared[k], atol, rtol, eps, seed)
        report.rows.extend(rows)
        if drawn:
            report.drawn[k] = drawn
    if raise_on_failure and not report.ok:
        raise AssertionError(str(report))
    return report


def _check_op(module, key, spec, atol, rtol, eps, seed):
    import numpy as np
    import torch

    platform = spec.get("platform", "cpu")
    if platform == "cuda" and not torch.cuda.is_available():
        return [TorchRow(key, "-", "skipped", "a cuda kernel, and torch has no CUDA device")], []
    device = "cuda" if platform == "cuda" else "cpu"
    # Ops whose inputs or outputs the contracts do not say: skipped by name.
    if spec.get("out"):
        why = "an out= op (the caller gives its outputs, whose shapes the contracts do not say): no draws, and no autograd"
        return [TorchRow(key, "-", "skipped", why)], []
    untyped = [arg[0] for arg in spec["args"] if arg[1] is None or arg[2] is None]
    if untyped:
        return [TorchRow(key, "-", "skipped", f"input '{untyped[0]}' has no typed contract: no draws")], []
    op = getattr(getattr(torch.ops, module.NAMESPACE), key).default
    fn = _resolve(module, spec["call"])
    rng = np.random.default_rng(seed)
    names = [arg[0] for arg in spec["args"]]
    wrt = [names.index(n) for n in spec.get("differentiable", ())]
    # What each draw ran: {(check, wrt shown): [(draw, row)]}, in order.
    ran = {}
    shown = []
    try:
        draws = _torch_draws(spec, rng, torch, device)
    except _NeedsInputs as e:
        return [TorchRow(key, "-", "ERROR", str(e))], []
    for arrays, keywords, described, dtype in draws:
        shown.append(described)
        for check, row in _opchecks(op, arrays, keywords, wrt, torch):
            ran.setdefault((check, "-"), []).append((described, row))
        if not wrt:
            continue
        tolerance = _gradcheck_tolerance(dtype, atol, rtol, eps)
        for subset in [tuple(wrt)] + ([(k,) for k in wrt] if len(wrt) > 1 else []):
            row = _gradcheck(fn, arrays, keywords, subset, tolerance, torch, names)
            ran.setdefault(("gradcheck", _wrt(names, subset)), []).append((described, row))
    rows = []
    for (check, shown_wrt), got in ran.items():
        row = next(((d, r) for d, r in got if r.failed), None)
        if row is not None:
            described, r = row
            rows.append(TorchRow(key, check, r.result, f"at {described}: {r.note}", shown_wrt))
        else:
            rows.append(TorchRow(key, check, "pass", got[0][1].note, shown_wrt))
    return rows, shown


def _torch_draws(spec, rng, torch, device):
    import numpy as np

    # [(tensors, keywords, what was drawn, the float dtype of the draw)]:
    # each of DRAWS from the contracts, in the float64 instance where there
    # is one; draws that differ in nothing shown run once.
    types = {}
    for t, allowed in spec.get("types", {}).items():
        types[t] = "float64" if "float64" in allowed else ("complex128" if "complex128" in allowed else allowed[0])
    args = []
    cast = {}
    for k, arg in enumerate(spec["args"]):
        name, dtype, dims = arg[0], arg[1], arg[2]
        if isinstance(dtype, (tuple, list)):
            dtype = types.get(dtype[0])
        if dtype is None:
            raise _NeedsInputs(f"input '{name}' has no dtype in _begen_ops")
        if dtype == "bfloat16":
            # numpy has no bfloat16 of its own: drawn as float32, then cast.
            cast[k], dtype = dtype, "float32"
        args.append((name, dtype, tuple(dims)))
    attrs = tuple((a[0], a[1]) for a in spec.get("attrs", ()))
    plain = {"args": tuple(args), "attrs": attrs, "types": {}}
    floats = sorted({cast.get(k, d) for k, (_, d, _) in enumerate(args) if d in _TORCH_FLOATS or k in cast})
    dtype = "float64" if not floats or "float64" in floats else max(floats, key=_TORCH_FLOATS.index)
    draws = {}
    for size, variant in DRAWS:
        arrays, keywords, described = _from_contracts(plain, rng, size, variant)
        for t, chosen in types.items():
            described += f" {t}={chosen}"
        for const, _kind, values in spec.get("consts", ()):
            if values:
                keywords[const] = values[variant % len(values)]
                described += f" {const}={_shown_value(keywords[const])}"
        if spec.get("defines"):
            # A source tuned over its defines: a built candidate each draw,
            # named by `config=` (the typed function takes no define keyword).
            names, combos = spec["defines"]
            keywords["config"] = dict(zip(names, combos[variant % len(combos)]))
            described += "".join(f" {n}={v}" for n, v in keywords["config"].items())
        tensors = []
        for k, a in enumerate(arrays):
            t = torch.from_numpy(np.array(a))
            if k in cast:
                t = t.to(getattr(torch, cast[k]))
            tensors.append(t.to(device))
        draws.setdefault(described, (tensors, keywords, described, dtype))
    return list(draws.values())


# Float dtypes, widest last: a draw's gradcheck tolerance is its narrowest's.
_TORCH_FLOATS = ("float64", "complex128", "float32", "complex64", "float16", "bfloat16")


def _gradcheck_tolerance(dtype, atol, rtol, eps):
    # (eps, atol, rtol, what the row says): gradcheck's defaults in float64,
    # a wider bound for a narrower float.
    if dtype in ("float64", "complex128"):
        given = {k: v for k, v in (("eps", eps), ("atol", atol), ("rtol", rtol)) if v is not None}
        return given, "float64" if not given else "float64, " + ", ".join(f"{k} {v:g}" for k, v in given.items())
    d_eps, d_atol, d_rtol = _TORCH_TOLERANCE[dtype]
    chosen = {
        "eps": d_eps if eps is None else eps,
        "atol": d_atol if atol is None else atol,
        "rtol": d_rtol if rtol is None else rtol,
    }
    note = f"in {dtype} (no float64 instance): " + ", ".join(f"{k} {v:g}" for k, v in chosen.items())
    return chosen, note


def _opchecks(op, arrays, keywords, wrt, torch):
    # Each of OPCHECKS on the op: a differentiable op's float inputs
    # require grad, so test_autograd_registration sees its formula.
    args = tuple(a.detach().clone().requires_grad_(k in wrt) for k, a in enumerate(arrays))
    # An op that mutates a tensor names a keyword functionalization takes
    # itself (`mode`) with `_` appended in its schema.
    schema = {a.name for a in op._schema.arguments}
    keywords = {k if k in schema or k + "_" not in schema else k + "_": v for k, v in keywords.items()}
    # The op takes a candidate's defines as keywords of its own.
    defines = keywords.pop("config", None) or {}
    keywords = {**keywords, **defines}
    try:
        results = torch.library.opcheck(op, args, keywords, test_utils=OPCHECKS, raise_exception=False)
    except Exception as e:
        row = TorchRow("", "", "ERROR", _first_line(f"{type(e).__name__}: {e}"))
        return [(check, row) for check in OPCHECKS]
    out = []
    for check in OPCHECKS:
        got = results.get(check, "not run")
        if got == "SUCCESS":
            out.append((check, TorchRow("", check, "pass")))
        else:
            out.append((check, TorchRow("", check, "FAIL", _first_line(got))))
    return out


def _gradcheck_message(e, names, subset):
    # gradcheck numbers the inputs of the function it was given (here the
    # differentiated ones only): the message names the op's input instead.
    line = _first_line(e)
    m = re.match(r"Jacobian mismatch for output (\d+) with respect to input (\d+),?$", line)
    if m is None or int(m.group(2)) >= len(subset):
        return line
    name = _wrt(names, (subset[int(m.group(2))],))
    return f"Jacobian mismatch for output {m.group(1)} with respect to '{name}' (the backward kernel's gradient)"


def _gradcheck(fn, arrays, keywords, subset, tolerance, torch, names):
    import warnings

    from torch.autograd.gradcheck import GradcheckError

    given, note = tolerance
    fixed = [a.detach() for a in arrays]

    def f(*diff):
        args = list(fixed)
        for k, x in zip(subset, diff):
            args[k] = x
        return fn(*args, **keywords)

    primal = tuple(fixed[k].clone().requires_grad_(True) for k in subset)
    try:
        with warnings.catch_warnings():
            # gradcheck warns of inputs that are not float64: the row says.
            warnings.simplefilter("ignore", UserWarning)
            torch.autograd.gradcheck(f, primal, **given)
    except GradcheckError as e:
        return TorchRow("", "gradcheck", "FAIL", f"{_gradcheck_message(e, names, subset)}; {note}")
    except Exception as e:
        return TorchRow("", "gradcheck", "ERROR", _first_line(f"{type(e).__name__}: {e}"))
    return TorchRow("", "gradcheck", "pass", note)
