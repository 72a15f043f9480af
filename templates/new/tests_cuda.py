

@pytest.mark.skipif(not any(d.platform == "gpu" for d in jax.devices()), reason="no GPU")
def test_square_cuda():
    # check_grads above checks square_cuda's gradient where there is a GPU.
    gpu = jax.devices("gpu")[0]
    xs = jax.device_put(x, gpu)
    np.testing.assert_allclose({{jax_ns}}.square_cuda(xs, scale=3.0), 3.0 * x * x)
