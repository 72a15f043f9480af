"""A bounded fuzz run of the hatch build hook's settings (the
``[tool.hatch.build.targets.wheel.hooks.begen]`` table): random values of
every type TOML gives (strings with hostile pieces, numbers, booleans,
lists, tables, dates) for known and unknown keys. The hook must either
refuse them with its own message (a ValueError that starts with ``begen
hook:``) or accept settings begen's command line can take: strings where
begen reads one, lists of strings where it reads several. Never another
exception. ``BEGEN_HOOK_FUZZ_INPUTS`` sets how many inputs (default 3000),
``BEGEN_FUZZ_SEED`` the seed."""

import datetime
import os
import random
import sys

from conftest import REPO
from test_hatch_hook import hatch, hook  # noqa: F401 (the fixture)

sys.path.insert(0, str(REPO / "python"))

KEYS = ["kernels", "destination", "name", "platform", "arch", "include-dirs", "build-dir", "jax-min", "glibc-floor"]
PIECES = [
    "",
    "kernels",
    "mypkg",
    "mypkg/_aot",
    "_k",
    "cpu",
    "cuda",
    "auto",
    "sm_90",
    "sm_80,sm_90",
    "0.10.2",
    "2.28",
    "manylinux_2_28",
    ".hatch/begen",
    "..",
    "/",
    "\\",
    ".git",
    "a b",
    "é",
    "\u202e",
    "\0",
    "\n",
    "-",
    "--out",
    "9" * 300,
    "x" * 5000,
    ".",
    "./",
    "1e9",
    "nan",
    "True",
]


def value(rng, depth=0):
    kind = rng.randrange(9 if depth < 2 else 6)
    if kind == 0:
        return rng.choice([0, 1, -1, 2**63, 2**70, 28])
    if kind == 1:
        return rng.choice([0.5, float("nan"), float("inf"), 2.28])
    if kind == 2:
        return rng.choice([True, False])
    if kind == 3:
        return datetime.date(2020, 1, 2)
    if kind in (4, 5):
        return "".join(rng.choice(PIECES) for _ in range(rng.randrange(4)))
    if kind in (6, 7):
        return [value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(KEYS + ["x"]): value(rng, depth + 1) for _ in range(rng.randrange(3))}


def test_hook_settings_fuzz(hatch, tmp_path):  # noqa: F811 (the fixture)
    count = int(os.environ.get("BEGEN_HOOK_FUZZ_INPUTS", "3000"))
    rng = random.Random(int(os.environ.get("BEGEN_FUZZ_SEED", "1592636318")))
    root = tmp_path / "p"
    (root / "kernels").mkdir(parents=True)
    refused = accepted = 0
    for i in range(count):
        config = {}
        for key in rng.sample(KEYS, rng.randrange(len(KEYS) + 1)):
            config[key] = value(rng)
        if rng.randrange(20) == 0:
            config[rng.choice(["x", "Name", "build_dir"])] = value(rng)
        h = hook(hatch, root, **config)
        try:
            settings = h._settings()
            kernels = root / settings["kernels"]
            if hatch._is_dir(kernels):
                hatch._library_names(settings["name"], kernels, settings["destination"])
            hatch._checked_build_dir(root, settings["build-dir"], settings["kernels"], [])
        except ValueError as e:
            assert str(e).startswith("begen hook:"), f"input {i} {config!r}: {e!r}"
            refused += 1
            continue
        except Exception as e:
            raise AssertionError(f"input {i} {config!r}: {type(e).__name__}: {e}") from e
        # What reaches begen's command line: strings, lists of strings.
        for key in ("kernels", "destination", "build-dir"):
            assert isinstance(settings[key], str), (i, config, key)
        for key in ("name", "platform", "jax-min"):
            assert settings[key] is None or isinstance(settings[key], str), (i, config, key)
        for key in ("arch", "include-dirs"):
            assert isinstance(settings[key], list), (i, config, key)
            assert all(isinstance(v, str) and v for v in settings[key]), (i, config, key)
        accepted += 1
    print(f"hook settings: {count} inputs, {refused} refused, {accepted} accepted")
    assert refused + accepted == count


def test_hook_settings_of_another_type_are_refused_by_name(hatch, tmp_path):  # noqa: F811 (the fixture)
    """Values the fuzz run found reaching begen's command line or the file
    system unchecked: each is refused with the hook's message."""
    root = tmp_path / "p"
    (root / "kernels").mkdir(parents=True)
    for config, said in [
        ({"include-dirs": {"a": True}}, "`include-dirs`"),
        ({"include-dirs": "inc"}, "`include-dirs`"),
        ({"arch": [90]}, "`arch`"),
        ({"name": True}, "`name`"),
        ({"jax-min": 0.1}, "`jax-min`"),
        ({"build-dir": datetime.date(2020, 1, 2)}, "`build-dir`"),
        ({"kernels": ["k"]}, "`kernels`"),
    ]:
        try:
            hook(hatch, root, **config)._settings()
        except ValueError as e:
            assert str(e).startswith(f"begen hook: {said}"), (config, e)
        else:
            raise AssertionError(f"{config!r} was accepted")
    long = "9" * 300 + ".d"
    settings = hook(hatch, root, **{"build-dir": long})._settings()
    try:
        hatch._checked_build_dir(root, settings["build-dir"], "kernels", [])
    except ValueError as e:
        assert str(e).startswith("begen hook: `build-dir`"), e
    else:
        raise AssertionError("a build-dir name too long was accepted")
