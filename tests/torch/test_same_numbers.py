"""The same kernel from JAX and from torch gives the same numbers, forward
and backward, for every tests/e2e tree (and the examples' CPU kernels) that
both targets build.

Each tree is built once for jax and torch (conftest's `build`). Every op
the torch module exposes runs on inputs drawn from its contract
(begen.testing's `_torch_draws`, as check_torch draws them), forward and,
where torch registers an autograd formula, backward with a fixed cotangent
(drawn once per output). One subprocess of the jax Python
(`same_numbers_jax.py`) then runs every tree's JAX functions on the same
arrays (an .npz), forward and `jax.vjp` backward. Outputs and gradients
must be equal exactly, element for element (NaN where the other has NaN),
in dtype and shape: both sides call the same compiled kernels, and every
gradient here is one backward or transpose kernel's output, which neither
framework adds to anything else (no tolerance is needed, so none is given;
a 1-ulp change to one gradient fails).

A tree the torch target cannot build, or an op it leaves out or this lane
cannot run, is listed in UNCOMPARED with its reason; a test checks that
every tests/e2e folder is compared or listed, and that the list holds
nothing stale.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, WORK, build, jax_python

sys.path.insert(0, str(REPO / "python"))
from begen.testing import _torch_draws, torch_ops

# The compared trees: folder -> library name (a tree another torch test
# builds keeps that test's name, so the session builds it once).
TREES = {
    "tests/e2e/algo": "e2e_algo",
    "tests/e2e/contracts": "e2e_contracts",
    "tests/e2e/joint": "e2e_joint",
    "tests/e2e/lowp": "e2e_lowp",
    "tests/e2e/named": "e2e_named",
    "tests/e2e/prims": "e2e_prims",
    "tests/e2e/shard_sums": "e2e_shard_sums",
    "tests/e2e/sharding": "e2e_sharding",
    "tests/e2e/solver": "e2e_solver",
    "tests/e2e/transformer": "e2e_transformer",
    "tests/e2e/tune": "tune",
    "tests/e2e/tune_algo": "tune_algo",
    "tests/e2e/typed": "e2e_typed",
}

# What is not compared, and why: a tree ("tests/e2e/cuda"), one op of a
# compared tree ("tests/e2e/typed:fill"), or every CUDA op of one
# ("tests/e2e/algo:<cuda>"). An op the build leaves out is
# listed with the build's own reason (its warning, checked word for word).
GPU = "a CUDA kernel: the torch lane has no GPU (scripts/gpu-check.sh STEPS=torch runs them)"
NO_DEVICE = "left out: no tensor input (the op would not know its outputs' device)"


def leading(p):
    return f"left out: parameter '{p}' has leading dimensions (`...`)"


UNTYPED = (
    "every kernel is an out= op or left out: untyped tensors (no typed contract, so the op cannot know its shapes)"
)
# An out= op takes its outputs from the caller, so no output shape can be
# drawn; tests/torch/test_torch.py compares the out= ops of tests/e2e/typed
# with JAX's numbers.
OUT_BWD = "takes its outputs from the caller (out=), which no autograd formula can give"
OUT_OP = "an out= op: its outputs' shapes are the caller's, not drawn from a contract"
UNCOMPARED = {
    # Trees.
    "tests/e2e/cpu": UNTYPED,
    "tests/e2e/link": UNTYPED,
    "tests/e2e/modules": UNTYPED,
    "tests/e2e/vocab": UNTYPED + ", an `attrs` dictionary and a `str` attribute",
    "examples/kernels-demo/kernels/cpu": UNTYPED,
    "examples/kernels-demo/kernels/cuda": "CUDA kernels only: the torch lane has no GPU (scripts/gpu-check.sh STEPS=torch)",
    "tests/e2e/cuda": "CUDA kernels only: the torch lane has no GPU (scripts/gpu-check.sh STEPS=torch)",
    "tests/e2e/binaries": "precompiled CUDA binaries (made at test time by nvcc and cuda-tile) and CUDA kernels: no GPU here",
    "tests/e2e/structs": UNTYPED + " and struct attributes",
    "tests/e2e/native": "the torch target leaves out every kernel: XLA FFI's own signatures and untyped tensors",
    "tests/e2e/tensors": "the torch target leaves out every kernel: lists of tensors (`arg...`), variadic outputs "
    "(`ret:like`) and untyped tensors",
    "tests/e2e/tune_defines": "the torch target leaves out every kernel: kernels tuned over their defines",
    "examples/python-package/kernels": UNTYPED,
    **{
        f"tests/e2e/{t}": "the torch target leaves out every kernel: XLA FFI's own signatures"
        for t in ("native_like", "native_rest", "native_vjp")
    },
    "tests/e2e/vocab_state": UNTYPED + " and XLA FFI state",
    "tests/e2e/solver_rules": "the torch target leaves out every kernel: backward passes written as Python "
    "functions of the JAX module (`python_vjp:`)",
    "tests/e2e/tune_untyped": "the torch target leaves out every kernel: a kernel tuned over its defines",
    # Ops of compared trees.
    "tests/e2e/algo:<cuda>": GPU,
    "tests/e2e/algo:peek": "reads a per-process counter that `bump` (a side effect) increments: "
    "its value is how many calls this process made before",
    "tests/e2e/contracts:scale_any": leading("x"),
    "tests/e2e/contracts:add_same": leading("a"),
    "tests/e2e/contracts:rms_last": leading("x"),
    "tests/e2e/contracts:rms_res": leading("x"),
    "tests/e2e/contracts:rms_res_bwd": leading("inv"),
    **{
        f"tests/e2e/shard_sums:{op}": leading("x") for op in ("rms_rows", "rms_rows_grad", "rms_norm", "rms_rows_plain")
    },
    "tests/e2e/prims:csrmv": f"left out: its transpose kernel 'csrmv_tv' {OUT_BWD}",
    "tests/e2e/prims:csrmv_cuda": f"left out: its transpose kernel 'csrmv_cuda_tv' {OUT_BWD}",
    "tests/e2e/prims:fill": NO_DEVICE,
    "tests/e2e/prims:accumulate": NO_DEVICE,
    "tests/e2e/prims:zeros_cuda": NO_DEVICE,
    "tests/e2e/prims:<cuda>": GPU,
    "tests/e2e/sharding:<cuda>": GPU,
    "tests/e2e/typed:fill": NO_DEVICE,
}


def _csr(torch):
    # A 4 x 5 CSR matrix of 7 entries: the prims kernels read indptr and
    # indices as a valid matrix (zeros, the drawn integers, leave their
    # outputs unwritten).
    indices = torch.tensor([0, 3, 1, 2, 4, 0, 4], dtype=torch.int32)
    indptr = torch.tensor([0, 2, 3, 5, 7], dtype=torch.int32)
    return indices, indptr


def _prims(op):
    def draw(torch, rng):
        indices, indptr = _csr(torch)
        data, v, ct = (torch.from_numpy(rng.standard_normal(n)) for n in (7, 5, 4))
        given = {
            "csrmv": ((data, indices, indptr, v), {"m": 4}),
            "csrmv_tdata": ((indices, indptr, v, ct), {}),
            "csrmv_tv": ((data, indices, indptr, ct), {}),
        }[op]
        return [(*given, "a 4 x 5 CSR matrix of 7 entries")]

    return draw


def _solver(op):
    def draw(torch, rng):
        # A nonsingular 5 x 5 sparse system (zeros for the indices would
        # put every entry at (0, 0): a singular matrix).
        n = 5
        A = rng.standard_normal((n, n)) * (rng.random((n, n)) < 0.5) + n * np.eye(n)
        Ai, Aj = (torch.tensor(i.astype(np.int32)) for i in np.nonzero(A))
        Ax = A[Ai.numpy(), Aj.numpy()]
        b = rng.standard_normal((n, 3))
        if op.endswith("_c128"):
            Ax = Ax + 1j * rng.standard_normal(Ax.shape)
            b = b + 1j * rng.standard_normal(b.shape)
        return [((Ai, Aj, torch.from_numpy(Ax), torch.from_numpy(b)), {}, f"a 5 x 5 system of {len(Ai)} entries")]

    return draw


# Inputs of ops whose kernels need more than the contract says (a valid
# sparse structure): "tree:op" -> draw(torch, rng) -> [(tensors, keywords,
# what was drawn)].
INPUTS = {
    "tests/e2e/prims:csrmv_tdata": _prims("csrmv_tdata"),
    **{
        f"tests/e2e/solver:{op}": _solver(op)
        for op in ("dot", "dot_c128", "dot_tx", "solve", "solve_c128", "solve_each")
    },
}

# Known bugs: "tree:op" -> what is wrong. Their calls run and must fail
# (so a fix shows up as a failure here until its entry goes). None now.
BROKEN = {}


def _is_float(torch, t):
    return t.dtype.is_floating_point or t.dtype.is_complex


def _to_numpy(torch, t):
    # bfloat16 as its bits (numpy has no bfloat16 of its own).
    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.uint16), True
    return t.numpy().copy(), False


def _bits_to_float32(a):
    return (a.astype(np.uint32) << 16).view(np.float32)


class Tree:
    """One tree's torch side: what it compared, what it left out."""

    def __init__(self, path, built):
        self.path = path
        self.built = built
        self.calls = []  # the JAX plan's calls
        self.torch = {}  # id -> (outputs, grads by input index)
        self.ops = set()  # ops compared
        self.skipped = {}  # op -> why not compared (cuda)
        self.described = {}  # id -> "op at draw"
        self.errors = {}  # id -> what torch raised


