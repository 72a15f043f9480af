"""The same CUDA kernels from PyTorch and from JAX give the same numbers
(scripts/gpu-check.sh, STEPS=torch-same).

Each OUT is a library built with `--target jax,torch`. For every op its
`<NAME>_torch` module registers, the inputs are drawn from the op's
contract as `begen.testing.check_torch` draws them (extents 3, 4, ... and
17, 33, ...; both booleans; constants over their values), on the GPU, or
taken from GIVEN where a contract cannot say them: the shapes of an out=
op's outputs (passed as empty tensors to torch and as ShapeDtypeStructs to
JAX), a valid CSR matrix for integer index inputs, the strings a string
attribute takes. The torch function and the JAX function of the same
kernel run on the same arrays; their outputs must agree, and where the op
has an autograd formula so must torch's gradients and `jax.vjp`'s for one
random cotangent. Each torch call runs, and its results are read, with a
side stream current (not torch's default): the op must launch on torch's
current stream. FAILING names calls that must raise an exception naming
the kernel and its check, after which the op must still give the same
numbers. Each library must compare at least one op; an op neither drawn
nor given is named with the reason (SKIP), never passed over in silence,
and so are the kernels the torch target leaves out, by the build (its
warnings).

usage: python tests/gpu/check_torch_same.py [--cpu] OUT NAME [OUT NAME ...]
(--cpu: the CPU ops, on the CPU: the checker's own trial off the device)
"""

import contextlib
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# begen.testing, from this checkout (the device has no begen installed).
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))


def _numpy(t):
    t = t.detach()
    if str(t.dtype) == "torch.bfloat16":
        t = t.float()
    return t.cpu().numpy()


def _jax_array(t, jnp):
    a = jnp.asarray(_numpy(t))
    return a.astype(jnp.bfloat16) if str(t.dtype) == "torch.bfloat16" else a


def _as_list(v):
    if v is None:
        return []
    return list(v) if isinstance(v, (tuple, list)) else [v]


def _close(what, got, want, counts):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        raise AssertionError(f"{what}: torch gives shape {got.shape}, JAX {want.shape}")
    if np.array_equal(got, want, equal_nan=True):
        counts["bitwise"] += 1
        return
    # The same kernel on the same device: only a kernel whose reductions
    # are unordered (atomics) may differ, and then by rounding.
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=what)
    counts["close"] += 1


# Given inputs: "LIB.op" -> draw(torch, rng, device), a list of
# (tensors, keywords, what was drawn, outputs), where outputs is None for
# an op that makes its own and ((shape, dtype), ...) for an out= op. The
# inputs follow tests/gpu/check_cuda.py, check_prims.py and
# check_vocab.py. An entry for an op the module does not have is unused.


def _tensor(torch, a, device):
    return torch.from_numpy(np.ascontiguousarray(a)).to(device)


def _csr_matrices(torch, rng, device):
    """(indices, indptr, data, rows, cols, what) for a 4 x 5 CSR matrix
    of 7 entries and a random 300 x 200 one, every 17th row empty: the
    kernels read indptr and indices as a valid matrix, which no drawn
    integers are."""
    indptr = np.array([0, 2, 3, 5, 7], np.int32)
    indices = np.array([0, 3, 1, 2, 4, 0, 4], np.int32)
    made = [(indices, indptr, rng.standard_normal(7), 4, 5, "a 4 x 5 CSR matrix of 7 entries")]
    rows, cols = 300, 200
    dense = np.where(rng.random((rows, cols)) < 0.05, rng.standard_normal((rows, cols)), 0.0)
    dense[::17] = 0.0
    indptr = np.concatenate([[0], np.cumsum((dense != 0).sum(axis=1))]).astype(np.int32)
    indices = np.nonzero(dense)[1].astype(np.int32)
    what = f"a random {rows} x {cols} CSR matrix of {len(indices)} entries"
    made.append((indices, indptr, dense[dense != 0], rows, cols, what))
    return [
        (_tensor(torch, i, device), _tensor(torch, p, device), _tensor(torch, d, device), r, c, w)
        for i, p, d, r, c, w in made
    ]


def _csrmv_tdata(torch, rng, device):
    draws = []
    for indices, indptr, _data, rows, cols, what in _csr_matrices(torch, rng, device):
        v, ct = (_tensor(torch, rng.standard_normal(n), device) for n in (cols, rows))
        draws.append(((indices, indptr, v, ct), {}, what, None))
    return draws


def _csrmv_tv(torch, rng, device):
    draws = []
    for indices, indptr, data, rows, cols, what in _csr_matrices(torch, rng, device):
        ct = _tensor(torch, rng.standard_normal(rows), device)
        draws.append(((data, indices, indptr, ct), {}, what, (((cols,), "float64"),)))
    return draws


