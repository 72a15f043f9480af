"""``python -m begen develop [PROJECT]``: rebuilds a kernel package's kernels
into the place this Python imports the package from, after an edit.

A package whose wheel begen's hatch hook builds (``begen new`` makes one) is
installed once (``pip install .``). After a kernel edit, this command runs
the same ``begen build`` the hook runs, in the hook's build directory
(``build-dir``, ``.hatch/begen`` by default), so only the sources that
changed since the last wheel build or ``develop`` are compiled; then it puts
the library, its module, stub, manifest and tuning table into the installed
package, replacing each file whole (a process that has the old library
loaded keeps it). A fresh Python sees the change; nothing is reinstalled.

It must run in the Python the package is installed in (the one that runs
its tests): the installed package is found on this Python's ``sys.path``
without importing it. It refuses a package imported from the project's own
source tree (the built files would land among the sources and then in the
wheel twice) and a folder that holds no begen-built library (a wrong
``destination``). ``BEGEN_BIN``, ``XLA_FFI_INCLUDE_DIR`` and
``BEGEN_PYTHON`` are read as by the hook.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Any

from begen import hatch

_HELP = """\
Rebuild a kernel package's kernels into its installed copy, after an edit.

The package (a project whose pyproject.toml uses begen's hatch hook, as
`begen new` makes) is installed once into this Python:
  pip install .                      # or pip wheel + pip install, as its README says
Then, after each kernel edit:
  python -m begen develop            # in the project folder (or give its path)
  pytest tests                       # a fresh Python runs the new kernels

It runs the hook's own `begen build`, in the hook's build directory
(`build-dir`, default .hatch/begen), so the wheel build and develop share
their compiled objects: a run with no change compiles nothing (begen's
report says "0 TUs compiled"). The outputs replace the installed package's
lib<NAME>.so, <NAME>.py, <NAME>.pyi, <NAME>.yaml (and <NAME>.tune.json),
found on this Python's sys.path. Run it with the Python the package is
installed in (python -m, not another environment's). The package's Python
files are not copied: reinstall (pip install .) after editing them, or when
pyproject.toml changes.
"""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m begen develop",
        description=_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "project",
        nargs="?",
        default=".",
        help="the project folder, with pyproject.toml (default: the current folder)",
    )
    args = parser.parse_args(argv)
    try:
        develop(Path(args.project))
    except (ValueError, RuntimeError) as e:
        print(f"error: {str(e).removeprefix('begen hook: ')}", file=sys.stderr)
        return 1
    return 0


def develop(project: Path, say: Any = None) -> Path:
    """Builds ``project``'s kernels as its wheel's hook does and copies the
    outputs into the installed package. Returns the folder written to."""
    say = say or (lambda message: print(message, file=sys.stderr))
    root = project.resolve()
    config, sources = _hook_config(root / "pyproject.toml")
    hatch._check_ours()
    settings = hatch.read_settings(config)
    kernels = root / settings["kernels"]
    if not kernels.is_dir():
        raise ValueError(
            f"`kernels` is {settings['kernels']!r} ({root / 'pyproject.toml'}), and {kernels} is not a directory"
        )
    name, _ = hatch._library_names(settings["name"], kernels, settings["destination"])
    # Where the package is installed, before anything is built: a wrong
    # place is refused without compiling.
    place = _installed_folder(settings["destination"], name, root)
    name, out, _cmd, _env, _jaxlib = hatch.build_kernels(root, settings, sources, say)
    shipped = hatch.outputs(out, name, settings["targets"])
    for file in shipped:
        tmp = place / f".{file}.begen-develop"
        tmp.write_bytes((out / file).read_bytes())
        tmp.replace(place / file)
    say(f"begen develop: {', '.join(shipped)} -> {place}")
    return place


def _hook_config(pyproject: Path) -> tuple[dict[str, Any], list[str]]:
    """The hook's table of ``pyproject`` and the folders its wheel takes
    files from (``packages``, ``only-include``, ``sources``)."""
    if not pyproject.is_file():
        raise ValueError(
            f"{pyproject} does not exist: give the folder of a kernel package (one with a pyproject.toml whose "
            "[tool.hatch.build.targets.wheel.hooks.begen] table builds its kernels; `begen new` makes one)"
        )
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError as e:
            raise RuntimeError(f"reading {pyproject} needs Python 3.11 or the `tomli` package") from e
    try:
        data = tomllib.loads(pyproject.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ValueError(f"{pyproject}: {e}") from e
    wheel = data.get("tool", {}).get("hatch", {}).get("build", {}).get("targets", {}).get("wheel", {})
    hook = wheel.get("hooks", {}).get("begen") if isinstance(wheel, dict) else None
    config = hook if isinstance(hook, dict) else None
    if config is None:
        raise ValueError(
            f"{pyproject} has no [tool.hatch.build.targets.wheel.hooks.begen] table: its wheel is not built by "
            "begen's hook, so there is nothing for `develop` to rebuild (see begen's docs/shipping.md)"
        )
    sources = [str(p) for key in ("packages", "only-include") for p in (wheel.get(key) or [])]
    sources += [str(s) for s in (wheel.get("sources") or {}) if s]
    return config, sources


def _installed_folder(destination: str, name: str, root: Path) -> Path:
    """The folder this Python imports the library's module from: the
    installed package ``destination`` (``mypkg``, ``mypkg/_aot``), or for
    an empty destination the folder of the top-level module ``name``. The
    package is located, not imported (importing it would load the library
    being replaced)."""
    parts = destination.split("/") if destination else [name]
    module = ".".join(parts)
    spec = importlib.util.find_spec(parts[0]) if parts[0] else None
    if spec is None or not (spec.submodule_search_locations or spec.origin):
        raise ValueError(
            f"`{parts[0]}` is not installed in this Python ({sys.executable}): install the package once "
            f"(`{Path(sys.executable).name} -m pip install {root}`), then run `python -m begen develop` after "
            "each kernel edit"
        )
    if spec.submodule_search_locations:
        place = Path(next(iter(spec.submodule_search_locations))).joinpath(*parts[1:])
    else:
        place = Path(spec.origin).parent
    place = place.resolve()
    if place == root or root in place.parents:
        raise ValueError(
            f"`{module}` is imported from the project's own folder ({place}), not from an installed copy: "
            f"`develop` would put the built library among the sources, and the wheel would then hold it twice. "
            f"Install the package (`pip install {root}`) and run this where that install is imported (not with "
            "the source folder on PYTHONPATH)"
        )
    if not (place / f"lib{name}.so").is_file():
        raise ValueError(
            f"{place} (where this Python imports `{module}` from) has no lib{name}.so: it is not an install of "
            f"this project's wheel. Install the wheel once (`pip install {root}`), then run `develop` after edits"
        )
    return place
