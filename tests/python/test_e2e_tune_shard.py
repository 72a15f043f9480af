"""Tuning under sharding, on 4 CPU devices: tests/e2e/tune's `scaled` is
split on `n` (begen.yaml `shard: [n]`) over an explicit mesh axis, so each
device runs it on its own block and the key is the per-shard extent. A table with one entry for the
global extent and another for the per-shard one: the split call names the
per-shard entry's candidate, the unsplit call the global one's."""

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


def test_the_split_call_keys_on_the_per_shard_extent(built, tmp_path):
    m = import_module(built, NAME)
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
    program = tmp_path / "prog.py"
    program.write_text(
        textwrap.dedent(
            f"""
            import re, sys
            import jax
            jax.config.update("jax_num_cpu_devices", 4)
            import numpy as np
            from jax.sharding import NamedSharding, PartitionSpec as P
            sys.path.insert(0, {str(built)!r})
            import {NAME} as m

            def named(f, x):
                text = jax.jit(f).lower(x).compile().as_text()
                return sorted(set(re.findall(r"{NAME}\\.scaled\\[TWO_PASS=(\\w+)\\]", text)))

            f = lambda v: m.scaled(v, a=2.0)
            mesh = jax.make_mesh((4,), ("x",), axis_types=(jax.sharding.AxisType.Explicit,))
            split = jax.device_put(np.ones(4096, np.float32), NamedSharding(mesh, P("x")))
            whole = np.ones(4096, np.float32)
            print("split", named(f, split))
            print("whole", named(f, whole))
            assert np.array_equal(np.asarray(jax.jit(f)(split)), np.full(4096, 2.0, np.float32))
            """
        )
    )
    proc = subprocess.run(
        [sys.executable, str(program)],
        capture_output=True,
        text=True,
        env={**os.environ, "BEGEN_TUNE_DIR": str(tmp_path), "JAX_PLATFORMS": "cpu"},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert lines["split"] == "['true']", proc.stdout  # each block of 1024: the per-shard entry
    assert lines["whole"] == "['false']", proc.stdout  # one call of 4096: the global entry
