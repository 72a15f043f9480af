"""Shared fixtures for the torch target's tests: build a kernel directory
with `begen build --target jax,torch` and import the generated
`<NAME>_torch` module into this interpreter, which has torch (and no jax:
scripts/setup-torch.sh makes it). `torch_only_env` is the environment of
a build for torch alone, where no jax is reachable.

A build with jax needs jax's XLA FFI headers for the jax outputs:
`$BEGEN_PYTHON` (else the repository's .venv) is the Python that has jax;
this interpreter is `BEGEN_TORCH_PYTHON`, whose torch headers the
registration TU compiles against. Without torch a test is skipped, except
under CI=true, where it fails.
"""

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
IN_CI = os.environ.get("CI") == "true"


def missing(what):
    """Skip, or fail under CI=true."""
    if IN_CI:
        pytest.fail(f"CI=true and {what}: this test must not be skipped in CI")
    pytest.skip(what)


def jax_python():
    """The Python that has jax (the build's XLA FFI headers, the JAX side)."""
    py = os.environ.get("BEGEN_PYTHON") or str(REPO / ".venv" / "bin" / "python")
    if not Path(py).exists():
        missing(f"no Python with jax at {py} (set BEGEN_PYTHON)")
    return py


def begen_bin():
    path = Path(os.environ.get("BEGEN_BIN") or REPO / "target" / "debug" / "begen")
    if not path.is_file():
        missing(f"no begen binary at {path} (run `cargo build` or set BEGEN_BIN)")
    return path


def run_begen(*args, check=True, cache=None, env=None):
    """Runs the CLI; returns the process. `env`: the whole environment
    (else this one, with the jax and torch Pythons set)."""
    if env is None:
        env = dict(os.environ)
        env["BEGEN_PYTHON"] = jax_python()
        env["BEGEN_TORCH_PYTHON"] = sys.executable
    if cache is not None:
        env["XDG_CACHE_HOME"] = str(cache)
    proc = subprocess.run([str(begen_bin()), *map(str, args)], capture_output=True, text=True, env=env, check=False)
    if check and proc.returncode != 0:
        pytest.fail(f"begen {' '.join(map(str, args))} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return proc


def import_module(out_dir, name):
    """Imports OUT/<name>.py fresh."""
    sys.path.insert(0, str(out_dir))
    try:
        sys.modules.pop(name, None)
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(out_dir))


@pytest.fixture(scope="session")
def torch():
    try:
        import torch
    except ImportError:
        missing("torch is not installed in this Python (scripts/setup-torch.sh 2.15)")
    return torch


def torch_only_env():
    """An environment where the only Python is this one (torch, no jax)
    and XLA's headers are nowhere: what a build for torch alone may use."""
    env = {k: v for k, v in os.environ.items() if k not in ("BEGEN_TORCH_PYTHON", "XLA_FFI_INCLUDE_DIR")}
    env["BEGEN_PYTHON"] = sys.executable
    env["XLA_FFI_INCLUDE_DIR"] = "/nonexistent/begen-no-xla"
    return env


class Built:
    """One tree built for jax and torch: its OUT, the build's stderr and the
    imported torch module."""

    def __init__(self, out, stderr, module):
        self.out = out
        self.stderr = stderr
        self.module = module


# Where build() keeps its work files, across sessions (the torch lane runs
# one session per torch release, on the same trees).
WORK = REPO / "target" / "torch-test-work"

# (tree, name, targets) -> Built: each tree is built once per pytest session.
_BUILT = {}


def build(tmp_path_factory, tree, name, targets="jax,torch"):
    """Builds `tree` as library `name` for `targets` (None: as its
    begen.yaml's `targets:` says), once per pytest session: a second call
    with the same tree, name and targets returns the first's `Built` (its
    torch module is imported once; a second import of the same namespace
    would register its ops again)."""
    key = (str(Path(tree).resolve()), name, targets)
    if key not in _BUILT:
        out = tmp_path_factory.mktemp(name)
        cache = tmp_path_factory.getbasetemp() / "begen-cache"
        target = () if targets is None else ("--target", targets)
        # The work files (objects) outlive the session: the next session,
        # under the other torch, compiles only what changed (the torch TU).
        work = ("--work-dir", WORK)
        proc = run_begen("build", tree, "--out", out, "--name", name, *target, *work, "-q", cache=cache)
        _BUILT[key] = Built(out, proc.stderr, import_module(out, f"{name}_torch"))
    return _BUILT[key]


@pytest.fixture(scope="session")
def typed(torch, tmp_path_factory):
    return build(tmp_path_factory, REPO / "tests" / "e2e" / "typed", "e2e_typed")


@pytest.fixture(scope="session")
def algo(torch, tmp_path_factory):
    return build(tmp_path_factory, REPO / "tests" / "e2e" / "algo", "e2e_algo")


def ops_run(namespace, call):
    """`call()`'s result and the ops of `namespace` it ran, in order, as
    (op name, keyword arguments): a dispatch mode sees each op the typed
    functions call, with what they chose (a tuned const, an implementation)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    seen = []

    class Seen(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func.namespace == namespace:
                seen.append((func._opname, dict(kwargs or {})))
            return func(*args, **(kwargs or {}))

    with Seen():
        result = call()
    return result, seen


def ops_compiled(namespace, f, *args):
    """`torch.compile(f, fullgraph=True)(*args)` and the ops of `namespace`
    in the graph dynamo made, as (op name, keyword arguments)."""
    import torch

    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    out = torch.compile(f, fullgraph=True, backend=backend)(*args)
    ops = []
    for g in graphs:
        for n in g.graph.nodes:
            parts = str(n.target).split(".")
            if n.op == "call_function" and parts[0] == namespace and len(parts) > 1:
                ops.append((parts[1], dict(n.kwargs)))
    return out, ops
