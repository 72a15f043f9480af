"""{{package}}'s kernels against numpy, and their gradients against finite
differences (jax.test_util.check_grads), on the installed package."""

import jax

jax.config.update("jax_enable_x64", True)  # the kernels take float64

import numpy as np  # noqa: E402
{{cuda_imports}}from jax.test_util import check_grads  # noqa: E402

import {{package}}  # noqa: E402

x = np.linspace(-2.0, 2.0, 33)


def test_square():
    np.testing.assert_allclose({{package}}.square(x, scale=3.0), 3.0 * x * x)
    np.testing.assert_allclose(jax.jit(lambda a: {{package}}.square(a, scale=0.5))(x), 0.5 * x * x)


def test_square_gradient():
    check_grads(lambda a: {{package}}.square(a, scale=3.0), (x,), order=1, modes=["rev"])
{{cuda_test}}
