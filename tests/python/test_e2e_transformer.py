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

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane

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


@pytest.fixture()
def module(built, monkeypatch, tmp_path):
    """The module, fresh, on one device, with an empty user table directory."""
    from conftest import import_module

    monkeypatch.setenv("BEGEN_TUNE_DIR", str(tmp_path))
    monkeypatch.delenv("BEGEN_TUNE", raising=False)
    return import_module(built, NAME)


def write_table(m, directory, tiles):
    # A user table choosing, for each kernel named, its TILE for the 16 x 8
    # matmul (as `begen tune` writes one; the hashes are the build's).
    # A backward kernel (`*_bwd`) takes the cotangent as a third input.
    entries = []
    for kernel, tile in tiles.items():
        spec = m._BEGEN_TUNE[kernel]
        entries.append(
            {
                "kernel": spec["target"],
                "hash": spec["hash"],
                "device": "cpu",
                "dtypes": ["float32"] * (3 if kernel.endswith("_bwd") else 2),
                "key": {"m": 16, "n": 8},
                "config": {"TILE": str(tile)},
                "times_us": {},
            }
        )
    (directory / f"{NAME}.tune.json").write_text(json.dumps({"begen_tune": 1, "entries": entries}))


def test_a_tuned_kernels_transpose_runs_the_candidate_its_call_chose(module, tmp_path):
    import jax
    import numpy as np

    m = module
    rng = np.random.default_rng(1)
    x = rng.normal(size=(16, 12)).astype(np.float32)
    w = rng.normal(size=(8, 12)).astype(np.float32)
    ct = rng.normal(size=(16, 8)).astype(np.float32)

    def hlo(kernel="matmul_tb", **kw):
        # The loss too, so that the forward call is compiled beside its transpose.
        f = jax.value_and_grad(lambda a: (getattr(m, kernel)(a, w, **kw) * ct).sum())
        loss, grad = jax.jit(f)(x)
        np.testing.assert_allclose(np.asarray(loss), ((x @ w.T) * ct).sum(), rtol=1e-4)
        np.testing.assert_allclose(np.asarray(grad), ct @ w, rtol=1e-5, atol=1e-5)
        text = jax.jit(f).lower(x).compile().as_text()
        forward = {t for t in (8, 16, 32, 64) if f'"{NAME}.{kernel}[TILE={t}]"' in text}
        transpose = {t for t in (8, 16, 32, 64) if f'"{NAME}.{kernel}_tx[TILE={t}]"' in text}
        return forward, transpose

    # No table: the declared default for both.
    assert hlo() == ({8}, {8})
    # config= and the const keyword: that candidate for both.
    assert hlo(config={"TILE": 32}) == ({32}, {32})
    assert hlo(TILE=64) == ({64}, {64})
    assert hlo("matmul_tt") == ({8}, {8})
    # The table's choice for the forward call, which a transpose that is
    # not tuned runs; a tuned transpose runs its own table entry.
    write_table(m, tmp_path, {"matmul_tb": 16, "matmul_tt": 32, "matmul_tt_tx": 64})
    jax.clear_caches()
    assert hlo() == ({16}, {16})
    assert hlo("matmul_tt") == ({32}, {64})
    # A candidate the caller fixes is both kernels', the tables unread.
    assert hlo(config={"TILE": 32}) == ({32}, {32})
    assert hlo("matmul_tt", config={"TILE": 16}) == ({16}, {16})
    assert hlo("matmul_tt", TILE=8) == ({8}, {8})


