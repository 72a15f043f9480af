"""A source tuned over its defines, end to end on the CPU: tests/e2e/tune_defines
(`tiled.cpp`, a transpose tiled by the macro TILE, and `probe`, which reports
what an inline function, a template and a plain function of the source see)
built by the CLI with every combination `where:` allows compiled in, `begen
tune` run on this machine, and the traced function choosing from its table.
Every choice is read from the compiled HLO: which candidate's target it names."""

import json

import numpy as np
import pytest
from conftest import REPO, import_module, run_begen

NAME = "e2e_tune_defines"
BUILT = [(1, 1), (8, 1), (8, 2), (32, 1)]  # what `where:` allows, TILE then UNROLL


def target(kernel, tile, unroll):
    return f'"{NAME}.{kernel}[TILE={tile},UNROLL={unroll}]"'


@pytest.fixture(scope="module")
def built(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_tune_defines")
    run_begen("build", REPO / "tests/e2e/tune_defines", "--out", out, "--name", NAME, "--quiet")
    return out


@pytest.fixture()
def module(built, monkeypatch, tmp_path):
    monkeypatch.setenv("BEGEN_TUNE_DIR", str(tmp_path))
    monkeypatch.delenv("BEGEN_TUNE", raising=False)
    return import_module(built, NAME)


def hlo(f, x, **kw):
    import jax

    return jax.jit(lambda a: f(a, **kw)).lower(x).compile().as_text()


def test_only_the_allowed_combinations_are_built(module):
    tuned = [k for k in module.TARGETS if k.startswith("transpose[")]
    assert tuned == [f"transpose[TILE={t},UNROLL={u}]" for t, u in BUILT]
    assert module._BEGEN_TUNE["transpose"]["candidates"] == tuple((str(t), str(u)) for t, u in BUILT)


def test_each_candidate_runs_its_own_inline_functions_and_templates(module, jax_cpu):
    x = np.zeros(4, np.float32)
    for tile, unroll in BUILT:
        seen = np.asarray(module.probe(x, config={"TILE": tile, "UNROLL": unroll}))
        # inline function, template, plain (non-inline) function of the source
        assert seen[:3].tolist() == [tile, unroll, 100 * tile + unroll], (tile, unroll)


def test_config_names_a_candidate_and_where_refuses_the_rest(module, jax_cpu):
    x = np.arange(6 * 5, dtype=np.float32).reshape(6, 5)
    for tile, unroll in BUILT:
        np.testing.assert_array_equal(np.asarray(module.transpose(x, config={"TILE": tile, "UNROLL": unroll})), x.T)
    assert target("transpose", 1, 1) in hlo(module.transpose, x)  # no table: the declared default
    assert target("transpose", 8, 2) in hlo(module.transpose, x, config={"TILE": 8, "UNROLL": 2})
    with pytest.raises(ValueError, match="TILE=32, UNROLL=2 is not a built candidate"):
        module.transpose(x, config={"TILE": 32, "UNROLL": 2})
    with pytest.raises(ValueError, match="TILE=3 is not a built candidate"):
        module.transpose(x, config={"TILE": 3})


def test_begen_tune_picks_a_faster_tile_and_the_traced_call_names_it(built, tmp_path, monkeypatch):
    shapes = tmp_path / "shapes.yaml"
    shapes.write_text("transpose: [{n: 1024, m: 1024}]\n")
    proc = run_begen("tune", built, "--shapes", shapes, "--repeats", "5", env={"BEGEN_TUNE_DIR": str(tmp_path)})
    report = proc.stdout + proc.stderr
    (entry,) = json.loads((tmp_path / f"{NAME}.tune.json").read_text())["entries"]
    assert entry["kernel"] == f"{NAME}.transpose" and entry["key"] == {"n": 1024, "m": 1024}
    assert set(entry["times_us"]) == {f"TILE={t},UNROLL={u}" for t, u in BUILT}, report
    chosen = entry["config"]
    assert chosen["TILE"] != "1", report
    assert entry["times_us"]["TILE=1,UNROLL=1"] > 1.02 * entry["times_us"][f"TILE={chosen['TILE']},UNROLL={chosen['UNROLL']}"]
    monkeypatch.setenv("BEGEN_TUNE_DIR", str(tmp_path))
    monkeypatch.delenv("BEGEN_TUNE", raising=False)
    m = import_module(built, NAME)
    x = np.zeros((1024, 1024), np.float32)
    assert target("transpose", chosen["TILE"], chosen["UNROLL"]) in hlo(m.transpose, x)
    # The nearest bucket; BEGEN_TUNE=default.
    assert target("transpose", chosen["TILE"], chosen["UNROLL"]) in hlo(m.transpose, np.zeros((512, 512), np.float32))
    monkeypatch.setenv("BEGEN_TUNE", "default")
    assert target("transpose", 1, 1) in hlo(m.transpose, x)


def test_the_backward_pass_runs_the_forward_calls_candidate(built, tmp_path, monkeypatch, jax_cpu):
    """`scale_by_tile` and its backward kernel (begen.yaml's vjp:) scale by
    10 * TILE + UNROLL: a gradient of another scale than the forward's ran
    another candidate than the forward call chose."""
    import jax

    x = np.ones(3, np.float32)

    def grads(m, **kw):
        def f(a):
            return m.scale_by_tile(a, **kw).sum()

        return float(jax.grad(f)(x)[0]), float(jax.jit(jax.grad(f))(x)[0])

    monkeypatch.setenv("BEGEN_TUNE_DIR", str(tmp_path))
    monkeypatch.delenv("BEGEN_TUNE", raising=False)
    m = import_module(built, NAME)
    assert grads(m) == (11.0, 11.0)  # the declared default
    for tile, unroll in BUILT:
        assert grads(m, config={"TILE": tile, "UNROLL": unroll}) == (10 * tile + unroll,) * 2
    # The table chooses the forward's candidate; the backward kernel, which
    # has no entry of its own, runs the same one.
    spec = m._BEGEN_TUNE["scale_by_tile"]
    entry = {"kernel": f"{NAME}.scale_by_tile", "hash": spec["hash"], "device": "cpu", "dtypes": ["float32"]}
    entry |= {"key": {"n": 3}, "config": {"TILE": "32", "UNROLL": "1"}}
    (tmp_path / f"{NAME}.tune.json").write_text(json.dumps({"begen_tune": 1, "entries": [entry]}))
    m = import_module(built, NAME)
    assert float(m.scale_by_tile(x)[0]) == 321.0
    assert grads(m) == (321.0, 321.0)


@pytest.mark.parametrize(
    "entry, message",
    [
        ('{defines: {TILE: [1, 8]}, where: "TILE >= 8 * UNROL"}', "`UNROL` is not one of the tuned defines"),
        ('{defines: {TILE: [1, 8]}, where: "TILE > 100"}', "allows no combination"),
        ('{defines: {TILE: [1, 8]}, where: "TILE > 1"}', "default {TILE=1} is not a built candidate"),
        ('{defines: {TILE: [1, 8]}, default: {TILE: 4}}', "defaults TILE to `4`"),
        ('{defines: {TILE: [1, 8]}, default: {TILES: 8}}', "did you mean `TILE`"),
        ('{defines: {TILE: [1, 8]}, where: "8 / (TILE - 1)"}', "division by zero"),
        ('{defines: {TILE: [1, "x"]}}', "list of distinct integers"),
        ('{defines: {TILE: [1, 8]}, key: [nn]}', "did you mean `n`"),
    ],
)
def test_mistakes_are_located(tmp_path, entry, message):
    import shutil

    kernels = tmp_path / "k"
    shutil.copytree(REPO / "tests/e2e/tune_defines", kernels)
    (kernels / "begen.yaml").write_text(f"platform: cpu\ntune:\n  tiled.cpp: {entry}\n")
    proc = run_begen("scan", kernels, check=False)
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0 and message in text, text
    assert "begen.yaml:3:" in text, text