def _saxpy(torch, rng, device):
    draws = []
    for n in (1000, 100_003):
        x, y = (_tensor(torch, rng.standard_normal(n).astype(np.float32), device) for _ in range(2))
        draws.append(((x, y), {"a": 2.5}, f"n={n} a=2.5", (((n,), "float32"),)))
    return draws


def _moments_f64(torch, rng, device):
    scalars = (((), "float64"), ((), "float64"))
    return [((_tensor(torch, rng.standard_normal(n), device),), {}, f"n={n}", scalars) for n in (1, 5000)]


def _affine_neg_f64(torch, rng, device):
    d = _tensor(torch, rng.standard_normal(5000), device)
    return [((d,), {"a": 1 / 3, "b": 1e-12}, "n=5000 a=1/3 b=1e-12", (((5000,), "float64"),) * 2)]


def _vocab_x(torch, device):
    # Enough elements for many of attrs.cu's blocks of 256 threads.
    return _tensor(torch, np.linspace(-50.0, 50.0, 100_003, dtype=np.float32), device)


def _vocab_clip(torch, rng, device):
    x = _vocab_x(torch, device)
    like = (((x.numel(),), "float32"),)
    given = ((-10.0, 20.0), (0.0, 0.0))
    return [((x,), {"lo": lo, "hi": hi}, f"n={x.numel()} lo={lo} hi={hi}", like) for lo, hi in given]


def _vocab_apply(torch, rng, device):
    # The ops attrs.cu's vocab_apply knows.
    x = _vocab_x(torch, device)
    like = (((x.numel(),), "float32"),)
    return [((x,), {"op": op}, f"n={x.numel()} op={op!r}", like) for op in ("double", "square", "negate")]


def _vocab_add_length(torch, rng, device):
    # x + scale * the word's UTF-8 bytes ("héllo" has 6).
    x = _vocab_x(torch, device)
    given = (("héllo", 0.5), ("", 2.0), ("abcd", -1.0))
    return [((x,), {"word": w, "scale": s}, f"n={x.numel()} word={w!r} scale={s}", None) for w, s in given]


def _mean_var(torch, rng, device):
    x = _tensor(torch, rng.standard_normal(1000).astype(np.float32), device)
    return [((x,), {}, "n=1000", (((), "float32"), ((), "float32")))]


GIVEN = {
    "demo_cuda.saxpy_out": _saxpy,
    "demo_cuda.moments_f64_out": _moments_f64,
    "demo_cuda.affine_neg_f64_out": _affine_neg_f64,
    "e2e_prims.csrmv_cuda_tdata": _csrmv_tdata,
    "e2e_prims.csrmv_cuda_tv_out": _csrmv_tv,
    "gpu_vocab.vocab_clip_out": _vocab_clip,
    "gpu_vocab.vocab_apply_out": _vocab_apply,
    "gpu_vocab.vocab_add_length": _vocab_add_length,
    # CPU ops, for --cpu (the checker's own trial off the device).
    "e2e_prims.csrmv_tdata": _csrmv_tdata,
    "e2e_prims.csrmv_tv_out": _csrmv_tv,
    "demo_cpu.mean_var_out": _mean_var,
}


def _empty_input(dtype, outputs):
    def draw(torch, device):
        return (torch.zeros(0, dtype=getattr(torch, dtype), device=device),), {}, "an empty input", outputs

    return draw


# Calls that must fail: "LIB.op" -> (draw(torch, device), the words its
# exception must contain). A host-side check (BE_CHECK) fails the call
# before any launch; the op must work on its next call.
FAILING = {
    "demo_cuda.moments_f64_out": (
        _empty_input("float64", (((), "float64"), ((), "float64"))),
        ("moments_f64", "empty input"),
    ),
    "demo_cpu.mean_var_out": (_empty_input("float32", (((), "float32"), ((), "float32"))), ("mean_var", "empty array")),
}


@dataclass
class _Run:
    """What every comparison of one run shares."""

    torch: object
    jax: object
    jnp: object
    device: str
    # torch's current stream for each call on the GPU; None on the CPU.
    side: object
    counts: dict


@contextlib.contextmanager
def _on_side(run):
    """Makes the side stream current (on the GPU) for a torch call and the
    reading of its results, after the default stream's work (the inputs)."""
    if run.side is None:
        yield
        return
    torch = run.torch
    run.side.wait_stream(torch.cuda.default_stream())
    with torch.cuda.stream(run.side):
        # Keeps the side stream busy for a while: the inputs are copied on
        # it after this, so a kernel launched on another stream would read
        # them unwritten and give other numbers.
        torch.cuda._sleep(1 << 20)
        yield


