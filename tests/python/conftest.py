"""Shared fixtures for the end-to-end tests: build a kernel directory with
the `begen` CLI and import the generated module.

The CLI is `$BEGEN_BIN`, else `target/debug/begen` (built by `cargo build`).
Without JAX (or nvcc, for CUDA tests) a test is skipped, except under
CI=true, where a missing piece fails the test.
"""

import importlib
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
IN_CI = os.environ.get("CI") == "true"
# begen's Python runtime as a package, for its unit tests (runtime/).
RUNTIME = REPO / "src" / "target" / "xla_jax" / "runtime"
sys.path.insert(0, str(RUNTIME))


def pytest_configure(config):
    # A test file joins scripts/test.sh's jax lane (the CPU end-to-end tests
    # under each older jax release) with a module-level
    # `pytestmark = pytest.mark.jax_lane`: test.sh runs the files that say
    # so, with `-m jax_lane`.
    config.addinivalue_line("markers", "jax_lane: also run under each older jax release (scripts/test.sh's jax lane)")


def missing(what):
    """Skip, or fail under CI=true."""
    if IN_CI:
        pytest.fail(f"CI=true and {what}: this test must not be skipped in CI")
    pytest.skip(what)


def begen_bin():
    path = Path(os.environ.get("BEGEN_BIN") or REPO / "target" / "debug" / "begen")
    if not path.is_file():
        missing(f"no begen binary at {path} (run `cargo build` or set BEGEN_BIN)")
    return path


# begen's default work directories (a per-user cache keyed by OUT) go under
# the test run's temporary folder, not the user's ~/.cache: pytest's folders
# are new each run, and their keys would pile up there.
_WORK_CACHE = []


@pytest.fixture(scope="session", autouse=True)
def _begen_work_cache(tmp_path_factory):
    _WORK_CACHE.append(tmp_path_factory.getbasetemp() / "begen-cache")


def run_begen(*args, check=True, env=None):
    """Runs the CLI with this interpreter as BEGEN_PYTHON; returns the process."""
    full_env = dict(os.environ)
    full_env.setdefault("BEGEN_PYTHON", sys.executable)
    if _WORK_CACHE:
        full_env["XDG_CACHE_HOME"] = str(_WORK_CACHE[-1])
    full_env.update(env or {})
    proc = subprocess.run(
        [str(begen_bin()), *map(str, args)], capture_output=True, text=True, env=full_env, check=False
    )
    if check and proc.returncode != 0:
        pytest.fail(f"begen {' '.join(map(str, args))} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return proc


def import_module(out_dir, name):
    """Imports OUT/<name>.py fresh."""
    sys.path.insert(0, str(out_dir))
    try:
        sys.modules.pop(name, None)
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(out_dir))


def counts_per_device(out_dir, module, kernel, serial=None):
    """Calls `module.kernel(out=int32[1])`, a counter of a per-executable
    state that reads the count, waits and writes it back one higher, in a
    fresh process on 4 CPU devices; returns what each way of calling it
    counted, by name (the per-device state tests):

    - `shard_map`, `pmap`: 3 calls over the 4 devices, each call's counts;
    - `threads`: one jitted call, then 4 threads calling it 50 times each:
      the calls, the distinct counts, the least and the greatest;
    - `threads_shard_map`: 4 threads calling the shard_map 5 times each:
      per device, whether it read 45..64 once each;
    - `serials`, with `serial` (a kernel that writes which state it got):
      how many states the 4 shards of one shard_map call got."""
    script = textwrap.dedent(
        f"""
        import sys, threading
        import jax
        jax.config.update("jax_num_cpu_devices", 4)
        import numpy as np
        from jax.sharding import PartitionSpec as P
        sys.path.insert(0, {str(out_dir)!r})
        import {module} as m
        kernel = m.{kernel}
        mesh = jax.make_mesh((4,), ("x",))
        one = jax.ShapeDtypeStruct((1,), np.int32)
        f = jax.jit(jax.shard_map(lambda: kernel(out=one), mesh=mesh, in_specs=(), out_specs=P("x")))
        print("shard_map", [np.asarray(f()).tolist() for _ in range(3)])
        g = jax.pmap(lambda i: kernel(out=one), axis_name="x")
        print("pmap", [np.asarray(g(np.arange(4))).ravel().tolist() for _ in range(3)])
        h = jax.jit(lambda: kernel(out=one))
        got = [int(h()[0])]
        def work():
            for _ in range(50):
                got.append(int(h()[0]))
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print("threads", len(got), len(set(got)), min(got), max(got))
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
        if {serial!r} is not None:
            s = jax.jit(jax.shard_map(lambda: getattr(m, {serial!r})(out=one), mesh=mesh, in_specs=(), out_specs=P("x")))
            print("serials", len(set(np.asarray(s()).tolist())))
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return dict(line.split(" ", 1) for line in proc.stdout.splitlines())


PER_DEVICE_COUNTS = {
    "shard_map": str([[42] * 4, [43] * 4, [44] * 4]),
    "pmap": str([[42] * 4, [43] * 4, [44] * 4]),
    "threads": "201 201 42 242",
    "threads_shard_map": str([True] * 4),
}
"""What `counts_per_device` reads when each device has a state of its own
and calls on one device take turns."""


@pytest.fixture(scope="session")
def jax_cpu():
    try:
        import jax
    except ImportError:
        missing("jax is not installed in this Python")
    jax.config.update("jax_enable_x64", True)
    return jax


@pytest.fixture(scope="session")
def e2e_cpu(jax_cpu, tmp_path_factory):
    """tests/e2e/cpu built with `begen build --platform cpu`, imported."""
    out = tmp_path_factory.mktemp("e2e_cpu")
    run_begen("build", REPO / "tests/e2e/cpu", "--out", out, "--platform", "cpu", "--quiet")
    return import_module(out, "e2e_cpu")


@pytest.fixture()
def kernel_copy(tmp_path):
    """A writable copy of tests/e2e/cpu."""
    dest = tmp_path / "kernels"
    shutil.copytree(REPO / "tests/e2e/cpu", dest)
    return dest
