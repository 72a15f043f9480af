

@pytest.mark.skipif(not any(d.platform == "gpu" for d in jax.devices()), reason="no GPU")
def test_square_cuda():
    gpu = jax.devices("gpu")[0]
    xs = jax.device_put(x, gpu)
    np.testing.assert_allclose({{package}}.square_cuda(xs, scale=3.0), 3.0 * x * x)
    check_grads(lambda a: {{package}}.square_cuda(a, scale=3.0), (xs,), order=1, modes=["rev"])
