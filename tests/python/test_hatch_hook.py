"""begen's hatch hook driven as hatchling drives it (initialize, clean), with
a stand-in for hatchling's classes: the build directory is begen's own (a
folder that exists without begen's marker is refused, `hatch clean` removes
only the files begen wrote), the library's name and FFI target prefix, and
two packages whose kernels share names installed and used together.
scripts/wheel-check.sh runs the hook in a real isolated pip build."""

import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest
from conftest import REPO, begen_bin

sys.path.insert(0, str(REPO / "python"))

EXAMPLE = REPO / "examples" / "python-package"


@pytest.fixture()
def hatch(monkeypatch):
    """begen.hatch imported with a stand-in for hatchling's two names."""
    interface = types.ModuleType("hatchling.builders.hooks.plugin.interface")
    interface.BuildHookInterface = object
    plugin = types.ModuleType("hatchling.plugin")
    plugin.hookimpl = lambda f: f
    for name in ("hatchling", "hatchling.builders", "hatchling.builders.hooks", "hatchling.builders.hooks.plugin"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, interface.__name__, interface)
    monkeypatch.setitem(sys.modules, plugin.__name__, plugin)
    monkeypatch.delitem(sys.modules, "begen.hatch", raising=False)
    monkeypatch.setenv("BEGEN_BIN", str(begen_bin()))
    monkeypatch.setenv("BEGEN_PYTHON", os.environ.get("BEGEN_PYTHON") or sys.executable)
    return importlib.import_module("begen.hatch")


class App:
    """hatchling's Application, as far as the hook uses it."""

    def __init__(self):
        self.infos, self.warnings = [], []

    def display_info(self, message=""):
        self.infos.append(message)

    def display_warning(self, message=""):
        self.warnings.append(message)


def hook(hatch, root, packages=(), **config):
    h = hatch.BegenBuildHook()
    h.root, h.config, h.target_name, h.app = str(root), config, "wheel", App()
    h.build_config = types.SimpleNamespace(packages=list(packages), only_include=[], sources={})
    return h


def build_data():
    return {"force_include": {}, "dependencies": [], "extra_metadata": {}}


def project(root, package="vecops", yaml=None):
    """The example package copied to `root`, its package renamed `package`."""
    shutil.copytree(EXAMPLE / "kernels", root / "kernels")
    (root / "src" / package).mkdir(parents=True)
    init = (EXAMPLE / "src/vecops/__init__.py").read_text().replace("from vecops import", f"from {package} import")
    (root / "src" / package / "__init__.py").write_text(init)
    if yaml is not None:
        (root / "kernels/begen.yaml").write_text(yaml)
    return root


def tree(root):
    """Every file and link under root with its bytes (links: their target)."""
    found = {}
    for folder, dirs, files in os.walk(root):
        for name in files + [d for d in dirs if (Path(folder) / d).is_symlink()]:
            p = Path(folder) / name
            found[str(p.relative_to(root))] = os.readlink(p) if p.is_symlink() else p.read_bytes()
    return found


def with_user_folder(root, rel):
    folder = root / rel
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "notes.txt").write_text("the user's")


# Each class of build-dir that is not begen's own: how to set it up (under
# tmp_path: the project is tmp_path/p), and what the refusal says.
BAD_BUILD_DIRS = {
    "existing non-begen folder": ("docs", lambda p: with_user_folder(p, "docs"), "begen did not create"),
    "existing folder of an older begen": (
        "build/begen",
        lambda p: with_user_folder(p, "build/begen/work"),
        "begen did not create",
    ),
    ".git": (".git", lambda p: with_user_folder(p, ".git"), "not a folder of its own"),
    "inside .git": (".git/begen", lambda p: with_user_folder(p, ".git"), "not a folder of its own"),
    "package source dir": ("src/vecops", lambda p: None, "a folder the wheel takes files from"),
    "inside the package sources": ("src/vecops/_build", lambda p: None, "a folder the wheel takes files from"),
    "around the package sources": ("src", lambda p: None, "a folder the wheel takes files from"),
    "kernels subfolder": ("kernels/build", lambda p: with_user_folder(p, "kernels/build"), "not a folder of its own"),
    "the kernels": ("kernels", lambda p: None, "not a folder of its own"),
    "absolute path outside root": (None, lambda p: with_user_folder(p.parent, "elsewhere"), "not a folder of its own"),
    "..": ("../elsewhere", lambda p: with_user_folder(p.parent, "elsewhere"), "not a folder of its own"),
    "symlink to elsewhere": (
        "linked",
        lambda p: (with_user_folder(p.parent, "elsewhere"), (p / "linked").symlink_to(p.parent / "elsewhere")),
        "symbolic link",
    ),
    "through a symlinked parent": (
        "linked/begen",
        lambda p: (with_user_folder(p.parent, "elsewhere/begen"), (p / "linked").symlink_to(p.parent / "elsewhere")),
        "symbolic link",
    ),
    "the project root": (".", lambda p: None, "not a folder of its own"),
    "the project root, empty": ("", lambda p: None, "not a folder of its own"),
    "a file": ("README.md", lambda p: (p / "README.md").write_text("x"), "not a folder"),
}