def _torch_outputs(run, fn, spec, tensors, keywords, outputs):
    """torch's outputs of one call (on the current stream): what the op
    returns, the given out= tensors, or the inputs an in-place op updates."""
    torch = run.torch
    targs = [t.clone() for t in tensors]
    if outputs is None:
        got = _as_list(fn(*targs, **keywords))
        if not got:
            inout = set(spec.get("inout", ()))
            got = [targs[k] for k, a in enumerate(spec["args"]) if a[0] in inout]
        return got
    given = [torch.empty(shape, dtype=getattr(torch, dtype), device=run.device) for shape, dtype in outputs]
    returned = _as_list(fn(*targs, **keywords, out=given[0] if len(given) == 1 else tuple(given)))
    if len(returned) != len(given) or any(r is not g for r, g in zip(returned, given)):
        raise AssertionError("torch returns other tensors than those given as out=")
    return given


def _jax_outputs(run, fn, jargs, keywords, outputs):
    if outputs is not None:
        specs = tuple(run.jax.ShapeDtypeStruct(shape, run.jnp.dtype(dtype)) for shape, dtype in outputs)
        keywords = {**keywords, "out": specs[0] if len(specs) == 1 else specs}
    return _as_list(fn(*jargs, **keywords))


def _compare(run, what, spec, tfn, jfn, draw, rng):
    """One draw from torch and from JAX, forward and, where the op has an
    autograd formula, backward; returns whether the backward ran."""
    torch, jax, jnp = run.torch, run.jax, run.jnp
    tensors, keywords, described, outputs = draw
    what = f"{what} at {described}"
    names = [a[0] for a in spec["args"]]
    diff = [names.index(n) for n in spec.get("differentiable", ())]
    jargs = [_jax_array(t, jnp) for t in tensors]
    jout = [np.asarray(j, dtype=np.float64) for j in _jax_outputs(run, jfn, jargs, keywords, outputs)]
    try:
        with _on_side(run):
            tout = [_numpy(t) for t in _torch_outputs(run, tfn, spec, tensors, keywords, outputs)]
    except AssertionError as e:
        raise AssertionError(f"{what}: {e}") from None
    if len(tout) != len(jout):
        raise AssertionError(f"{what}: torch gives {len(tout)} outputs, JAX {len(jout)}")
    for k, (t, j) in enumerate(zip(tout, jout)):
        _close(f"{what}: output {k}", t, j, run.counts)
    if not diff or spec.get("inout") or outputs is not None:
        return False
    cts = [rng.standard_normal(t.shape) for t in tout]
    with _on_side(run):
        wrt = [tensors[k].clone().requires_grad_(True) for k in diff]
        targs = list(tensors)
        for k, w in zip(diff, wrt):
            targs[k] = w
        outs = _as_list(tfn(*targs, **keywords))
        tct = [torch.tensor(c, dtype=o.dtype, device=o.device) for c, o in zip(cts, outs)]
        tgrads = torch.autograd.grad(outs, wrt, grad_outputs=tct, allow_unused=True)
        tgrads = [np.zeros(tensors[k].shape) if g is None else _numpy(g) for k, g in zip(diff, tgrads)]

    def f(*d):
        a = list(jargs)
        for k, v in zip(diff, d):
            a[k] = v
        return tuple(_as_list(jfn(*a, **keywords)))

    primal, vjp = jax.vjp(f, *[jargs[k] for k in diff])
    jgrads = vjp(tuple(jnp.asarray(c).astype(p.dtype) for c, p in zip(cts, primal)))
    for k, tg, jg in zip(diff, tgrads, jgrads):
        _close(f"{what}: d/d{names[k]}", tg, np.asarray(jg, dtype=np.float64), run.counts)
    return True


def _check_failing(run, what, spec, tfn, failing):
    """The call FAILING gives raises, its text naming the kernel and the
    check; returns what was called and the first line raised."""
    draw, words = failing
    tensors, keywords, described, outputs = draw(run.torch, run.device)
    try:
        with _on_side(run):
            _torch_outputs(run, tfn, spec, tensors, keywords, outputs)
    except Exception as e:
        text = str(e)
        missing = [w for w in words if w not in text]
        if missing:
            raise AssertionError(f"{what} at {described}: its exception does not say {missing}: {text!r}") from None
        return f"{described} raises {type(e).__name__}: {text.splitlines()[0] if text else ''}"
    raise AssertionError(f"{what} at {described}: torch raised nothing")