def test_a_tuned_kernels_backward_kernel_runs_the_candidate_its_call_chose(module, tmp_path):
    """A plain `vjp:` kernel (a jax.custom_vjp) of a tuned kernel: a backward
    kernel that is not tuned runs the forward call's candidate, whatever
    chose it; a tuned one makes its own choice, unless the caller fixed
    the candidate. Without the candidate passed on, the backward of a call
    that leaves TILE out fails (`TILE=None is not instantiated`)."""
    import jax
    import numpy as np

    m = module
    rng = np.random.default_rng(2)
    x = rng.normal(size=(16, 12)).astype(np.float32)
    w = rng.normal(size=(8, 12)).astype(np.float32)
    ct = rng.normal(size=(16, 8)).astype(np.float32)

    def hlo(kernel="matmul_vb", **kw):
        f = jax.value_and_grad(lambda a, b: (getattr(m, kernel)(a, b, **kw) * ct).sum(), argnums=(0, 1))
        loss, (gx, gw) = jax.jit(f)(x, w)
        np.testing.assert_allclose(np.asarray(loss), ((x @ w.T) * ct).sum(), rtol=1e-4)
        np.testing.assert_allclose(np.asarray(gx), ct @ w, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.asarray(gw), ct.T @ x, rtol=1e-5, atol=1e-5)
        text = jax.jit(f).lower(x, w).compile().as_text()
        forward = {t for t in (8, 16, 32, 64) if f'"{NAME}.{kernel}[TILE={t}]"' in text}
        backward = {t for t in (8, 16, 32, 64) if f'"{NAME}.{kernel}_bwd[TILE={t}]"' in text}
        return forward, backward

    # No table: the declared default for both.
    assert hlo() == ({8}, {8})
    assert hlo("matmul_vt") == ({8}, {8})
    # config= and the const keyword: that candidate for both.
    assert hlo(config={"TILE": 32}) == ({32}, {32})
    assert hlo(TILE=64) == ({64}, {64})
    # The table's choice for the forward call, which a backward kernel that
    # is not tuned runs; a tuned backward kernel runs its own table entry.
    write_table(m, tmp_path, {"matmul_vb": 16, "matmul_vt": 32, "matmul_vt_bwd": 64})
    jax.clear_caches()
    assert hlo() == ({16}, {16})
    assert hlo("matmul_vt") == ({32}, {64})
    # A candidate the caller fixes is both kernels', the tables unread.
    assert hlo(config={"TILE": 32}) == ({32}, {32})
    assert hlo("matmul_vt", config={"TILE": 16}) == ({16}, {16})
    assert hlo("matmul_vt", TILE=8) == ({8}, {8})
    # Eagerly too, and under jax.vjp.
    _, pull = jax.vjp(lambda a: m.matmul_vb(a, w), x)
    np.testing.assert_allclose(np.asarray(pull(ct)[0]), ct @ w, rtol=1e-5, atol=1e-5)


def test_a_backward_kernel_leaves_out_the_integer_labels_cotangent(results, module):
    import jax
    import jax.numpy as jnp
    import numpy as np

    _, r = results
    # On 4 devices, split along the batch (not declared: gathered).
    assert calls(r["xent_grad"], "xent_bwd") == [["f32[16,10]", "s32[16]", "f32[16]"]]
    # On one device, through jax.grad and jax.vjp: the labels get no
    # cotangent (jax's float0 zero).
    rng = np.random.default_rng(2)
    logits = rng.normal(size=(8, 5)).astype(np.float32)
    labels = rng.integers(0, 5, size=8).astype(np.int32)
    ref = lambda lg, lb: jax.nn.logsumexp(lg, axis=-1) - jnp.take_along_axis(lg, lb[:, None], axis=-1)[:, 0]
    got = jax.jit(jax.grad(lambda lg: module.xent(lg, labels).sum()))(logits)
    np.testing.assert_allclose(
        np.asarray(got), np.asarray(jax.grad(lambda lg: ref(lg, labels).sum())(logits)), rtol=1e-5, atol=1e-6
    )
    ct = rng.normal(size=8).astype(np.float32)
    g_logits, g_labels = jax.vjp(module.xent, logits, labels)[1](ct)
    np.testing.assert_allclose(
        np.asarray(g_logits), np.asarray(jax.vjp(ref, logits, labels)[1](ct)[0]), rtol=1e-5, atol=1e-6
    )
    assert g_labels.dtype == jax.dtypes.float0 and g_labels.shape == (8,)


