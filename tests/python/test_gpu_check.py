"""scripts/gpu-check.sh's own logic, on the CPU: which steps run, the
summary table it ends with and its exit status. No step here builds
anything: the begen binary is `false` (a step that runs it fails at once),
Python is `true`, and the inputs a step needs are missing or stand-ins."""

import os
import re
import shutil
import subprocess

import pytest
from conftest import REPO

SCRIPT = REPO / "scripts" / "gpu-check.sh"


def run(tmp_path, begen="false", **env):
    full = {k: v for k, v in os.environ.items() if k not in ("STEPS", "SKIP", "SKIP_BENCH", "JAXMIN_DIR")}
    full.update(BEGEN_PYTHON=shutil.which("true"), GPU_CHECK_DIR=str(tmp_path / "work"), **env)
    proc = subprocess.run(
        ["bash", str(SCRIPT), shutil.which(begen)], capture_output=True, text=True, env=full, check=False
    )
    return proc


def summary(proc):
    """The table's rows: step -> (status, note)."""
    text = proc.stdout.split("== summary\n", 1)[1]
    rows = {}
    for line in text.splitlines()[1:]:
        m = re.match(r"(\S+)\s+(ok|FAILED|skipped)\s+(\d+)\s*(.*)$", line)
        assert m, line
        rows[m[1]] = (m[2], m[4])
    return rows


def stand_in_jaxmin(tmp_path):
    """JAXMIN_DIR's two builds as far as the step reads them without a GPU."""
    for sub in ("min", "new"):
        (tmp_path / "jaxmin" / sub).mkdir(parents=True)
        (tmp_path / "jaxmin" / sub / "gpu_typed.yaml").write_text("jax_min: 0.10.2\nxla_ffi_api_version: 1\n")
    return str(tmp_path / "jaxmin")


def test_a_failed_step_and_a_missing_input_fail_the_run(tmp_path):
    proc = run(tmp_path, STEPS="modules,jaxmin brainevent-loop", SKIP="brainevent-loop")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rows = summary(proc)
    # The script's order, every step asked for reported, the run going on
    # after the failure.
    assert list(rows) == ["modules", "jaxmin", "brainevent-loop"]
    assert rows["modules"] == ("FAILED", "exit status 1")
    assert rows["jaxmin"][0] == "skipped" and rows["jaxmin"][1].startswith("missing input: JAXMIN_DIR is not set")
    assert rows["brainevent-loop"] == ("skipped", "SKIP names it")


def test_steps_that_pass_or_are_skipped_on_request_exit_zero(tmp_path):
    proc = run(tmp_path, STEPS="jaxmin multiproc", SKIP="multiproc", JAXMIN_DIR=stand_in_jaxmin(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert summary(proc) == {"jaxmin": ("ok", ""), "multiproc": ("skipped", "SKIP names it")}


def test_a_missing_input_skipped_on_request_exits_zero(tmp_path):
    proc = run(tmp_path, STEPS="jaxmin", SKIP="jaxmin")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert summary(proc) == {"jaxmin": ("skipped", "SKIP names it")}


def test_skip_bench_skips_both_benchmarks(tmp_path):
    proc = run(tmp_path, STEPS="bench bench-binary", SKIP_BENCH="1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert summary(proc) == {"bench": ("skipped", "SKIP names it"), "bench-binary": ("skipped", "SKIP names it")}


@pytest.mark.parametrize("var", ["STEPS", "SKIP"])
def test_an_unknown_step_is_named_with_the_closest(tmp_path, var):
    proc = run(tmp_path, **{var: "demo modulez"})
    assert proc.returncode == 2
    assert "unknown step 'modulez'; did you mean 'modules'?" in proc.stderr
    assert "== summary" not in proc.stdout
