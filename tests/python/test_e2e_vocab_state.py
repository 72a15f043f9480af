"""Per-executable state of `BE::Tensor` kernels and typed pointers
(`T& state`, created by begen.yaml's `instantiate:` function), end to end
on the CPU: tests/e2e/vocab_state built by the CLI."""

import numpy as np
import pytest
from conftest import REPO, import_module, run_begen

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane


@pytest.fixture(scope="module")
def state(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_vocab_state")
    run_begen("build", REPO / "tests/e2e/vocab_state", "--out", out, "--quiet")
    return import_module(out, "e2e_vocab_state")


def test_state_of_a_tensor_kernel_per_executable(state, jax_cpu):
    """XLA creates the state once per executable and hands it to each of
    its calls: a new executable starts again at 42."""
    scalar = jax_cpu.ShapeDtypeStruct((), np.int32)
    f = jax_cpu.jit(lambda: state.ReadCounter(out=scalar))
    assert [int(f()) for _ in range(3)] == [42, 43, 44]
    g = jax_cpu.jit(lambda x: (x, state.ReadCounter(out=scalar)))
    assert int(g(1)[1]) == 42
    assert int(state.ReadCounter(out=scalar)) >= 42


def test_state_of_typed_pointers_eager_and_jit(state, jax_cpu):
    x = np.arange(4, dtype=np.float32)
    f = jax_cpu.jit(state.AddCount)
    for k in range(3):
        np.testing.assert_allclose(f(x), x + 42 + k)
    # Eager: each call's executable holds a state of its own, from 42
    # (calls JAX caches share one).
    first = np.asarray(state.AddCount(x))
    assert first[0] >= 42
    np.testing.assert_allclose(first - first[0], x)


def test_failed_state_creation(state, jax_cpu):
    scalar = jax_cpu.ShapeDtypeStruct((), np.int32)
    with pytest.raises(Exception, match="MakeBroken: no counter today"):
        np.asarray(jax_cpu.jit(lambda: state.Broken(out=scalar))())