@pytest.mark.parametrize("case", sorted(BAD_BUILD_DIRS))
def test_a_build_dir_that_is_not_begens_is_refused_and_never_removed(hatch, tmp_path, case):
    rel, setup, says = BAD_BUILD_DIRS[case]
    root = project(tmp_path / "p")
    setup(root)
    if rel is None:
        rel = str(tmp_path / "elsewhere")
    before = tree(tmp_path)
    h = hook(hatch, root, packages=["src/vecops"], **{"build-dir": rel})
    with pytest.raises(ValueError, match=says):
        h.initialize("standard", build_data())
    with pytest.raises(ValueError, match=says):
        h.clean(["standard"])
    assert tree(tmp_path) == before, "a refused build-dir was written to or removed"


def test_clean_removes_what_begen_wrote_and_keeps_the_rest(hatch, tmp_path, jax_cpu):
    root = project(tmp_path / "p")
    h = hook(hatch, root, packages=["src/vecops"], name="_kernels", destination="vecops")
    data = build_data()
    h.initialize("standard", data)
    build_dir = root / ".hatch/begen"
    marker = json.loads((build_dir / hatch.MARKER).read_text())
    assert "out/lib_kernels.so" in marker["files"] and "begen.json" in marker["files"], marker
    assert any(f.startswith("work/") for f in marker["files"]), marker
    assert sorted(data["force_include"].values()) == [
        "vecops/_kernels.py",
        "vecops/_kernels.pyi",
        "vecops/_kernels.yaml",
        "vecops/lib_kernels.so",
    ]
    assert any("needs glibc 2." in m for m in h.app.infos), h.app.infos
    record = json.loads((build_dir / "begen.json").read_text())
    assert record["prefix"] == "vecops._kernels" and record["glibc"].startswith("2."), record

    # A file of the user's in the build directory, before a rebuild: not
    # listed, so never begen's, though it sits among begen's files.
    (build_dir / "work/mine.txt").write_text("the user's")
    h.initialize("standard", build_data())
    assert "work/mine.txt" not in json.loads((build_dir / hatch.MARKER).read_text())["files"]
    (build_dir / "after.txt").write_text("the user's too")
    h.clean(["standard"])
    assert tree(build_dir).keys() == {hatch.MARKER, "work/mine.txt", "after.txt"}, tree(build_dir).keys()
    assert any("kept 2 file(s)" in w for w in h.app.warnings), h.app.warnings
    # Still begen's folder (the marker stays): a build goes on in it.
    (build_dir / "work/mine.txt").unlink()
    (build_dir / "after.txt").unlink()
    h.clean(["standard"])
    assert not build_dir.exists() and (root / ".hatch").is_dir()
    assert (root / "kernels/vecops.cpp").is_file() and (root / "src/vecops/__init__.py").is_file()


def test_clean_never_follows_a_link_begen_did_not_make(hatch, tmp_path):
    root = project(tmp_path / "p")
    build_dir = root / ".hatch/begen"
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere/precious.txt").write_text("keep")
    build_dir.mkdir(parents=True)
    hatch._write_marker(build_dir, {"out/lib.so", "work/x/precious.txt", "../../elsewhere/precious.txt"})
    (build_dir / "work").mkdir()
    (build_dir / "work/x").symlink_to(tmp_path / "elsewhere")
    assert hatch.clean_build_dir(build_dir) == ["work/x"]
    assert (tmp_path / "elsewhere/precious.txt").read_text() == "keep"


