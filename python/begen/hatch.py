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
    platform = "cpu"           # cpu | cuda | auto (default: begen.yaml's, else auto)
    arch = ["sm_80", "sm_90"]  # CUDA architectures (default: begen's rules)
    include-dirs = []          # extra -I directories, relative to the project
    jax-min = "0.10.2"         # the oldest jax to load on (default: begen.yaml's, else the running jaxlib)
    build-dir = "build/begen"  # begen's outputs (out/) and work files (work/), kept: rebuilds are incremental

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
  with: begen, the XLA FFI API version, jaxlib, the platform, and for CUDA
  nvcc and the architectures asked for.

``BEGEN_BIN`` picks another ``begen`` program; ``XLA_FFI_INCLUDE_DIR``,
``BEGEN_PYTHON``, ``NVCC``, ``CUDA_PATH`` and ``BEGEN_CUDA_ARCH`` are read
by begen as on the command line.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface
from hatchling.plugin import hookimpl

from begen import _wheel_tag

_KEYS = {"kernels", "destination", "name", "platform", "arch", "include-dirs", "build-dir", "jax-min"}
_RELEASE = re.compile(r"[0-9]{1,6}(\.[0-9]{1,6}){0,3}\Z")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_PROGRAM_VERSION = re.compile(r"begen \d+\.\d+\.\d+\S*\Z")


