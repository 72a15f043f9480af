"""The same kernel from JAX and from torch gives the same numbers, forward
and backward, for every tests/e2e tree (and the examples' CPU kernels) that
both targets build.

Each tree is built once for jax and torch (conftest's `build`). Every op
the torch module exposes runs on inputs drawn from its contract
(begen.testing's `_torch_draws`, as check_torch draws them), forward and,
where torch registers an autograd formula, backward with a fixed cotangent
(drawn once per output). An out= op, whose outputs the caller gives, runs
forward only (it has no autograd): its outputs' shapes and dtypes are drawn
with its inputs from the contract (a dimension only an output has is drawn
like any other), or given in INPUTS where its tensors are untyped; torch
gets them as tensors, JAX as `jax.ShapeDtypeStruct`s. One subprocess of the
jax Python (`same_numbers_jax.py`) then runs every tree's JAX functions on
the same arrays (an .npz), forward and `jax.vjp` backward. Outputs and
gradients must be equal exactly, element for element (NaN where the other
has NaN), in dtype and shape: both sides call the same compiled kernels,
and every gradient here is one backward or transpose kernel's output, which
neither framework adds to anything else (no tolerance is needed, so none is
given; a 1-ulp change to one gradient fails).

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
from begen.testing import _resolve, _torch_draws, torch_ops

# The compared trees: folder -> library name (a tree another torch test
# builds keeps that test's name, so the session builds it once).
TREES = {
    "tests/e2e/algo": "e2e_algo",
    "tests/e2e/contracts": "e2e_contracts",
    "tests/e2e/cpu": "e2e_cpu",
    "tests/e2e/joint": "e2e_joint",
    "tests/e2e/lowp": "e2e_lowp",
    "tests/e2e/modules": "e2e_modules",
    "tests/e2e/named": "e2e_named",
    "tests/e2e/prims": "e2e_prims",
    "tests/e2e/shard_sums": "e2e_shard_sums",
    "tests/e2e/sharding": "e2e_sharding",
    "tests/e2e/solver": "e2e_solver",
    "tests/e2e/structs": "e2e_structs",
    "tests/e2e/transformer": "e2e_transformer",
    "tests/e2e/tune": "tune",
    "tests/e2e/tune_algo": "tune_algo",
    "tests/e2e/tune_defines": "tune_defines",
    "tests/e2e/tune_untyped": "tune_untyped",
    "tests/e2e/typed": "e2e_typed",
    "tests/e2e/vocab": "e2e_vocab",
}

# What is not compared, and why: a tree ("tests/e2e/cuda"), one op of a
# compared tree ("tests/e2e/typed:fill"), or every CUDA op of one
# ("tests/e2e/algo:<cuda>"). An op the build leaves out is
# listed with the build's own reason (its warning, checked word for word).
GPU = "a CUDA kernel: the torch lane has no GPU (scripts/gpu-check.sh STEPS=torch runs them)"
NO_DEVICE = "left out: no tensor input (the op would not know its outputs' device)"


def leading(p):
    return f"left out: parameter '{p}' has leading dimensions (`...`)"


# The kinds tests/e2e/cpu compares: elementwise, transposed and integer
# kernels, two 0-d outputs, integer and float attributes.
LIKE_CPU = "untyped out= ops of the kinds tests/e2e/cpu compares: not worth a build of their own"
OUT_BWD = "takes its outputs from the caller (out=), which no autograd formula can give"
UNCOMPARED = {
    # Trees.
    "tests/e2e/link": "its one kernel is left out: no tensor input (the op would not know its outputs' device)",
    "examples/kernels-demo/kernels/cpu": LIKE_CPU,
    "examples/kernels-demo/kernels/cuda": "CUDA kernels only: the torch lane has no GPU (scripts/gpu-check.sh STEPS=torch)",
    "tests/e2e/cuda": "CUDA kernels only: the torch lane has no GPU (scripts/gpu-check.sh STEPS=torch)",
    "tests/e2e/binaries": "precompiled CUDA binaries (made at test time by nvcc and cuda-tile) and CUDA kernels: no GPU here",
    "tests/e2e/native": "the torch target leaves out every kernel: XLA FFI's own signatures and untyped tensors",
    "tests/e2e/tensors": "the torch target leaves out every kernel: lists of tensors (`arg...`), variadic outputs "
    "(`ret:like`) and untyped tensors",
    "examples/python-package/kernels": LIKE_CPU,
    **{
        f"tests/e2e/{t}": "the torch target leaves out every kernel: XLA FFI's own signatures"
        for t in ("native_like", "native_rest", "native_vjp")
    },
    "tests/e2e/vocab_state": "the torch target leaves out every kernel: XLA FFI state",
    "tests/e2e/solver_rules": "the torch target leaves out every kernel: backward passes written as Python "
    "functions of the JAX module (`python_vjp:`)",
    # Ops of compared trees.
    "tests/e2e/algo:<cuda>": GPU,
    "tests/e2e/algo:peek": "reads a per-process counter that `bump` (a side effect) increments: "
    "its value is how many calls this process made before",
    "tests/e2e/contracts:scale_any": leading("x"),
    "tests/e2e/contracts:add_same": leading("a"),
    "tests/e2e/contracts:rms_last": leading("x"),
    "tests/e2e/contracts:rms_res": leading("x"),
    "tests/e2e/contracts:rms_res_bwd": leading("inv"),
    "tests/e2e/cpu:all_attrs": "left out: attributes of type complex64",
    "tests/e2e/cpu:failing_text": NO_DEVICE,
    "tests/e2e/cpu:fill_answer": NO_DEVICE,
    **{
        f"tests/e2e/shard_sums:{op}": leading("x") for op in ("rms_rows", "rms_rows_grad", "rms_norm", "rms_rows_plain")
    },
    "tests/e2e/prims:csrmv": f"left out: its transpose kernel 'csrmv_tv' {OUT_BWD}",
    "tests/e2e/prims:csrmv_cuda": f"left out: its transpose kernel 'csrmv_cuda_tv' {OUT_BWD}",
    "tests/e2e/prims:fill": NO_DEVICE,
    "tests/e2e/modules:fill": NO_DEVICE,
    "tests/e2e/prims:accumulate": NO_DEVICE,
    "tests/e2e/prims:zeros_cuda": NO_DEVICE,
    "tests/e2e/prims:<cuda>": GPU,
    "tests/e2e/sharding:<cuda>": GPU,
    **{
        f"tests/e2e/structs:{op}": "left out: parameter 'p' (attr.p:Affine)"
        for op in ("affine", "scale_t", "affine_ref")
    },
    "tests/e2e/structs:ints": "left out: parameter 'v' (attr.v:Ints)",
    "tests/e2e/structs:window_sum": "left out: parameter 'w' (attr.w:Window)",
    "tests/e2e/structs:arrays": "left out: array attributes of type float16[]",
    "tests/e2e/typed:fill": NO_DEVICE,
    "tests/e2e/vocab:Affine": "left out: parameter 'attrs' (attrs)",
    "tests/e2e/vocab:CountAttrs": "left out: parameter 'attrs' (attrs)",
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
            "csrmv_tdata": ((indices, indptr, v, ct), {}),
            # The output is v's cotangent: one per column.
            "csrmv_tv_out": ((data, indices, indptr, ct), {"out": torch.empty(5, dtype=torch.float64)}),
        }[op]
        return [(*given, "a 4 x 5 CSR matrix of 7 entries")]

    return draw


def _blocks(torch, rng):
    # 2 blocks of a 3-row CSR matrix over x's 5 columns, 4 entries each
    # (the second block padded). The kernel writes r1 - 1 rows per block,
    # at a stride of r1 - 1: y's r must be r1 - 1, which the contract does
    # not say (r is y's own dimension, and drawn it would differ).
    indices = torch.tensor([[0, 3, 1, 4], [2, 4, 0, 0]], dtype=torch.int32)
    indptr = torch.tensor([[0, 1, 3, 4], [0, 2, 2, 3]], dtype=torch.int32)
    data = torch.from_numpy(rng.standard_normal((2, 4)).astype(np.float32))
    x = torch.from_numpy(rng.standard_normal(5).astype(np.float32))
    out = torch.empty(2, 3, dtype=torch.float32)
    return [((data, indices, indptr, x), {"out": out}, "2 blocks of a 3 x 5 CSR matrix of 4 entries")]


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


def _given(inputs, out=(), positive=False, **attrs):
    # One draw of an op whose tensors have no typed contract (or whose
    # attribute the contract cannot draw): its inputs and out= outputs
    # as (dtype, shape), what the kernel reads them as. Floats are drawn
    # normal (their magnitudes where the kernel refuses a negative),
    # integers in [-50, 50).
    def draw(torch, rng):
        tensors = []
        for dtype, shape in inputs:
            if dtype.startswith("int"):
                a = rng.integers(-50, 50, shape)
            else:
                a = rng.standard_normal(shape)
                a = np.abs(a) if positive else a
            tensors.append(torch.from_numpy(np.asarray(a)).to(getattr(torch, dtype)))
        keywords = dict(attrs)
        if out:
            given = tuple(torch.empty(shape, dtype=getattr(torch, dtype)) for dtype, shape in out)
            keywords["out"] = given[0] if len(given) == 1 else given
        shown = " ".join(f"{d}{list(s)}" for d, s in inputs)
        if out:
            shown += " -> " + " ".join(f"{d}{list(s)}" for d, s in out)
        shown += "".join(f" {k}={v!r}" for k, v in attrs.items())
        return [(tuple(tensors), keywords, f"given: {shown}")]

    return draw


def _each(*draws):
    # Every draw of several.
    return lambda torch, rng: [d for draw in draws for d in draw(torch, rng)]


F32 = ("float32", (3, 4))
F64 = ("float64", (5,))

# Inputs of ops whose kernels need more than the contract says (a valid
# sparse structure, the output shapes an out= op's untyped tensors take, a
# string attribute): "tree:op" -> draw(torch, rng) -> [(tensors, keywords,
# what was drawn)]; an out= op's outputs are keyword `out` (a tensor, a
# tuple for several), whose shapes and dtypes are what both sides are given.
INPUTS = {
    # A source tuned over its defines, untyped: each built candidate by
    # config= (its transpose and the TILE it was compiled with).
    "tests/e2e/tune_untyped:transpose_any_out": _each(
        *(_given([("float32", (5, 3))], [("float32", (3, 5)), ("int32", (1,))], config={"TILE": t}) for t in (1, 32))
    ),
    # One kernel name in three modules: each module's function calls its own.
    **{
        f"tests/e2e/modules:{m}__scale_out": _given([F32], [F32], alpha=1.5)
        for m in ("jit_coo", "jit_csr", "jit_csr_b5")
    },
    "tests/e2e/modules:ops__add_out": _given([F32, F32], [F32]),
    "tests/e2e/modules:ops__neg_out": _given([F32], [F32]),
    "tests/e2e/modules:ops__len_out": _given([F32], [F32]),
    "tests/e2e/algo:twice_out": _given([F64], [F64]),
    "tests/e2e/algo:twice_bwd_out": _given([F64, F64], [F64]),
    **{f"tests/e2e/algo:ew_{m}_out": _given([F32], [F32]) for m in ("seq", "unrolled", "expand", "bcast", "legacy")},
    "tests/e2e/cpu:scale_out": _given([F32], [F32], alpha=1.5),
    "tests/e2e/cpu:add_out": _given([F32, F32], [F32]),
    "tests/e2e/cpu:minmax_out": _given([("float32", (7,))], [("float32", ()), ("float32", ())]),
    "tests/e2e/cpu:transpose_out": _given([("float32", (3, 5))], [("float32", (5, 3))]),
    "tests/e2e/cpu:checked_sqrt_out": _given([F32], [F32], positive=True),
    "tests/e2e/cpu:double_it_out": _given([F32], [F32]),
    "tests/e2e/cpu:add_three_out": _given([F32], [F32], k=2.0),
    "tests/e2e/cpu:axpy_f32_out": _given([F32, F32], [F32], alpha=-1.25),
    "tests/e2e/cpu:axpy_f64_out": _given([F64, F64], [F64], alpha=-1.25),
    "tests/e2e/cpu:neg_float_out": _given([F32], [F32]),
    "tests/e2e/cpu:neg_int32_t_out": _given([("int32", (6,))], [("int32", (6,))]),
    "tests/e2e/cpu:add_i64_out": _given([("int64", (6,))] * 2, [("int64", (6,))]),
    "tests/e2e/cpu:scale_f64_out": _given([F64], [F64], alpha=0.75, shift=3),
    "tests/e2e/prims:csrmv_tdata": _prims("csrmv_tdata"),
    "tests/e2e/prims:csrmv_tv_out": _prims("csrmv_tv_out"),
    "tests/e2e/sharding:csr_rows_out": _blocks,
    **{
        f"tests/e2e/solver:{op}": _solver(op)
        for op in ("dot", "dot_c128", "dot_tx", "solve", "solve_c128", "solve_each")
    },
    "tests/e2e/structs:poly_out": _given([F64], [F64], c=[0.5, -1.0, 2.0]),
    # idx holds indices into x's 12 elements.
    "tests/e2e/structs:gather_out": _given([F32], [("float32", (4,))], idx=[11, 0, 5, 5]),
    "tests/e2e/typed:untyped_out": _given([F32], [F32], a=0.75),
    "tests/e2e/vocab:AddLength": _given([("float32", (5,))], word="h\u00e9llo", scale=0.5),
    "tests/e2e/vocab:Apply_out": _each(*(_given([F32], [F32], mode=m) for m in ("double", "square", "negate"))),
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
        self.skipped = {}  # op -> why not compared
        self.described = {}  # id -> "op at draw"
        self.errors = {}  # id -> what torch raised


def _left_out(stderr):
    return dict(re.findall(r"warning: the torch target leaves out kernel '([^']+)': ([^\n]+)", stderr))


def _contract_draws(spec, torch, rng):
    # check_torch's draws from the contract. An out= op's outputs are drawn
    # with its inputs, from one table of extents (a dimension an input or an
    # integer attribute names is theirs; one only an output has is drawn
    # like any other), and handed over as `out`.
    outs = tuple(spec.get("out") or ())
    n = len(spec["args"])
    draws = []
    for tensors, keywords, described, _ in _torch_draws({**spec, "args": (*spec["args"], *outs)}, rng, torch, "cpu"):
        if outs:
            keywords = {**keywords, "out": tensors[n] if len(outs) == 1 else tuple(tensors[n:])}
        draws.append((tensors[:n], keywords, described))
    return draws


def _untyped(spec):
    # The first tensor (input or output) whose dtype or shape the contract
    # does not give: none can be drawn.
    return next((a[0] for a in (*spec["args"], *(spec.get("out") or ())) if a[1] is None or a[2] is None), None)


def _shapes(out):
    # [(shape, dtype name)] of the outputs given as `out` (a tensor, a
    # tuple for several).
    return [(tuple(o.shape), str(o.dtype).removeprefix("torch.")) for o in (out if isinstance(out, tuple) else (out,))]


def _filled(torch, shapes):
    # The tensors an out= op writes, filled with what no kernel here writes
    # (NaN, an integer type's least value, True): an element the kernel
    # leaves unwritten then differs from JAX's, where two fresh buffers'
    # zeros would agree.
    outs = []
    for shape, dtype in shapes:
        dtype = getattr(torch, dtype)
        if dtype.is_floating_point or dtype.is_complex:
            fill = float("nan")
        elif dtype == torch.bool:
            fill = True
        else:
            fill = torch.iinfo(dtype).min
        outs.append(torch.full(shape, fill, dtype=dtype))
    return outs[0] if len(outs) == 1 else tuple(outs)


def _torch_side(tree, torch, arrays, bf16, seed=0):
    m = tree.built.module
    rng = np.random.default_rng(seed)
    for key, spec in torch_ops(m).items():
        if spec["platform"] != "cpu":
            tree.skipped[key] = UNCOMPARED.get(f"{tree.path}:<{spec['platform']}>", f"a {spec['platform']} kernel")
            continue
        if f"{tree.path}:{key}" in UNCOMPARED:
            tree.skipped[key] = UNCOMPARED[f"{tree.path}:{key}"]
            continue
        given = INPUTS.get(f"{tree.path}:{key}")
        untyped = _untyped(spec)
        if given is None and untyped is not None:
            tree.skipped[key] = f"'{untyped}' has no typed contract: its tensors must be given in INPUTS"
            continue
        fn = _resolve(m, spec["call"])
        # An out= op has no autograd formula: torch registers none for an op
        # that mutates its arguments.
        out_op = bool(spec.get("out"))
        autograd = not out_op and torch._C._dispatch_has_kernel_for_dispatch_key(f"{m.NAMESPACE}::{key}", "Autograd")
        names = [a[0] for a in spec["args"]]
        draws = given(torch, rng) if given else _contract_draws(spec, torch, rng)
        for d, (tensors, keywords, described) in enumerate(draws):
            cid = f"{m.NAMESPACE}.{key}.{d}"
            keywords = dict(keywords)
            # An out= op's outputs: their shapes and dtypes, which both sides are given.
            shapes = _shapes(keywords.pop("out")) if out_op else None
            assert shapes is None or len(shapes) == len(spec["out"]), (tree.path, key, shapes, spec["out"])
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
            run = keywords if shapes is None else {**keywords, "out": _filled(torch, shapes)}
            try:
                outs, grads, cts = _run_torch(fn, tensors, run, wrt, names, rng, torch)
            except Exception as e:
                # Said as a failure; the forward alone is still compared.
                tree.errors[cid] = f"{type(e).__name__}: {e}".splitlines()[0]
                if not wrt:
                    continue
                outs, grads, cts = _run_torch(fn, tensors, run, [], names, rng, torch)
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
                    "out": None if shapes is None else [[list(s), t] for s, t in shapes],
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
    # the build leaves out or this lane does not run (an op whose tensors
    # have no typed contract is compared only with INPUTS), and nothing
    # listed or given is stale.
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
            assert op in listed or platform in listed, (path, op, why)
        stale = set(listed) - set(left_out) - set(tree.skipped) - platforms
        assert not stale, (path, sorted(stale))
        given = {k.split(":", 1)[1] for k in INPUTS if k.startswith(path + ":")}
        assert given <= tree.ops, (path, "INPUTS for ops not compared", sorted(given - tree.ops))
    assert all(k.split(":", 1)[0] in compared for k in INPUTS), sorted(INPUTS)


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