def _left_out(stderr):
    return dict(re.findall(r"warning: the torch target leaves out kernel '([^']+)': ([^\n]+)", stderr))


def _torch_side(tree, torch, arrays, bf16, seed=0):
    m = tree.built.module
    rng = np.random.default_rng(seed)
    for key, spec in torch_ops(m).items():
        if spec["platform"] != "cpu":
            tree.skipped[key] = UNCOMPARED.get(f"{tree.path}:<{spec['platform']}>", f"a {spec['platform']} kernel")
            continue
        if spec.get("out"):
            tree.skipped[key] = OUT_OP
            continue
        if f"{tree.path}:{key}" in UNCOMPARED:
            tree.skipped[key] = UNCOMPARED[f"{tree.path}:{key}"]
            continue
        fn = getattr(m, spec["call"])
        autograd = torch._C._dispatch_has_kernel_for_dispatch_key(f"{m.NAMESPACE}::{key}", "Autograd")
        names = [a[0] for a in spec["args"]]
        given = INPUTS.get(f"{tree.path}:{key}")
        draws = given(torch, rng) if given else [d[:3] for d in _torch_draws(spec, rng, torch, "cpu")]
        for d, (tensors, keywords, described) in enumerate(draws):
            cid = f"{m.NAMESPACE}.{key}.{d}"
            for k, t in enumerate(tensors):
                a, bits = _to_numpy(torch, t)
                arrays[f"{cid}.a{k}"] = a
                if bits:
                    bf16.append(f"{cid}.a{k}")
            wrt = []
            if autograd:
                wrt = [names.index(n) for n in spec["differentiable"]] or [
                    k for k, t in enumerate(tensors) if _is_float(torch, t) and names[k] not in spec["inout"]
                ]
            tree.described[cid] = f"{key} at {described}"
            try:
                outs, grads, cts = _run_torch(fn, tensors, keywords, wrt, names, rng, torch)
            except Exception as e:
                # Said as a failure; the forward alone is still compared.
                tree.errors[cid] = f"{type(e).__name__}: {e}".splitlines()[0]
                if not wrt:
                    continue
                outs, grads, cts = _run_torch(fn, tensors, keywords, [], names, rng, torch)
            wrt = sorted(grads)
            for j, c in enumerate(cts):
                if c is not None:
                    a, bits = _to_numpy(torch, c)
                    arrays[f"{cid}.c{j}"] = a
                    if bits:
                        bf16.append(f"{cid}.c{j}")
            tree.calls.append(
                {
                    "id": cid,
                    "call": spec["call"],
                    "args": len(tensors),
                    "kwargs": keywords,
                    "wrt": wrt,
                    "cts": [None if c is None else f"{cid}.c{j}" for j, c in enumerate(cts)],
                }
            )
            tree.torch[cid] = (outs, grads)
        tree.ops.add(key)


