"""Per-output sums under a split, end to end on 4 CPU devices: tests/e2e/shard_sums
built by the CLI, its RMSNorm backward kernels (`shard: [n], sum: {ct_w: [n]}`)
called on rows split across devices under explicit and auto mesh axes. Each
device computes its rows of ct_x and a partial ct_w; the compiled HLO has
exactly one all-reduce (ct_w's) and no all-gather, and both cotangents equal
jnp's. Each mode runs in a fresh process (tests/python/shard_sums_cases.py)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_begen

CASES = Path(__file__).with_name("shard_sums_cases.py")


@pytest.fixture(scope="module")
def built(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_shard_sums")
    run_begen("build", REPO / "tests/e2e/shard_sums", "--out", out, "--platform", "cpu", "--quiet")
    return out


@pytest.fixture(scope="module", params=["explicit", "auto"])
def results(request, built):
    proc = subprocess.run(
        [sys.executable, str(CASES), str(built), "4", request.param], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def targets(result, name):
    return [shapes for target, shapes in result["calls"] if target == f"e2e_shard_sums.{name}"]


def test_cotangents_equal_jnp(results):
    for name, r in results.items():
        assert "error" not in r, f"{name}: {r.get('error')}"
        assert all(r["close"]), f"{name}: {r['close']}"


def test_weight_gradient_is_one_all_reduce_and_nothing_is_gathered(results):
    for name in ("bwd", "grad"):
        assert results[name]["collectives"] == {"all-reduce": 1}, (name, results[name]["collectives"])
        assert results[name]["warnings"] == [], name
    # Each device's call sees its 4 of the 16 rows, the whole w.
    assert targets(results["bwd"], "rms_norm_bwd") == [["f32[4,6]", "f32[6]", "f32[4]", "f32[4,6]"]]
    assert targets(results["grad"], "rms_grad") == [["f32[4,6]", "f32[6]", "f32[4,6]"]]
    # ct_x keeps the row split, ct_w (summed) is whole on every device.
    ct_x, ct_w = results["bwd"]["specs"]
    assert ct_x in ("P('x',)", "P('x', None)") and ct_w in ("P()", "P(None,)")


def test_forward_splits_rows_with_no_collective(results):
    assert results["forward"]["collectives"] == {}
    assert targets(results["forward"], "rms") == [["f32[4,6]", "f32[6]"]]
