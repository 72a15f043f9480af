"""Tuned kernels in the torch module: the choice at call time from the
same tables as the JAX module (tests/e2e/tune)."""

import json
import os
import sys

import pytest
from conftest import REPO, build, ops_compiled, ops_run, run_begen


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


def _blocks_run(m, call):
    # The BLOCK each transpose op a call ran was given (the typed
    # function's choice).
    return [kw["BLOCK"] for name, kw in ops_run(m.NAMESPACE, call)[1] if name == "transpose"]


def _blocks_compiled(m, f, *args):
    # The result of f compiled, and the BLOCK of every transpose in its graph.
    out, ops = ops_compiled(m.NAMESPACE, f, *args)
    return out, [kw["BLOCK"] for name, kw in ops if name == "transpose"]


@pytest.fixture
def tabled(tune, tmp_path, monkeypatch):
    # The tune module with a user table that chooses BLOCK=32 for n=4, m=4.
    m = tune.module
    monkeypatch.setenv("BEGEN_TUNE_DIR", str(tmp_path))
    _table(tmp_path / "tune.tune.json", m, {"BLOCK": "32"}, {"n": 4, "m": 4})
    m._begen_tune_cache.clear()
    return m


def test_the_candidate_chosen_is_the_one_that_runs(tabled, torch, monkeypatch):
    m = tabled
    x = torch.arange(12.0).reshape(3, 4)
    # Eager: the table's candidate, then the cached choice; config= wins.
    assert _blocks_run(m, lambda: (m.transpose(x), m.transpose(x))) == [32, 32]
    assert _blocks_run(m, lambda: m.transpose(x, config={"BLOCK": 8})) == [8]
    monkeypatch.setenv("BEGEN_TUNE", "default")
    assert _blocks_run(m, lambda: m.transpose(x)) == [1]
    monkeypatch.delenv("BEGEN_TUNE")
    # Compiled with static shapes: the table's candidate is a constant of the graph.
    out, blocks = _blocks_compiled(m, lambda v: m.transpose(v) * 2, x)
    assert torch.equal(out, x.T * 2) and blocks == [32]


def test_a_symbolic_key_extent_takes_the_given_or_default_candidate(tabled, torch):
    # With mark_dynamic on a key dimension the extent has no bucket: the
    # call takes the consts it is given, else the declared default (as the
    # JAX side does for a symbolic extent under jax.export), and the graph
    # serves other extents without recompiling.
    m = tabled
    x = torch.arange(12.0).reshape(3, 4)
    torch._dynamo.mark_dynamic(x, 0)
    out, blocks = _blocks_compiled(m, lambda v: m.transpose(v) * 2, x)
    assert torch.equal(out, x.T * 2) and blocks == [1]
    out, blocks = _blocks_compiled(m, lambda v: m.transpose(v, BLOCK=8), x)
    assert torch.equal(out, x.T) and blocks == [8]
    f = torch.compile(lambda v: m.transpose(v), fullgraph=True, dynamic=True, backend="aot_eager")
    for rows in (3, 5, 9):
        v = torch.arange(rows * 4.0).reshape(rows, 4)
        assert torch.equal(f(v), v.T)


@pytest.fixture(scope="module")
def tune_algo(torch, tmp_path_factory):
    return build(tmp_path_factory, REPO / "tests" / "e2e" / "tune_algo", "tune_algo")


def _ran(namespace, call):
    # The names of the ops a call ran.
    return [name for name, _ in ops_run(namespace, call)[1]]


