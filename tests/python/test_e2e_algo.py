"""Algorithms, gradients, side effects, vmap methods, export in a fresh
process and the XLA FFI version gate, end to end on the CPU: tests/e2e/algo
built by the CLI with `--platform cuda` (pip's nvcc; a CUDA implementation
sits in the same library) and with `--platform cpu`, called from JAX."""

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import REPO, import_module, missing, run_begen

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane


def nvcc():
    path = os.environ.get("NVCC")
    if not path or not os.path.isfile(path):
        missing("no nvcc: NVCC is not set (source scripts/env.sh)")
    return path


@pytest.fixture(scope="module")
def built(jax_cpu, tmp_path_factory):
    """tests/e2e/algo with its CUDA kernels, for sm_90, imported on a CPU."""
    out = tmp_path_factory.mktemp("e2e_algo")
    run_begen("build", REPO / "tests/e2e/algo", "--out", out, "--platform", "cuda", "--arch", "sm_90", "--quiet",
              env={"NVCC": nvcc()})
    return out


@pytest.fixture(scope="module")
def algo(built):
    return import_module(built, "e2e_algo")


def targets_in(jax, fn, *args):
    """The FFI targets the HLO of `jit(fn)` lowered for the CPU calls."""
    text = jax.jit(fn).lower(*args).as_text()
    return sorted(set(re.findall(r'custom_call @([\w.\[\]=,]+)', text) + re.findall(r'call_target_name = "([^"]+)"', text)))


def f32(n, start=0.0):
    return np.arange(n, dtype=np.float32) + start


def test_dispatch_picks_the_best_cpu_implementation_beside_a_cuda_one(algo, jax_cpu):
    jax = jax_cpu
    x, y = f32(5), f32(5, start=1.0)
    assert "e2e_algo.add_cuda" in algo.TARGETS.values()
    np.testing.assert_allclose(algo.add(x, y, alpha=2.0), x + 2 * y)
    np.testing.assert_allclose(jax.jit(lambda a, b: algo.add(a, b, alpha=2.0))(x, y), x + 2 * y)
    # Lowered for the CPU: the priority-10 CPU kernel only, no CUDA target.
    assert targets_in(jax, lambda a, b: algo.add(a, b, alpha=2.0), x, y) == ["e2e_algo.add_fast"]
    # Lowered for CUDA (as the GPU machine or an export would): the CUDA
    # kernel only; for both platforms, both, behind jax's platform switch.
    lower = lambda platforms: jax.jit(lambda a, b: algo.add(a, b, alpha=2.0)).trace(x, y).lower(
        lowering_platforms=platforms).as_text()
    assert re.findall(r"custom_call @([\w.]+)", lower(("cuda",))) == ["e2e_algo.add_cuda"]
    assert sorted(re.findall(r"custom_call @([\w.]+)", lower(("cpu", "cuda")))) == ["e2e_algo.add_cuda", "e2e_algo.add_fast"]
    # add_fast refuses alpha=0.0: the algorithm falls back to add_cpu.
    assert targets_in(jax, lambda a, b: algo.add(a, b, alpha=0.0), x, y) == ["e2e_algo.add_cpu"]
    np.testing.assert_allclose(algo.add(x, y, alpha=-1.0), x - y)
    # An algorithm with no CPU implementation: lowering for the CPU is jax's
    # error naming the platform (no missing-handler error from XLA).
    with pytest.raises(NotImplementedError, match="not found for platform cpu"):
        algo.cuda_only(x, y, alpha=1.0)
    # Under vmap too.
    xs = np.stack([x, y])
    np.testing.assert_allclose(jax.vmap(lambda a: algo.add(a, a, alpha=1.0))(xs), 2 * xs)


def test_an_unsupported_value_raises_naming_the_implementation(algo):
    x = f32(3)
    with pytest.raises(ValueError, match=r"add_fast does not support alpha=0\.0"):
        algo.add_fast(x, x, alpha=0.0)
    # No fallback: the algorithm refuses, naming the implementation.
    with pytest.raises(ValueError, match=r"e2e_algo\.strict: no implementation supports this call: 'mul_fast' "
                                         r"\(cpu, priority 1\) does not support k=0 .*does not fall back"):
        algo.strict(x, k=0)
    np.testing.assert_allclose(algo.strict(x, k=3), 3 * x)