class BegenBuildHook(BuildHookInterface):
    """Builds the kernels with ``begen build`` and adds the outputs to the wheel."""

    PLUGIN_NAME = "begen"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        _check_ours()
        if version == "editable":
            raise RuntimeError(
                "begen hook: editable installs (`pip install -e`) are not supported: an editable install imports "
                "the package from the source tree, where the kernels' built library is not. Build and install "
                "the wheel instead (`pip install .`), or build the kernels into the source package yourself "
                "(`begen build KERNELS --out src/PACKAGE`) and install without the hook."
            )
        settings = self._settings()
        root = Path(self.root)
        kernels = root / settings["kernels"]
        if not kernels.is_dir():
            raise ValueError(f"begen hook: `kernels` is {settings['kernels']!r}, and {kernels} is not a directory")
        name = settings["name"] or _library_name(kernels)
        build_dir = root / settings["build-dir"]
        # The four outputs alone in out/; begen's work files in work/.
        out = build_dir / "out"

        env = dict(os.environ)
        include, jaxlib = _xla_ffi_headers(env)
        env["XLA_FFI_INCLUDE_DIR"] = include
        program = _begen_program()
        _check_program(program)
        cmd = [program, "build", str(kernels), "--out", str(out), "--name", name]
        cmd += ["--work-dir", str(build_dir / "work")]
        if settings["platform"]:
            cmd += ["--platform", settings["platform"]]
        if settings["arch"]:
            cmd += ["--arch", ",".join(settings["arch"])]
        for folder in settings["include-dirs"]:
            cmd += ["-I", str(root / folder)]
        if settings["jax-min"]:
            cmd += ["--jax-min", settings["jax-min"]]
            jaxlib = settings["jax-min"]
        self.app.display_info(f"begen hook: {' '.join(cmd)}")
        if subprocess.run(cmd, env=env, cwd=root).returncode != 0:
            raise RuntimeError(f"begen hook: `begen build` failed for {kernels} (its messages are above)")

        manifest = _read_manifest(out / f"{name}.yaml")
        dest = settings["destination"]
        for file in (f"lib{name}.so", f"{name}.py", f"{name}.pyi", f"{name}.yaml"):
            build_data["force_include"][str(out / file)] = f"{dest}/{file}" if dest else file
        build_data["pure_python"] = False
        tag, why = _wheel_tag.platform_tag(out / f"lib{name}.so", _platform_tag())
        self.app.display_info(f"begen hook: platform tag {tag} ({why})")
        build_data["tag"] = f"py3-none-{tag}"
        if jaxlib:
            build_data["dependencies"] += [f"jax>={jaxlib}", f"jaxlib>={jaxlib}"]
        else:
            self.app.display_warning(
                "begen hook: the jaxlib of the XLA FFI headers is unknown (XLA_FFI_INCLUDE_DIR is not inside an "
                "installed jaxlib); the wheel requires only `jax`: declare the floor in `project.dependencies`"
            )
            build_data["dependencies"] += ["jax"]

        record = {
            "begen": _begen_version(cmd[0]),
            "library": f"lib{name}.so",
            "module": f"{dest.replace('/', '.')}.{name}" if dest else name,
            "platform": manifest.get("platform", "unknown"),
            "xla_ffi_api_version": manifest.get("xla_ffi_api_version"),
            "jaxlib": jaxlib,
            "platform_tag": tag,
        }
        if record["platform"] == "cuda":
            record["cuda"] = _cuda_record(cmd[0], settings["arch"], env)
        info = build_dir / "begen.json"
        info.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
        build_data["extra_metadata"][str(info)] = "begen.json"

    def clean(self, versions: list[str]) -> None:
        shutil.rmtree(Path(self.root) / self._settings()["build-dir"], ignore_errors=True)

    def _settings(self) -> dict[str, Any]:
        config = dict(self.config)
        config.pop("dependencies", None)
        config.pop("require-runtime-dependencies", None)
        config.pop("require-runtime-features", None)
        config.pop("enable-by-default", None)
        unknown = sorted(set(config) - _KEYS)
        if unknown:
            raise ValueError(f"begen hook: unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(_KEYS))}")
        settings: dict[str, Any] = {
            "kernels": str(config.get("kernels", "kernels")),
            "destination": _destination(config.get("destination", "")),
            "name": config.get("name"),
            "platform": config.get("platform"),
            "arch": config.get("arch", []),
            "include-dirs": config.get("include-dirs", []),
            "build-dir": _build_dir(config.get("build-dir", "build/begen"), str(config.get("kernels", "kernels"))),
            "jax-min": config.get("jax-min"),
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


@hookimpl
def hatch_register_build_hook():
    return BegenBuildHook


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


def _build_dir(value: Any, kernels: str) -> str:
    """The folder of begen's outputs and work files: relative, inside the
    project and holding no source of it, because ``hatch clean`` removes it
    whole (``"."`` would remove the project)."""
    text = str(value).replace("\\", "/").rstrip("/")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    kernel_parts = [p for p in kernels.replace("\\", "/").split("/") if p not in ("", ".")]
    if text.startswith("/") or not parts or ".." in parts or kernel_parts[: len(parts)] == parts:
        raise ValueError(
            f"begen hook: `build-dir` {value!r} is not a folder of its own inside the project: `hatch clean` "
            "removes it whole, so it must be a relative path below the project's root (no `..`, not the root "
            f"itself) that does not hold the kernels ({kernels!r}); e.g. 'build/begen'"
        )
    return "/".join(parts)


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


def _library_name(kernels: Path) -> str:
    """begen.yaml's top-level ``name:``, else the directory's name: what
    ``begen build`` would pick, made explicit so the hook knows the files."""
    config = kernels / "begen.yaml"
    if config.is_file():
        for line in config.read_text().splitlines():
            m = re.match(r"name:\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)['\"]?\s*(#.*)?$", line)
            if m:
                return m.group(1)
    return kernels.resolve().name


def _xla_ffi_headers(env: dict[str, str]) -> tuple[str, str | None]:
    """The XLA FFI include directory begen will build against, and the
    version of the jaxlib it belongs to (None when unknown)."""
    include = env.get("XLA_FFI_INCLUDE_DIR")
    if include:
        return include, _jaxlib_beside(Path(include))
    python = env.get("BEGEN_PYTHON") or sys.executable
    probe = "import importlib.metadata as m, jax.ffi; print(jax.ffi.include_dir()); print(m.version('jaxlib'))"
    got = subprocess.run([python, "-c", probe], capture_output=True, text=True, env=env)
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


def _platform_tag() -> str:
    # The platform the library was compiled for, as pip and installers name
    # it (linux_x86_64): the tag when no manylinux one holds.
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _begen_version(program: str) -> str:
    got = subprocess.run([program, "--version"], capture_output=True, text=True)
    return got.stdout.strip().removeprefix("begen ").strip() or "unknown"


def _cuda_record(program: str, arch: list[str], env: dict[str, str]) -> dict[str, Any]:
    """The nvcc that compiled the CUDA sources (begen resolves it the same
    way for `doctor` and `build`) and the architectures the hook asked for
    (empty: begen's own rules, BEGEN_CUDA_ARCH then begen.yaml's `cuda.arch`)."""
    got = subprocess.run([program, "doctor"], capture_output=True, text=True, env=env)
    nvcc = next((line.split(":", 1)[1].strip() for line in got.stdout.splitlines() if line.startswith("nvcc:")), None)
    return {"nvcc": nvcc, "architectures_requested": list(arch)}