def test_a_tuned_algorithm_runs_what_the_table_chooses(tune_algo, torch, tmp_path, monkeypatch):
    # The JAX module's table entry for the algorithm (its target, hash and
    # key) chooses the torch call's implementation too.
    m = tune_algo.module
    spec = m._BEGEN_TUNE_ALGORITHMS["axpy"]
    monkeypatch.setenv("BEGEN_TUNE_DIR", str(tmp_path))
    m._begen_algorithm_cache.clear()
    x, y = torch.arange(4.0), torch.ones(4)
    ns = m.NAMESPACE
    # No table: the priority order.
    assert _ran(ns, lambda: m.axpy(x, y, alpha=2.0)) == ["axpy_passes"]
    entry = {
        "kernel": spec["target"],
        "hash": spec["hash"],
        "device": "cpu",
        "dtypes": ["float32", "float32"],
        "key": {"n": 4},
        "config": {"implementation": "axpy_once"},
    }
    (tmp_path / "tune_algo.tune.json").write_text(json.dumps({"begen_tune": 1, "entries": [entry]}))
    m._begen_algorithm_cache.clear()
    assert _ran(ns, lambda: m.axpy(x, y, alpha=2.0)) == ["axpy_once"]
    # The nearest bucket; an implementation that refuses the call is never
    # chosen (axpy_once refuses alpha=0); config= and BEGEN_TUNE win.
    big = torch.ones(100)
    assert _ran(ns, lambda: m.axpy(big, big, alpha=2.0)) == ["axpy_once"]
    assert _ran(ns, lambda: m.axpy(x, y, alpha=0.0)) == ["axpy_passes"]
    assert _ran(ns, lambda: m.axpy(x, y, alpha=2.0, config={"implementation": "axpy_passes"})) == ["axpy_passes"]
    with pytest.raises(ValueError, match="config implementation 'nope' is not one for cpu: axpy_passes, axpy_once"):
        m.axpy(x, y, alpha=2.0, config={"implementation": "nope"})
    monkeypatch.setenv("BEGEN_TUNE", "default")
    assert _ran(ns, lambda: m.axpy(x, y, alpha=2.0)) == ["axpy_passes"]
    monkeypatch.delenv("BEGEN_TUNE")
    # Compiled: the choice is a constant of the graph, the table's.
    out, ops = ops_compiled(ns, lambda a, b: m.axpy(a, b, alpha=2.0), x, y)
    assert torch.equal(out, m.axpy_passes(x, y, alpha=2.0))
    assert [name for name, _ in ops] == ["axpy_once"], ops


UNTYPED = {
    "begen.yaml": """\
platform: cpu
tune:
  copy_blocked: {consts: [BLOCK], key: {n: "x[0]"}, default: {BLOCK: 1}}
""",
    "copy.cpp": """\
#include "brainevent/common.h"

// y = x, BLOCK elements at a time; untyped tensors, so the key's extent
// is read from x's axis 0 (begen.yaml).
// @BE copy_blocked arg ret const.BLOCK=1,16
template <int BLOCK>
void copy_blocked(const BE::Tensor x, BE::Tensor y) {
    const float* in = x.data_ptr<const float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i];
}
""",
}


def test_an_untyped_tuned_kernel_keys_its_table_by_an_inputs_extent(torch, tmp_path_factory, tmp_path, monkeypatch):
    # `key: {n: "x[0]"}` names an untyped input's axis: the torch call reads
    # the extent there, so the table's entry for its bucket is chosen.
    tree = tmp_path_factory.mktemp("untyped_tuned")
    for name, text in UNTYPED.items():
        (tree / name).write_text(text)
    m = build(tmp_path_factory, tree, "t_untyped_tuned").module
    spec = m._BEGEN_TUNE["copy_blocked"]
    entry = {"kernel": spec["target"], "hash": spec["hash"], "device": "cpu", "dtypes": ["float32"]}
    entry |= {"key": {"n": 8}, "config": {"BLOCK": "16"}}
    (tmp_path / "t_untyped_tuned.tune.json").write_text(json.dumps({"begen_tune": 1, "entries": [entry]}))
    monkeypatch.setenv("BEGEN_TUNE_DIR", str(tmp_path))
    m._begen_tune_cache.clear()
    x = torch.arange(6.0)

    def blocks(v):
        return [kw["BLOCK"] for _, kw in ops_run(m.NAMESPACE, lambda: m.copy_blocked(v, out=torch.empty(v.shape)))[1]]

    assert blocks(x) == [16]  # n=6 is in the bucket of 8
    assert blocks(torch.arange(100.0)) == [16]  # the nearest bucket
    monkeypatch.setenv("BEGEN_TUNE", "default")
    assert blocks(x) == [1]


