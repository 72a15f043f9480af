"""Named contracts and warnings turned off, end to end on the CPU:
tests/e2e/named built by the CLI with `--platform cpu` and called from JAX
(eagerly and under jit, against numpy), and small kernel directories whose
scan must warn, or not, about the conventional order."""

import textwrap

import numpy as np
import pytest
from conftest import REPO, import_module, run_begen


@pytest.fixture(scope="module")
def m(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_named")
    proc = run_begen("build", REPO / "tests/e2e/named", "--out", out, "--platform", "cpu")
    # `scaled_first` is out of the conventional order, its warning turned off.
    assert "conventional order" not in proc.stdout + proc.stderr
    return import_module(out, "e2e_named")


def points(seed, n, d):
    return np.random.default_rng(seed).standard_normal((n, d))


def rbf(x, y, scale):
    return scale * np.exp(-0.5 * ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1))


def laplace(x, y, scale):
    return scale * np.exp(-np.abs(x[:, None, :] - y[None, :, :]).sum(-1))


@pytest.mark.parametrize("jit", [False, True])
def test_kernels_sharing_a_named_contract(m, jax_cpu, jit):
    jax = jax_cpu
    x, y = points(0, 5, 3), points(1, 4, 3)
    cases = [
        (m.gp_rbf, rbf),
        (m.gp_linear, lambda x, y, s: s * x @ y.T),
        (m.gp_laplace, laplace),  # the contract used from begen.yaml's `sources:`
    ]
    for f, want in cases:
        call = jax.jit(f, static_argnames="scale") if jit else f
        np.testing.assert_allclose(call(x, y, scale=2.5), want(x, y, 2.5), rtol=1e-12)
        # The contract's default for `scale`.
        np.testing.assert_allclose(call(x, y), want(x, y, 1.0), rtol=1e-12)
        assert call(x, y).dtype == np.float64 and call(x, y).shape == (5, 4)


def test_the_contract_is_checked_at_the_call(m):
    with pytest.raises(ValueError, match="dimension 'd' is 3 .* but parameter 'y' has 2 at axis 1"):
        m.gp_rbf(points(0, 5, 3), points(1, 4, 2))


@pytest.mark.parametrize("jit", [False, True])
def test_a_token_beside_the_contract_and_the_order_left_as_written(m, jax_cpu, jit):
    jax = jax_cpu
    x = np.arange(6, dtype=np.float32)
    shifted = jax.jit(m.shifted, static_argnames="shift") if jit else m.shifted
    np.testing.assert_allclose(shifted(x), x + 0.5)
    np.testing.assert_allclose(shifted(x, shift=-2.0), x - 2.0)
    scaled = jax.jit(m.scaled_first, static_argnames="a") if jit else m.scaled_first
    np.testing.assert_allclose(scaled(x, a=3.0), 3.0 * x)


def scan(tmp_path, yaml):
    d = tmp_path / "kernels"
    d.mkdir()
    (d / "k.cpp").write_text(
        textwrap.dedent("""\
        #include <cstdint>
        // @BE late arg:float32[n] attr.a:float32 ret:float32[n] dim.n
        void late(const float* x, float a, float* y, int64_t n) {}
        """)
    )
    if yaml is not None:
        (d / "begen.yaml").write_text(textwrap.dedent(yaml))
    proc = run_begen("scan", d)
    return proc.stdout + proc.stderr


@pytest.mark.parametrize(
    "yaml, warned",
    [
        (None, True),
        ("warnings: {order: false}\n", False),
        ("functions: {late: {warnings: {order: false}}}\n", False),
        ("warnings: {order: false}\nfunctions: {late: {warnings: {order: true}}}\n", True),
        ("functions: {late: {warnings: {}}}\n", True),
    ],
)
def test_the_order_warning_turned_off(tmp_path, yaml, warned):
    out = scan(tmp_path, yaml)
    assert ("not in the conventional order" in out) == warned, out
