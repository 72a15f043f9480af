"""CUDA kernels from PyTorch and from JAX on one GPU (scripts/gpu-check.sh,
STEPS=torch): tests/gpu/torch and tests/gpu/typed built with
`--target jax,torch`. Each torch op is checked against numpy and against
the same kernel's JAX function, forward and backward; a slow kernel run on
a side stream is read at once by a torch op on that stream (right only if
the op ran on torch's current stream; its negative control, the kernel on
another stream, must be seen unfinished); and the ops run under
`torch.compile(fullgraph=True)`.

usage: python tests/gpu/check_torch.py TORCH_OUT TYPED_OUT
"""

import sys

import numpy as np


def main(out, typed_out):
    sys.path[:0] = [out, typed_out]
    import jax
    import jax.numpy as jnp
    import torch

    import gpu_torch
    import gpu_torch_torch as t
    import gpu_typed
    import gpu_typed_torch as tt

    assert torch.cuda.is_available(), "torch sees no GPU"
    dev = torch.device("cuda")
    passed = 0
    rng = np.random.default_rng(0)

    def ok(what):
        nonlocal passed
        passed += 1
        print(f"PASS {what}")

    # Forward and backward from torch against numpy and against JAX.
    xs = rng.standard_normal(100_000).astype(np.float32)
    x = torch.tensor(xs, device=dev, requires_grad=True)
    y = t.square(x)
    (g,) = torch.autograd.grad(y.sum() * 3.0, x)
    jx = jnp.asarray(xs)
    jy = gpu_torch.square(jx)
    jg = jax.grad(lambda v: gpu_torch.square(v).sum() * 3.0)(jx)
    np.testing.assert_allclose(y.detach().cpu().numpy(), xs * xs, rtol=1e-6)
    np.testing.assert_array_equal(y.detach().cpu().numpy(), np.asarray(jy))
    np.testing.assert_array_equal(g.cpu().numpy(), np.asarray(jg))
    ok("square: forward and its backward kernel from torch equal JAX's (100,000 elements)")

    z = t.expo(x)
    (ge,) = torch.autograd.grad((z * 2.0).sum(), x)
    jz = gpu_torch.expo(jx)
    jge = jax.grad(lambda v: (gpu_torch.expo(v) * 2.0).sum())(jx)
    np.testing.assert_allclose(z.detach().cpu().numpy(), np.exp(xs), rtol=1e-6)
    np.testing.assert_array_equal(z.detach().cpu().numpy(), np.asarray(jz))
    np.testing.assert_array_equal(ge.cpu().numpy(), np.asarray(jge))
    ok("expo: a residual saved for the backward kernel, torch equal to JAX")

    # A side stream: the op must run on it, ordered with torch's own ops.
    side = torch.cuda.Stream()
    a = torch.tensor(xs, device=dev)
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        b = t.slow_inc(a, cycles=20_000_000)
        c = b * 2.0
    side.synchronize()
    np.testing.assert_allclose(c.cpu().numpy(), (xs + 1.0) * 2.0, rtol=1e-6)
    ok("slow_inc on a side stream: a torch op on that stream reads its finished result")

    # The negative control of that check: the same kernel run on the
    # default stream and read at once on the side stream, with nothing
    # ordering them, must be seen unfinished; otherwise the check above
    # could not tell a kernel on the wrong stream from one on the right.
    torch.cuda.synchronize()
    b = t.slow_inc(a, cycles=20_000_000)
    with torch.cuda.stream(side):
        c = b * 2.0
    side.synchronize()
    torch.cuda.synchronize()
    raced = not np.allclose(c.cpu().numpy(), (xs + 1.0) * 2.0, rtol=1e-6)
    assert raced, "a read on another stream, unordered, saw slow_inc finished: the side-stream check cannot fail"
    ok("negative control: the same kernel on the default stream, read unordered on the side stream, is seen unfinished")

    # torch.compile, with dynamic shapes, no graph break.
    f = torch.compile(lambda v: t.square(v) + 1.0, fullgraph=True, dynamic=True)
    for n in (1000, 4097):
        v = torch.tensor(xs[:n], device=dev)
        np.testing.assert_allclose(f(v).cpu().numpy(), xs[:n] * xs[:n] + 1.0, rtol=1e-6)
    ok("torch.compile(fullgraph=True, dynamic=True) over a CUDA op, two sizes")

    fg = torch.compile(lambda v: torch.autograd.grad(t.square(v).sum(), v)[0], fullgraph=False)
    v = torch.tensor(xs[:512], device=dev, requires_grad=True)
    np.testing.assert_allclose(fg(v).cpu().numpy(), 2.0 * xs[:512], rtol=1e-6)
    ok("torch.compile over the backward kernel")

    # tests/gpu/typed from torch: a template with CUDA's __half, in place, a BE::Tensor view.
    for dtype, jdtype in ((torch.float32, jnp.float32), (torch.float16, jnp.float16)):
        v = torch.tensor(xs[:1000], device=dev).to(dtype)
        got = tt.gpu_scale(v, s=0.5)
        want = gpu_typed.gpu_scale(jnp.asarray(xs[:1000]).astype(jdtype), s=0.5)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.cpu().numpy(), np.asarray(want))
    acc = torch.ones(1000, device=dev)
    back = tt.gpu_accumulate(acc, torch.tensor(xs[:1000], device=dev))
    assert back is acc
    np.testing.assert_allclose(acc.cpu().numpy(), 1.0 + xs[:1000], rtol=1e-6)
    m = rng.standard_normal((300, 17)).astype(np.float32)
    np.testing.assert_allclose(
        tt.gpu_rowsum(torch.tensor(m, device=dev)).cpu().numpy(), m.sum(axis=1), rtol=1e-5, atol=1e-5
    )
    ok("gpu_typed from torch: float32/float16 template equal to JAX, in place, a BE::Tensor view")

    # The op's own checks on the GPU: a CPU tensor is refused by name.
    try:
        t.square(torch.tensor(xs[:10]))
    except Exception as e:  # noqa: BLE001 - any error type, as long as it names the parameter
        assert "square" in str(e) and "x" in str(e), str(e)
    else:
        raise AssertionError("a CPU tensor reached a CUDA kernel")
    ok("a CPU tensor passed to a CUDA op is refused, naming the kernel")

    print(f"torch on the GPU: all {passed} checks passed")


if __name__ == "__main__":
    main(*sys.argv[1:3])
