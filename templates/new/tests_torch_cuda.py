

@pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU")
def test_square_cuda():
    xs = x.cuda()
    torch.testing.assert_close(ops.square_cuda(xs, scale=3.0), 3.0 * xs * xs)
    ys = xs.clone().requires_grad_()
    assert torch.autograd.gradcheck(lambda a: ops.square_cuda(a, scale=3.0), (ys,))
