"""A hatchling build hook: a project's ``// @BE`` kernels, built by begen, in
its wheel.

In the project's ``pyproject.toml``::

    [build-system]
    requires = ["hatchling", "begen-jax", "jax"]   # begen-jax: begen on PyPI; jax: its jaxlib has the XLA FFI headers
    build-backend = "hatchling.build"

    [tool.hatch.build.targets.wheel.hooks.begen]
    kernels = "kernels"        # the kernel directory, relative to the project
    destination = "mypkg"      # where the outputs go in the wheel (a package folder inside it)
    name = "_kernels"          # the library: lib_kernels.so, _kernels.py (import mypkg._kernels)
                               # (default: begen.yaml's `name`; when both are set they must agree)
    platform = "cpu"           # cpu | cuda | auto (default: begen.yaml's, else auto)
    arch = ["sm_80", "sm_90"]  # CUDA architectures (default: begen's rules)
    include-dirs = []          # extra -I directories, relative to the project
    jax-min = "0.10.2"         # the oldest jax to load on (default: begen.yaml's, else the running jaxlib)
    build-dir = ".hatch/begen" # begen's outputs (out/) and work files (work/), kept: rebuilds are incremental
    glibc-floor = "2.28"       # warn when the library needs a newer glibc (manylinux level) than this
    targets = ["jax", "torch"] # the bindings built and shipped (default: begen.yaml's `targets:`); torch: requires
                               # torch; ["torch"] alone builds with no jax (requires: hatchling, begen-jax, torch)

The kernels' FFI targets are named after the module's import path
(``mypkg._kernels.<function>``) unless begen.yaml sets ``prefix:``, so two
packages built from the same template load together.

The build directory is begen's own: the hook creates it with a marker file
(``.begen-build-dir``, which lists the files begen wrote there) and refuses
a folder that exists without one; ``hatch clean`` removes only the files
the marker lists. hatchling leaves folders named ``.hatch`` out of every
sdist and wheel, hence the default; another ``build-dir`` must be excluded
from sdists (``.gitignore`` or ``[tool.hatch.build.targets.sdist] exclude``).

Editable installs (``pip install -e``) are refused: an editable install
takes the package from the source tree, where the built library is not.

When hatchling builds the wheel, the hook runs the installed ``begen build``
and puts ``lib<name>.so``, ``<name>.py``, ``<name>.pyi`` and the manifest
``<name>.yaml`` into ``destination``. The wheel is then a platform wheel:

- tagged ``py3-none-<platform>``: the library is native code for this
  platform, and the module loads it with ctypes, so it depends on no Python
  ABI. The platform is ``manylinux_2_Y_x86_64`` when that holds for what the
  library links (computed from its ELF symbol versions: the glibc and
  libstdc++ it needs), else ``linux_<arch>``;
- it requires ``jaxlib>=V`` and ``jax>=V``, V being the jaxlib whose XLA FFI
  headers compiled it: ``jax-min`` when set (begen fetches that jaxlib's
  headers), else the running one (XLA accepts handlers built against its own
  FFI API version and older ones, not newer ones);
- its ``.dist-info/extra_metadata/begen.json`` records what it was built
  with: begen, the XLA FFI API version, jaxlib, the platform, the FFI
  target prefix, the glibc the library needs, and for CUDA nvcc and the
  architectures asked for.

``BEGEN_BIN`` picks another ``begen`` program; ``XLA_FFI_INCLUDE_DIR``,
``BEGEN_PYTHON``, ``NVCC``, ``CUDA_PATH`` and ``BEGEN_CUDA_ARCH`` are read
by begen as on the command line.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

try:
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
    from hatchling.plugin import hookimpl
except ImportError:
    # `python -m begen develop` (begen.develop) uses this module's settings
    # and build steps in an environment that need not have hatchling.
    BuildHookInterface = object

    def hookimpl(f):
        return f


from begen import _wheel_tag

_KEYS = {
    "kernels",
    "destination",
    "name",
    "platform",
    "arch",
    "include-dirs",
    "build-dir",
    "jax-min",
    "glibc-floor",
    "targets",
}
# The binding targets the hook builds (begen.yaml's `targets:` names), and
# the torch release the torch target's stable-ABI library is built for
# (`FLOOR` in begen's src/target/torch/mod.rs; a test keeps them equal).
_TARGETS = ("jax", "torch")
TORCH_FLOOR = "2.11"
# A CUDA major in a version's local label or a distribution name: `cu13`.
_CUDA_LABEL = re.compile(r"(?:^|[.+_-])cu([0-9]{2,3})(?=$|[.+_-])")
_RELEASE = re.compile(r"[0-9]{1,6}(\.[0-9]{1,6}){0,3}\Z")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_PROGRAM_VERSION = re.compile(r"begen \d+\.\d+\.\d+\S*\Z")
_GLIBC_FLOOR = re.compile(r"(?:manylinux_)?2[._]([0-9]{1,3})\Z")
_DEFAULT_BUILD_DIR = ".hatch/begen"
# The file that makes a folder begen's build directory: written when the
# hook creates the folder, it lists the files begen wrote there since.
MARKER = ".begen-build-dir"
_MARKER_KIND = "begen hatch build directory"
# Folders a build directory may never be in or be: version control's.
_VCS = {".git", ".hg", ".svn", ".bzr"}


class BegenBuildHook(BuildHookInterface):
    """Builds the kernels with ``begen build`` and adds the outputs to the wheel."""

    PLUGIN_NAME = "begen"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        try:
            self._initialize(version, build_data)
        except (ValueError, RuntimeError) as e:
            _abort(self.app, e)

    def clean(self, versions: list[str]) -> None:
        try:
            settings = self._settings()
            root = Path(self.root)
            build_dir = _checked_build_dir(root, settings["build-dir"], settings["kernels"], self._sources())
        except (ValueError, RuntimeError) as e:
            _abort(self.app, e)
            return
        left = clean_build_dir(build_dir)
        if left:
            shown = ", ".join(left[:5]) + (f" and {len(left) - 5} more" if len(left) > 5 else "")
            self.app.display_warning(
                f"begen hook: kept {len(left)} file(s) in {build_dir} that begen did not write: {shown}"
            )

    def _initialize(self, version: str, build_data: dict[str, Any]) -> None:
        _check_ours()
        if version == "editable":
            raise RuntimeError(
                "begen hook: editable installs (`pip install -e`) are not supported: an editable install imports "
                "the package from the source tree, where the kernels' built library is not. Build and install "
                "the wheel instead (`pip install .`), or build the kernels into the source package yourself "
                "(`begen build KERNELS --out src/PACKAGE --name NAME --prefix PACKAGE.NAME`) and install without "
                "the hook."
            )
        settings = self._settings()
        root = Path(self.root)
        _check_out_of_sdist(root, settings["build-dir"], self.config.get("build-dir") is not None)
        name, out, cmd, env, jaxlib = build_kernels(root, settings, self._sources(), self.app.display_info)
        prefix = _library_names(settings["name"], root / settings["kernels"], settings["destination"])[1]
        build_dir = out.parent

        dest = settings["destination"]
        targets = settings["targets"]
        shipped = outputs(out, name, targets)
        with_torch = torch_outputs(name)[0] in shipped
        with_jax = targets is None or "jax" in targets
        manifest = _read_manifest(out / f"{name}.yaml") if with_jax else _torch_manifest(out / torch_outputs(name)[1])
        for file in shipped:
            build_data["force_include"][str(out / file)] = f"{dest}/{file}" if dest else file
        build_data["pure_python"] = False
        libraries = [out / f for f in shipped if f.endswith(".so")]
        tag, why = _platform_tag_of(libraries)
        self.app.display_info(f"begen hook: platform tag {tag} ({why})")
        build_data["tag"] = f"py3-none-{tag}"
        glibc = None
        for library in libraries:
            glibc = _newer_glibc(glibc, _report_glibc(self.app, library, settings["glibc-floor"]))
        is_cuda = manifest.get("platform") == "cuda"
        cuda = _cuda_record(cmd[0], settings["arch"], env) if is_cuda else None
        if with_torch:
            build_data["dependencies"] += [f"torch>={TORCH_FLOOR}"]
            if cuda is not None:
                metadata = self.metadata
                _check_cuda_label(metadata.name, metadata.version, cuda.get("nvcc"))
        if with_jax and jaxlib:
            build_data["dependencies"] += [f"jax>={jaxlib}", f"jaxlib>={jaxlib}"]
        elif with_jax:
            self.app.display_warning(
                "begen hook: the jaxlib of the XLA FFI headers is unknown (XLA_FFI_INCLUDE_DIR is not inside an "
                "installed jaxlib); the wheel requires only `jax`: declare the floor in `project.dependencies`"
            )
            build_data["dependencies"] += ["jax"]

        record = {
            "begen": _begen_version(cmd[0]),
            "library": libraries[0].name,
            "module": _import_path(dest, name),
            "prefix": manifest.get("target_prefix") or prefix or name,
            "platform": manifest.get("platform", "unknown"),
            "xla_ffi_api_version": manifest.get("xla_ffi_api_version"),
            "jaxlib": jaxlib,
            "platform_tag": tag,
            "glibc": glibc,
        }
        if cuda is not None:
            record["cuda"] = cuda
        record["targets"] = [t for t, on in (("jax", with_jax), ("torch", with_torch)) if on]
        if with_torch:
            record["torch"] = f">={TORCH_FLOOR}"
        info = build_dir / "begen.json"
        with _recording(build_dir):
            info.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
        build_data["extra_metadata"][str(info)] = "begen.json"

    def _sources(self) -> list[str]:
        """The project folders the wheel takes files from (hatchling's
        ``packages``, ``only-include`` and ``sources``), relative to the
        root: a build directory may be neither in nor around one."""
        config = getattr(self, "build_config", None)
        found: list[str] = []
        for attr in ("packages", "only_include"):
            found += [str(p) for p in (getattr(config, attr, None) or [])]
        sources = getattr(config, "sources", None) or {}
        found += [str(s) for s in sources if s]
        return found

    def _settings(self) -> dict[str, Any]:
        return read_settings(self.config)


@hookimpl
def hatch_register_build_hook():
    return BegenBuildHook


def read_settings(hook_config: dict[str, Any]) -> dict[str, Any]:
    """The hook's settings (``[tool.hatch.build.targets.wheel.hooks.begen]``),
    checked, with their defaults."""
    config = dict(hook_config)
    config.pop("dependencies", None)
    config.pop("require-runtime-dependencies", None)
    config.pop("require-runtime-features", None)
    config.pop("enable-by-default", None)
    unknown = sorted(set(config) - _KEYS)
    if unknown:
        raise ValueError(f"begen hook: unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(_KEYS))}")
    for key in ("kernels", "destination", "build-dir", "name", "platform", "jax-min"):
        if key in config and not isinstance(config[key], str):
            raise ValueError(f"begen hook: `{key}` {config[key]!r} is not a string")
    for key in ("arch", "include-dirs", "targets"):
        listed = config.get(key, [])
        if isinstance(listed, str) and key == "arch":
            continue
        if not isinstance(listed, list) or not all(isinstance(v, str) and v for v in listed):
            raise ValueError(f"begen hook: `{key}` {listed!r} is not a list of names (strings)")
    settings: dict[str, Any] = {
        "kernels": str(config.get("kernels", "kernels")),
        "destination": _destination(config.get("destination", "")),
        "name": config.get("name"),
        "platform": config.get("platform"),
        "arch": config.get("arch", []),
        "include-dirs": config.get("include-dirs", []),
        "build-dir": _build_dir(config.get("build-dir", _DEFAULT_BUILD_DIR), str(config.get("kernels", "kernels"))),
        "jax-min": config.get("jax-min"),
        "glibc-floor": _glibc_floor(config.get("glibc-floor", "2.28")),
        "targets": _targets(config["targets"]) if "targets" in config else None,
    }
    if settings["jax-min"] is not None and not _RELEASE.match(str(settings["jax-min"])):
        raise ValueError(f"begen hook: `jax-min` {settings['jax-min']!r} is not a jax release number (like 0.10.2)")
    if isinstance(settings["arch"], str):
        settings["arch"] = [a for a in settings["arch"].split(",") if a]
    if settings["name"] is not None and not _IDENTIFIER.match(str(settings["name"])):
        raise ValueError(f"begen hook: `name` {settings['name']!r} is not a Python identifier")
    if settings["platform"] not in (None, "cpu", "cuda", "auto"):
        raise ValueError(f"begen hook: `platform` {settings['platform']!r} is not one of cpu, cuda, auto")
    return settings


def build_kernels(
    root: Path, settings: dict[str, Any], sources: list[str], say: Any
) -> tuple[str, Path, list[str], dict[str, str], str | None]:
    """Runs ``begen build`` for the project at ``root`` with the hook's
    ``settings`` (:func:`read_settings`) into its build directory: the
    outputs in ``out/``, begen's work files in ``work/`` (kept, so a rebuild
    compiles only what changed). The wheel build and ``python -m begen
    develop`` both build this way, with the same command, so each reuses
    what the other compiled. Returns the library's name, ``out/``, the
    command, its environment and the jaxlib of the XLA FFI headers."""
    kernels = root / settings["kernels"]
    if not _is_dir(kernels):
        raise ValueError(f"begen hook: `kernels` is {settings['kernels']!r}, and {kernels} is not a directory")
    name, prefix = _library_names(settings["name"], kernels, settings["destination"])
    build_dir = _checked_build_dir(root, settings["build-dir"], settings["kernels"], sources)
    out = build_dir / "out"

    env = dict(os.environ)
    targets = settings["targets"]
    # A torch-alone build compiles against torch's headers only: no jax,
    # no XLA FFI headers.
    with_jax = targets is None or "jax" in targets
    jaxlib = None
    if with_jax:
        include, jaxlib = _xla_ffi_headers(env)
        env["XLA_FFI_INCLUDE_DIR"] = include
    program = _begen_program()
    _check_program(program)
    cmd = [program, "build", str(kernels), "--out", str(out), "--name", name]
    if prefix:
        cmd += ["--prefix", prefix]
    cmd += ["--work-dir", str(build_dir / "work")]
    if settings["platform"]:
        cmd += ["--platform", settings["platform"]]
    if settings["arch"]:
        cmd += ["--arch", ",".join(settings["arch"])]
    for folder in settings["include-dirs"]:
        cmd += ["-I", str(root / folder)]
    if settings["jax-min"] and with_jax:
        cmd += ["--jax-min", settings["jax-min"]]
        jaxlib = settings["jax-min"]
    if targets is not None:
        cmd += ["--target", ",".join(targets)]
    # The torch target's BEGEN_TORCH_PYTHON defaults to the build's own
    # Python, where [build-system] requires puts torch.
    env.setdefault("BEGEN_TORCH_PYTHON", env.get("BEGEN_PYTHON") or sys.executable)
    # An earlier build's torch outputs would otherwise look built when
    # this one (begen.yaml's `targets:` changed) leaves torch out.
    for file in torch_outputs(name):
        if (out / file).is_file():
            (out / file).unlink()
    say(f"begen hook: {' '.join(cmd)}")
    with _recording(build_dir):
        built = subprocess.run(cmd, check=False, env=env, cwd=root).returncode == 0
    if not built:
        raise RuntimeError(f"begen hook: `begen build` failed for {kernels} (its messages are above)")
    return name, out, cmd, env, jaxlib


def torch_outputs(name: str) -> tuple[str, str, str]:
    """The torch target's three files."""
    return (f"lib{name}_torch.so", f"{name}_torch.py", f"{name}_torch.pyi")


