"""{{package}}'s kernels as torch ops, on the installed package: each
against its formula, through the typed function and the op itself, and the
gradient begen.yaml declares (square_bwd, registered with
torch.library.register_autograd) by torch.autograd.gradcheck. Needs torch,
not jax."""

import pytest
import torch

from {{package}} import _kernels_torch as ops

x = torch.linspace(-2.0, 2.0, 33, dtype=torch.float64)


def test_square():
    torch.testing.assert_close(ops.square(x, scale=3.0), 3.0 * x * x)
    op = getattr(torch.ops, ops.NAMESPACE).square
    torch.testing.assert_close(op(x, scale=0.5), 0.5 * x * x)


def test_square_gradient():
    xs = x.clone().requires_grad_()
    assert torch.autograd.gradcheck(lambda a: ops.square(a, scale=3.0), (xs,))
{{cuda_test}}
