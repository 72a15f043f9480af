"""Tuned kernels in the torch module: the choice at call time from the
same tables as the JAX module (tests/e2e/tune)."""

import json

import pytest
from conftest import REPO, build


@pytest.fixture(scope="module")
def tune(torch, tmp_path_factory):
    return build(tmp_path_factory, REPO / "tests" / "e2e" / "tune", "tune")


def _table(path, m, config, key):
    spec = m._BEGEN_TUNE["transpose"]
    entry = {
        "kernel": spec["target"],
        "hash": spec["hash"],
        "device": "cpu",
        "dtypes": ["float32"],
        "key": key,
        "config": config,
    }
    path.write_text(json.dumps({"begen_tune": 1, "entries": [entry]}))


def test_torch_module_imports_without_jax(tune):
    assert "import jax" not in (tune.out / "tune_torch.py").read_text()


def test_table_changes_the_choice_eager_and_compiled(tune, torch, tmp_path, monkeypatch):
    m = tune.module
    monkeypatch.setenv("BEGEN_TUNE_DIR", str(tmp_path))
    choose = m._begen_tune_choose_eager
    assert choose("transpose", {"n": 3, "m": 4}, ("float32",), None, {"BLOCK": None}) == {"BLOCK": 1}
    _table(tmp_path / "tune.tune.json", m, {"BLOCK": "32"}, {"n": 4, "m": 4})
    m._begen_tune_cache.clear()
    assert choose("transpose", {"n": 3, "m": 4}, ("float32",), None, {"BLOCK": None}) == {"BLOCK": 32}
    # The nearest bucket.
    assert choose("transpose", {"n": 30, "m": 40}, ("float32",), None, {"BLOCK": None}) == {"BLOCK": 32}
    # config= and the keyword win; BEGEN_TUNE=default reads no table.
    assert choose("transpose", {"n": 3, "m": 4}, ("float32",), {"BLOCK": 8}, {"BLOCK": None}) == {"BLOCK": 8}
    monkeypatch.setenv("BEGEN_TUNE", "default")
    assert choose("transpose", {"n": 3, "m": 4}, ("float32",), None, {"BLOCK": None}) == {"BLOCK": 1}
    monkeypatch.delenv("BEGEN_TUNE")
    with pytest.raises(ValueError, match="BLOCK=7 is not a built candidate"):
        m.transpose(torch.ones(3, 4), BLOCK=7)
    x = torch.arange(12.0).reshape(3, 4)
    assert torch.equal(m.transpose(x), x.T)
    f = torch.compile(lambda x: m.transpose(x) * 2, fullgraph=True, backend="aot_eager")
    assert torch.equal(f(x), x.T * 2)
