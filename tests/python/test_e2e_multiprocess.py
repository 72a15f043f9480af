"""Sharding beyond one process: tests/e2e/sharding's kernels on one global
mesh of 4 CPU devices made of 2 processes × 2 devices on localhost
(`jax.distributed.initialize`, a coordinator on 127.0.0.1 and a free port,
gloo collectives between the processes).

The test computes every case on one device in this process, then starts the
two processes (tests/python/multiprocess_cases.py); each runs the split calls
(rows, k with the partial sums added across the processes, a block-row CSR
matrix, a gradient, a split input beside a numpy constant) on meshes of
explicit and of auto axes and compares every output block it holds with this
process's result. Both processes are reaped however the run ends, within a
bounded time."""

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, import_module, missing, run_begen
from process_group import free_port, run_group

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane

CASES = Path(__file__).with_name("multiprocess_cases.py")
# The whole run (JAX start, distributed handshake, compiles) on a loaded
# machine; a hung collective is cut off here.
TIMEOUT_S = 240


@pytest.fixture(scope="module")
def built(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_multiprocess")
    run_begen("build", REPO / "tests/e2e/sharding", "--out", out, "--platform", "cpu", "--quiet")
    return out


def inputs():
    rng = np.random.default_rng(1)
    n, k = 16, 24
    blocks, r, per_row = 8, 3, 2
    a = {
        "x": rng.normal(size=(n, 6)).astype(np.float32),
        "A": rng.normal(size=(n, k)).astype(np.float32),
        "v": rng.normal(size=k).astype(np.float32),
        "csr_indptr": np.tile(np.arange(0, r * per_row + 1, per_row, dtype=np.int32), (blocks, 1)),
        "csr_indices": rng.integers(0, k, size=(blocks, r * per_row)).astype(np.int32),
        "csr_data": rng.normal(size=(blocks, r * per_row)).astype(np.float32),
        "a32": rng.normal(size=n).astype(np.float32),
        "b": rng.normal(size=n).astype(np.float32),
    }
    a["Ad"], a["vd"] = a["A"].astype(np.float64), a["v"].astype(np.float64)
    return a


def one_process_reference(jax, m, a):
    # Each case on this process's one device, unsplit.
    out = jax.ShapeDtypeStruct(a["csr_data"].shape[:1] + (a["csr_indptr"].shape[1] - 1,), np.float32)
    ref = {
        "rowsum": m.rowsum(a["x"]),
        "matvec": m.matvec(a["A"], a["v"]),
        "csr_rows": m.csr_rows(a["csr_data"], a["csr_indices"], a["csr_indptr"], a["v"], out=out),
        "grad": jax.grad(lambda A, x: (m.mv(A, x) ** 2).sum(), argnums=1)(a["Ad"], a["vd"]),
        "add": m.add(a["a32"], a["b"]),
    }
    ref = {k: np.asarray(v) for k, v in ref.items()}
    # The kernels themselves, against numpy.
    dense = (a["csr_data"] * a["v"][a["csr_indices"]]).reshape(8, 3, 2).sum(2)
    assert np.allclose(ref["csr_rows"], dense, rtol=1e-5)
    assert np.allclose(ref["matvec"], a["A"] @ a["v"], rtol=1e-4, atol=1e-5)
    assert np.allclose(ref["grad"], a["Ad"].T @ (2 * a["Ad"] @ a["vd"]))
    return ref


def run_job(built, data):
    # The two processes, reaped whatever happens: a timeout kills both.
    port = free_port()
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONUNBUFFERED": "1"}
    env.pop("XLA_FLAGS", None)
    commands = [[sys.executable, str(CASES), str(built), str(data), str(port), str(pid)] for pid in range(2)]
    try:
        return run_group(commands, env, TIMEOUT_S)
    except TimeoutError as e:
        pytest.fail(str(e))


def test_two_processes_of_two_devices_compute_what_one_process_does(jax_cpu, built, tmp_path):
    a = inputs()
    m = import_module(built, "e2e_sharding")
    ref = one_process_reference(jax_cpu, m, a)
    np.savez(tmp_path / "inputs.npz", **a)
    np.savez(tmp_path / "reference.npz", **ref)

    runs = run_job(built, tmp_path)
    if any(rc == 3 for rc, _, _ in runs):
        missing(f"this jax cannot run collectives across CPU processes: {runs[0][1]}{runs[0][2][-2000:]}")
    for pid, (rc, out, err) in enumerate(runs):
        assert rc == 0, f"process {pid} exited {rc}:\n{out}\n{err[-4000:]}"
    seen = set()
    for pid, (_, out, err) in enumerate(runs):
        r = json.loads(out.strip().splitlines()[-1])
        assert r["process"] == pid and r["devices"] == [4, 2], r
        for name, result in r.items():
            if name in ("process", "devices"):
                continue
            seen.add(name)
            assert "error" not in result, f"process {pid}, {name}: {result['error']}"
            # Each process holds 2 of the 4 blocks (replicated outputs: 2 copies).
            assert result["equal"] and result["blocks"] == 2, f"process {pid}, {name}: {result}"
        for kind in ("explicit", "auto"):
            # Split per shard: nothing gathered; k's partial sums and the
            # gradient's cotangent in one all-reduce across the processes.
            for name in ("rowsum", "matvec_rows", "csr_rows", "add_constant"):
                assert r[f"{kind}/{name}"]["collectives"] == {}, (kind, name, r[f"{kind}/{name}"])
            for name in ("matvec_k", "grad"):
                assert r[f"{kind}/{name}"]["collectives"] == {"all-reduce": 1}, (kind, name, r[f"{kind}/{name}"])
    want = {"rowsum", "matvec_rows", "matvec_k", "csr_rows", "grad", "add_constant"}
    assert seen == {f"{kind}/{c}" for kind in ("explicit", "auto") for c in want}