@pytest.mark.parametrize(
    ("yaml", "config", "says"),
    [
        ("name: snn\n", {"name": "_kernels"}, r"hook's `name` is '_kernels' .* begen.yaml's `name` is 'snn'"),
    ],
)
def test_names_that_disagree_are_an_error_naming_both(hatch, tmp_path, yaml, config, says):
    root = project(tmp_path / "p", yaml=yaml)
    with pytest.raises(ValueError, match=says):
        hook(hatch, root, destination="vecops", **config).initialize("standard", build_data())


def test_the_prefix_is_the_import_path_unless_begen_yaml_sets_one(hatch, tmp_path):
    kernels = project(tmp_path / "p")
    names = hatch._library_names
    assert names("_kernels", kernels / "kernels", "snnkit") == ("_kernels", "snnkit._kernels")
    assert names(None, kernels / "kernels", "a/b") == ("kernels", "a.b.kernels")
    (kernels / "kernels/begen.yaml").write_text("name: snn\nprefix: my.targets\n")
    assert names(None, kernels / "kernels", "snnkit") == ("snn", None)
    assert names("snn", kernels / "kernels", "") == ("snn", None)


def test_glibc_floor_is_read_and_checked(hatch):
    assert hatch._glibc_floor("2.28") == 28 and hatch._glibc_floor("manylinux_2_17") == 17
    with pytest.raises(ValueError, match="glibc-floor"):
        hatch._glibc_floor("glibc 2.28")


def test_a_library_newer_than_the_floor_is_reported(hatch, tmp_path, jax_cpu):
    from conftest import run_begen

    out = tmp_path / "out"
    run_begen("build", EXAMPLE / "kernels", "--out", out, "--name", "k", "--quiet")
    app = App()
    glibc = hatch._report_glibc(app, out / "libk.so", 17)
    assert glibc and app.infos[0].startswith(f"begen hook: libk.so needs glibc {glibc}"), app.infos
    assert app.warnings and "newer than the floor glibc 2.17" in app.warnings[0], app.warnings
    quiet = App()
    hatch._report_glibc(quiet, out / "libk.so", 99)
    assert not quiet.warnings


def install(hatch, root, package, site):
    """What installing the project's wheel puts into `site`: its package
    and the files the hook adds."""
    data = build_data()
    hook(hatch, root, packages=[f"src/{package}"], name="_kernels", destination=package).initialize("standard", data)
    shutil.copytree(root / "src" / package, site / package, dirs_exist_ok=True)
    for source, dest in data["force_include"].items():
        shutil.copy(source, site / dest)


