"""{{package}}'s kernels against numpy, and every gradient begen.yaml
declares against finite differences (begen.testing.check_grads), on the
installed package."""

{{jax_import}}

jax.config.update("jax_enable_x64", True)  # the kernels take float64

import numpy as np  # noqa: E402
{{cuda_imports}}from begen.testing import check_grads  # noqa: E402

import {{package}}  # noqa: E402
from {{package}} import _kernels  # noqa: E402

x = np.linspace(-2.0, 2.0, 33)


def test_square():
    np.testing.assert_allclose({{jax_ns}}.square(x, scale=3.0), 3.0 * x * x)
    np.testing.assert_allclose(jax.jit(lambda a: {{jax_ns}}.square(a, scale=0.5))(x), 0.5 * x * x)


def test_gradients():
    # Each kernel with a vjp:, jvp: or linear: in begen.yaml (square, whose
    # backward kernel is square_bwd), in every mode its declarations
    # support, on inputs built from its contract; a failure raises with the
    # table (kernel, mode, max error, result). `pytest -s` shows it.
    print(check_grads(_kernels))
{{cuda_test}}