def outputs(out: Path, name: str, targets: list[str] | None = None) -> list[str]:
    """The files of ``out/`` that go into the package, for the hook's
    ``targets`` (None: whatever was built): the jax target's library, its
    module, stub and manifest, and the tuning table when one was exported;
    the torch target's library, module and stub when it was built. A
    ``targets`` naming torch with no torch outputs in ``out/`` is an error."""
    with_torch = all((out / file).is_file() for file in torch_outputs(name))
    if targets is not None and "torch" in targets and not with_torch:
        raise RuntimeError(
            f"begen hook: `begen build` wrote no torch outputs ({', '.join(torch_outputs(name))}) in {out}"
        )
    shipped: list[str] = []
    if targets is None or "jax" in targets:
        shipped += [f"lib{name}.so", f"{name}.py", f"{name}.pyi", f"{name}.yaml"]
        shipped += [f"{name}.tune.json"] if (out / f"{name}.tune.json").is_file() else []
    if with_torch:
        shipped += list(torch_outputs(name))
    return shipped


def _abort(app: Any, error: Exception) -> None:
    """Stops the build with the hook's message alone: hatchling's
    ``app.abort`` prints it and exits, so pip shows one paragraph, not a
    traceback through hatchling. Without it (no hatchling app), raises."""
    abort = getattr(app, "abort", None)
    if str(error).startswith("begen hook:") and callable(abort):
        abort(f"\n{error}\n")
    raise error


