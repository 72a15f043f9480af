"""Per-executable state of `BE::Tensor` kernels and typed pointers
(`T& state`, created by begen.yaml's `instantiate:` function), end to end
on the CPU: tests/e2e/vocab_state built by the CLI."""

import numpy as np
import pytest
from conftest import PER_DEVICE_COUNTS, REPO, counts_per_device, import_module, run_begen

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane


@pytest.fixture(scope="module")
def state(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_vocab_state")
    run_begen("build", REPO / "tests/e2e/vocab_state", "--out", out, "--quiet")
    m = import_module(out, "e2e_vocab_state")
    m.out_dir = out
    return m


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


def test_each_device_has_its_own_state(state):
    """On 4 CPU devices the shards of a shard_map and of a pmap run at once,
    each on its device: every device has a state of its own, made on its
    first call, so 3 calls count 42, 43, 44 on each device (one shared state
    counts 42..53 over the 12 shards). Threads calling one jitted function on
    one device share that device's state and take turns: SlowCounter reads
    the count, waits a millisecond and writes it back one higher, so calls
    that overlapped would read one count twice; 201 calls read 201 counts,
    and 20 calls of the shard_map from 4 threads read 20 counts per device."""
    assert counts_per_device(state.out_dir, "e2e_vocab_state", "SlowCounter") == PER_DEVICE_COUNTS
