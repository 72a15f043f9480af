"""`python -m begen develop`: a `begen new` package, built by hatchling
through begen's hook and installed, gets a kernel edit into its installed
copy with one command; the wheel build and develop share the hook's build
directory, so what is unchanged is never compiled again (counted from
begen's report, "N TUs compiled")."""

import os
import re
import subprocess
import sys

import pytest
from conftest import REPO, begen_bin, run_begen
from test_hatch_hook import hatchling_in

SQUARE = "y[i] = scale * x[i] * x[i];"


def compiled(said):
    """The TUs begen's report says it compiled."""
    counts = re.findall(r"(\d+) TUs compiled, (\d+) up to date", said)
    assert len(counts) == 1, said
    return int(counts[0][0])


@pytest.fixture()
def installed(tmp_path, jax_cpu):
    """A `begen new` package whose wheel hatchling built (the hook's build
    directory is left as the build left it), installed into a folder of its
    own; returns the project, that folder and the environment that imports
    the install (and this repository's begen)."""
    root = tmp_path / "my-kernels"
    run_begen("new", root)
    built = hatchling_in(root, tmp_path)("build", "-t", "wheel")
    assert built.returncode == 0, built.stdout + built.stderr
    wheel = next((root / "dist").glob("my_kernels-0.1.0-py3-none-*.whl"))
    site = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target", str(site)]
    subprocess.run([*pip, str(wheel)], check=True)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), str(REPO / "python")]),
        "JAX_PLATFORMS": "cpu",
        "BEGEN_BIN": str(begen_bin()),
    }
    env.setdefault("BEGEN_PYTHON", sys.executable)
    return root, site, env


def develop(env, *args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "begen", "develop", *args], check=False, capture_output=True, text=True, env=env, cwd=cwd
    )


def square_of_two(env, cwd):
    """my_kernels.square([2.0], scale=3.0), in a fresh Python."""
    code = (
        "import jax; jax.config.update('jax_enable_x64', True); import numpy as np, my_kernels; "
        "print(float(my_kernels.square(np.array([2.0]), scale=3.0)[0]))"
    )
    got = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env, cwd=cwd)
    assert got.returncode == 0, got.stdout + got.stderr
    return float(got.stdout.split()[-1])


def test_an_edited_kernel_reaches_the_installed_package_and_nothing_else_compiles(installed, tmp_path):
    root, site, env = installed
    assert square_of_two(env, tmp_path) == 12.0
    # Straight after the wheel build: the hook compiled everything, in the
    # same build directory, so develop compiles nothing.
    first = develop(env, cwd=root)
    assert first.returncode == 0, first.stdout + first.stderr
    assert compiled(first.stderr) == 0, first.stderr
    assert str(site / "my_kernels") in first.stderr, first.stderr

    source = root / "kernels/square.cpp"
    assert SQUARE in source.read_text()
    source.write_text(source.read_text().replace(SQUARE, "y[i] = scale * x[i] * x[i] + 1.0;"))
    edited = develop(env, str(root), cwd=tmp_path)
    assert edited.returncode == 0, edited.stdout + edited.stderr
    assert compiled(edited.stderr) == 1, edited.stderr
    assert square_of_two(env, tmp_path) == 13.0

    again = develop(env, str(root), cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert compiled(again.stderr) == 0, again.stderr
    assert square_of_two(env, tmp_path) == 13.0
    # Only the outputs were replaced: the package's own files are the wheel's.
    assert sorted(p.name for p in (site / "my_kernels").iterdir() if not p.name.startswith("__")) == [
        "_kernels.py",
        "_kernels.pyi",
        "_kernels.yaml",
        "lib_kernels.so",
    ]


def test_a_package_that_is_not_installed_or_is_the_source_tree_is_refused(installed, tmp_path):
    root, _, env = installed
    elsewhere = {**env, "PYTHONPATH": str(REPO / "python")}
    got = develop(elsewhere, str(root), cwd=tmp_path)
    assert got.returncode == 1 and "`my_kernels` is not installed in this Python" in got.stderr, got.stderr
    assert "TUs compiled" not in got.stderr and "Traceback" not in got.stderr, got.stderr

    sources = {**env, "PYTHONPATH": os.pathsep.join([str(root / "src"), str(REPO / "python")])}
    got = develop(sources, str(root), cwd=tmp_path)
    assert got.returncode == 1 and "imported from the project's own folder" in got.stderr, got.stderr
    assert not (root / "src/my_kernels/lib_kernels.so").exists()

    got = develop(env, str(tmp_path / "nowhere"), cwd=tmp_path)
    assert got.returncode == 1 and "pyproject.toml does not exist" in got.stderr, got.stderr


def test_help_teaches_the_loop(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    got = develop(env, "--help", cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    for said in ("pip install .", "python -m begen develop", ".hatch/begen", "0 TUs compiled"):
        assert said in got.stdout, got.stdout