def _not_drawn(spec):
    """Why an op without GIVEN inputs cannot be drawn from its contract, or
    None."""
    ints = [a[0] for a in spec["args"] if isinstance(a[1], str) and a[1].startswith(("int", "uint"))]
    if ints:
        # Drawn integers are no valid structure (a CSR matrix's indptr and
        # indices): the kernel may leave its output unwritten, which would
        # differ by chance.
        return f"integer inputs ({', '.join(ints)}) need a valid structure, and GIVEN has none for it"
    if spec.get("out"):
        return "an out= op (the caller gives its outputs), and GIVEN has no shapes for it"
    return None


def check_library(out, name, counts, device):
    import jax
    import jax.numpy as jnp
    import torch
    from begen.testing import _NeedsInputs, _resolve, _torch_draws, torch_ops

    jax.config.update("jax_enable_x64", True)
    sys.path.insert(0, out)
    jmod = __import__(name)
    tmod = __import__(f"{name}_torch")
    ops = torch_ops(tmod)
    side = torch.cuda.Stream() if device == "cuda" else None
    run = _Run(torch, jax, jnp, device, side, counts)
    compared = 0
    rng = np.random.default_rng(0)
    elsewhere = [key for key, spec in ops.items() if spec.get("platform", "cpu") != device]
    if elsewhere:
        print(f"SKIP {name}: {', '.join(elsewhere)}: not {device} ops (this run compares the {device} ops)")
    for key, spec in ops.items():
        if key in elsewhere:
            continue
        given = GIVEN.get(f"{name}.{key}")
        if given is not None:
            draws = given(torch, rng, device)
        else:
            why = _not_drawn(spec)
            if why is None:
                try:
                    draws = [(t, k, d, None) for t, k, d, _dtype in _torch_draws(spec, rng, torch, device)[:4]]
                except _NeedsInputs as e:
                    why = f"{e}: no draws from its contract, and GIVEN has none for it"
            if why is not None:
                print(f"SKIP {name}.{key}: {why}")
                continue
        tfn = _resolve(tmod, spec["call"])
        jfn = _resolve(jmod, spec["call"])
        what = f"{name}.{key}"
        backward = False
        for draw in draws:
            backward |= _compare(run, what, spec, tfn, jfn, draw, rng)
        compared += 1
        how = "given inputs" if given else "drawn inputs"
        print(f"PASS {what}: torch equals JAX on {how}" + (", forward and backward" if backward else ""))
        failing = FAILING.get(what)
        if failing is not None:
            raised = _check_failing(run, what, spec, tfn, failing)
            # The op still works after the failure.
            _compare(run, what, spec, tfn, jfn, draws[0], rng)
            print(f"PASS {what}: {raised}; the next call equals JAX")
    compared += _check_algorithms(run, name, jmod, tmod, ops, rng)
    if compared == 0:
        raise AssertionError(f"{name}: no {device} op was compared (its ops: {', '.join(ops) or 'none'})")
    return compared


def _check_algorithms(run, name, jmod, tmod, ops, rng):
    """Each algorithm with an implementation on this device: the torch
    module's function (its choice per call) against the JAX module's (its
    choice per trace) on inputs drawn from that implementation's contract;
    returns how many were compared."""
    from begen.testing import _NeedsInputs, _torch_draws

    compared = 0
    for alg, (_fallback, _tuned, impls) in getattr(tmod, "_BEGEN_ALGORITHMS", {}).items():
        here = [i for i in impls if i.platform == run.device]
        spec = next((s for s in ops.values() if here and s["kernel"] == here[0].function), None)
        if spec is None:
            print(f"SKIP {name}.{alg} (algorithm): no {run.device} implementation")
            continue
        try:
            draws = [(t, k, d, None) for t, k, d, _dtype in _torch_draws(spec, rng, run.torch, run.device)[:2]]
        except _NeedsInputs as e:
            print(f"SKIP {name}.{alg} (algorithm): {e}")
            continue
        for draw in draws:
            _compare(run, f"{name}.{alg} (algorithm)", spec, getattr(tmod, alg), getattr(jmod, alg), draw, rng)
        compared += 1
        print(f"PASS {name}.{alg} (algorithm): torch's choice equals JAX's on drawn inputs")
    return compared


def main(args):
    device = "cpu" if args[:1] == ["--cpu"] else "cuda"
    args = args[1:] if device == "cpu" else args
    if len(args) < 2 or len(args) % 2:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    import torch

    assert device == "cpu" or torch.cuda.is_available(), "torch sees no GPU"
    counts = {"bitwise": 0, "close": 0}
    ops = 0
    for out, name in zip(args[::2], args[1::2]):
        ops += check_library(out, name, counts, device)
    stream = ", torch's calls on a side stream" if device == "cuda" else ""
    print(
        f"torch-same: {ops} ops compared{stream}; {counts['bitwise']} arrays bitwise equal, "
        f"{counts['close']} equal to rounding (rtol 1e-5)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