def test_the_registry_lists_and_returns_implementations(algo):
    r = algo.registry
    assert r.algorithms() == ["add", "cuda_only", "sq", "strict"]
    impls = r.implementations("add")
    assert [(i.function, i.platform, i.priority) for i in impls] == [
        ("add_fast", "cpu", 10), ("add_cuda", "cuda", 5), ("add_cpu", "cpu", 0)]
    assert impls[0].unsupported == {"alpha": (0.0, -1.0)}
    assert r.get("add") is algo.add
    assert r.get("add", platform="cpu") is algo.add_fast
    assert r.get("add", platform="gpu") is algo.add_cuda
    assert r.get("add", function="add_cpu") is algo.add_cpu
    with pytest.raises(KeyError, match="has no implementation 'nope'"):
        r.get("add", function="nope")
    with pytest.raises(KeyError, match="no algorithm 'nope'"):
        r.implementations("nope")
    assert "add: add_fast (cpu, 10)" in repr(r)


def test_gradients_through_declared_vjps(algo, jax_cpu):
    jax = jax_cpu
    from jax.test_util import check_grads

    x = np.linspace(0.1, 1.0, 6)
    y = np.linspace(-1.0, 2.0, 6)
    check_grads(lambda a: algo.square(a, scale=3.0), (x,), order=1, modes=["rev"])
    check_grads(lambda a, b: algo.mulsum(a, b), (x, y), order=1, modes=["rev"])
    # Through the algorithm (its CUDA implementation has a vjp too).
    check_grads(lambda a: algo.sq(a, scale=0.5), (x,), order=1, modes=["rev"])
    loss = lambda a: algo.sq(a, scale=3.0).sum()
    np.testing.assert_allclose(jax.grad(loss)(x), 6 * x)
    np.testing.assert_allclose(jax.jit(jax.grad(loss))(x), 6 * x)
    np.testing.assert_allclose(jax.vmap(jax.grad(loss))(np.stack([x, 2 * x])), 6 * np.stack([x, 2 * x]))
    # The backward kernel runs (not jax's autodiff, which has no rule for an FFI call).
    assert targets_in(jax, jax.value_and_grad(loss), x) == ["e2e_algo.square", "e2e_algo.square_bwd"]
    assert targets_in(jax, jax.grad(loss), x) == ["e2e_algo.square_bwd"]  # the forward's value is not needed
    # Untyped kernels: out= given to the forward, made for the backward.
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    np.testing.assert_allclose(jax.grad(lambda a: (algo.twice(a, out=out) ** 2).sum())(x), 8 * x)
    # An integer input gets no cotangent; the float one gets the kernel's.
    idx = np.array([0, 2, 2, 5], np.int32)
    np.testing.assert_allclose(jax.grad(lambda a: algo.gather(a, idx).sum())(x), [1, 0, 2, 0, 0, 1])


def test_side_effects_are_kept_under_jit(algo, jax_cpu):
    jax = jax_cpu
    x = f32(3)
    before = int(algo.peek(np.float32(0)))
    discard = jax.jit(lambda a: (algo.bump(a), a)[1])
    discard(x).block_until_ready()
    discard(x + 1).block_until_ready()
    assert int(algo.peek(np.float32(0))) == before + 2


@pytest.mark.parametrize("name,method", [
    ("ew_seq", "sequential"), ("ew_unrolled", "sequential_unrolled"), ("ew_expand", "expand_dims"),
    ("ew_bcast", "broadcast_all"), ("ew_legacy", "legacy_vectorized")])
