"""An algorithm tuned over its implementations, end to end on the CPU:
tests/e2e/tune_algo (`axpy`, whose higher-priority implementation
`axpy_passes` makes many redundant passes over the arrays and whose
`axpy_once` makes one) built by the CLI, `begen tune` run on this machine,
and the traced function choosing from its table. Every choice is read from
the lowered HLO: which implementation's target it calls."""

import json
import shutil

import numpy as np
import pytest
from conftest import REPO, import_module, run_begen

NAME = "e2e_tune_algo"
SLOW, FAST = "axpy_passes", "axpy_once"
N = 1 << 18


def targets(f, *args, **kw):
    # The implementations' targets the lowered call names.
    import jax

    text = jax.jit(lambda *a: f(*a, **kw)).lower(*args).as_text()
    return {name for name in (SLOW, FAST) if f"@{NAME}.{name}(" in text}


def data(n):
    rng = np.random.default_rng(0)
    return rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)


@pytest.fixture(scope="module")
def built(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_tune_algo")
    run_begen("build", REPO / "tests/e2e/tune_algo", "--out", out, "--name", NAME, "--quiet")
    return out


@pytest.fixture(scope="module")
def table(built, tmp_path_factory):
    # `begen tune` once for the module: the user table it writes, and its report.
    folder = tmp_path_factory.mktemp("tune_dir")
    shapes = folder / "shapes.yaml"
    shapes.write_text(f"axpy: [{{n: {N}}}]\n")
    proc = run_begen("tune", built, "--shapes", shapes, "--repeats", "5", env={"BEGEN_TUNE_DIR": str(folder)})
    return folder, proc.stdout + proc.stderr


@pytest.fixture()
def module(built, monkeypatch, tmp_path):
    monkeypatch.setenv("BEGEN_TUNE_DIR", str(tmp_path))
    monkeypatch.delenv("BEGEN_TUNE", raising=False)
    return import_module(built, NAME)


def test_without_a_table_the_priority_order_chooses(module):
    x, y = data(1000)
    assert targets(module.axpy, x, y, alpha=2.0) == {SLOW}
    assert module._BEGEN_TUNE["axpy"]["implementations"] == {"cpu": (SLOW, FAST)}


def test_config_names_an_implementation_and_both_agree(module):
    x, y = data(1000)
    assert targets(module.axpy, x, y, alpha=2.0, config={"implementation": FAST}) == {FAST}
    for name in (SLOW, FAST):
        got = np.asarray(module.axpy(x, y, alpha=2.0, config={"implementation": name}))
        np.testing.assert_allclose(got, x + 2.0 * y, rtol=1e-6)
    with pytest.raises(ValueError, match="not one of axpy's"):
        module.axpy(x, y, alpha=2.0, config={"implementation": "axpy_fast"})
    # An implementation that refuses the call is refused by name, not run.
    with pytest.raises(ValueError, match="does not support alpha=0"):
        module.axpy(x, y, alpha=0.0, config={"implementation": FAST})


def test_begen_tune_picks_the_faster_implementation(table):
    folder, report = table
    (entry,) = json.loads((folder / f"{NAME}.tune.json").read_text())["entries"]
    assert entry["kernel"] == f"algorithm:{NAME}.axpy" and entry["key"] == {"n": N}, report
    assert entry["config"] == {"implementation": FAST}, report
    assert set(entry["times_us"]) == {SLOW, FAST}, report
    # The per-key table lists the implementations.
    assert "implementation" in report and f"{SLOW} (default)" in report and FAST in report, report
    assert entry["times_us"][SLOW] > 2 * entry["times_us"][FAST], report


def test_the_traced_call_names_the_tuned_target(built, table, monkeypatch):
    folder, _ = table
    monkeypatch.setenv("BEGEN_TUNE_DIR", str(folder))
    monkeypatch.delenv("BEGEN_TUNE", raising=False)
    m = import_module(built, NAME)
    x, y = data(N)
    assert targets(m.axpy, x, y, alpha=2.0) == {FAST}
    np.testing.assert_allclose(np.asarray(m.axpy(x, y, alpha=2.0)), x + 2.0 * y, rtol=1e-6)
    # The nearest bucket: a size it was not tuned for.
    small = data(1000)
    assert targets(m.axpy, *small, alpha=2.0) == {FAST}
    # An implementation that refuses the call is never chosen, tuned or not.
    assert targets(m.axpy, x, y, alpha=0.0) == {SLOW}
    # BEGEN_TUNE=default (or off): the priority order, tables unread.
    for mode in ("default", "off"):
        monkeypatch.setenv("BEGEN_TUNE", mode)
        assert targets(m.axpy, x, y, alpha=2.0) == {SLOW}
    monkeypatch.setenv("BEGEN_TUNE", "fast")
    with pytest.raises(ValueError, match="BEGEN_TUNE='fast'"):
        targets(m.axpy, x, y, alpha=2.0)


def test_the_shipped_table_and_a_stale_entry(built, table, tmp_path, monkeypatch):
    folder, _ = table
    entries = json.loads((folder / f"{NAME}.tune.json").read_text())["entries"]
    monkeypatch.setenv("BEGEN_TUNE_DIR", str(tmp_path / "empty"))
    monkeypatch.delenv("BEGEN_TUNE", raising=False)
    # The table shipped beside the module (one library per process: the
    # module's own folder, the table removed after).
    shipped = built / f"{NAME}.tune.json"
    try:
        shipped.write_text(json.dumps({"begen_tune": 1, "entries": entries}))
        m = import_module(built, NAME)
        x, y = data(N)
        assert targets(m.axpy, x, y, alpha=2.0) == {FAST}
        # An entry for implementations built otherwise warns and is ignored.
        stale = [dict(e, hash="stale") for e in entries]
        shipped.write_text(json.dumps({"begen_tune": 1, "entries": stale}))
        with pytest.warns(UserWarning, match="implementations changed since it was tuned"):
            assert targets(m.axpy, x, y, alpha=2.0) == {SLOW}
    finally:
        shipped.unlink()


@pytest.mark.parametrize(
    "entry, message, column",
    [
        ("axpi: {implementations: true}", "`axpi` is not an algorithm of this library (did you mean `axpy`?)", 3),
        ("axpy_once: {implementations: true}", "`axpy_once` is not an algorithm", 3),
        ("axpy: {implementations: false}", "takes `true` only", 27),
        ("axpy: {implementations: true, default: {BLOCK: 1}}", "takes no `default:`", 33),
        ("axpy: {implementations: true, key: [nm]}", "did you mean `n`", 39),
    ],
)
def test_mistakes_are_located(tmp_path, entry, message, column):
    kernels = tmp_path / "k"
    shutil.copytree(REPO / "tests/e2e/tune_algo", kernels)
    text = (kernels / "begen.yaml").read_text()
    head = text[: text.index("tune:")]
    lines = head.count("\n")
    (kernels / "begen.yaml").write_text(head + f"tune:\n  {entry}\n")
    proc = run_begen("scan", kernels, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and message in out, out
    assert f"begen.yaml:{lines + 2}:{column}" in out, out


def test_one_implementation_per_platform_is_a_warning(tmp_path):
    kernels = tmp_path / "k"
    shutil.copytree(REPO / "tests/e2e/tune_algo", kernels)
    (kernels / "begen.yaml").write_text(
        "platform: cpu\nalgorithms:\n  axpy: [axpy_once]\ntune:\n  axpy: {implementations: true}\n"
    )
    proc = run_begen("scan", kernels, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "warning" in out and "has nothing to choose" in out, out


def test_record_tunes_the_keys_a_program_traces(built, tmp_path):
    program = tmp_path / "prog.py"
    program.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(built)!r})\n"
        "import jax, numpy as np\n"
        f"import {NAME} as m\n"
        "x = np.ones(5000, np.float32)\n"
        "jax.jit(lambda a: m.axpy(a, a, alpha=3.0))(x).block_until_ready()\n"
    )
    import sys

    proc = run_begen("tune", built, "--record", sys.executable, program, env={"BEGEN_TUNE_DIR": str(tmp_path)})
    (entry,) = json.loads((tmp_path / f"{NAME}.tune.json").read_text())["entries"]
    assert entry["key"] == {"n": 8192} and entry["config"] == {"implementation": FAST}, proc.stdout + proc.stderr
