"""jax's own `examples/ffi`, built by begen and run by the examples' own
tests (only their import lines changed): see prepare.py.

Needs a jax git directory in BEGEN_JAX_GIT_DIR (e.g. the `fetch` of
github:jax-ml/jax): the examples are never committed and cannot be fetched
where the tests run in CI, so without it the test skips, under CI=true too.
The examples' tests use absl (`pip install absl-py`).
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def test_jax_ffi_examples_cpu(tmp_path):
    git_dir = os.environ.get("BEGEN_JAX_GIT_DIR")
    if not git_dir:
        pytest.skip("BEGEN_JAX_GIT_DIR is not set: jax's examples/ffi cannot be fetched here (also under CI=true)")
    try:
        import absl  # noqa: F401
    except ImportError:
        pytest.skip("absl-py is not installed (the examples' tests use absltest)")
    begen = os.environ.get("BEGEN_BIN") or str(REPO / "target" / "debug" / "begen")
    out = tmp_path / "jaxffi"
    env = dict(os.environ, BEGEN_PYTHON=sys.executable, XDG_CACHE_HOME=str(tmp_path / "cache"))
    subprocess.run([sys.executable, HERE / "prepare.py", git_dir, out, begen, "cpu"], check=True, env=env)
    env["PYTHONPATH"] = os.pathsep.join([str(out / "pkg"), *filter(None, [os.environ.get("PYTHONPATH")])])
    env["BEGEN_FFI_EXAMPLES_LIB"] = str(out / "lib")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(out / "tests")],
        capture_output=True,
        text=True,
        env=env,
        cwd=out,
        check=False,
    )
    summary = proc.stdout.strip().splitlines()[-1:] or [""]
    print(summary[0])
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert re.search(r"\d+ passed", summary[0]) and "failed" not in summary[0]
