"""Section `tuning`: the choice of a tuned kernel's candidate from config=,
BEGEN_TUNE, the user's and the shipped tables, the nearest bucket and the
declared default; every way a table can be wrong."""

import json
import os

import numpy as np
import pytest
import tune_cases
from begen_runtime import tuning

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane

SPEC = {
    "target": "lib.colsum",
    "platform": "cpu",
    "consts": {"BLOCK": ("int", ("1", "8", "64"), "1"), "UNROLL": ("bool", ("true", "false"), "false")},
    "key": ("n",),
    "hash": "h1",
}


@pytest.fixture()
def tables(tmp_path, monkeypatch):
    """A library in tmp_path/out with its user tables in tmp_path/user."""
    out, user = tmp_path / "out", tmp_path / "user"
    out.mkdir()
    user.mkdir()
    monkeypatch.setattr(tuning, "LIBRARY", str(out / "liblib.so"))
    monkeypatch.setattr(tuning, "_BEGEN_TUNE", {"colsum": SPEC})
    monkeypatch.setenv("BEGEN_TUNE_DIR", str(user))
    monkeypatch.delenv("BEGEN_TUNE", raising=False)
    tuning._begen_tune_tables.clear()
    tuning._begen_tune_warned.clear()
    return {"user": user / "lib.tune.json", "shipped": out / "lib.tune.json"}


def entry(n, block, unroll="false", **over):
    e = {
        "kernel": "lib.colsum",
        "hash": "h1",
        "device": "cpu",
        "dtypes": ["float32"],
        "key": {"n": n},
        "config": {"BLOCK": block, "UNROLL": unroll},
    }
    e.update(over)
    return e


def write(path, *entries):
    path.write_text(json.dumps({"begen_tune": 1, "entries": list(entries)}))
    # A rewrite within one mtime tick must still be seen as new.
    os.utime(path, ns=(0, os.stat(path).st_mtime_ns + 1_000_000_000))


def pick(n, config=None, block=None, dtype=np.float32):
    values, fixed = tuning._begen_tune_fixed("colsum", config, {"BLOCK": block, "UNROLL": None})
    assert isinstance(values["BLOCK"], int) and isinstance(values["UNROLL"], bool)
    c = {"BLOCK": str(values["BLOCK"]), "UNROLL": "true" if values["UNROLL"] else "false"}
    return tuning._begen_tune_pick("colsum", c, {"n": (n, "from 'x'")}, (np.zeros(1, dtype),), fixed)


def test_buckets_are_powers_of_two_at_or_above():
    assert [tuning._begen_tune_bucket(v) for v in (0, 1, 2, 3, 4, 5, 1000, 1024, 1025)] == [
        0,
        1,
        2,
        4,
        4,
        8,
        1024,
        1024,
        2048,
    ]


def test_without_tables_the_declared_default_is_chosen(tables):
    assert pick(100) == {"BLOCK": "1", "UNROLL": "false"}


def test_the_user_table_wins_over_the_shipped_one_and_both_over_the_default(tables):
    write(tables["shipped"], entry(128, "8"))
    assert pick(100)["BLOCK"] == "8"
    write(tables["user"], entry(128, "64"))
    assert pick(100)["BLOCK"] == "64"
    # A key of another bucket in the user's table: the shipped exact bucket wins.
    write(tables["user"], entry(4096, "64"))
    assert pick(100)["BLOCK"] == "8"


def test_the_nearest_bucket_on_the_same_device_serves_a_key_never_tuned(tables):
    write(tables["shipped"], entry(64, "8"), entry(65536, "64"))
    assert pick(300)["BLOCK"] == "8"  # 512: three doublings from 64, seven from 65536
    assert pick(20000)["BLOCK"] == "64"
    # Another device's or another dtype's entries never serve.
    write(tables["shipped"], entry(512, "8", device="NVIDIA H100 80GB HBM3"), entry(512, "64", dtypes=["float64"]))
    assert pick(300)["BLOCK"] == "1"
    assert pick(300, dtype=np.float64)["BLOCK"] == "64"