def test_begen_tune_measures_the_torch_ops_into_the_table_both_targets_read(tune, torch, tmp_path, monkeypatch):
    # `begen tune --torch` times the torch ops' candidates and writes the
    # entries the JAX module's runtime reads too: the same target, hash,
    # device kind, dtypes and bucketed key (the JAX module's own text says
    # its target and hash); the torch calls then run the chosen candidates.
    shapes = tmp_path / "shapes.yaml"
    shapes.write_text("transpose: [{n: 64, m: 48}]\nscaled: [{n: 512}]\n")
    env = dict(os.environ, BEGEN_TUNE_DIR=str(tmp_path / "tables"), BEGEN_TORCH_PYTHON=sys.executable)
    proc = run_begen("tune", tune.out, "--torch", "--shapes", shapes, "--repeats", "1", env=env)
    assert "begen tune: wrote 2 entries into" in proc.stderr, proc.stderr
    assert "transpose  m=48 n=64  (float32; cpu)" in proc.stdout, proc.stdout
    entries = json.loads((tmp_path / "tables" / "tune.tune.json").read_text())["entries"]
    jax_module = (tune.out / "tune.py").read_text()
    m = tune.module
    for e in entries:
        fn = e["kernel"].rsplit(".", 1)[1]
        assert e["hash"] == m._BEGEN_TUNE[fn]["hash"] and f'"hash": "{e["hash"]}"' in jax_module, e
        assert f'"target": "{e["kernel"]}"' in jax_module, e
        assert e["device"] == "cpu" and e["dtypes"] == ["float32"], e
    by_kernel = {e["kernel"].rsplit(".", 1)[1]: e for e in entries}
    assert by_kernel["transpose"]["key"] == {"n": 64, "m": 64}
    assert set(by_kernel["transpose"]["times_us"]) == {"BLOCK=1", "BLOCK=8", "BLOCK=32"}
    monkeypatch.setenv("BEGEN_TUNE_DIR", str(tmp_path / "tables"))
    m._begen_tune_cache.clear()
    chosen = int(by_kernel["transpose"]["config"]["BLOCK"])
    assert _blocks_run(m, lambda: m.transpose(torch.ones(64, 48))) == [chosen]


def test_begen_tune_torch_needs_a_torch_build(tmp_path):
    (tmp_path / "tune.py").write_text("")
    proc = run_begen("tune", tmp_path, "--name", "tune", "--torch", "--shapes", tmp_path / "tune.py", check=False)
    assert proc.returncode == 2
    assert "tune_torch.py does not exist: build the library into" in proc.stderr, proc.stderr
    assert "with --target torch (or jax,torch) first" in proc.stderr, proc.stderr


@pytest.fixture(scope="module")
def tune_defines(torch, tmp_path_factory):
    return build(tmp_path_factory, REPO / "tests" / "e2e" / "tune_defines", "tune_defines")


def _seen(m, torch, **kw):
    # The TILE and UNROLL the probe kernel was compiled with: which
    # candidate (which TU) ran.
    got = m.probe(torch.zeros(4), **kw)
    return int(got[0]), int(got[1])