def _check_ours() -> None:
    """Refuses to go on when the ``begen`` package this module came with is
    not begen-jax's: PyPI's ``begen`` is an unrelated project whose files
    are a top-level ``begen`` too."""
    import begen

    if getattr(begen, "DISTRIBUTION", None) != "begen-jax":
        raise RuntimeError(
            f"begen hook: the `begen` module at {getattr(begen, '__file__', '?')} is not begen-jax's (PyPI's "
            "`begen` is an unrelated project). Require `begen-jax` in [build-system] requires, not `begen`, "
            "and remove the other `begen` from this environment."
        )


def _check_program(program: str) -> None:
    """Refuses a ``begen`` program that is not begen-jax's (the other
    project's may install one of the same name)."""
    try:
        got = subprocess.run([program, "--version"], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RuntimeError(f"begen hook: the begen program {program} does not run: {e}") from e
    if got.returncode != 0 or not _PROGRAM_VERSION.match(got.stdout.strip()):
        raise RuntimeError(
            f"begen hook: {program} is not begen-jax's `begen` program (`--version` said "
            f"{(got.stdout or got.stderr).strip()[:200]!r}). Require `begen-jax` in [build-system] requires, "
            "or point BEGEN_BIN at begen."
        )


def _parts(path: str) -> list[str]:
    return [p for p in str(path).replace("\\", "/").split("/") if p not in ("", ".")]


def _nested(a: list[str], b: list[str]) -> bool:
    """One of two relative paths (as parts) is the other or holds it."""
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def _build_dir(value: Any, kernels: str) -> str:
    """The folder of begen's outputs and work files, as written: relative,
    below the project's root, not in version control's folder and neither
    in nor around the kernels (begen would scan its own outputs, and
    ``hatch clean`` would reach the sources)."""
    text = str(value).replace("\\", "/").rstrip("/")
    parts = _parts(text)
    if text.startswith("/") or not parts or ".." in parts or _nested(parts, _parts(kernels)) or _VCS & set(parts):
        raise ValueError(
            f"begen hook: `build-dir` {value!r} is not a folder of its own inside the project: it must be a "
            "relative path below the project's root (no `..`, not the root itself, not inside `.git`) that "
            f"neither holds nor is inside the kernels ({kernels!r}); e.g. {_DEFAULT_BUILD_DIR!r}"
        )
    return "/".join(parts)


def _is_dir(path: Path) -> bool:
    """Whether ``path`` is a folder; False also where it cannot be looked
    at (a name too long for the file system)."""
    try:
        return path.is_dir()
    except OSError:
        return False


def _checked_build_dir(root: Path, build_dir: str, kernels: str, sources: list[str]) -> Path:
    try:
        return _checked_build_dir_at(root, build_dir, kernels, sources)
    except OSError as e:
        raise ValueError(f"begen hook: `build-dir` {build_dir!r} cannot be used: {e}") from e


def _checked_build_dir_at(root: Path, build_dir: str, kernels: str, sources: list[str]) -> Path:
    """The build directory, once it is sure to be begen's: no symbolic link
    on the way to it (the folder must be where it is written), not a folder
    the wheel takes files from, and, when it exists, made by begen (holding
    the marker). Anything else is refused before anything is written."""
    parts = _parts(build_dir)
    for source in sources:
        if _nested(parts, _parts(source)):
            raise ValueError(
                f"begen hook: `build-dir` {build_dir!r} overlaps {source!r}, a folder the wheel takes files from: "
                f"begen's work files would go into the wheel, and `hatch clean` would reach the package's sources. "
                f"Choose a folder of its own, e.g. {_DEFAULT_BUILD_DIR!r}"
            )
    path = root
    for part in parts:
        path = path / part
        if path.is_symlink():
            raise ValueError(
                f"begen hook: `build-dir` {build_dir!r} goes through {path}, a symbolic link (to "
                f"{os.readlink(path)}): the build directory must be a real folder inside the project, which begen "
                "creates and `hatch clean` empties"
            )
    if path.exists() and not path.is_dir():
        raise ValueError(f"begen hook: `build-dir` {build_dir!r} is {path}, which is not a folder")
    if path.is_dir() and _read_marker(path) is None:
        raise ValueError(
            f"begen hook: `build-dir` {build_dir!r} is {path}, a folder begen did not create (it has no "
            f"{MARKER} file): begen writes and `hatch clean` removes its files there, so it must be begen's own. "
            f"Name a folder that does not exist yet (begen creates it), e.g. {_DEFAULT_BUILD_DIR!r}; a build "
            "directory of an older begen can be deleted by hand"
        )
    return path


def _read_marker(build_dir: Path) -> dict[str, Any] | None:
    """The marker's record, or None when the folder has no valid one."""
    marker = build_dir / MARKER
    if marker.is_symlink() or not marker.is_file():
        return None
    try:
        record = json.loads(marker.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("kind") != _MARKER_KIND or not isinstance(record.get("files"), list):
        return None
    return record


def _write_marker(build_dir: Path, files: set[str]) -> None:
    record = {
        "kind": _MARKER_KIND,
        "about": "Made by begen's hatchling build hook (begen.hatch). `hatch clean` removes the files listed "
        "here, which begen wrote, and no other.",
        "files": sorted(files),
    }
    tmp = build_dir / (MARKER + ".tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n")
    tmp.replace(build_dir / MARKER)


def _files(build_dir: Path) -> set[str]:
    """Every file and link under ``build_dir`` (relative, ``/``-separated),
    the marker aside; links are not followed."""
    found: set[str] = set()
    for folder, dirs, files in os.walk(build_dir):
        base = Path(folder)
        for name in files + [d for d in dirs if (base / d).is_symlink()]:
            rel = (base / name).relative_to(build_dir).as_posix()
            if rel not in (MARKER, MARKER + ".tmp"):
                found.add(rel)
    return found


class _recording:
    """Creates the build directory with its marker when it does not exist,
    and afterwards adds what was written meanwhile to the marker's list
    (also when the build failed): files that were there before and were not
    listed stay unlisted, so they are never begen's to remove."""

    def __init__(self, build_dir: Path):
        self.build_dir = build_dir

    def __enter__(self) -> None:
        if not self.build_dir.exists():
            self.build_dir.mkdir(parents=True)
            _write_marker(self.build_dir, set())
        record = _read_marker(self.build_dir)
        if record is None:
            raise ValueError(f"begen hook: {self.build_dir} has no valid {MARKER}: not begen's build directory")
        self.listed = set(record["files"])
        self.before = _files(self.build_dir)

    def __exit__(self, *exc: object) -> None:
        after = _files(self.build_dir)
        _write_marker(self.build_dir, (after - self.before) | (self.listed & after))


def clean_build_dir(build_dir: Path) -> list[str]:
    """Removes the files the marker of ``build_dir`` lists (which begen
    wrote), then the folders left empty, then the build directory with its
    marker once nothing else is in it. Returns the files kept (not
    begen's); a folder without a marker is not touched at all, and links
    are removed, never followed."""
    if not build_dir.is_dir() or build_dir.is_symlink():
        return []
    record = _read_marker(build_dir)
    if record is None:
        return sorted(_files(build_dir))
    for rel in record["files"]:
        path = build_dir / rel
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            continue
        through_link = any(p.is_symlink() for p in list(path.parents)[: len(Path(rel).parts) - 1])
        if (path.is_symlink() or path.is_file()) and not through_link:
            path.unlink()
    for folder, dirs, _ in os.walk(build_dir, topdown=False):
        for d in dirs:
            sub = Path(folder) / d
            if not sub.is_symlink() and sub.is_dir() and not any(sub.iterdir()):
                sub.rmdir()
    left = sorted(_files(build_dir))
    if left:
        _write_marker(build_dir, set())
        return left
    (build_dir / MARKER).unlink()
    build_dir.rmdir()
    return []


def _check_out_of_sdist(root: Path, build_dir: str, explicit: bool) -> None:
    """Refuses a ``build-dir`` that hatchling would put into the project's
    sdist (begen's objects and outputs are no source). The default is a
    folder hatchling leaves out of every target. Where hatchling's sdist
    configuration cannot be read (no hatchling), nothing is checked."""
    if not explicit:
        return
    parts = _parts(build_dir)
    try:
        from hatchling.builders.sdist import SdistBuilder

        config = SdistBuilder(str(root)).config
        parent = ""
        for part in parts:
            if config.directory_is_excluded(part, parent):
                return
            parent = f"{parent}/{part}" if parent else part
        if config.only_include:
            included = any(len(_parts(p)) <= len(parts) and _nested(parts, _parts(p)) for p in config.only_include)
        else:
            included = config.include_path(f"{build_dir}/{MARKER}")
    except Exception:  # no hatchling, or a configuration hatchling reports itself
        return
    if included:
        raise ValueError(
            f"begen hook: `build-dir` {build_dir!r} would go into the project's sdist with begen's objects and "
            f'outputs: exclude it (a `/{parts[0]}/` line in .gitignore, or `exclude = ["/{build_dir}"]` under '
            f"[tool.hatch.build.targets.sdist]), or leave `build-dir` unset: the default {_DEFAULT_BUILD_DIR!r} "
            "is a folder hatchling leaves out of every sdist"
        )


def _destination(value: Any) -> str:
    """The package folder the outputs go into, inside the wheel: folder names
    that are Python identifiers, separated by ``/`` (``mypkg``,
    ``mypkg/_aot``), or empty for the wheel's root."""
    text = str(value).rstrip("/")
    if str(value).startswith("/") or (text and not all(_IDENTIFIER.match(part) for part in text.split("/"))):
        raise ValueError(
            f"begen hook: `destination` {value!r} is not a package folder inside the wheel: write folder names "
            "that are Python identifiers, separated by `/` (e.g. 'mypkg' or 'mypkg/_aot'); no `..`, no "
            "absolute path"
        )
    return text


def _begen_program() -> str:
    if os.environ.get("BEGEN_BIN"):
        return os.environ["BEGEN_BIN"]
    from begen import find_begen_bin

    return find_begen_bin()


def _yaml_value(config: Path, key: str) -> str | None:
    """A top-level scalar of begen.yaml (``key: value``), or None."""
    if not config.is_file():
        return None
    for line in config.read_text().splitlines():
        m = re.match(rf"{key}:\s*['\"]?([A-Za-z0-9_.\-]+)['\"]?\s*(#.*)?$", line)
        if m:
            return m.group(1)
    return None


def _import_path(destination: str, name: str) -> str:
    return f"{destination.replace('/', '.')}.{name}" if destination else name


def _library_names(hook_name: str | None, kernels: Path, destination: str) -> tuple[str, str | None]:
    """The library's name and the FFI target prefix to pass (None: begen.yaml
    sets ``prefix:``, which begen reads itself). The name is the hook's
    ``name``, else begen.yaml's, else the kernel directory's; when the hook
    and begen.yaml both name it they must agree. The prefix is the module's
    import path (``mypkg._kernels``): two packages whose kernels share names
    register different FFI targets."""
    config = kernels / "begen.yaml"
    yaml_name = _yaml_value(config, "name")
    if hook_name and yaml_name and hook_name != yaml_name:
        raise ValueError(
            f"begen hook: the hook's `name` is {hook_name!r} (pyproject.toml, "
            f"[tool.hatch.build.targets.wheel.hooks.begen]) and begen.yaml's `name` is {yaml_name!r} ({config}): "
            "they name the same library; set one of the two, or make them agree"
        )
    name = hook_name or yaml_name or kernels.resolve().name
    if not _IDENTIFIER.match(name):
        raise ValueError(f"begen hook: the library name {name!r} is not a Python identifier; set the hook's `name`")
    prefix = None if _yaml_value(config, "prefix") else _import_path(destination, name)
    return name, prefix


def _glibc_floor(value: Any) -> int:
    """``glibc-floor``: ``"2.28"`` or ``"manylinux_2_28"``, as glibc's minor version."""
    m = _GLIBC_FLOOR.match(str(value))
    if not m:
        raise ValueError(
            f'begen hook: `glibc-floor` {value!r} is not a glibc version like "2.28" (or "manylinux_2_28")'
        )
    return int(m.group(1))


def _highest(names: set[str], prefix: str) -> str | None:
    """The highest symbol version of ``names`` that starts with ``prefix``
    (``GLIBC_``, ``GLIBCXX_``), compared as numbers."""
    found = [v for v in names if v.startswith(prefix) and re.match(r"\d+(\.\d+)*\Z", v[len(prefix) :])]
    return max(found, key=lambda v: [int(p) for p in v[len(prefix) :].split(".")], default=None)


def _report_glibc(app: Any, library: Path, floor: int) -> str | None:
    """Says which glibc the library needs (its highest ``GLIBC_2.x`` symbol
    version) and the manylinux level it loads on (glibc and the C++ runtime
    together), and warns when that level is above ``floor``: the wheel then
    does not install on systems as old as the floor. Returns the glibc."""
    _, needed, versions = _wheel_tag.read_needs(library)
    names = set().union(*versions.values()) if versions else set()
    glibc = _highest(names, "GLIBC_")
    level, _ = _wheel_tag.manylinux_level(needed, versions)
    shown = glibc.removeprefix("GLIBC_") if glibc else "(no versioned glibc symbol)"
    app.display_info(
        f"begen hook: {library.name} needs glibc {shown}"
        + (f"; it loads on manylinux_2_{level} and newer" if level is not None else "")
    )
    if level is not None and level > floor:
        needs = [v for v in (glibc, _highest(names, "GLIBCXX_")) if v]
        app.display_warning(
            f"begen hook: {library.name} needs manylinux_2_{level} ({' and '.join(needs)}), newer than the "
            f"floor glibc 2.{floor} (`glibc-floor`): the wheel will not install on older systems. Build on an "
            "older baseline (a manylinux_2_28 image, or zig's C++ as CXX): see begen's docs/shipping.md, "
            "'Portable kernel wheels'"
        )
    return glibc.removeprefix("GLIBC_") if glibc else None


def _xla_ffi_headers(env: dict[str, str]) -> tuple[str, str | None]:
    """The XLA FFI include directory begen will build against, and the
    version of the jaxlib it belongs to (None when unknown)."""
    include = env.get("XLA_FFI_INCLUDE_DIR")
    if include:
        return include, _jaxlib_beside(Path(include))
    python = env.get("BEGEN_PYTHON") or sys.executable
    probe = "import importlib.metadata as m, jax.ffi; print(jax.ffi.include_dir()); print(m.version('jaxlib'))"
    got = subprocess.run([python, "-c", probe], check=False, capture_output=True, text=True, env=env)
    if got.returncode != 0:
        raise RuntimeError(
            f"begen hook: {python} cannot import jax.ffi, whose jaxlib has the XLA FFI headers begen compiles "
            "against. Add `jax` to [build-system] requires (or install it, with --no-build-isolation), or set "
            f"XLA_FFI_INCLUDE_DIR.\n{got.stderr.strip()}"
        )
    include, version = got.stdout.split()[-2:]
    return include, version


def _jaxlib_beside(include: Path) -> str | None:
    # .../site-packages/jaxlib/include -> .../site-packages/jaxlib-V.dist-info
    site = include.resolve().parent.parent
    for info in sorted(site.glob("jaxlib-*.dist-info")):
        for line in (info / "METADATA").read_text(errors="replace").splitlines():
            if line.startswith("Version:"):
                return line.split(":", 1)[1].strip()
    return None


def _read_manifest(path: Path) -> dict[str, str]:
    """The top-level scalar fields of begen's manifest (plain ``key: value``
    lines; the lists below them are not needed here)."""
    fields: dict[str, str] = {}
    for line in path.read_text().splitlines():
        m = re.match(r"([a-z_]+):\s+(.+)$", line)
        if m:
            fields[m.group(1)] = m.group(2).strip().strip("'\"")
    return fields


def _torch_manifest(module: Path) -> dict[str, str]:
    """What a torch-alone build has of the manifest's fields (it writes no
    manifest): the platform, ``cuda`` when the torch module's op table
    (``_begen_ops``, one ``"platform": ...`` line per op) names a CUDA op."""
    cuda = re.search(r'^\s+"platform": "cuda",$', module.read_text(), re.MULTILINE)
    return {"platform": "cuda" if cuda else "cpu"}


def _platform_tag() -> str:
    # The platform the library was compiled for, as pip and installers name
    # it (linux_x86_64): the tag when no manylinux one holds.
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _begen_version(program: str) -> str:
    got = subprocess.run([program, "--version"], check=False, capture_output=True, text=True)
    return got.stdout.strip().removeprefix("begen ").strip() or "unknown"


def _cuda_record(program: str, arch: list[str], env: dict[str, str]) -> dict[str, Any]:
    """The nvcc that compiled the CUDA sources (begen resolves it the same
    way for `doctor` and `build`) and the architectures the hook asked for
    (empty: begen's own rules, BEGEN_CUDA_ARCH then begen.yaml's `cuda.arch`)."""
    got = subprocess.run([program, "doctor"], check=False, capture_output=True, text=True, env=env)
    nvcc = next((line.split(":", 1)[1].strip() for line in got.stdout.splitlines() if line.startswith("nvcc:")), None)
    return {"nvcc": nvcc, "architectures_requested": list(arch)}


def _targets(listed: list[str]) -> list[str]:
    """The `targets` setting: a non-empty list of begen's target names (an
    unknown one an error naming the closest)."""
    import difflib

    if not listed:
        raise ValueError(f"begen hook: `targets` is empty; name one or more of {', '.join(_TARGETS)}")
    for name in listed:
        if name not in _TARGETS:
            close = difflib.get_close_matches(name, _TARGETS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(
                f"begen hook: `targets`: unknown target {name!r}: the targets are {', '.join(_TARGETS)}{hint}"
            )
    return [t for t in _TARGETS if t in listed]


def _platform_tag_of(libraries: list[Path]) -> tuple[str, str]:
    """The platform tag that holds for every library the wheel ships: the
    highest manylinux level among them, or the plain tag when one has none."""
    best: tuple[int, str, str] | None = None
    for library in libraries:
        tag, why = _wheel_tag.platform_tag(library, _platform_tag())
        if not tag.startswith("manylinux_"):
            return tag, f"{library.name}: {why}"
        level = int(tag.split("_")[2])
        if best is None or level > best[0]:
            best = (level, tag, why)
    assert best is not None, "the wheel ships a library"
    return best[1], best[2]


def _newer_glibc(a: str | None, b: str | None) -> str | None:
    """The newer of two glibc versions ("2.34"), either possibly unknown."""
    known = [v for v in (a, b) if v]
    return max(known, key=lambda v: tuple(int(p) for p in v.split(".") if p.isdigit())) if known else None


def cuda_major(nvcc: str | None) -> str | None:
    """The CUDA major of begen doctor's nvcc line (`/usr/local/cuda/bin/nvcc
    (13.0, V13.0.48)`, the release nvcc --version names), if it has one."""
    m = re.search(r"\((?:release\s+)?([0-9]{1,3})\.[0-9]+", nvcc or "")
    return m.group(1) if m else None


def _check_cuda_label(name: str, version: str, nvcc: str | None) -> None:
    """Refuses a CUDA torch wheel whose name does not say its CUDA major:
    the version's local label (`1.0+cu13`) or the distribution's name
    (`mypkg-cu13`) must carry `cu<major>` of the nvcc that compiled it,
    so a user picks the wheel matching their torch's CUDA."""
    major = cuda_major(nvcc)
    if major is None:
        raise RuntimeError(
            f"begen hook: the CUDA version of nvcc ({nvcc or 'not found'}) is unknown, and a CUDA torch wheel "
            "names its CUDA major (see begen's docs/shipping.md, 'Torch wheels per CUDA major')"
        )
    local = version.split("+", 1)[1] if "+" in version else ""
    found = [m.group(1) for text in (local, name.lower()) for m in _CUDA_LABEL.finditer(text)]
    # cu13, or PyTorch's major and minor digits (cu130, cu128).
    if found and all(d == major or (len(d) == len(major) + 1 and d.startswith(major)) for d in found):
        return
    if found:
        raise RuntimeError(
            f"begen hook: the wheel {name} {version} says cu{', cu'.join(sorted(set(found)))} but nvcc is CUDA "
            f"{major}: torch's stable ABI holds within one CUDA major, so the label must be cu{major}"
        )
    raise RuntimeError(
        f"begen hook: {name} {version} is a CUDA torch wheel, and its name must say its CUDA major (cu{major}): "
        f'set `version = "{version}+cu{major}"` for an index of your own (as PyTorch\'s are), or name the '
        f"distribution `{name}-cu{major}` for PyPI (which refuses local versions); see begen's docs/shipping.md"
    )