def _run_torch(fn, tensors, keywords, wrt, names, rng, torch):
    # Forward (and backward when `wrt`): the outputs, the gradients by
    # input index, and the cotangent given each output (None: none).
    while True:
        args = [t.clone() for t in tensors]
        for k in wrt:
            args[k].requires_grad_(True)
        got = fn(*args, **keywords)
        outs = list(got) if isinstance(got, (tuple, list)) else [got]
        if not wrt:
            return [o.detach().clone() for o in outs], {}, [None] * len(outs)
        diff = [j for j, o in enumerate(outs) if _is_float(torch, o) and o.requires_grad]
        cts = [None] * len(outs)
        for j in diff:
            o = outs[j]
            if o.dtype.is_complex:
                c = torch.from_numpy(rng.standard_normal(o.shape) + 1j * rng.standard_normal(o.shape))
            else:
                c = torch.from_numpy(rng.standard_normal(o.shape))
            cts[j] = c.to(o.dtype)
        try:
            grads = torch.autograd.grad(
                [outs[j] for j in diff], [args[k] for k in wrt], [cts[j] for j in diff], allow_unused=True
            )
        except TypeError as e:
            # An input the op has no derivative in (linear in the others only).
            no = re.search(r"no derivative in '([^']+)'", str(e))
            if no is None or no.group(1) not in names:
                raise
            wrt = [k for k in wrt if names[k] != no.group(1)]
            continue
        given = {k: (torch.zeros_like(args[k]) if g is None else g).detach().clone() for k, g in zip(wrt, grads)}
        return [o.detach().clone() for o in outs], given, cts


