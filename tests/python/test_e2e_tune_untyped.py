"""A source tuned over its defines whose kernel takes `BE::Tensor` (no typed
contract, as brainevent's kernels do), end to end on the CPU:
tests/e2e/tune_untyped. Its key dims are read from the inputs' extents
(`key: {n: "x[0]", m: "x[1]"}`), and `begen tune` takes the inputs, `out=`
and which outputs to check from the `inputs:` generator. Every choice is
read from the compiled HLO: which candidate's target the call names."""

import json

import numpy as np
import pytest
from conftest import REPO, import_module, run_begen

NAME = "e2e_tune_untyped"
TREE = REPO / "tests/e2e/tune_untyped"


def target(tile):
    return f'"{NAME}.transpose_any[TILE={tile}]"'


@pytest.fixture(scope="module")
def built(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_tune_untyped")
    run_begen("build", TREE, "--out", out, "--name", NAME, "--quiet")
    return out


@pytest.fixture()
def module(built, monkeypatch, tmp_path):
    monkeypatch.setenv("BEGEN_TUNE_DIR", str(tmp_path))
    monkeypatch.delenv("BEGEN_TUNE", raising=False)
    return import_module(built, NAME)


def call(m, x, **kw):
    import jax

    n, k = x.shape
    out = (jax.ShapeDtypeStruct((k, n), np.float32), jax.ShapeDtypeStruct((1,), np.int32))
    return m.transpose_any(x, out=out, **kw)


def hlo(m, x, **kw):
    import jax

    return jax.jit(lambda a: call(m, a, **kw)).lower(x).compile().as_text()


def write_table(m, path, key, tile):
    spec = m._BEGEN_TUNE["transpose_any"]
    entry = {
        "kernel": spec["target"],
        "hash": spec["hash"],
        "device": "cpu",
        "dtypes": ["float32"],
        "key": key,
        "config": {"TILE": str(tile)},
    }
    path.write_text(json.dumps({"begen_tune": 1, "entries": [entry]}))


def test_the_key_is_read_from_the_inputs_extents(module):
    assert module._BEGEN_TUNE["transpose_any"]["key_at"] == (("m", 0, 1), ("n", 0, 0))
    x = np.arange(6 * 5, dtype=np.float32).reshape(6, 5)
    for tile in (1, 32):
        y, scratch = call(module, x, config={"TILE": tile})
        np.testing.assert_array_equal(np.asarray(y), x.T)
        assert int(np.asarray(scratch)[0]) == tile


def test_begen_tune_keys_on_the_extents_and_checks_only_the_outputs_named(built, tmp_path):
    shapes = tmp_path / "shapes.yaml"
    shapes.write_text("transpose_any: [{n: 300, m: 200}]\n")
    proc = run_begen(
        "tune",
        built,
        "--shapes",
        shapes,
        "--repeats",
        "1",
        env={"BEGEN_TUNE_DIR": str(tmp_path), "PYTHONPATH": str(TREE)},
    )
    (entry,) = json.loads((tmp_path / f"{NAME}.tune.json").read_text())["entries"]
    assert entry["key"] == {"n": 512, "m": 256}, proc.stderr
    # The workspace output differs per candidate (each writes its TILE);
    # the generator leaves it out of the check, so no candidate is refused.
    assert entry["rejected"] == {} and set(entry["times_us"]) == {"TILE=1", "TILE=32"}, proc.stdout


def test_the_traced_call_picks_the_entry_of_its_extents_bucket(module, tmp_path, monkeypatch):
    write_table(module, tmp_path / f"{NAME}.tune.json", {"n": 512, "m": 256}, 32)
    assert target(32) in hlo(module, np.zeros((300, 200), np.float32))  # the same bucket
    assert target(32) in hlo(module, np.zeros((600, 200), np.float32))  # the nearest bucket
    assert target(1) in hlo(module, np.zeros((300, 200), np.float32), config={"TILE": 1})
    monkeypatch.setenv("BEGEN_TUNE", "default")
    assert target(1) in hlo(module, np.zeros((300, 200), np.float32))


def test_an_input_of_lower_rank_than_the_key_axis_takes_the_default(module, tmp_path):
    import jax

    write_table(module, tmp_path / f"{NAME}.tune.json", {"n": 512, "m": 256}, 32)
    x = np.zeros(300, np.float32)
    out = (jax.ShapeDtypeStruct((300,), np.float32), jax.ShapeDtypeStruct((1,), np.int32))
    text = jax.jit(lambda a: module.transpose_any(a, out=out)).lower(x).as_text()
    assert f"{NAME}.transpose_any[TILE=1]" in text


def test_foreign_garbage_truncated_and_huge_tables(module, built, tmp_path):
    """Every table that cannot serve gives a warning naming it (an entry) or
    a ValueError naming the file (the whole table), never a crash."""
    import os

    table = tmp_path / f"{NAME}.tune.json"
    x = np.zeros((300, 200), np.float32)
    key = {"n": 512, "m": 256}
    # Foreign: a candidate this build does not hold; warned once, default.
    write_table(module, table, key, 8)
    with pytest.warns(UserWarning, match=f"{table}: the tuning entry of transpose_any is ignored: its candidate"):
        assert target(1) in hlo(module, x)
    # Another library's kernel: not this kernel's entry, silently passed over.
    spec = module._BEGEN_TUNE["transpose_any"]
    other = {
        "kernel": "elsewhere.transpose_any",
        "hash": spec["hash"],
        "device": "cpu",
        "dtypes": ["float32"],
        "key": key,
        "config": {"TILE": "32"},
    }
    table.write_text(json.dumps({"begen_tune": 1, "entries": [other]}))
    assert target(1) in hlo(module, x)
    bad = {
        "truncated": ('{"begen_tune": 1, "entries": [{"kernel": ', "invalid JSON"),
        "garbage": ("\x00\x7f not json at all \x01", "invalid JSON"),
        "another format": ('{"begen_tune": 2, "entries": []}', '"begen_tune": 1'),
        "a wrong entry": ('{"begen_tune": 1, "entries": [{"kernel": 3}]}', "entry 0 must have"),
    }
    for text, why in bad.values():
        table.write_text(text)
        with pytest.raises(ValueError, match=f"{table}: not a begen tuning table: .*{why}"):
            hlo(module, x)
    table.unlink()
    with open(table, "wb") as f:  # huge: refused unread (a sparse file)
        f.truncate(17 << 20)
    with pytest.raises(ValueError, match=f"{table}: not a begen tuning table: {17 << 20} bytes, over the"):
        hlo(module, x)
    table.unlink()
    os.mkfifo(table)  # would block a reader forever
    with pytest.raises(ValueError, match=f"{table}: not a begen tuning table: .*not a regular file"):
        hlo(module, x)
    table.unlink()
    # begen tune leaves a table it cannot read as it is, and says so.
    table.write_text("garbage")
    shapes = tmp_path / "shapes.yaml"
    shapes.write_text("transpose_any: [{n: 64, m: 64}]\n")
    proc = run_begen(
        "tune",
        built,
        "--shapes",
        shapes,
        "--repeats",
        "1",
        check=False,
        env={"BEGEN_TUNE_DIR": str(tmp_path), "PYTHONPATH": str(TREE)},
    )
    assert proc.returncode != 0 and f"{table}: not a begen tuning table" in proc.stderr, proc.stderr
    assert table.read_text() == "garbage"
