"""Section `tune_algorithms`: the choice of a tuned algorithm's
implementation from config=, BEGEN_TUNE, the user's and the shipped tables
and the nearest bucket, else the priority order; an implementation that
refuses the call is never chosen."""

import json
import os

import numpy as np
import pytest
from begen_runtime import algorithms, tune_algorithms, tuning

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane

SPEC = {
    "target": "algorithm:lib.add",
    "platform": None,
    "consts": {"implementation": ("implementation", ("slow", "fast"), "slow")},
    "key": ("n",),
    "hash": "h1",
    "key_at": (("n", 0, 0),),
    "implementations": {"cpu": ("slow", "fast")},
}


def impl(function, priority, call, unsupported=None):
    return algorithms._BegenImplementation("add", function, "cpu", priority, unsupported or {}, call, {})


def slow(x, *, alpha):
    return x + alpha


def fast(x, *, alpha):
    return x + alpha + 100  # told apart by its result


@pytest.fixture()
def tables(tmp_path, monkeypatch):
    """A library in tmp_path/out with its user tables in tmp_path/user."""
    out, user = tmp_path / "out", tmp_path / "user"
    out.mkdir()
    user.mkdir()
    rows = {"add": (True, (impl("slow", 10, slow), impl("fast", 0, fast, {"alpha": (0.0,)})))}
    monkeypatch.setattr(tuning, "LIBRARY", str(out / "liblib.so"))
    monkeypatch.setattr(tune_algorithms, "_BEGEN_TUNE", {"add": SPEC})
    monkeypatch.setattr(tune_algorithms, "_ALGORITHMS", rows)
    monkeypatch.setenv("BEGEN_TUNE_DIR", str(user))
    monkeypatch.delenv("BEGEN_TUNE", raising=False)
    monkeypatch.delenv("BEGEN_TUNE_RECORD", raising=False)
    tuning._begen_tune_tables.clear()
    tuning._begen_tune_warned.clear()
    return {"user": user / "lib.tune.json", "shipped": out / "lib.tune.json"}


def entry(n, implementation, **over):
    e = {
        "kernel": "algorithm:lib.add",
        "hash": "h1",
        "device": "cpu",
        "dtypes": ["float32"],
        "key": {"n": n},
        "config": {"implementation": implementation},
    }
    e.update(over)
    return e


def write(path, *entries):
    path.write_text(json.dumps({"begen_tune": 1, "entries": list(entries)}))
    os.utime(path, ns=(0, os.stat(path).st_mtime_ns + 1_000_000_000))


def run(n, alpha=1.0, config=None):
    # Which implementation a call runs: slow adds alpha, fast 100 more.
    x = np.zeros(n, np.float32)
    kw = {"alpha": alpha} if config is None else {"alpha": alpha, "config": config}
    got = float(np.asarray(tune_algorithms._begen_dispatch_tuned("add", (x,), kw))[0])
    return "fast" if got >= 100 else "slow"


def test_without_tables_the_priority_order_chooses(tables):
    assert run(100) == "slow"


def test_the_tables_and_the_nearest_bucket_choose(tables):
    write(tables["shipped"], entry(128, "fast"))
    assert run(100) == "fast"
    assert run(5000) == "fast"  # the nearest (only) bucket
    write(tables["user"], entry(128, "slow"))
    assert run(100) == "slow"  # the user's table first
    assert run(5000) == "slow"  # the user's on a tie of distance


def test_begen_tune_default_and_off_read_no_table(tables, monkeypatch):
    write(tables["user"], entry(128, "fast"))
    for mode in ("default", "off"):
        monkeypatch.setenv("BEGEN_TUNE", mode)
        assert run(100) == "slow"
    monkeypatch.setenv("BEGEN_TUNE", "fastest")
    with pytest.raises(ValueError, match="BEGEN_TUNE='fastest'"):
        run(100)


def test_an_implementation_that_refuses_the_call_is_never_chosen(tables):
    write(tables["user"], entry(128, "fast"))
    assert run(100, alpha=0.0) == "slow"
    with pytest.raises(ValueError, match="config= names implementation 'fast', but .*does not support alpha=0"):
        run(100, alpha=0.0, config={"implementation": "fast"})


def test_config_names_an_implementation(tables):
    write(tables["user"], entry(128, "slow"))
    assert run(100, config={"implementation": "fast"}) == "fast"
    with pytest.raises(ValueError, match="'quick', which is not one of add's \\(slow, fast\\)"):
        run(100, config={"implementation": "quick"})
    with pytest.raises(TypeError, match="config= takes a dict"):
        run(100, config="fast")


def test_other_devices_dtypes_and_keys_are_not_used(tables):
    write(
        tables["user"],
        entry(128, "fast", device="NVIDIA H100"),
        entry(128, "fast", dtypes=["float64"]),
        entry(128, "fast", key={"m": 128}),
        entry(128, "fast", kernel="lib.add"),
    )
    assert run(100) == "slow"


def test_stale_entries_warn_once_and_are_ignored(tables):
    write(tables["user"], entry(128, "fast", hash="old"))
    with pytest.warns(UserWarning, match="implementations changed since it was tuned"):
        assert run(100) == "slow"
    write(tables["user"], entry(128, "gone"))
    with pytest.warns(UserWarning, match="is not one this build holds"):
        assert run(100) == "slow"


def test_a_bad_table_names_the_file(tables):
    tables["user"].write_text("{")
    with pytest.raises(ValueError, match="lib.tune.json: not a begen tuning table"):
        run(100)


def test_record_writes_the_key_extents(tables, tmp_path, monkeypatch):
    path = tmp_path / "keys.jsonl"
    monkeypatch.setenv("BEGEN_TUNE_RECORD", str(path))
    run(100)
    (line,) = path.read_text().splitlines()
    assert json.loads(line) == {"kernel": "add", "dims": {"n": 100}, "dtypes": ["float32"]}