def test_each_vmap_method_is_declared_and_batches(algo, jax_cpu, name, method):
    import warnings

    jax = jax_cpu
    fn = getattr(algo, name)
    xs = np.arange(12, dtype=np.float32).reshape(3, 4)
    call = lambda a: fn(a, out=jax.ShapeDtypeStruct(a.shape, a.dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # legacy_vectorized
        np.testing.assert_allclose(jax.vmap(call)(xs), 2 * xs + 1)
        jaxpr = str(jax.make_jaxpr(jax.vmap(call))(xs))
        text = jax.jit(jax.vmap(call)).lower(xs).as_text()
    assert f"vmap_method={method}" in jaxpr, jaxpr
    calls = len(re.findall(r"custom_call @", text))
    loop = "stablehlo.while" in text
    if method == "sequential":
        assert loop and calls == 1, text
    elif method == "sequential_unrolled":  # one call per example, no loop
        assert not loop and calls + len(re.findall(r"call @closed_call", text)) >= 3, text
    else:  # one call on the whole batch
        assert not loop and calls == 1 and re.search(r"custom_call @[\w.]+\(%\w+\) .*: \(tensor<3x4xf32>\)", text), text


def test_export_round_trip_in_a_fresh_process(algo, built, jax_cpu, tmp_path):
    from jax import export

    x = np.linspace(0.1, 1.0, 4)
    fn = jax_cpu.jit(lambda a: (algo.sq(a, scale=2.0), jax_cpu.grad(lambda b: algo.sq(b, scale=2.0).sum())(a)))
    exp = export.export(fn, disabled_checks=algo.export_safety_checks())(x)
    blob = tmp_path / "fn.bin"
    blob.write_bytes(exp.serialize())
    for how in ("m.deserialize(blob)", "(m.register(), jax.export.deserialize(blob))[1]"):
        script = textwrap.dedent(f"""
            import sys; sys.path.insert(0, {str(built)!r})
            import jax, numpy as np
            jax.config.update("jax_enable_x64", True)
            import e2e_algo as m
            blob = bytearray(open({str(blob)!r}, "rb").read())
            exp = {how}
            y, g = exp.call(np.linspace(0.1, 1.0, 4))
            print("y", np.asarray(y).round(6).tolist())
            print("g", np.asarray(g).round(6).tolist())
        """)
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert f"y {(2 * x * x).round(6).tolist()}" in proc.stdout, proc.stdout
        assert f"g {(4 * x).round(6).tolist()}" in proc.stdout, proc.stdout
    # Without registering, XLA's own message: what `deserialize` avoids.
    script = textwrap.dedent(f"""
        import jax, numpy as np
        jax.config.update("jax_enable_x64", True)
        exp = jax.export.deserialize(bytearray(open({str(blob)!r}, "rb").read()))
        exp.call(np.linspace(0.1, 1.0, 4))
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert proc.returncode != 0 and "e2e_algo.square" in proc.stderr, proc.stderr


def test_the_ffi_version_gate_refuses_a_mismatch(built, jax_cpu):
    # A fresh copy of the module each time: registration happens once.
    m = import_module(built, "e2e_algo")
    assert m._begen_built_ffi_api() is None  # not loaded yet
    running = m._begen_running_ffi_api()
    assert re.fullmatch(r"\d+\.\d+", running), running
    for forged in ("99.0", f"{running.split('.')[0]}.{int(running.split('.')[1]) + 1}"):
        m = import_module(built, "e2e_algo")
        m._begen_built_ffi_api = lambda forged=forged: forged
        with pytest.raises(RuntimeError, match=rf"libe2e_algo\.so was built against XLA FFI API {re.escape(forged)}, "
                                               rf"but the running jaxlib \S+ has XLA FFI API {re.escape(running)}.*"
                                               r"Rebuild it for every jaxlib from \S+ on: `begen build --jax-min "):
            m.add(f32(2), f32(2), alpha=1.0)
        assert not m._registered
    # The library records what it was built against; an older minor version passes.
    m = import_module(built, "e2e_algo")
    m.register()
    assert m._begen_built_ffi_api() == running
    m = import_module(built, "e2e_algo")
    major, minor = map(int, running.split("."))
    if minor > 0:
        m._begen_built_ffi_api = lambda: f"{major}.{minor - 1}"
        m.register()
    # The running version is forged the same way.
    m = import_module(built, "e2e_algo")
    m._begen_running_ffi_api = lambda: f"{major + 1}.0"
    with pytest.raises(RuntimeError, match=rf"has XLA FFI API {major + 1}\.0"):
        m.register()


def test_a_cpu_build_leaves_the_cuda_implementations_out(jax_cpu, tmp_path):
    proc = run_begen("build", REPO / "tests/e2e/algo", "--out", tmp_path, "--platform", "cpu", "--name", "algo_cpu")
    assert "skipping CUDA source `algo.cu`" in proc.stderr, proc.stderr
    assert "algorithm `cuda_only` has no implementation in this build" in proc.stderr, proc.stderr
    m = import_module(tmp_path, "algo_cpu")
    assert m.registry.algorithms() == ["add", "sq", "strict"] and not hasattr(m, "cuda_only")
    assert [i.function for i in m.registry.implementations("add")] == ["add_fast", "add_cpu"]
    assert [i.function for i in m.registry.implementations("sq")] == ["square"]
    x = np.linspace(0.1, 1.0, 3)
    np.testing.assert_allclose(jax_cpu.grad(lambda a: m.sq(a, scale=1.0).sum())(x), 2 * x)


def test_the_stub_declares_algorithms_registry_and_deserialize(built):
    import ast

    stub = ast.parse((built / "e2e_algo.pyi").read_text())
    functions = {n.name: n for n in stub.body if isinstance(n, ast.FunctionDef)}
    assert {"add", "sq", "strict", "cuda_only", "deserialize", "register", "square"} <= set(functions)
    assert ast.unparse(functions["add"].args) == "x: ArrayLike, y: ArrayLike, /, *, alpha: float, out: jax.ShapeDtypeStruct | None=None"
    annotated = {t.target.id for t in stub.body if isinstance(t, ast.AnnAssign)}
    assert "registry" in annotated
    manifest = (built / "e2e_algo.yaml").read_text()
    assert "algorithms:" in manifest and "vjp: square_bwd" in manifest and "has_side_effect: true" in manifest
    assert "xla_ffi_api_symbol: begen_ffi_api__e2e_algo" in manifest
