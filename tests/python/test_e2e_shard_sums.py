"""Per-output sums and named rests under a split, end to end on 4 CPU devices:
tests/e2e/shard_sums built by the CLI, its RMSNorm kernels called on rows split
across devices under explicit and auto mesh axes. The backward kernels
(`shard: [n], sum: {ct_w: [n]}`) compute each device's rows of ct_x and a
partial ct_w: the compiled HLO has exactly one all-reduce (ct_w's) and no
all-gather, and both cotangents equal jnp's. Over `[rows..., d]` with
`shard: [rows]` a split of either leading axis stays split; undeclared, it is
gathered once, with the warning under explicit axes. Each mode runs in a
fresh process (tests/python/shard_sums_cases.py)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_begen

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane

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
    return request.param, json.loads(proc.stdout.strip().splitlines()[-1])


def targets(result, name):
    return [shapes for target, shapes in result["calls"] if target == f"e2e_shard_sums.{name}"]


def test_cotangents_equal_jnp(results):
    _, results = results
    for name, r in results.items():
        assert "error" not in r, f"{name}: {r.get('error')}"
        assert all(r["close"]), f"{name}: {r['close']}"


def test_weight_gradient_is_one_all_reduce_and_nothing_is_gathered(results):
    _, results = results
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
    _, results = results
    assert results["forward"]["collectives"] == {}
    assert targets(results["forward"], "rms") == [["f32[4,6]", "f32[6]"]]


def test_a_named_rest_splits_along_its_leading_extents(results):
    _, results = results
    # x (4, 3, 6) as `rows..., d`: split along either leading axis, each
    # device's call sees its block of rows, nothing gathered.
    for name in ("rest_forward", "rest_forward_axis1", "rms_norm"):
        assert results[name]["collectives"] == {}, (name, results[name]["collectives"])
        assert results[name]["warnings"] == [], name
    assert targets(results["rest_forward"], "rms_rows") == [["f32[1,3,6]", "f32[6]"]]
    assert targets(results["rest_forward_axis1"], "rms_rows") == [["f32[3,1,6]", "f32[6]"]]
    assert targets(results["rms_norm"], "rms_norm") == [["f32[1,3,6]"]]
    # The inverse norms `[rows...]` keep the split too.
    assert results["rms_norm"]["specs"][1] in ("P('x',)", "P('x', None)")
    # The gradient: the rows' cotangent split, ct_w one all-reduce.
    for name in ("rest_grad", "rest_grad_axis1", "rest_bwd"):
        assert results[name]["collectives"] == {"all-reduce": 1}, (name, results[name]["collectives"])
    assert targets(results["rest_grad"], "rms_rows_grad") == [["f32[1,3,6]", "f32[6]", "f32[1,3,6]"]]
    assert targets(results["rest_grad_axis1"], "rms_rows_grad") == [["f32[3,1,6]", "f32[6]", "f32[3,1,6]"]]


def test_an_undeclared_rest_is_gathered_with_the_warning(results):
    mode, results = results
    r = results["rest_undeclared"]
    assert r["collectives"] == {"all-gather": 1}
    assert targets(r, "rms_rows_plain") == [["f32[4,3,6]", "f32[6]"]]
    if mode == "explicit":
        assert r["warnings"] == [
            (
                "rms_rows_plain: parameter 'x' is split along dimension 'rows[0]', which begen.yaml does not declare "
                "in `shard:` or `reduce:`: it is gathered on every device (all-gather) before the call"
            )
        ]
    else:
        assert r["warnings"] == []  # auto axes: XLA's partitioner gathers it, no trace-time warning


@pytest.mark.parametrize("mode", ["explicit", "auto"])
def test_an_exported_backward_stays_split_with_one_all_reduce(built, tmp_path, mode):
    # Exported (auto axes: begen's partitioned custom call, split again by
    # the partitioner the module registers) and run in a fresh process.
    prefix = "" if mode == "explicit" else "auto-"

    def run(step):
        args = [sys.executable, str(CASES), str(built), "4", prefix + step, str(tmp_path)]
        proc = subprocess.run(args, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return json.loads(proc.stdout.strip().splitlines()[-1])

    assert run("export") == {"bwd": {"devices": 4}, "rest_bwd": {"devices": 4}}
    d = run("deserialize")
    for name in ("bwd", "rest_bwd"):
        assert all(d[name]["close"]) and d[name]["collectives"] == {"all-reduce": 1}, (name, d[name])
    assert targets(d["bwd"], "rms_norm_bwd") == [["f32[4,6]", "f32[6]", "f32[4]", "f32[4,6]"]]
    assert targets(d["rest_bwd"], "rms_rows_grad") == [["f32[1,3,6]", "f32[6]", "f32[1,3,6]"]]