def test_config_and_keywords_fix_a_candidate_and_beat_every_table(tables):
    write(tables["user"], entry(128, "64"))
    assert pick(100, config={"BLOCK": 8}) == {"BLOCK": "8", "UNROLL": "false"}
    assert pick(100, block=8)["BLOCK"] == "8"
    assert pick(100, config={"UNROLL": True}) == {"BLOCK": "1", "UNROLL": "true"}  # the table's disagrees: default
    write(tables["user"], entry(128, "64", "true"))
    assert pick(100, config={"UNROLL": True}) == {"BLOCK": "64", "UNROLL": "true"}
    with pytest.raises(ValueError, match=r"^colsum: BLOCK=3 is not a built candidate; BLOCK is one of 1, 8, 64$"):
        pick(100, config={"BLOCK": 3})
    with pytest.raises(ValueError, match=r"config= names 'BLOK', which is not a tuned parameter of colsum"):
        pick(100, config={"BLOK": 8})
    with pytest.raises(ValueError, match=r"^colsum: BLOCK=8 and config=\{'BLOCK': 64\} disagree$"):
        pick(100, config={"BLOCK": 64}, block=8)
    with pytest.raises(TypeError, match="config= takes a dict"):
        pick(100, config=[("BLOCK", 8)])


def test_begen_tune_default_or_off_ignores_the_tables(tables, monkeypatch):
    write(tables["user"], entry(128, "64"))
    for mode in ("default", "off"):
        monkeypatch.setenv("BEGEN_TUNE", mode)
        assert pick(100)["BLOCK"] == "1"
    monkeypatch.setenv("BEGEN_TUNE", "fast")
    with pytest.raises(ValueError, match="BEGEN_TUNE='fast'"):
        pick(100)


def test_stale_and_foreign_entries_are_ignored_with_one_warning(tables):
    write(tables["user"], entry(128, "64", hash="old"))
    with pytest.warns(UserWarning, match="sources changed since it was tuned"):
        assert pick(100)["BLOCK"] == "1"
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pick(100)["BLOCK"] == "1"  # once
    write(tables["user"], entry(128, "32"))
    with pytest.warns(UserWarning, match=r"not one this build holds"):
        assert pick(100)["BLOCK"] == "1"
    # Another kernel's entries are not this one's business.
    write(tables["user"], entry(128, "64", kernel="other.colsum"))
    assert pick(100)["BLOCK"] == "1"


@pytest.mark.parametrize(
    "text, why",
    [
        (b"", "invalid JSON"),
        (b'{"begen_tune": 1, "entries": [', "invalid JSON"),  # truncated
        (b"\xff\xfe garbage \x00", "invalid JSON"),
        (b"[]", 'top level must be an object with "begen_tune": 1'),
        (b'{"begen_tune": 2, "entries": []}', '"begen_tune": 1'),
        (b'{"begen_tune": 1}', '"entries" must be a list'),
        (b'{"begen_tune": 1, "entries": [{"kernel": 1}]}', "entry 0 must have"),
        (
            b'{"begen_tune": 1, "entries": [{"kernel": "k", "hash": "h", "device": "cpu", "dtypes": [], "key": {"n": true}}]}',
            "entry 0 must have",
        ),
    ],
)
def test_a_malformed_table_is_an_error_naming_the_file(tables, text, why):
    tables["user"].write_bytes(text)
    with pytest.raises(tuning._BegenTuneTableError, match=f"^{tables['user']}: not a begen tuning table: .*") as e:
        pick(100)
    assert why in str(e.value)


def test_a_huge_table_or_a_fifo_is_refused_unread(tables, monkeypatch):
    monkeypatch.setattr(tuning, "_BEGEN_TUNE_MAX_BYTES", 100)
    tables["user"].write_bytes(b" " * 101)
    with pytest.raises(tuning._BegenTuneTableError, match="101 bytes, over the 100 a table may have"):
        pick(100)
    tables["user"].unlink()
    os.mkfifo(tables["user"])
    with pytest.raises(tuning._BegenTuneTableError, match="not a regular file"):
        pick(100)


def test_a_symbolic_key_dim_takes_the_default(tables):
    write(tables["user"], entry(128, "64"))
    c = {"BLOCK": "1", "UNROLL": "false"}
    assert tuning._begen_tune_pick("colsum", c, {"n": ("b", "x")}, (np.zeros(1, np.float32),), set())["BLOCK"] == "1"


def test_per_shard_extents_choose_the_entry(tables):
    write(tables["user"], entry(128, "64"), entry(1024, "8"))
    c, x = {"BLOCK": "1", "UNROLL": "false"}, np.zeros(1, np.float32)
    got = tuning._begen_tune_pick("colsum", c, {"n": (1024, "x")}, (x,), set(), {"n": 128})
    assert got["BLOCK"] == "64"