@pytest.fixture(scope="session")
def compared(torch, tmp_path_factory):
    """Every tree of TREES built and run by torch, then by JAX in one
    subprocess: {tree: (Tree, JAX results, JAX errors)}."""
    trees, arrays, bf16 = {}, {}, []
    with pytest.MonkeyPatch.context() as mp:
        # The tuned kernels' default configurations on both sides.
        mp.setenv("BEGEN_TUNE", "default")
        for path, name in TREES.items():
            tree = Tree(path, build(tmp_path_factory, REPO / path, name))
            _torch_side(tree, torch, arrays, bf16)
            trees[path] = tree
    work = tmp_path_factory.mktemp("same_numbers")
    plan = {
        "bfloat16": bf16,
        "trees": [{"tree": p, "out": str(t.built.out), "module": TREES[p], "calls": t.calls} for p, t in trees.items()],
    }
    (work / "plan.json").write_text(json.dumps(plan))
    np.savez(work / "inputs.npz", **arrays)
    env = dict(os.environ, BEGEN_TUNE="default")
    proc = subprocess.run(
        [
            jax_python(),
            str(Path(__file__).with_name("same_numbers_jax.py")),
            work / "plan.json",
            work / "inputs.npz",
            work / "results.npz",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = np.load(work / "results.npz")
    errors = json.loads(str(got["errors"]))
    bits = set(json.loads(str(got["bfloat16"])))
    results = {k: (_bits_to_float32(got[k]) if k in bits else got[k]) for k in got.files}
    return {p: (t, results, errors) for p, t in trees.items()}


def _differs(got, want):
    # None when equal (NaN where the other has NaN), else where and by how much.
    if got.shape != want.shape:
        return f"shape {got.shape} from torch, {want.shape} from JAX"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} from torch, {want.dtype} from JAX"
    if np.array_equal(got, want, equal_nan=True):
        return None
    bad = np.argwhere(~((got == want) | (np.isnan(got) & np.isnan(want))))
    i = tuple(bad[0])
    return f"{len(bad)} of {got.size} elements, first at {list(i)}: torch {got[i]!r}, JAX {want[i]!r}"


def _torch_float(torch, t):
    a, bits = _to_numpy(torch, t)
    return _bits_to_float32(a) if bits else a


@pytest.mark.parametrize("path", list(TREES))
def test_jax_and_torch_give_the_same_numbers(compared, torch, path):
    tree, results, errors = compared[path]
    assert path not in errors, errors[path]
    assert tree.ops, f"{path}: no op compared"
    wrong = [f"{path}: {tree.described[cid]}: torch failed: {e}" for cid, e in tree.errors.items()]
    for call in tree.calls:
        cid = call["id"]
        where = f"{path}: {tree.described[cid]}"
        if cid in errors:
            wrong.append(f"{where}: the JAX side failed: {errors[cid]}")
            continue
        outs, grads = tree.torch[cid]
        for j, o in enumerate(outs):
            want = results.get(f"{cid}.o{j}")
            if want is None:
                wrong.append(f"{where}: output {j}: torch gives it, JAX does not")
                continue
            diff = _differs(_torch_float(torch, o), want)
            if diff:
                wrong.append(f"{where}: output {j} differs: {diff}")
        if f"{cid}.o{len(outs)}" in results:
            wrong.append(f"{where}: JAX gives more outputs than torch's {len(outs)}")
        for k, g in grads.items():
            want = results.get(f"{cid}.g{k}")
            diff = "JAX gives none" if want is None else _differs(_torch_float(torch, g), want)
            if diff:
                wrong.append(f"{where}: the gradient of input {k} differs: {diff}")
    # A known bug (BROKEN) must still fail, on every draw: its fix removes the entry.
    for key, why in BROKEN.items():
        tree_path, op = key.split(":")
        if tree_path == path:
            # Only torch's failure is expected: a forward that differs is still wrong.
            failing = [w for w in wrong if w.startswith(f"{path}: {op} at ") and ": torch failed: " in w]
            drawn = [d for d in tree.described.values() if d.startswith(f"{op} at ")]
            assert failing and len(failing) >= len(drawn), f"{key} is listed in BROKEN ({why}) but no longer fails"
            wrong = [w for w in wrong if w not in failing]
    assert not wrong, "\n".join(wrong)


def test_every_e2e_tree_is_compared_or_listed(compared):
    # A new tree of tests/e2e is compared or says why not; so is every op
    # the build leaves out or this lane does not run, and nothing listed is
    # stale.
    folders = {f"tests/e2e/{p.name}" for p in (REPO / "tests" / "e2e").iterdir() if p.is_dir()}
    folders |= {str(p.parent.relative_to(REPO)) for p in (REPO / "examples").rglob("begen.yaml")}
    trees = {k for k in UNCOMPARED if ":" not in k}
    assert folders <= set(TREES) | trees, sorted(folders - set(TREES) - trees)
    assert not set(TREES) & trees
    for path, (tree, _, _) in compared.items():
        listed = {k.split(":", 1)[1]: v for k, v in UNCOMPARED.items() if k.startswith(path + ":")}
        left_out = _left_out(tree.built.stderr)
        for op, why in left_out.items():
            assert listed.get(op) == f"left out: {why}", (path, op, why)
        platforms = {f"<{tree.built.module._begen_ops[op]['platform']}>" for op in tree.skipped}
        for op, why in tree.skipped.items():
            platform = f"<{tree.built.module._begen_ops[op]['platform']}>"
            assert op in listed or platform in listed or why == OUT_OP, (path, op, why)
        stale = set(listed) - set(left_out) - set(tree.skipped) - platforms
        assert not stale, (path, sorted(stale))


def test_the_torch_ops_compile_without_warnings(compared):
    # The generated op TU of every compared tree is -Wall -Wextra clean:
    # warnings.log in the work directory holds every unit's warnings,
    # compiled by this session or an earlier one (none: no unit warned).
    noisy = {}
    for path in compared:
        work = WORK / TREES[path]
        assert (work / "obj").is_dir(), f"{path}: {work} holds no objects: is WORK begen's --work-dir?"
        log = work / "warnings.log"
        text = log.read_text() if log.is_file() else ""
        lines = [line for line in text.splitlines() if ".torch.cc" in line and "warning" in line]
        if lines:
            noisy[path] = lines
    assert not noisy, noisy