def test_two_packages_sharing_kernel_names_load_together(hatch, tmp_path, jax_cpu):
    site = tmp_path / "site"
    site.mkdir()
    for package in ("snnkit", "otherkit"):
        install(hatch, project(tmp_path / package, package), package, site)
    # A third one whose begen.yaml names the first one's prefix: loading it
    # beside the first is refused, naming both libraries.
    clash = project(tmp_path / "clash", "clashkit", yaml="platform: cpu\nprefix: snnkit._kernels\n")
    install(hatch, clash, "clashkit", site)
    script = textwrap.dedent(
        """
        import numpy as np, snnkit, otherkit
        x = np.arange(8, dtype=np.float32)
        np.testing.assert_allclose(snnkit.axpy(2.0, x, x), 3 * x)
        np.testing.assert_allclose(otherkit.axpy(-1.0, x, x), 0 * x)
        assert snnkit._kernels.TARGETS["axpy"] == "snnkit._kernels.axpy"
        assert otherkit._kernels.TARGETS["axpy"] == "otherkit._kernels.axpy"
        print("both ok")
        try:
            import clashkit
            clashkit.axpy(1.0, x, x)
        except RuntimeError as e:
            print("clash:", e)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(site), "JAX_PLATFORMS": "cpu"}
    got = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert got.returncode == 0 and "both ok" in got.stdout, got.stdout + got.stderr
    clash_line = next(line for line in got.stdout.splitlines() if line.startswith("clash:"))
    assert "'snnkit._kernels.axpy'" in clash_line, clash_line
    assert str(site / "clashkit/lib_kernels.so") in clash_line, clash_line
    assert str(site / "snnkit/lib_kernels.so") in clash_line, clash_line


def test_a_build_dir_hatchling_would_put_into_the_sdist_is_refused(hatch, tmp_path, monkeypatch):
    # With hatchling itself: its sdist configuration decides.
    for name in [n for n in sys.modules if n == "hatchling" or n.startswith("hatchling.")]:
        monkeypatch.delitem(sys.modules, name)
    pytest.importorskip("hatchling.builders.sdist", reason="hatchling is not installed in this Python")
    root = project(tmp_path / "p")
    shutil.copy(EXAMPLE / "pyproject.toml", root)
    with pytest.raises(ValueError, match="would go into the project's sdist"):
        hatch._check_out_of_sdist(root, "build/begen", True)
    hatch._check_out_of_sdist(root, "build/begen", False)  # the default is never in one
    (root / ".gitignore").write_text("/build/\n")
    hatch._check_out_of_sdist(root, "build/begen", True)


def hatchling_in(root, tmp_path):
    """Runs hatchling itself in `root`, in a subprocess, finding the hook
    through a begen-jax distribution's entry point (this repository's
    python/begen); skips when this Python has no hatchling."""
    if subprocess.run([sys.executable, "-c", "import hatchling"], check=False).returncode != 0:
        pytest.skip("hatchling is not installed in this Python")
    dist = tmp_path / "fakedist/begen_jax-0.1.0.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: begen-jax\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text("[hatch]\nbegen = begen.hatch\n")
    path = os.pathsep.join([str(tmp_path / "fakedist"), str(REPO / "python"), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path, "BEGEN_BIN": str(begen_bin())}
    env.setdefault("BEGEN_PYTHON", sys.executable)

    def hatchling(*args, code="from hatchling.cli import hatchling; hatchling()"):
        return subprocess.run(
            [sys.executable, "-c", code, *args], check=False, capture_output=True, text=True, env=env, cwd=root
        )

    return hatchling


def test_hatchling_builds_cleans_and_refuses_through_the_hook(tmp_path, jax_cpu):
    root = tmp_path / "vecops"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("build", "dist", ".hatch"))
    (root / ".gitignore").unlink()
    hatchling = hatchling_in(root, tmp_path)

    built = hatchling("build", "-t", "wheel")
    assert built.returncode == 0, built.stdout + built.stderr
    assert (root / ".hatch/begen" / "out/lib_kernels.so").is_file()
    # The sdist, with begen's build directory there and no .gitignore: none of it.
    sdist = hatchling("build", "-t", "sdist")
    assert sdist.returncode == 0, sdist.stdout + sdist.stderr
    import tarfile

    with tarfile.open(next((root / "dist").glob("*.tar.gz"))) as tar:
        names = tar.getnames()
    assert not [n for n in names if "/.hatch/" in n or n.endswith(".o")], names
    # An editable build: the hook's paragraph, no traceback.
    editable = hatchling(code="from hatchling.build import build_editable; build_editable('dist')")
    assert editable.returncode == 1
    said = editable.stdout + editable.stderr
    assert "editable installs (`pip install -e`) are not supported" in said and "Traceback" not in said, said
    # clean removes begen's build directory, and nothing else.
    (root / "build").mkdir()
    (root / "build/keep.txt").write_text("x")
    cleaned = hatchling("build", "-t", "wheel", "--clean-only")
    assert cleaned.returncode == 0, cleaned.stdout + cleaned.stderr
    assert not (root / ".hatch/begen").exists() and (root / "build/keep.txt").is_file()
    assert (root / "kernels/vecops.cpp").is_file() and (root / "src/vecops/__init__.py").is_file()


def test_begen_new_makes_a_package_that_builds_and_passes_its_test(tmp_path, jax_cpu):
    from conftest import run_begen

    root = tmp_path / "my-kernels"
    run_begen("new", root)
    hatchling = hatchling_in(root, tmp_path)
    built = hatchling("build", "-t", "wheel")
    assert built.returncode == 0, built.stdout + built.stderr
    wheel = next((root / "dist").glob("my_kernels-0.1.0-py3-none-*.whl"))
    site = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target", str(site)]
    subprocess.run([*pip, str(wheel)], check=True)
    # Its test extra's begen-jax (begen.testing): this repository's python/.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO / "python")]), "JAX_PLATFORMS": "cpu"}
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(root / "tests")],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert tests.returncode == 0 and "2 passed" in tests.stdout, tests.stdout + tests.stderr


def torch_python():
    """The Python of the torch venv (scripts/setup-torch.sh), or a skip
    (a failure under CI=true)."""
    py = Path(os.environ.get("BEGEN_TORCH_PYTHON") or REPO / "target/venv-torch-2.15/bin/python")
    if not py.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and no torch Python at {py}")
        pytest.skip(f"no torch Python at {py} (set BEGEN_TORCH_PYTHON)")
    return py


def test_begen_new_torch_makes_a_wheel_whose_torch_tests_pass(tmp_path, jax_cpu, monkeypatch):
    from conftest import run_begen

    torch_py = torch_python()
    monkeypatch.setenv("BEGEN_TORCH_PYTHON", str(torch_py))  # the build's torch headers
    root = tmp_path / "my-ops"
    run_begen("new", root, "--torch")
    hatchling = hatchling_in(root, tmp_path)
    built = hatchling("build", "-t", "wheel")
    assert built.returncode == 0, built.stdout + built.stderr
    wheel = next((root / "dist").glob("my_ops-0.1.0-py3-none-manylinux_2_*_x86_64.whl"))
    import zipfile

    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        metadata = z.read("my_ops-0.1.0.dist-info/METADATA").decode()
        record = json.loads(z.read("my_ops-0.1.0.dist-info/extra_metadata/begen.json"))
    for file in ("lib_kernels_torch.so", "_kernels_torch.py", "_kernels_torch.pyi", "lib_kernels.so", "_kernels.py"):
        assert f"my_ops/{file}" in names, names
    assert "Requires-Dist: torch>=2.11" in metadata and "Requires-Dist: jax>=" in metadata, metadata
    assert record["targets"] == ["jax", "torch"], record
    site = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target", str(site)]
    subprocess.run([*pip, str(wheel)], check=True)
    # The torch venv has no jax: the JAX tests skip, the torch ones run.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO / "python")])}
    tests = subprocess.run(
        [str(torch_py), "-m", "pytest", "-q", "-p", "no:cacheprovider", str(root / "tests")],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert tests.returncode == 0 and "2 passed" in tests.stdout, tests.stdout + tests.stderr


def test_targets_are_checked_with_the_closest_name(hatch, tmp_path):
    project(tmp_path)
    for bad, says in [
        (["jax", "trch"], "unknown target 'trch'.*did you mean 'torch'"),
        ([], "`targets` is empty"),
        ("jax", "not a list of names"),
    ]:
        with pytest.raises(ValueError, match=says):
            hook(hatch, tmp_path, targets=bad)._settings()
    assert hook(hatch, tmp_path, targets=["torch", "jax"])._settings()["targets"] == ["jax", "torch"]


def test_a_torch_only_wheel_ships_and_requires_no_jax(hatch, tmp_path, jax_cpu, monkeypatch):
    monkeypatch.setenv("BEGEN_TORCH_PYTHON", str(torch_python()))
    project(tmp_path)
    h = hook(hatch, tmp_path, packages=["src/vecops"], destination="vecops", name="_kernels", targets=["torch"])
    data = build_data()
    h._initialize("standard", data)
    shipped = sorted(v.split("/")[-1] for v in data["force_include"].values())
    assert shipped == ["_kernels_torch.py", "_kernels_torch.pyi", "lib_kernels_torch.so"], shipped
    assert data["dependencies"] == [f"torch>={hatch.TORCH_FLOOR}"], data["dependencies"]


def test_a_torch_only_wheel_builds_with_no_jax_anywhere(hatch, tmp_path, monkeypatch):
    # The build's Python is the torch venv's, which has no jax, and no XLA
    # FFI headers are named: `targets = ["torch"]` builds torch alone
    # (`begen build --target torch`), which needs neither, and writes no
    # jax file.
    torch_py = torch_python()
    monkeypatch.setenv("BEGEN_PYTHON", str(torch_py))
    monkeypatch.setenv("BEGEN_TORCH_PYTHON", str(torch_py))
    monkeypatch.delenv("XLA_FFI_INCLUDE_DIR", raising=False)
    project(tmp_path)
    h = hook(hatch, tmp_path, packages=["src/vecops"], destination="vecops", name="_kernels", targets=["torch"])
    data = build_data()
    h._initialize("standard", data)
    (command,) = [m for m in h.app.infos if m.startswith("begen hook: ") and " build " in m]
    assert command.endswith(" --target torch"), command
    shipped = sorted(v.split("/")[-1] for v in data["force_include"].values())
    assert shipped == ["_kernels_torch.py", "_kernels_torch.pyi", "lib_kernels_torch.so"], shipped
    out = tmp_path / ".hatch/begen/out"
    assert sorted(p.name for p in out.iterdir() if p.is_file()) == shipped, sorted(out.iterdir())
    assert data["dependencies"] == [f"torch>={hatch.TORCH_FLOOR}"], data["dependencies"]
    record = json.loads((out.parent / "begen.json").read_text())
    assert (record["targets"], record["platform"], record["jaxlib"]) == (["torch"], "cpu", None), record


def test_the_torch_floor_is_begens(hatch):
    import re

    text = (REPO / "src/target/torch/mod.rs").read_text()
    major, minor = re.search(r"const FLOOR: \(u64, u64\) = \((\d+), (\d+)\);", text).groups()
    assert hatch.TORCH_FLOOR == f"{major}.{minor}"


def test_begen_new_torch_cuda_wheel_carries_its_cuda_major(tmp_path, jax_cpu, monkeypatch):
    # A real nvcc build of `begen new --torch --cuda`: the scaffold's
    # version names nvcc's CUDA major, the wheel holds the CUDA kernel in
    # both targets' libraries, and the same project without the label is
    # refused, naming the fix.
    from conftest import missing, run_begen

    nvcc = os.environ.get("NVCC")
    if not nvcc or not os.path.isfile(nvcc):
        missing("no nvcc: NVCC is not set (source scripts/env.sh)")
    monkeypatch.setenv("BEGEN_TORCH_PYTHON", str(torch_python()))
    root = tmp_path / "cu-ops"
    run_begen("new", root, "--torch", "--cuda")
    major = re.search(
        r"release (\d+)\.", subprocess.run([nvcc, "--version"], check=True, capture_output=True, text=True).stdout
    )
    pyproject = (root / "pyproject.toml").read_text()
    assert f'version = "0.1.0+cu{major.group(1)}"' in pyproject, pyproject
    (root / "pyproject.toml").write_text(pyproject.replace(f"0.1.0+cu{major.group(1)}", "0.1.0"))
    hatchling = hatchling_in(root, tmp_path)
    refused = hatchling("build", "-t", "wheel")
    assert refused.returncode != 0
    said = refused.stdout + refused.stderr
    assert f"is a CUDA torch wheel, and its name must say its CUDA major (cu{major.group(1)})" in said, said
    (root / "pyproject.toml").write_text(pyproject)
    built = hatchling("build", "-t", "wheel")
    assert built.returncode == 0, built.stdout + built.stderr
    wheel = next((root / "dist").glob(f"cu_ops-0.1.0+cu{major.group(1)}-py3-none-manylinux_2_*_x86_64.whl"))
    import zipfile

    with zipfile.ZipFile(wheel) as z:
        torch_lib = z.read("cu_ops/lib_kernels_torch.so")
        record = json.loads(z.read(f"cu_ops-0.1.0+cu{major.group(1)}.dist-info/extra_metadata/begen.json"))
    # The CUDA kernel's op is registered for torch's CUDA dispatch key.
    assert b"square_cuda" in torch_lib and b"CUDA" in torch_lib
    assert record["targets"] == ["jax", "torch"], record


def test_a_cuda_torch_wheel_names_its_cuda_major(hatch):
    nvcc = "/usr/local/cuda/bin/nvcc (13.0, V13.0.48)"
    assert hatch.cuda_major(nvcc) == "13"
    for name, version in [("mypkg", "1.0+cu13"), ("mypkg-cu13", "1.0"), ("mypkg", "1.0+cu130"), ("mypkg_cu13", "2")]:
        hatch._check_cuda_label(name, version, nvcc)
    with pytest.raises(RuntimeError, match=r'version = "1.0\+cu13".*`mypkg-cu13`'):
        hatch._check_cuda_label("mypkg", "1.0", nvcc)
    with pytest.raises(RuntimeError, match="says cu12 but nvcc is CUDA 13"):
        hatch._check_cuda_label("mypkg", "1.0+cu12", nvcc)
    with pytest.raises(RuntimeError, match="CUDA version of nvcc"):
        hatch._check_cuda_label("mypkg", "1.0+cu13", None)
