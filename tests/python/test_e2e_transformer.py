"""What a transformer block's kernels need, end to end on 4 CPU devices:
tests/e2e/transformer built by the CLI and called under `jax.jit` on meshes
of explicit axes (jax.make_mesh's default, under jax.set_mesh) and of auto
axes, in a fresh process each (tests/python/transformer_cases.py), checked
here against jax.numpy, with the compiled HLO's collectives counted."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_begen

CASES = Path(__file__).with_name("transformer_cases.py")
NAME = "e2e_transformer"


@pytest.fixture(scope="module")
def built(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp(NAME)
    run_begen("build", REPO / "tests/e2e/transformer", "--out", out, "--quiet")
    return out


@pytest.fixture(scope="module", params=["explicit", "auto"])
def results(request, built):
    proc = subprocess.run(
        [sys.executable, str(CASES), str(built), request.param], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return request.param, json.loads(proc.stdout.strip().splitlines()[-1])


def calls(result, kernel):
    return [shapes for target, shapes in result["calls"] if target == f"{NAME}.{kernel}"]


def test_every_case_equals_jax_numpy(results):
    _, r = results
    for name, result in r.items():
        assert "error" not in result, f"{name}: {result.get('error')}"
        assert result["equal"], f"{name}: the numbers differ from jax.numpy's"


def test_residuals_with_shard_run_per_shard_forward_and_backward(results):
    mode, r = results
    # 16 rows over 4 devices: each device's block of 4 rows, nothing gathered.
    assert calls(r["rms_forward"], "rmsnorm") == [["f32[4,32]"]]
    assert calls(r["rms_grad"], "rmsnorm") == [["f32[4,32]"]]
    assert calls(r["rms_grad"], "rmsnorm_bwd") == [["f32[4,32]", "f32[4]", "f32[4,32]"]]
    for name in ("rms_forward", "rms_grad"):
        assert "all-gather" not in r[name]["collectives"], (name, r[name])
    # The loss alone is summed across the devices.
    assert r["rms_value_and_grad"]["collectives"] == {"all-reduce": 1}
    if mode == "explicit":
        assert r["rms_forward"]["type"] == ["float32[16@data,32]"]
        assert r["rms_grad"]["type"] == ["float32[16@data,32]"]


def test_a_backward_kernel_without_shard_gives_the_inputs_split(results):
    mode, r = results
    # Not split: the kernels run on the whole arrays, the inputs gathered.
    assert calls(r["cube_forward"], "cube") == [["f32[32,8,32]"]]
    assert calls(r["cube_grad"], "cube_bwd") == [["f32[32,8,32]", "f32[32,8,32]"]]
    if mode == "explicit":
        # The cotangent has the input's split, as jax requires of a custom_vjp.
        assert r["cube_grad"]["type"] == ["float32[32@data,8,32]"]
        assert r["cube_grad_replicated"]["type"] == ["float32[32,8,32]"]
        assert r["cube_forward"]["collectives"] == {"all-gather": 1}
        # The input for the backward kernel and the cotangent (the split
        # input itself, in this loss) each gathered once; nothing summed.
        assert r["cube_grad"]["collectives"] == {"all-gather": 2}
        assert r["cube_grad_replicated"]["collectives"] == {}
