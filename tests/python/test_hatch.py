"""begen's hatch hook and its pieces, without hatchling: the platform tag
read from a built library's ELF symbol versions, the checks that the
`begen` module and program are begen-jax's, and the `destination` setting.
scripts/wheel-check.sh runs the hook itself, in a real isolated build."""

import importlib
import subprocess
import sys
import types

import pytest
from conftest import REPO, run_begen

sys.path.insert(0, str(REPO / "python"))

from begen import _wheel_tag


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
    return importlib.import_module("begen.hatch")


def test_a_built_library_gets_the_manylinux_tag_of_its_symbol_versions(tmp_path):
    out = tmp_path / "out"
    run_begen("build", REPO / "tests/e2e/cpu", "--out", out, "--platform", "cpu", "--quiet")
    lib = out / "libe2e_cpu.so"
    machine, needed, versions = _wheel_tag.read_needs(lib)
    assert "libc.so.6" in needed and any(v.startswith("GLIBC_2.") for v in versions["libc.so.6"]), versions
    # What objdump says, compared with the level picked.
    dump = subprocess.run(["objdump", "-T", str(lib)], capture_output=True, text=True, check=False)
    if dump.returncode == 0:
        for lib_versions in versions.values():
            for v in lib_versions:
                assert f"({v})" in dump.stdout or f" {v} " in dump.stdout, v
    tag, why = _wheel_tag.platform_tag(lib, "linux_x86_64")
    if machine == 62:
        assert tag.startswith("manylinux_2_") and tag.endswith("_x86_64"), (tag, why)
        level = int(tag.split("_")[2])
        glibc = max(int(v.split(".")[1]) for v in versions["libc.so.6"] if v.startswith("GLIBC_2."))
        assert level >= max(glibc, 17)


def test_the_level_follows_glibc_and_the_cxx_runtime():
    level = _wheel_tag.manylinux_level
    libc = ["libc.so.6", "libstdc++.so.6"]
    assert level(libc, {"libc.so.6": {"GLIBC_2.2.5"}}) == (17, "from its symbol versions")
    assert level(libc, {"libc.so.6": {"GLIBC_2.28"}})[0] == 28
    assert level(libc, {"libc.so.6": {"GLIBC_2.14"}, "libstdc++.so.6": {"GLIBCXX_3.4.29", "CXXABI_1.3.9"}})[0] == 34
    assert level(libc, {"libc.so.6": {"GLIBC_2.36"}, "libstdc++.so.6": {"GLIBCXX_3.4.22"}})[0] == 36
    assert level(libc, {"libstdc++.so.6": {"GLIBCXX_3.4.30"}})[0] == 35
    newer, why = level(libc, {"libstdc++.so.6": {"GLIBCXX_3.4.99"}})
    assert newer is None and "GLIBCXX_3.4.99" in why
    foreign, why = level(["libc.so.6", "libcublas.so.13"], {})
    assert foreign is None and "libcublas.so.13" in why


def test_what_is_not_an_elf_library_is_an_error(tmp_path):
    bad = tmp_path / "lib.so"
    bad.write_bytes(b"\x7fELF\x01\x01" + b"\0" * 100)
    with pytest.raises(_wheel_tag.ElfError):
        _wheel_tag.read_needs(bad)
    truncated = tmp_path / "cut.so"
    truncated.write_bytes(b"\x7fELF\x02\x01" + b"\0" * 34 + b"\xff" * 24)
    with pytest.raises(_wheel_tag.ElfError):
        _wheel_tag.read_needs(truncated)


@pytest.mark.parametrize("bad", ["../../evil", "/abs", "pkg/../../x", "a/b-c", ".", "pkg/./x", "a\\b"])
def test_a_destination_outside_the_package_is_refused(hatch, bad):
    with pytest.raises(ValueError, match="not a package folder inside the wheel"):
        hatch._destination(bad)


@pytest.mark.parametrize("bad", [".", "", "./", "/tmp/b", "../b", "build/../..", "src", "src/kernels"])
def test_a_build_dir_clean_would_remove_the_project_with_is_refused(hatch, bad):
    # `hatch clean` removes the build-dir whole: "." would be the project.
    with pytest.raises(ValueError, match="not a folder of its own inside the project"):
        hatch._build_dir(bad, "src/kernels")


def test_a_build_dir_is_kept(hatch):
    assert hatch._build_dir("build/begen/", "kernels") == "build/begen"
    assert hatch._build_dir("./out", "kernels") == "out"
    assert hatch._build_dir("kernels_build", "kernels") == "kernels_build"


def test_a_package_destination_is_kept(hatch):
    assert hatch._destination("mypkg") == "mypkg"
    assert hatch._destination("mypkg/_aot/") == "mypkg/_aot"
    assert hatch._destination("") == ""


def test_another_begen_module_or_program_is_refused(hatch, monkeypatch, tmp_path):
    hatch._check_ours()  # this repository's python/begen
    foreign = types.ModuleType("begen")
    foreign.__file__ = "/site-packages/begen/__init__.py"
    monkeypatch.setitem(sys.modules, "begen", foreign)
    with pytest.raises(RuntimeError, match="not begen-jax's .*Require `begen-jax`"):
        hatch._check_ours()
    monkeypatch.undo()

    other = tmp_path / "begen"
    other.write_text("#!/bin/sh\necho 'traffic generator 0.5'\n")
    other.chmod(0o755)
    with pytest.raises(RuntimeError, match="is not begen-jax's `begen` program"):
        hatch._check_program(str(other))
    from conftest import begen_bin

    hatch._check_program(str(begen_bin()))
