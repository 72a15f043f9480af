"""Tuning under sharding, on 4 CPU devices: tests/e2e/tune's `scaled` is
split on `n` (begen.yaml `shard: [n]`), so each device runs it on its own
block and the key is the per-shard extent, under explicit mesh axes (the
choice is made inside the shard_map, on the blocks) and under auto ones
(made again where the custom_partitioning is partitioned). A table with one
entry for the global extent and another for the per-shard one: the split
call names the per-shard entry's candidate, the unsplit call the global
one's."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
from conftest import REPO, import_module, run_begen

NAME = "e2e_tune_shard"


@pytest.fixture(scope="module")
def built(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_tune_shard")
    run_begen("build", REPO / "tests/e2e/tune", "--out", out, "--name", NAME, "--quiet")
    return out


def write_table(m, tmp_path):
    # n=4096 (the global extent) -> TWO_PASS=false; n=1024 (one of 4 blocks)
    # -> TWO_PASS=true. The declared default is false.
    spec = m._BEGEN_TUNE["scaled"]

    def entry(n, two_pass):
        return {
            "kernel": spec["target"],
            "hash": spec["hash"],
            "device": "cpu",
            "dtypes": ["float32"],
            "key": {"n": n},
            "config": {"TWO_PASS": two_pass},
        }

    (tmp_path / f"{NAME}.tune.json").write_text(
        json.dumps({"begen_tune": 1, "entries": [entry(4096, "false"), entry(1024, "true")]})
    )


def run_program(built, tmp_path, *bodies, env=()):
    # The bodies' lines printed as "NAME VALUE" -> {NAME: VALUE}, run on 4 CPU
    # devices with the table of tmp_path.
    program = tmp_path / "prog.py"
    program.write_text(
        textwrap.dedent(
            f"""
            import os, re, sys
            import jax
            jax.config.update("jax_num_cpu_devices", 4)
            import numpy as np
            from jax.sharding import NamedSharding, PartitionSpec as P
            sys.path.insert(0, {str(built)!r})
            import {NAME} as m

            def named(f, *args):
                # The candidates the compiled (partitioned) HLO calls.
                text = jax.jit(f).lower(*args).compile().as_text()
                return sorted(set(re.findall(r"{NAME}\\.scaled\\[TWO_PASS=(\\w+)\\]", text)))
            """
        )
        + "".join(textwrap.dedent(body) for body in bodies)
    )
    proc = subprocess.run(
        [sys.executable, str(program)],
        capture_output=True,
        text=True,
        env={**os.environ, "BEGEN_TUNE_DIR": str(tmp_path), "JAX_PLATFORMS": "cpu", **dict(env)},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return dict(line.split(" ", 1) for line in proc.stdout.splitlines())


def test_the_split_call_keys_on_the_per_shard_extent(built, tmp_path):
    write_table(import_module(built, NAME), tmp_path)
    lines = run_program(
        built,
        tmp_path,
        """
        f = lambda v: m.scaled(v, a=2.0)
        mesh = jax.make_mesh((4,), ("x",), axis_types=(jax.sharding.AxisType.Explicit,))
        split = jax.device_put(np.ones(4096, np.float32), NamedSharding(mesh, P("x")))
        whole = np.ones(4096, np.float32)
        print("split", named(f, split))
        print("whole", named(f, whole))
        assert np.array_equal(np.asarray(jax.jit(f)(split)), np.full(4096, 2.0, np.float32))
        """,
    )
    assert lines["split"] == "['true']", lines  # each block of 1024: the per-shard entry
    assert lines["whole"] == "['false']", lines  # one call of 4096: the global entry


AUTO = """
mesh = jax.make_mesh((4,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
x = np.arange(4096, dtype=np.float32)
split = jax.device_put(x, NamedSharding(mesh, P("x")))
want = np.asarray(jax.jit(lambda v: m.scaled(v, a=2.0))(x))
"""


def test_an_auto_axis_split_call_keys_on_the_per_shard_extent(built, tmp_path):
    # Under auto axes the split is XLA's: the candidate is chosen again
    # where the call is partitioned, from each shard's extent, so the
    # compiled HLO names the per-shard entry's candidate; the numbers are
    # the unsplit call's. config= still wins. An export carries the
    # candidates chosen when it is exported, per way to split, and runs the
    # one for the split it is compiled with.
    write_table(import_module(built, NAME), tmp_path)
    lines = run_program(
        built,
        tmp_path,
        AUTO,
        """
        print("split", named(lambda v: m.scaled(v, a=2.0), split))
        print("whole", named(lambda v: m.scaled(v, a=2.0), x))
        print("equal", np.array_equal(np.asarray(jax.jit(lambda v: m.scaled(v, a=2.0))(split)), want))
        print("config", named(lambda v: m.scaled(v, a=2.0, config={"TWO_PASS": False}), split))
        print("keyword", named(lambda v: m.scaled(v, a=2.0, TWO_PASS=False), split))
        print("vmap", named(jax.vmap(lambda v: m.scaled(v, a=2.0)), jax.device_put(x.reshape(4, 1024), NamedSharding(mesh, P("x")))))

        from jax import export
        f = jax.jit(lambda v: m.scaled(v, a=2.0))
        exported = m.deserialize(export.export(f, disabled_checks=m.export_safety_checks())(split).serialize())
        print("export", named(exported.call, split))
        print("export_equal", np.array_equal(np.asarray(exported.call(split)), want))
        with open(os.path.join(os.environ["BEGEN_TUNE_DIR"], "scaled.bin"), "wb") as file:
            file.write(export.export(f, disabled_checks=m.export_safety_checks())(split).serialize())
        fixed = jax.jit(lambda v: m.scaled(v, a=2.0, config={"TWO_PASS": False}))
        exported = m.deserialize(export.export(fixed, disabled_checks=m.export_safety_checks())(split).serialize())
        print("export_config", named(exported.call, split))
        """,
    )
    assert lines["split"] == "['true']", lines  # each block of 1024: the per-shard entry
    assert lines["whole"] == "['false']", lines  # one call of 4096: the global entry
    assert lines["equal"] == "True", lines
    assert lines["config"] == "['false']", lines
    assert lines["keyword"] == "['false']", lines
    assert lines["vmap"] == "['true']", lines  # rows of 1024, one per device
    assert lines["export"] == "['true']", lines  # chosen when exported, for each way to split
    assert lines["export_equal"] == "True", lines
    assert lines["export_config"] == "['false']", lines
    # Deserialized in a process without the table: the choice is the export's.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "scaled.bin").write_bytes((tmp_path / "scaled.bin").read_bytes())
    lines = run_program(
        built,
        elsewhere,
        AUTO,
        """
        with open(os.path.join(os.environ["BEGEN_TUNE_DIR"], "scaled.bin"), "rb") as file:
            exported = m.deserialize(bytearray(file.read()))
        print("split", named(exported.call, split))
        print("equal", np.array_equal(np.asarray(exported.call(split)), want))
        """,
    )
    assert lines["split"] == "['true']", lines
    assert lines["equal"] == "True", lines


def test_begen_tune_default_wins_under_auto_axes(built, tmp_path):
    write_table(import_module(built, NAME), tmp_path)
    lines = run_program(
        built,
        tmp_path,
        AUTO,
        """
        print("split", named(lambda v: m.scaled(v, a=2.0), split))
        print("equal", np.array_equal(np.asarray(jax.jit(lambda v: m.scaled(v, a=2.0))(split)), want))
        """,
        env={"BEGEN_TUNE": "default"},
    )
    assert lines["split"] == "['false']", lines  # the declared default, tables unread
    assert lines["equal"] == "True", lines
