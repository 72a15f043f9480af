"""Sharding across devices, end to end on the CPU: tests/e2e/sharding built by
the CLI and called under `jax.jit` on 4 and 8 CPU devices, on meshes of
explicit axes (jax.make_mesh's default) and of auto axes. Each case runs in a
fresh process (tests/python/sharding_cases.py: the device count is fixed when
JAX's backend starts) and is checked here: the numbers equal the one-device
call's, and the compiled HLO shows per-shard operands, no all-gather on a
declared dimension and an all-reduce for `reduce:` (collectives counted by
hlo_collectives, whatever form XLA prints them in). Split and unsplit inputs
mix: each is resharded to the split begen chose, with exactly the gathers its
warning names."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_begen

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane

CASES = Path(__file__).with_name("sharding_cases.py")


@pytest.fixture(scope="module")
def built(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_sharding")
    run_begen("build", REPO / "tests/e2e/sharding", "--out", out, "--platform", "cpu", "--quiet")
    return out


def run(built, devices, mode, files=None):
    args = [sys.executable, str(CASES), str(built), str(devices), mode, *([str(files)] if files else [])]
    proc = subprocess.run(args, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module", params=[(4, "explicit"), (4, "auto"), (8, "explicit"), (8, "auto")], ids=str)
def results(request, built):
    devices, mode = request.param
    return devices, mode, run(built, devices, mode)


def shapes(result, target):
    return [operands for name, operands in result["calls"] if name == f"e2e_sharding.{target}"]


def test_every_case_equals_the_one_device_call(results):
    _, _, r = results
    for name, result in r.items():
        if name == "errors":
            continue  # the calls that must fail: test_errors_quote_the_callers_shapes_and_name_the_kernel
        assert "error" not in result, f"{name}: {result.get('error')}"
        assert result["equal"], f"{name}: the numbers differ from the one-device call's"


def test_split_kernels_run_per_shard_with_nothing_gathered(results):
    devices, mode, r = results
    n = 4  # rows per device: the cases use 4 * devices rows
    assert shapes(r["rowscale"], "rowscale") == [[f"f32[{n},6]"]]
    assert shapes(r["rowsum"], "rowsum") == [[f"f32[{n},6]"]]
    assert shapes(r["matvec_rows"], "matvec") == [[f"f32[{n},24]", "f32[24]"]]
    assert shapes(r["template"], "scale_t[T=float64]") == [[f"f64[{n}]"]]
    assert shapes(r["algorithm"], "ew_fast") == [[f"f32[{n}]"]]
    assert shapes(r["vmap"], "rowsum") == [[f"f32[{n},6]"]]
    for name in (
        "rowscale",
        "rowsum",
        "matvec_rows",
        "template",
        "algorithm",
        "vjp",
        "linear",
        "linear_jvp",
        "jvp_kernel",
        "jvp_kernel_grad",
        "vmap",
    ):
        assert r[name]["all_gather"] == 0, f"{name} ({mode}, {devices} devices) gathers: {r[name]}"
        assert r[name]["all_reduce"] == 0, name
    # Outputs keep the split.
    assert r["rowsum"]["spec"] == "P('x',)"
    assert r["rowscale"]["spec"] in ("P('x', None)", "P('x',)")
    assert r["vmap"]["spec"] == "P(None, 'x')"


def test_reduce_splits_k_and_adds_partial_sums(results):
    devices, _, r = results
    k = 24 // devices
    assert shapes(r["matvec_k"], "matvec") == [[f"f32[{4 * devices},{k}]", f"f32[{k}]"]]
    assert r["matvec_k"]["all_gather"] == 0 and r["matvec_k"]["all_reduce"] == 1
    assert r["count_pos"]["all_reduce"] == 1 and shapes(r["count_pos"], "count_pos") == [["f32[4]"]]
    # Rows over one mesh axis, k over the other: an all-reduce over the second.
    assert shapes(r["matvec_grid"], "matvec") == [["f32[8,12]", "f32[12]"]]
    assert r["matvec_grid"]["all_gather"] == 0 and r["matvec_grid"]["all_reduce"] == 1


def test_gradients_run_per_shard(results):
    _, _, r = results
    # The backward kernel per shard; the cotangent of the unsplit vector is
    # summed over the devices (the one all-reduce).
    assert shapes(r["vjp"], "square_bwd") == [["f64[4]", "f64[4]"]]
    assert shapes(r["linear_grad"], "mv_tx") == [["f64[4,24]", "f64[4]"]]
    assert r["linear_grad"]["all_gather"] == 0 and r["linear_grad"]["all_reduce"] == 1
    assert shapes(r["jvp_kernel"], "tanh_jvp") == [["f64[4]", "f64[4]"]]
    assert shapes(r["jvp_kernel_grad"], "tanh_jvp_t") == [["f64[4]", "f64[4]"]]


def test_an_undeclared_kernel_is_gathered_and_said_so_under_explicit_axes(results):
    devices, mode, r = results
    u = r["undeclared"]
    assert u["all_gather"] >= 1 and shapes(u, "matvec_plain") == [[f"f32[{4 * devices},24]", "f32[24]"]]
    if mode == "explicit":
        assert u["warned_at"] == ["sharding_cases.py"]  # the caller's line, not begen's or JAX's
        assert u["warnings"] == [
            (
                "matvec_plain: parameter 'A' is split along dimension 'm', which begen.yaml does not declare in `shard:` "
                "or `reduce:`: it is gathered on every device (all-gather) before the call"
            )
        ]
    else:
        assert u["warnings"] == []


def test_handlers_are_called_from_every_device_thread(results):
    # 32 calls on every device's block, all at once: each equals its
    # one-device call, bit for bit (the CPU handlers keep no shared state).
    assert results[2]["threads"] == {"equal": True}


def test_an_unsplit_call_is_the_plain_custom_call(results):
    devices, _, r = results
    u = r["unsharded"]
    assert u["calls"] == [["e2e_sharding.rowsum", [f"f32[{4 * devices},6]"]]]
    assert u["all_gather"] == 0 and u["all_reduce"] == 0


def test_split_and_unsplit_inputs_together_are_resharded_to_the_plan(results):
    # An unsplit input (replicated, or a numpy constant) beside a split one
    # is sliced to its block: no collective at all.
    devices, _, r = results
    for name in ("mixed_numpy", "mixed_replicated", "mixed_second_split"):
        assert r[name]["collectives"] == {}, name
        assert shapes(r[name], "add") == [["f32[4]", "f32[4]"]], name
        assert r[name]["spec"] == "P('x',)" and r[name]["warnings"] == [], name
    # k split, the vector replicated: sliced too; the partial sums' all-reduce.
    k = 24 // devices
    assert shapes(r["k_split_v_replicated"], "matvec") == [[f"f32[{4 * devices},{k}]", f"f32[{k}]"]]
    assert r["k_split_v_replicated"]["collectives"] == {"all-reduce": 1}
    # Rows and columns on a 2-D mesh, the vector replicated.
    assert shapes(r["grid_v_replicated"], "matvec") == [["f32[8,12]", "f32[12]"]]
    assert r["grid_v_replicated"]["collectives"] == {"all-reduce": 1}


def test_a_split_the_plan_cannot_use_is_gathered_as_the_warning_says(results):
    devices, mode, r = results
    n = 4 * devices
    # matvec(W split by rows, spikes split): the spikes' k is on the axis
    # the rows took, so they are gathered, once, and the rows stay split.
    rs = r["rows_and_spikes_split"]
    assert shapes(rs, "matvec") == [[f"f32[4,{n}]", f"f32[{n}]"]]
    assert rs["collectives"] == {"all-gather": 1}
    # Rows and columns split, the columns undeclared: gathered on 'y'.
    rc = r["grid_rows_and_columns"]
    assert shapes(rc, "rowsum") == [["f32[8,6]"]] and rc["collectives"] == {"all-gather": 1}
    # Rows over both axes of a 2-D mesh, the vector split on one of them.
    rb = r["grid_rows_on_both"]
    assert shapes(rb, "matvec") == [["f32[4,24]", "f32[24]"]] and rb["collectives"] == {"all-gather": 1}
    if mode == "explicit":
        gathered = ": it is gathered on every device (all-gather) before the call"
        assert rs["warnings"] == [
            "matvec: parameter 'x' is split along dimension 'k', but mesh axis 'x' splits another dimension already"
            + gathered
        ]
        assert rc["warnings"] == [
            "rowsum: parameter 'x' is split along dimension 'k', which begen.yaml does not declare in `shard:` or "
            "`reduce:`" + gathered
        ]



def jax_before(major, minor):
    """Whether the jax under test is older than MAJOR.MINOR."""
    import jax

    return tuple(int(x) for x in jax.__version__.split(".")[:2]) < (major, minor)

def test_an_empty_reduce_dimension_is_the_plain_call(results):
    _, _, r = results
    for name in ("empty_reduce", "empty_count"):
        assert "error" not in r[name], f"{name}: {r[name].get('error')}"
        assert r[name]["equal"], name
        assert r[name]["collectives"] == {}, name


def test_vmap_over_a_split_batch_axis_runs_each_devices_batch_elements(results):
    # The batch axis is no dimension of the kernel's: each device calls it
    # (once per batch element) on its block of the batch, nothing gathered;
    # an unbatched input beside it is sliced to the same blocks.
    r = results[2]
    assert shapes(r["vmap_batch_split"], "rowsum") == [["f32[4,6]"]]
    assert shapes(r["vmap_batch_unbatched"], "matvec") == [["f32[4,24]", "f32[24]"]]
    assert shapes(r["vmap_batch_linear"], "mv") == [["f64[4,24]", "f64[24]"]]
    names = ["vmap_batch_split", "vmap_batch_unbatched", "vmap_batch_linear"]
    if not jax_before(0, 11):
        # The batch along 'x', the rows along 'y' (declared): both stay
        # split. jax 0.10 gathers this 2-D case (the numbers are right).
        assert shapes(r["vmap_batch_grid"], "rowsum") == [["f32[2,6]"]]
        assert r["vmap_batch_grid"]["spec"] == "P('x', 'y')"
        names.append("vmap_batch_grid")
    assert r["vmap_batch_grid"]["equal"]
    for name in names:
        assert r[name]["collectives"] == {} and r[name]["warnings"] == [], (name, r[name])
        assert r[name]["spec"].startswith("P('x'"), (name, r[name]["spec"])


def test_a_shard_map_manual_on_some_axes_splits_explicit_axes_and_warns_on_auto_ones(results):
    # Inside a shard_map manual on 'x' only, the rows split along 'y':
    # explicit axes are planned as outside it (each device its rows); auto
    # axes cannot be, and the warning names the kernel and the input that
    # XLA gathers: the HLO's one all-gather.
    devices, mode, r = results
    pm = r["partial_manual"]
    if mode == "explicit" and jax_before(0, 11):
        # jax 0.10 gathers the explicit axes left over (the numbers are right).
        assert pm["equal"]
    elif mode == "explicit":
        assert shapes(pm, "rowsum") == [[f"f32[{2 * devices},6]"]]
        assert pm["collectives"] == {} and pm["warnings"] == []
    else:
        assert shapes(pm, "rowsum") == [[f"f32[{4 * devices},6]"]]
        assert pm["collectives"] == {"all-gather": 1}
        assert pm["warned_at"] == ["sharding_cases.py"]
        assert pm["warnings"] == [
            (
                "rowsum: called inside a shard_map manual on mesh axes 'x' only, so it cannot be split along the "
                "auto axes 'y': parameter 'x', where split along them, is gathered on every device (all-gather) "
                "before the call (make the shard_map manual on every axis, or the mesh's axes explicit)"
            )
        ]


@pytest.mark.parametrize("mode", ["eager", "auto-eager"])
def test_eager_calls_on_split_arrays_run_per_shard(built, tmp_path, mode):
    # Outside jit: an eager vmap (its batch axis split, or a declared
    # dimension), an eager vjp and a plain call are each compiled split, as
    # under jit; every module XLA compiled for them is read back.
    r = run(built, 4, mode, tmp_path)
    for name, result in r.items():
        assert result["equal"] and result["collectives"] == {} and result["warnings"] == [], (name, result)
    assert r["eager_vmap"]["calls"] == [["e2e_sharding.rowsum", ["f32[4,6]"]]]
    assert r["eager_vmap"]["spec"] in ("P('x',)", "P('x', None)")
    assert r["eager_vmap_rows"]["calls"] == [["e2e_sharding.rowsum", ["f32[4,6]"]]]
    assert sorted(r["eager_vjp"]["calls"]) == [
        ["e2e_sharding.square", ["f64[4]"]],
        ["e2e_sharding.square_bwd", ["f64[4]", "f64[4]"]],
    ]
    assert r["eager_rows"]["calls"] == [["e2e_sharding.matvec", ["f32[4,24]", "f32[24]"]]]


def test_errors_quote_the_callers_shapes_and_name_the_kernel(results):
    devices, _, r = results
    e = r["errors"]
    n = 4 * devices
    assert (
        f"ValueError: rowsum: dimension 'n' is {n} (from 'x' axis 0) but output 'y' has {n - 1} at axis 0" == e["out"]
    )
    assert (
        "ValueError: matvec: dimension 'k' is 24 (from 'A' axis 1) but parameter 'x' has 23 at axis 0" == e["mismatch"]
    )
    assert "rowsum" in e["no_derivative"] and "cannot be differentiated" in e["no_derivative"], e["no_derivative"]
    assert "begen_partitioned" not in e["no_derivative"], e["no_derivative"]
    # k split (the vector too) and a vmap whose batch axis is split: the
    # caller's extents, not one device's.
    assert (
        f"ValueError: matvec: dimension 'k' is 24 (from 'A' axis 1) but parameter 'x' has {24 - devices} at axis 0"
        == e["k_split"]
    )
    assert (
        f"ValueError: rowsum: dimension 'n' is {n} (from 'x' axis 0) but output 'y' has {n - 1} at axis 0"
        == e["vmap_out"]
    )
    assert (
        "ValueError: rowsum: dimension 'n' is 4 (from 'x' axis 0) but output 'y' has 3 at axis 0" == e["vmap_batch_out"]
    )


def test_a_recurrent_network_scans_with_its_state_split(results):
    # The scan's carry (potential and spikes) stays split; each step
    # gathers the spikes once for the recurrent product and nothing else.
    devices, _, r = results
    net = r["network"]
    assert net["spec"] == "P(None, 'x')" and net["collectives"] == {"all-gather": 1}
    assert sorted(net["calls"]) == sorted(
        [
            ["e2e_sharding.matvec", [f"f32[4,{4 * devices}]", f"f32[{4 * devices}]"]],
            ["e2e_sharding.add", ["f32[4]", "f32[4]"]],
            ["e2e_sharding.add", ["f32[4]", "f32[4]"]],
        ]
    )


def test_a_block_row_csr_matrix_splits_by_row_blocks(results):
    r = results[2]["csr_rows"]
    assert shapes(r, "csr_rows") == [["f32[2,6]", "s32[2,6]", "s32[2,4]", "f32[24]"]]
    assert r["collectives"] == {}


@pytest.mark.parametrize("mode", ["explicit", "auto"])
def test_a_sharded_export_stays_split_in_a_fresh_process(built, tmp_path, mode):
    # Explicit axes export their shard_map; auto axes export begen's
    # partitioned call, which the partitioner registered by the module
    # splits when the deserialized function is compiled. Either way each
    # device calls the kernel on its block, the reduced dimension's partial
    # sums added with one all-reduce.
    prefix = "" if mode == "explicit" else "auto-"
    assert run(built, 4, prefix + "export", tmp_path) == {"exported": {"devices": 4}}
    d = run(built, 4, prefix + "deserialize", tmp_path)["deserialized"]
    assert {name: r["equal"] for name, r in d.items()} == {"matvec": True, "matvec_k": True, "rowscale": True}
    assert d["matvec"]["calls"] == [["e2e_sharding.matvec", ["f32[4,24]", "f32[24]"]]]
    assert d["matvec"]["collectives"] == {} and d["matvec"]["spec"] in ("P('x',)", "P('x')")
    assert d["matvec_k"]["calls"] == [["e2e_sharding.matvec", ["f32[16,6]", "f32[6]"]]]
    assert d["matvec_k"]["collectives"] == {"all-reduce": 1}
    assert d["rowscale"]["calls"] == [["e2e_sharding.rowscale", ["f32[4,6]"]]]
    assert d["rowscale"]["collectives"] == {}
