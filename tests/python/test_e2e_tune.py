"""Tuning end to end on the CPU: tests/e2e/tune (a transpose tiled by a
`const.BLOCK`, whose naive candidate walks memory with a stride of a whole
row) built by the CLI, `begen tune` run on this machine, and the traced
function choosing from the table it wrote. Every check reads the compiled
HLO: which candidate's FFI target a jitted call names."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import REPO, import_module, run_begen

NAME = "e2e_tune"


def target(block):
    return f'"{NAME}.transpose[BLOCK={block}]"'


@pytest.fixture(scope="module")
def built(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_tune")
    run_begen("build", REPO / "tests/e2e/tune", "--out", out, "--name", NAME, "--quiet")
    return out


@pytest.fixture(scope="module")
def tuned(built, tmp_path_factory):
    """`begen tune` on a 2048 x 2048 transpose, into a fresh user table."""
    tables = tmp_path_factory.mktemp("tune_dir")
    shapes = tables / "shapes.yaml"
    shapes.write_text("transpose: [{n: 2048, m: 2048}]\n")
    export = tables / "shipped.tune.json"
    proc = run_begen(
        "tune", built, "--shapes", shapes, "--repeats", "5", "--export", export, env={"BEGEN_TUNE_DIR": str(tables)}
    )
    table = json.loads((tables / f"{NAME}.tune.json").read_text())
    return {"dir": tables, "table": table, "export": export, "report": proc.stdout + proc.stderr}


def hlo(m, x, **kw):
    import jax

    return jax.jit(lambda a: m.transpose(a, **kw)).lower(x).compile().as_text()


@pytest.fixture()
def module(built, monkeypatch, tmp_path):
    """The module, fresh, with an empty user table directory."""
    monkeypatch.setenv("BEGEN_TUNE_DIR", str(tmp_path))
    monkeypatch.delenv("BEGEN_TUNE", raising=False)
    return import_module(built, NAME)


def test_every_candidate_is_callable_and_right(module, jax_cpu):
    x = np.arange(6 * 5, dtype=np.float32).reshape(6, 5)
    for block in (1, 8, 32):
        np.testing.assert_array_equal(np.asarray(module.transpose(x, config={"BLOCK": block})), x.T)
        np.testing.assert_array_equal(np.asarray(module.transpose(x, BLOCK=block)), x.T)
    assert target(1) in hlo(module, x)  # no table: the declared default
    assert target(32) in hlo(module, x, config={"BLOCK": 32})
    with pytest.raises(ValueError, match="BLOCK=3 is not a built candidate"):
        module.transpose(x, config={"BLOCK": 3})


def test_begen_tune_picks_a_faster_tile_and_the_traced_call_names_it(tuned, built, monkeypatch):
    (entry,) = tuned["table"]["entries"]
    assert entry["kernel"] == f"{NAME}.transpose" and entry["key"] == {"n": 2048, "m": 2048}
    times = entry["times_us"]
    # The naive walk (a store every row's length apart) is slower than a
    # tile by more than the 2% margin (about 1.4x on a 2-core VM).
    assert entry["config"]["BLOCK"] != "1", tuned["report"]
    assert times["BLOCK=1"] > 1.02 * times[f"BLOCK={entry['config']['BLOCK']}"], tuned["report"]
    assert "<- chosen" in tuned["report"] and "BLOCK=1 (default)" in tuned["report"]
    chosen = entry["config"]["BLOCK"]
    monkeypatch.setenv("BEGEN_TUNE_DIR", str(tuned["dir"]))
    m = import_module(built, NAME)
    x = np.zeros((2048, 2048), np.float32)
    text = hlo(m, x)
    assert target(chosen) in text and target(1) not in text
    # The same bucket (1500 -> 2048), and the nearest bucket (256 x 256).
    assert target(chosen) in hlo(m, np.zeros((1500, 1500), np.float32))
    assert target(chosen) in hlo(m, np.zeros((256, 256), np.float32))
    # BEGEN_TUNE=default: the declared default, the table unread.
    monkeypatch.setenv("BEGEN_TUNE", "default")
    assert target(1) in hlo(m, np.zeros((2048, 2048), np.float32))
    # The exported table holds the same entry, for shipping.
    assert json.loads(tuned["export"].read_text())["entries"] == tuned["table"]["entries"]


def test_export_bakes_the_choice_in(tuned, built, monkeypatch):
    import jax
    from jax import export

    monkeypatch.setenv("BEGEN_TUNE_DIR", str(tuned["dir"]))
    m = import_module(built, NAME)
    chosen = tuned["table"]["entries"][0]["config"]["BLOCK"]
    x = np.arange(2048 * 2048, dtype=np.float32).reshape(2048, 2048)
    blob = export.export(jax.jit(m.transpose), disabled_checks=m.export_safety_checks())(x).serialize()
    monkeypatch.setenv("BEGEN_TUNE", "default")  # no longer consulted: the choice is in the export
    back = export.deserialize(blob)
    assert target(chosen) in back.mlir_module()
    np.testing.assert_array_equal(np.asarray(back.call(x)), x.T)


def test_a_shipped_table_is_a_fifth_output_and_serves_without_a_user_table(tuned, tmp_path, monkeypatch):
    import shutil

    kernels = tmp_path / "kernels"
    shutil.copytree(REPO / "tests/e2e/tune", kernels)
    (kernels / "tuning").mkdir()
    shutil.copy(tuned["export"], kernels / "tuning" / "kernels.tune.json")
    text = (kernels / "begen.yaml").read_text().replace("tune:\n", "tune:\n  table: tuning/kernels.tune.json\n")
    (kernels / "begen.yaml").write_text(text)
    out = tmp_path / "out"
    run_begen("build", kernels, "--out", out, "--name", NAME, "--quiet")
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [f"lib{NAME}.so", f"{NAME}.py", f"{NAME}.pyi", f"{NAME}.yaml", f"{NAME}.tune.json"]
    )
    # In a process of its own: this one has the first build's library loaded,
    # with the same targets.
    chosen = tuned["table"]["entries"][0]["config"]["BLOCK"]
    script = (
        f"import sys, jax, numpy as np; sys.path.insert(0, {str(out)!r}); import {NAME} as m; "
        "print(jax.jit(m.transpose).lower(np.zeros((2048, 2048), np.float32)).compile().as_text())"
    )
    env = dict(os.environ, BEGEN_TUNE_DIR=str(tmp_path / "empty"))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    assert target(chosen) in proc.stdout
    # A table that is no longer declared leaves OUT with the next build.
    (kernels / "begen.yaml").write_text(text.replace("  table: tuning/kernels.tune.json\n", ""))
    run_begen("build", kernels, "--out", out, "--name", NAME, "--quiet")
    assert not (out / f"{NAME}.tune.json").exists()


def test_stale_and_malformed_tables(tuned, built, tmp_path, monkeypatch):
    monkeypatch.setenv("BEGEN_TUNE_DIR", str(tmp_path))
    table = tmp_path / f"{NAME}.tune.json"
    stale = json.loads(json.dumps(tuned["table"]))
    stale["entries"][0]["hash"] = "0" * 16
    table.write_text(json.dumps(stale))
    m = import_module(built, NAME)
    with pytest.warns(UserWarning, match="sources changed since it was tuned"):
        assert target(1) in hlo(m, np.zeros((64, 64), np.float32))
    table.write_text('{"begen_tune": 1, "entries": [')
    with pytest.raises(ValueError, match=f"{table}: not a begen tuning table: invalid JSON"):
        hlo(m, np.zeros((64, 64), np.float32))


def test_record_tunes_the_keys_a_program_traces_per_shard(built, tmp_path):
    """`begen tune --record CMD`: the keys come from a run of a program that
    calls `scaled` on 4 CPU devices with its input split on `n`; the key is
    the per-shard extent."""
    program = tmp_path / "prog.py"
    program.write_text(
        textwrap.dedent(
            f"""
            import sys
            import jax
            jax.config.update("jax_num_cpu_devices", 4)
            import numpy as np
            from jax.sharding import NamedSharding, PartitionSpec as P
            sys.path.insert(0, {str(built)!r})
            import {NAME} as m
            mesh = jax.make_mesh((4,), ("x",))
            x = jax.device_put(np.ones(4096, np.float32), NamedSharding(mesh, P("x")))
            y = jax.jit(lambda v: m.scaled(v, a=2.0))(x)
            assert np.array_equal(np.asarray(y), np.full(4096, 2.0, np.float32))
            """
        )
    )
    proc = run_begen(
        "tune",
        built,
        "--kernels",
        "scaled",
        "--repeats",
        "2",
        "--record",
        sys.executable,
        str(program),
        env={"BEGEN_TUNE_DIR": str(tmp_path)},
    )
    (entry,) = json.loads((tmp_path / f"{NAME}.tune.json").read_text())["entries"]
    assert entry["kernel"] == f"{NAME}.scaled" and entry["key"] == {"n": 1024}, proc.stderr
    assert set(entry["times_us"]) == {"TWO_PASS=false", "TWO_PASS=true"}


def test_mistakes_in_the_command_are_named(built, tmp_path):
    shapes = tmp_path / "shapes.yaml"
    shapes.write_text("transpose: [{n: -3}]\n")
    proc = run_begen("tune", built, "--shapes", shapes, check=False)
    assert proc.returncode == 2 and "dimension `n` must be a non-negative integer" in proc.stderr
    shapes.write_text("transpos: [{n: 64, m: 64}]\n")
    proc = run_begen("tune", built, "--shapes", shapes, "--dry-run", check=False, env={"BEGEN_TUNE_DIR": str(tmp_path)})
    assert proc.returncode != 0 and "did you mean 'transpose'" in proc.stderr
    proc = run_begen("tune", built, check=False)
    assert proc.returncode == 2 and "--shapes FILE, or --record CMD" in proc.stderr
    proc = run_begen("tune", tmp_path, check=False)
    assert proc.returncode == 2 and "holds no library begen built" in proc.stderr
