"""`begen tune` on bad input, end to end with tests/e2e/tune built by the
CLI: every path it reads or writes (the user's table, `--export`,
`--shapes`, `--plot`) refused by name when it is no regular file, every
malformed table refused with the words the module's call-time reader and
the build's check of a shipped table use, malformed `--shapes` files named,
and two runs writing one table keeping each other's entries (its lock)."""

import json
import os
import shutil
import subprocess
import sys
import time

import pytest
import tune_cases
from conftest import REPO, begen_bin, import_module, run_begen

# A name of its own: test_e2e_tune.py builds the same tree as e2e_tune,
# and both may run in one pytest process, where XLA takes one handler per
# FFI target.
NAME = "e2e_tune_inputs"
SHAPES = "transpose: [{n: 64, m: 64}]\n"


@pytest.fixture(scope="module")
def built(jax_cpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e_tune_inputs")
    run_begen("build", REPO / "tests/e2e/tune", "--out", out, "--name", NAME, "--quiet")
    return out


def tune(built, *args, user, timeout=300):
    """`begen tune` with `user` as BEGEN_TUNE_DIR. The timeout only catches
    a hang (a FIFO read for ever); a refusal comes before any measuring."""
    env = dict(os.environ, BEGEN_PYTHON=sys.executable, BEGEN_TUNE_DIR=str(user))
    cmd = [str(begen_bin()), "tune", str(built), "--repeats", "1", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, check=False)


PATHS = ["user table", "--export", "--shapes", "--plot"]


@pytest.mark.parametrize("kind", list(tune_cases.KINDS))
@pytest.mark.parametrize("where", PATHS)
def test_every_path_refuses_every_kind_of_non_regular_file(built, tmp_path, where, kind):
    user = tmp_path / "user"
    user.mkdir()
    shapes = tmp_path / "shapes.yaml"
    shapes.write_text(SHAPES)
    bad = {
        "user table": user / f"{NAME}.tune.json",
        "--export": tmp_path / "shipped.tune.json",
        "--shapes": tmp_path / "bad-shapes.yaml",
        "--plot": tmp_path / "times.png",
    }[where]
    try:
        keep = tune_cases.make_kind(bad, kind)
    except OSError as e:
        pytest.skip(f"cannot make a {kind} here: {e}")
    try:
        args = {
            "user table": ["--shapes", shapes],
            "--export": ["--shapes", shapes, "--export", bad],
            "--shapes": ["--shapes", bad],
            "--plot": ["--shapes", shapes, "--plot", bad],
        }[where]
        proc = tune(built, *args, user=user)
    finally:
        if keep is not None:
            keep.close()
    what = {"--shapes": "shapes file", "--plot": "PNG file begen tune can write"}.get(where, "begen tuning table")
    want = f"{bad}: not a {what}: {tune_cases.KINDS[kind]}, not a regular file"
    assert proc.returncode != 0 and want in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and "measur" not in proc.stderr
    assert tune_cases.same_kind(bad, kind)
    # Nothing was tuned, nothing written.
    made = [bad.name, bad.name + ".target"] if where == "user table" else []
    assert "checking" not in proc.stderr and sorted(p.name for p in user.iterdir()) == sorted(
        n for n in made if os.path.lexists(user / n)
    )


@pytest.fixture(scope="module")
def shipped_kernels(tmp_path_factory):
    """tests/e2e/tune with a shipped table, tuning/kernels.tune.json."""
    kernels = tmp_path_factory.mktemp("shipped") / "kernels"
    shutil.copytree(REPO / "tests/e2e/tune", kernels)
    (kernels / "tuning").mkdir()
    text = (kernels / "begen.yaml").read_text().replace("tune:\n", "tune:\n  table: tuning/kernels.tune.json\n")
    (kernels / "begen.yaml").write_text(text)
    return kernels


@pytest.mark.parametrize("case, text, why", tune_cases.BAD_TABLES, ids=[c[0] for c in tune_cases.BAD_TABLES])
def test_a_malformed_table_is_refused_alike_by_tune_the_module_and_the_build(
    built, shipped_kernels, tmp_path, case, text, why
):
    user = tmp_path / "user"
    user.mkdir()
    table = user / f"{NAME}.tune.json"
    table.write_bytes(text)
    shapes = tmp_path / "shapes.yaml"
    shapes.write_text(SHAPES)
    # begen tune: refused before measuring, the table left as it was.
    proc = tune(built, "--shapes", shapes, user=user)
    assert proc.returncode != 0 and f"{table}: not a begen tuning table: " in proc.stderr, proc.stderr
    assert why in proc.stderr and "left as it is and nothing was written" in proc.stderr
    assert "Traceback" not in proc.stderr and "checking" not in proc.stderr
    assert table.read_bytes() == text
    # --export: the same for the table it merges into (the same reader:
    # a few of the cases).
    if case in ("truncated", "key a float", "100000 deep"):
        export = tmp_path / "shipped.tune.json"
        export.write_bytes(text)
        table.unlink()
        proc = tune(built, "--shapes", shapes, "--export", export, user=user)
        assert proc.returncode != 0 and f"{export}: not a begen tuning table: " in proc.stderr and why in proc.stderr
        assert export.read_bytes() == text and not table.exists()
    # The build's check of a shipped table: an error at `table:`.
    (shipped_kernels / "tuning" / "kernels.tune.json").write_bytes(text)
    proc = run_begen("scan", shipped_kernels, check=False)
    assert proc.returncode != 0 and why in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def test_a_deep_table_names_the_file_at_call_time(built, tmp_path, monkeypatch):
    import numpy as np

    monkeypatch.setenv("BEGEN_TUNE_DIR", str(tmp_path))
    monkeypatch.delenv("BEGEN_TUNE", raising=False)
    table = tmp_path / f"{NAME}.tune.json"
    table.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    m = import_module(built, NAME)
    with pytest.raises(ValueError, match=f"^{table}: not a begen tuning table: nested more than 16 levels deep$"):
        m.transpose(np.zeros((8, 8), np.float32))


# (--shapes text, what the error says).
BAD_SHAPES = [
    ("- 1\n", "expected a map"),
    ("transpose: 5\n", "expected a sequence"),
    ("transpose: [5]\n", "expected a map"),
    ("transpose: [{n: -3, m: 64}]\n", "dimension `n` must be a non-negative integer"),
    ("transpose: [{n: 1.5, m: 64}]\n", "dimension `n` must be a non-negative integer"),
    ("transpose: [{n: big, m: 64}]\n", "dimension `n` must be a non-negative integer"),
    ("transpose: [{n: 64, m: 64, dtypes: 5}]\n", "`dtypes` must be a list of dtype names"),
    ("transpose: [{n: 64, m: 64, dtypes: [flaot32]}]\n", "`flaot32` is not a dtype (did you mean `float32`?)"),
    ("transpose: [{n: 64, m: 64, dtypes: [1]}]\n", "1 is not a dtype"),
    ("transpose: [{n: 64, m: 64, attrs: [1]}]\n", "`attrs` must map attribute names to numbers or booleans"),
    ("scaled: [{n: 64, attrs: {a: [1]}}]\n", "`attrs` must map attribute names to numbers or booleans"),
    ("scaled: [{n: 64, attrs: {aa: 1}}]\n", "--shapes gives attribute 'aa' (did you mean 'a'?)"),
    ("transpose: [{n: 64, m: 64, attrs: {a: 1}}]\n", "--shapes gives attribute 'a'; it takes none"),
    ("scaled: [{n: 64, attrs: {a: x}}]\n", "the default candidate refuses the call"),
    ("transpos: [{n: 64, m: 64}]\n", "did you mean 'transpose'"),
    ("transpose: [{n: 64}]\n", "the key needs dimension 'm'"),
    ("", "no key to tune"),
    (
        "transpose: [{n: 64, m: 64, attrs: " + "[" * 100_000 + "]" * 100_000 + "}]\n",
        "not a shapes file: nested more than 64 deep",
    ),
]


@pytest.mark.parametrize("text, why", BAD_SHAPES, ids=[f"shapes{i}" for i in range(len(BAD_SHAPES))])
def test_a_malformed_shapes_file_is_named(built, tmp_path, text, why):
    shapes = tmp_path / "shapes.yaml"
    shapes.write_text(text)
    proc = tune(built, "--shapes", shapes, "--dry-run", user=tmp_path)
    assert proc.returncode != 0 and why in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and not list(tmp_path.glob("*.tune.json"))


def test_two_runs_on_one_table_keep_each_others_entries(built, tmp_path):
    """Two `begen tune` runs of two kernels into one user table. The test
    holds the table's lock until both are waiting for it (each says so), so
    both read, merge and replace the table after the other could have: with
    the lock each sees the other's entry, without it one would be lost."""
    import fcntl

    user = tmp_path / "user"
    user.mkdir()
    table = user / f"{NAME}.tune.json"
    runs = []
    lock = os.open(str(table) + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        env = dict(os.environ, BEGEN_PYTHON=sys.executable, BEGEN_TUNE_DIR=str(user))
        for kernel, shapes in (("transpose", SHAPES), ("scaled", "scaled: [{n: 1024}]\n")):
            (tmp_path / f"{kernel}.yaml").write_text(shapes)
            err = open(tmp_path / f"{kernel}.err", "w+")  # noqa: SIM115 (closed once the run ends)
            cmd = [str(begen_bin()), "tune", str(built), "--repeats", "1", "--shapes", str(tmp_path / f"{kernel}.yaml")]
            runs.append((subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env), err))
        waiting = f"begen tune: waiting for lock on {table}.lock"
        # Until both wait (or one ends: then the assertion below says why).
        while not all(waiting in (tmp_path / f"{k}.err").read_text() for k in ("transpose", "scaled")):
            if any(p.poll() is not None for p, _ in runs):
                break
            time.sleep(0.2)
        assert all(p.poll() is None for p, _ in runs), [
            (tmp_path / f"{k}.err").read_text() for k in ("transpose", "scaled")
        ]
    finally:
        os.close(lock)
    for p, err in runs:
        assert p.wait(timeout=600) == 0, (err.seek(0), err.read())[1]
        err.close()
    entries = json.loads(table.read_text())["entries"]
    assert sorted(e["kernel"] for e in entries) == [f"{NAME}.scaled", f"{NAME}.transpose"]