def test_a_source_tuned_over_its_defines_runs_the_chosen_candidate(tune_defines, torch, tmp_path, monkeypatch):
    m = tune_defines.module
    assert "probe(Tensor x, *, int TILE, int UNROLL) -> Tensor" in str(torch.ops.tune_defines.probe.default._schema)
    assert _seen(m, torch) == (1, 1)  # the declared default
    assert _seen(m, torch, config={"TILE": 8, "UNROLL": 2}) == (8, 2)
    # A combination `where:` leaves out: the typed function's ValueError,
    # and the op's own error when called directly.
    with pytest.raises(ValueError, match="TILE=1, UNROLL=2 is not a built candidate"):
        m.probe(torch.zeros(4), config={"TILE": 1, "UNROLL": 2})
    with pytest.raises(RuntimeError, match="^probe: TILE=1, UNROLL=2 is not a built candidate of its defines$"):
        torch.ops.tune_defines.probe(torch.zeros(4), TILE=1, UNROLL=2)
    # The user's table chooses, eagerly and compiled.
    spec = m._BEGEN_TUNE["probe"]
    entry = {"kernel": spec["target"], "hash": spec["hash"], "device": "cpu", "dtypes": ["float32"]}
    entry |= {"key": {"n": 4}, "config": {"TILE": "32", "UNROLL": "1"}}
    (tmp_path / "tune_defines.tune.json").write_text(json.dumps({"begen_tune": 1, "entries": [entry]}))
    monkeypatch.setenv("BEGEN_TUNE_DIR", str(tmp_path))
    m._begen_tune_cache.clear()
    assert _seen(m, torch) == (32, 1)
    out, ops = ops_compiled(m.NAMESPACE, lambda v: m.probe(v), torch.zeros(4))
    assert [kw for name, kw in ops] == [{"TILE": 32, "UNROLL": 1}] and int(out[0]) == 32
    x = torch.arange(12.0).reshape(3, 4)
    assert torch.equal(m.transpose(x), x.T)


def test_the_backward_pass_of_a_source_tuned_over_its_defines_runs_the_forward_calls_candidate(
    tune_defines, torch, tmp_path, monkeypatch
):
    # `scale_by_tile` and its backward kernel scale by 10 * TILE + UNROLL: a
    # gradient of another scale ran another candidate than the forward's.
    m = tune_defines.module

    def grads(f):
        x = torch.ones(3, requires_grad=True)
        y = f(x)
        y.sum().backward()
        return float(y[0].detach()), float(x.grad[0])

    monkeypatch.setenv("BEGEN_TUNE_DIR", str(tmp_path))
    m._begen_tune_cache.clear()
    assert grads(m.scale_by_tile) == (11.0, 11.0)  # the declared default
    for tile, unroll in [(8, 1), (8, 2), (32, 1)]:
        config = {"TILE": tile, "UNROLL": unroll}
        assert grads(lambda v, c=config: m.scale_by_tile(v, config=c)) == (10 * tile + unroll,) * 2
    # The table chooses the forward's candidate, eagerly and compiled; the
    # backward kernel, which has no entry, runs the same one.
    spec = m._BEGEN_TUNE["scale_by_tile"]
    entry = {"kernel": spec["target"], "hash": spec["hash"], "device": "cpu", "dtypes": ["float32"]}
    entry |= {"key": {"n": 3}, "config": {"TILE": "32", "UNROLL": "1"}}
    (tmp_path / "tune_defines.tune.json").write_text(json.dumps({"begen_tune": 1, "entries": [entry]}))
    m._begen_tune_cache.clear()
    assert grads(m.scale_by_tile) == (321.0, 321.0)
    torch._dynamo.reset()
    assert grads(torch.compile(lambda v: m.scale_by_tile(v), fullgraph=True)) == (321.0, 321.0)


def test_check_torch_passes_on_a_source_tuned_over_its_defines(tune_defines):
    sys.path.insert(0, str(REPO / "python"))
    from begen.testing import check_torch

    report = check_torch(tune_defines.module)
    rows = [r for r in report.rows if r.op in ("probe", "scale_by_tile")]
    assert {r.op for r in rows} == {"probe", "scale_by_tile"} and all(r.result == "pass" for r in rows), str(report)
    assert "TILE=8 UNROLL=2" in str(report), str(report)