def test_built_candidates_restrict_config_and_table_entries(tables, monkeypatch):
    # A source tuned over its defines: `where:` built three of the four
    # combinations; one left out is refused by config= and ignored in a table.
    spec = dict(SPEC, candidates=(("1", "false"), ("8", "false"), ("64", "true")))
    monkeypatch.setitem(tuning._BEGEN_TUNE, "colsum", spec)
    assert pick(1000, config={"BLOCK": 64, "UNROLL": True})["BLOCK"] == "64"
    with pytest.raises(ValueError, match="BLOCK=8, UNROLL=true is not a built candidate"):
        pick(1000, config={"BLOCK": 8, "UNROLL": True})
    write(tables["user"], entry(1024, "8", "true"))
    with pytest.warns(UserWarning, match="not one this build holds"):
        assert pick(1000) == {"BLOCK": "1", "UNROLL": "false"}
    write(tables["user"], entry(1024, "64", "true"))
    assert pick(1000) == {"BLOCK": "64", "UNROLL": "true"}


@pytest.mark.parametrize("case, text, why", tune_cases.BAD_TABLES, ids=[c[0] for c in tune_cases.BAD_TABLES])
def test_every_malformed_table_is_an_error_naming_the_file(tables, case, text, why):
    # The cases begen tune and the build's check of a shipped table refuse
    # with the same words (test_e2e_tune_inputs.py).
    tables["user"].write_bytes(text)
    with pytest.raises(tuning._BegenTuneTableError) as e:
        pick(100)
    assert str(e.value).startswith(f"{tables['user']}: not a begen tuning table: ") and why in str(e.value)


@pytest.mark.parametrize("kind", list(tune_cases.KINDS))
def test_every_kind_of_non_regular_file_is_refused_by_name(tables, kind):
    try:
        keep = tune_cases.make_kind(tables["user"], kind)
    except (OSError, PermissionError) as e:
        pytest.skip(f"cannot make a {kind} here: {e}")
    try:
        with pytest.raises(tuning._BegenTuneTableError) as e:
            pick(100)
        want = f"{tables['user']}: not a begen tuning table: {tune_cases.KINDS[kind]}, not a regular file"
        assert str(e.value) == want
        assert tune_cases.same_kind(tables["user"], kind)
    finally:
        if keep is not None:
            keep.close()


def test_a_table_nested_at_the_bound_is_read(tables):
    # 16 levels: the top level, the entries, an entry and 13 lists in a
    # field of its own; the entry applies.
    deep = []
    for _ in range(12):
        deep = [deep]
    write(tables["user"], dict(entry(128, "8"), times_us=deep))
    assert tuning._begen_tune_depth(json.loads(tables["user"].read_bytes())) == 16
    assert pick(100)["BLOCK"] == "8"
@pytest.mark.parametrize("target, named", [("proj.lib.colsum", "lib.colsum"), ("lib.colsum", "proj.lib.colsum")])
def test_entries_naming_another_prefix_warn_with_did_you_mean(tables, monkeypatch, target, named):
    # A table exported from `begen build` (`lib.colsum`) read by a wheel
    # whose target is `proj.lib.colsum`, and the other way: ignored, said once.
    monkeypatch.setitem(tuning._BEGEN_TUNE, "colsum", dict(SPEC, target=target))
    write(tables["user"], entry(64, "8", kernel=named), entry(64, "8", kernel="other.colsum"))
    with pytest.warns(UserWarning) as caught:
        assert pick(64)["BLOCK"] == "1"
    (w,) = [w for w in caught if "naming no kernel" in str(w.message)]
    text = str(w.message)
    assert str(tables["user"]) in text and f"{named!r} (did you mean {target!r}?)" in text
    # Another library's entry in the shared user table is none of this one's business.
    assert "other.colsum" not in text
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pick(64)["BLOCK"] == "1"  # once


def test_a_shipped_table_naming_no_kernel_of_the_library_warns(tables):
    write(tables["shipped"], entry(64, "8", kernel="elsewhere.thing"), entry(64, "8", kernel="lib.colsun"))
    with pytest.warns(UserWarning, match=r"ignored: 'elsewhere.thing', 'lib.colsun' \(did you mean 'lib.colsum'\?\)"):
        assert pick(64)["BLOCK"] == "1"


def test_a_table_of_this_librarys_kernels_says_nothing(tables, recwarn):
    write(tables["user"], entry(64, "8"))
    assert pick(64)["BLOCK"] == "8"
    assert not [w for w in recwarn if "naming no kernel" in str(w.message)]
