"""The same CUDA kernels from PyTorch and from JAX give the same numbers
(scripts/gpu-check.sh, STEPS=torch-same).

Each OUT is a library built with `--target jax,torch`. For every op its
`<NAME>_torch` module registers, the inputs are drawn from the op's
contract as `begen.testing.check_torch` draws them (extents 3, 4, ... and
17, 33, ...; both booleans; constants over their values), on the GPU. The
torch function and the JAX function of the same kernel run on the same
arrays; their outputs must agree, and where the op has an autograd formula
so must torch's gradients and `jax.vjp`'s for one random cotangent. Each
library must compare at least one op. The kernels the torch target leaves
out are printed with their reasons (from the build's warnings), never
passed over in silence.

usage: python tests/gpu/check_torch_same.py [--cpu] OUT NAME [OUT NAME ...]
(--cpu: the CPU ops, on the CPU: the checker's own trial off the device)
"""

import sys
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


def check_library(out, name, counts, device):
    import jax
    import jax.numpy as jnp
    import torch
    from begen.testing import _torch_draws, torch_ops

    jax.config.update("jax_enable_x64", True)
    sys.path.insert(0, out)
    jmod = __import__(name)
    tmod = __import__(f"{name}_torch")
    ops = torch_ops(tmod)
    compared = 0
    rng = np.random.default_rng(0)
    for key, spec in ops.items():
        if spec.get("platform", "cpu") != device:
            continue
        ints = [a[0] for a in spec["args"] if isinstance(a[1], str) and a[1].startswith(("int", "uint"))]
        if ints:
            # Index inputs drawn from a contract are no valid structure (a
            # CSR matrix's indptr and indices): the kernel may leave its
            # output unwritten, which would differ by chance.
            print(f"SKIP {name}.{key}: integer inputs ({', '.join(ints)}) need a valid structure")
            continue
        if spec.get("out"):
            # The caller gives an out= op its outputs: no shape to draw
            # (check_brainevent_torch.py calls such ops with their shapes).
            print(f"SKIP {name}.{key}: an out= op")
            continue
        tfn = getattr(tmod, spec["call"])
        jfn = getattr(jmod, spec["call"])
        names = [a[0] for a in spec["args"]]
        inout = set(spec.get("inout", ()))
        diff = [names.index(n) for n in spec.get("differentiable", ())]
        for tensors, keywords, described, _dtype in _torch_draws(spec, rng, torch, device)[:4]:
            what = f"{name}.{key} at {described}"
            jargs = [_jax_array(t, jnp) for t in tensors]
            jout = _as_list(jfn(*jargs, **keywords))
            targs = [t.clone() for t in tensors]
            tout = _as_list(tfn(*targs, **keywords))
            if not tout:
                # An op that only updates its inputs in place.
                tout = [targs[k] for k, n in enumerate(names) if n in inout]
            if len(tout) != len(jout):
                raise AssertionError(f"{what}: torch gives {len(tout)} outputs, JAX {len(jout)}")
            for k, (t, j) in enumerate(zip(tout, jout)):
                _close(f"{what}: output {k}", _numpy(t), np.asarray(j, dtype=np.float64), counts)
            if diff and not inout:
                cts = [rng.standard_normal(tuple(t.shape)) for t in tout]
                wrt = [tensors[k].clone().requires_grad_(True) for k in diff]
                targs = list(tensors)
                for k, w in zip(diff, wrt):
                    targs[k] = w
                outs = _as_list(tfn(*targs, **keywords))
                tct = [torch.tensor(c, dtype=o.dtype, device=o.device) for c, o in zip(cts, outs)]
                tgrads = torch.autograd.grad(outs, wrt, grad_outputs=tct, allow_unused=True)

                def f(*d, jargs=jargs, diff=diff, jfn=jfn, keywords=keywords):
                    a = list(jargs)
                    for k, v in zip(diff, d):
                        a[k] = v
                    r = jfn(*a, **keywords)
                    return tuple(r) if isinstance(r, (tuple, list)) else (r,)

                primal, vjp = jax.vjp(f, *[jargs[k] for k in diff])
                jct = tuple(jnp.asarray(c).astype(p.dtype) for c, p in zip(cts, primal))
                jgrads = vjp(jct)
                for k, tg, jg in zip(diff, tgrads, jgrads):
                    got = np.zeros(tensors[k].shape) if tg is None else _numpy(tg)
                    _close(f"{what}: d/d{names[k]}", got, np.asarray(jg, dtype=np.float64), counts)
        compared += 1
        print(f"PASS {name}.{key}: torch equals JAX" + (", forward and backward" if diff and not inout else ""))
    if compared == 0:
        raise AssertionError(f"{name}: no {device} op was compared (its ops: {', '.join(ops) or 'none'})")
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
    print(
        f"torch-same: {ops} ops compared; {counts['bitwise']} arrays bitwise equal, "
        f"{counts['close']} equal to rounding (rtol 1e-5)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