def op_names(text, target):
    # The op_name of every custom call of FFI target `target` in compiled HLO text.
    import re

    return [
        re.search(r'op_name="([^"]*)"', line).group(1)
        for line in text.splitlines()
        if f'custom_call_target="{NAME}.{target}"' in line
    ]


def test_every_kernel_call_is_named_after_its_kernel_in_the_hlo(module):
    import jax
    import numpy as np

    m = module
    x = np.ones((16, 32), np.float32)
    w = np.ones((8, 32), np.float32)
    compiled = lambda f, *a: jax.jit(f).lower(*a).compile().as_text()
    # A plain call, a custom_vjp's forward and backward kernels, a
    # primitive's transpose kernel.
    assert op_names(compiled(m.cube, x[None]), "cube") == ["jit(cube)/cube/ffi_call"]
    names = op_names(compiled(jax.grad(lambda a: (m.rmsnorm(a) ** 2).sum()), x), "rmsnorm_bwd")
    assert len(names) == 1 and "rmsnorm_bwd" in names[0].split("/")[-2], names
    names = op_names(compiled(jax.grad(lambda a: m.matmul_tb(a, w).sum()), x), "matmul_tb_tx[TILE=8]")
    assert len(names) == 1 and "matmul_tb_tx" in names[0].split("/")[-2], names
    # The lowered module's locations carry the name too.
    assert "rmsnorm/ffi_call" in jax.jit(lambda a: m.rmsnorm(a)).lower(x).as_text(debug_info=True)


def test_split_calls_are_named_after_their_kernels(results):
    mode, r = results
    # Inside shard_map (explicit) and around the custom_partitioning (auto).
    want = {
        "explicit": ["shard_map/rmsnorm/ffi_call", "shard_map/rmsnorm_bwd/ffi_call"],
        "auto": ["jvp(rmsnorm)/", "transpose(jvp(rmsnorm_bwd))/"],
    }
    names = r["rms_grad"]["op_names"]
    assert len(names) == 2 and all(w in n for w, n in zip(want[mode], names)), names


def test_a_profiler_trace_names_the_kernels(module, tmp_path):
    import jax
    import numpy as np

    m = module
    x = np.ones((16, 32), np.float32)
    with jax.profiler.trace(str(tmp_path / "trace")):
        jax.block_until_ready(m.rmsnorm(x))  # eager
        jax.block_until_ready(jax.jit(jax.grad(lambda a: m.cube(a).sum()))(x[None]))
    data = b"".join(p.read_bytes() for p in (tmp_path / "trace").rglob("*.xplane.pb"))
    assert data, list((tmp_path / "trace").rglob("*"))
    # The op names, not only the FFI targets (which hold the names anyway).
    import re

    assert b"rmsnorm/ffi_call" in data
    assert re.search(rb"cube_bwd\)*/ffi_call", data)  # transpose(jvp(cube_bwd))/ffi_call


def test_a_table_naming_the_kernels_under_another_prefix_warns(module, tmp_path):
    # A table exported from a build whose targets are `e2e_transformer.*`,
    # read by the same kernels packaged as `proj.e2e_transformer.*` (as a
    # hook-built wheel prefixes them), here the other way round.
    import jax
    import numpy as np

    m = module
    spec = m._BEGEN_TUNE["matmul_tb"]
    entry = {
        "kernel": "proj." + spec["target"],
        "hash": spec["hash"],
        "device": "cpu",
        "dtypes": ["float32", "float32"],
        "key": {"m": 16, "n": 8},
        "config": {"TILE": "32"},
    }
    (tmp_path / f"{NAME}.tune.json").write_text(json.dumps({"begen_tune": 1, "entries": [entry]}))
    x, w = np.ones((16, 12), np.float32), np.ones((8, 12), np.float32)
    with pytest.warns(
        UserWarning, match=r"'proj.e2e_transformer.matmul_tb' \(did you mean 'e2e_transformer.matmul_tb'\?\)"
    ):
        text = jax.jit(m.matmul_tb).lower(x, w).compile().as_text()
    assert f'"{NAME}.matmul_tb[TILE=8]"' in text  # the entry ignored: the default
