"""Per-executable state of `BE::Tensor` kernels and typed pointers
(`T& state`, created by begen.yaml's `instantiate:` function), end to end
on the CPU: tests/e2e/vocab_state built by the CLI."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import REPO, import_module, run_begen

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
    script = textwrap.dedent(
        f"""
        import sys, threading
        import jax
        jax.config.update("jax_num_cpu_devices", 4)
        import numpy as np
        from jax.sharding import PartitionSpec as P
        sys.path.insert(0, {str(state.out_dir)!r})
        import e2e_vocab_state as m
        mesh = jax.make_mesh((4,), ("x",))
        one = jax.ShapeDtypeStruct((1,), np.int32)
        f = jax.jit(jax.shard_map(lambda: m.SlowCounter(out=one), mesh=mesh, in_specs=(), out_specs=P("x")))
        print("shard_map", [np.asarray(f()).tolist() for _ in range(3)])
        g = jax.pmap(lambda i: m.SlowCounter(out=one), axis_name="x")
        print("pmap", [np.asarray(g(np.arange(4))).ravel().tolist() for _ in range(3)])
        h = jax.jit(lambda: m.SlowCounter(out=jax.ShapeDtypeStruct((), np.int32)))
        got = [int(h())]
        def work():
            for _ in range(50):
                got.append(int(h()))
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print("threads", len(got), len(set(got)), min(got), max(got))
        # Threads calling the shard_map at once: each device's calls take
        # turns on its own state, so every device reads 42..61 once each.
        seen = []
        def shards():
            for _ in range(5):
                seen.append(np.asarray(f()).tolist())
        threads = [threading.Thread(target=shards) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print("threads_shard_map", [sorted(row[d] for row in seen) == list(range(45, 65)) for d in range(4)])
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    per_device = str([[42] * 4, [43] * 4, [44] * 4])
    assert lines["shard_map"] == per_device, proc.stdout
    assert lines["pmap"] == per_device, proc.stdout
    assert lines["threads"] == "201 201 42 242", proc.stdout
    assert lines["threads_shard_map"] == str([True] * 4), proc.stdout
