"""Precompiled GPU kernels (begen.yaml `binaries:`) on a machine without a
GPU: cuTile cubins exported at test time and nvcc's PTX/cubin of a plain
CUDA file, bound beside a CPU and a CUDA source into one library, which must build,
load, run its CPU kernel, and lower each binary kernel's call to its custom
call with the right attributes. tests/gpu/check_binaries.py runs them.
"""

import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO, import_module, missing, run_begen


@pytest.fixture(scope="module")
def bink(jax_cpu, tmp_path_factory):
    try:
        import cuda.tile  # noqa: F401
    except ImportError:
        missing("cuda.tile is not installed (pip cuda-tile, from scripts/setup.sh)")
    import os

    if not (os.environ.get("NVCC") or shutil.which("nvcc")):
        missing("no nvcc (NVCC or PATH; source scripts/env.sh)")
    root = tmp_path_factory.mktemp("bink") / "kernels"
    shutil.copytree(REPO / "tests/e2e/binaries", root, ignore=shutil.ignore_patterns("bin"))
    proc = subprocess.run([sys.executable, str(REPO / "tests/e2e/binaries/make_binaries.py"), str(root / "bin")],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = root.parent / "out"
    proc = run_begen("build", root, "--out", out)
    # The fatbin's kernels are listed (its cubin is read): no warning at all.
    assert proc.returncode == 0 and "warning" not in proc.stderr, proc.stderr
    return out, import_module(out, "bink")


def lowered(jax, f, *args):
    return jax.jit(f).trace(*args).lower(lowering_platforms=("cuda",)).as_text()


def test_library_loads_and_runs_its_cpu_kernel(bink, jax_cpu):
    out, m = bink
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(out / "libbink.so")],
                             capture_output=True, text=True, check=True).stdout
    names = ("tile_scale", "tile_scale_i64", "tile_add2d", "tile_scalars", "tile_sum", "tile_add_list2d", "affine",
             "axpy", "axpy_fat", "add_one", "cu_twice", "capture_probe", "tile_scale_graph")
    for name in names:
        assert f"begen_bink_{name}" in symbols
    # The driver is opened at run time: no libcuda in the library's needs.
    readelf = ["readelf", "-d", str(out / "libbink.so")]
    needed = subprocess.run(readelf, capture_output=True, text=True, check=False).stdout
    assert "libcuda" not in needed
    x = jax_cpu.numpy.arange(8, dtype="float32")
    np.testing.assert_allclose(m.add_one(x, out=jax_cpu.ShapeDtypeStruct((8,), "float32")), np.arange(8) + 1)


def test_calls_lower_to_their_custom_calls(bink, jax_cpu):
    jax = jax_cpu
    _, m = bink
    x = jax.numpy.ones(64, "float32")
    h = jax.numpy.ones((32, 64), "float16")

    def f(x, h):
        return (m.tile_scale(x, s=2.0), m.tile_scale_i64(x, s=0.5), m.tile_add2d(h, h),
                m.tile_scalars(a=1, b=2.5, c=-3, d=True, e=2**40, out=jax.ShapeDtypeStruct((64,), "float32")),
                m.affine(x, p={"tag": 3, "scale": 0.5, "shift": 0.25}), m.axpy(x, x, a=2.0), m.axpy_fat(x, x, a=1.0), m.cu_twice(x))

    text = lowered(jax, f, x, h)
    calls = re.findall(r"custom_call @([\w.]+)", text)
    assert calls == ["bink.tile_scale", "bink.tile_scale_i64", "bink.tile_add2d", "bink.tile_scalars",
                     "bink.affine", "bink.axpy", "bink.axpy_fat", "bink.cu_twice"], calls
    # The struct's bytes, C layout: tag @0, scale @8, shift @16, 24 bytes.
    raw = np.zeros(24, np.uint8)
    raw[0:2] = np.frombuffer(np.uint16(3).tobytes(), np.uint8)
    raw[8:16] = np.frombuffer(np.float64(0.5).tobytes(), np.uint8)
    raw[16:20] = np.frombuffer(np.float32(0.25).tobytes(), np.uint8)
    assert f"p = dense<[{', '.join(map(str, raw))}]> : tensor<24xui8>" in text
    assert "e = 1099511627776 : i64" in text
    # Outputs are inferred from the inputs' dimensions.
    assert jax.eval_shape(m.tile_add2d, h, h).shape == (32, 64)
    assert jax.eval_shape(lambda v: m.affine(v, p={"tag": 0, "scale": 1, "shift": 0}), x).shape == (64,)


def test_contracts_and_struct_errors_raise_in_python(bink, jax_cpu):
    jax = jax_cpu
    _, m = bink
    x = jax.numpy.ones(64, "float32")
    with pytest.raises(TypeError, match=r"tile_scale: parameter 'arg0' must be float32, got float16"):
        lowered(jax, lambda v: m.tile_scale(v, s=1.0), x.astype("float16"))
    with pytest.raises(ValueError, match=r"dimension 'n' is 64"):
        lowered(jax, lambda a, b: m.axpy(a, b, a=1.0), x, x[:4])
    with pytest.raises(TypeError, match=r"affine: attribute 'p' \(Affine\): member 'shift' is missing"):
        lowered(jax, lambda v: m.affine(v, p={"tag": 1, "scale": 1.0}), x)
    with pytest.raises(TypeError, match=r"has no member 'bias'"):
        lowered(jax, lambda v: m.affine(v, p={"tag": 1, "scale": 1.0, "shift": 0, "bias": 1}), x)
    with pytest.raises(ValueError, match=r"member 'tag': 70000 is out of range"):
        lowered(jax, lambda v: m.affine(v, p={"tag": 70000, "scale": 1.0, "shift": 0}), x)
    with pytest.raises(TypeError, match=r"takes a dict"):
        lowered(jax, lambda v: m.affine(v, p=3), x)


def test_lists_lower_to_one_operand_per_element(bink, jax_cpu):
    # A list parameter is a list or tuple of arrays: each element one operand (after the other inputs),
    # and a hidden uint8 result for its (1 + 2n) 64-bit words per element, which the function drops.
    jax = jax_cpu
    _, m = bink
    x = jax.numpy.ones(64, "float32")
    a = jax.numpy.ones((32, 64), "float32")

    def f(x, a):
        return m.tile_sum([x, 2 * x, x], s=0.5), m.tile_add_list2d(a, (a, a))

    out = jax.eval_shape(f, x, a)
    assert (out[0].shape, out[0].dtype, out[1].shape) == ((64,), "float32", (32, 64))
    text = lowered(jax, f, x, a)
    calls = [line for line in text.splitlines() if "stablehlo.custom_call" in line]
    assert len(calls) == 2, text
    # tile_sum: three operands, (its output, 3 elements x 3 words x 8 bytes).
    assert re.search(r"@bink\.tile_sum\(%\w+, %\w+, %\w+\)", calls[0]), calls[0]
    assert "-> (tensor<64xf32>, tensor<72xui8>)" in calls[0], calls[0]
    # tile_add_list2d: the array, then the list's two elements; 2 x 5 words.
    assert re.search(r"@bink\.tile_add_list2d\(%\w+, %\w+, %\w+\)", calls[1]), calls[1]
    assert "-> (tensor<32x64xf32>, tensor<80xui8>)" in calls[1], calls[1]
    # One element, under jit and vmap (one call per batch element).
    assert lowered(jax, lambda v: m.tile_sum((v,), s=1.0), x).count("custom_call @bink.tile_sum") == 1
    batched = jax.eval_shape(jax.vmap(lambda v: m.tile_sum([v, v], s=1.0)), jax.numpy.ones((3, 64), "float32"))
    assert batched.shape == (3, 64)


def test_list_errors_raise_in_python(bink, jax_cpu):
    jax = jax_cpu
    _, m = bink
    x = jax.numpy.ones(64, "float32")
    with pytest.raises(TypeError, match=r"tile_sum: parameter 'arg0' takes a list or tuple of arrays, got ArrayImpl"):
        m.tile_sum(x, s=1.0)
    with pytest.raises(ValueError, match=r"tile_sum: parameter 'arg0' is an empty list; the kernel takes at least one"):
        m.tile_sum([], s=1.0)
    with pytest.raises(TypeError, match=r"tile_sum: parameter 'arg0\[1\]' must be float32, got float16"):
        lowered(jax, lambda v: m.tile_sum([v, v.astype("float16")], s=1.0), x)
    with pytest.raises(ValueError, match=r"tile_sum: dimension 'n' is 64 \(from 'arg0\[0\]' axis 0\) but parameter "
                                         r"'arg0\[2\]' has 32 at axis 0"):
        lowered(jax, lambda v: m.tile_sum([v, v, v[:32]], s=1.0), x)
    a = jax.numpy.ones((32, 64), "float32")
    with pytest.raises(ValueError, match=r"parameter 'arg1\[0\]' must have rank 2"):
        lowered(jax, lambda a: m.tile_add_list2d(a, [a[0]]), a)
    with pytest.raises(ValueError, match=r"dimension 'm' is 32 \(from 'arg0' axis 0\) but parameter 'arg1\[1\]' has 16"):
        lowered(jax, lambda a: m.tile_add_list2d(a, [a, a[:16]]), a)


def test_stub_and_manifest_name_the_binaries(bink):
    out, _ = bink
    stub = (out / "bink.pyi").read_text()
    assert "def affine(arg1: ArrayLike, /, *, p: dict" in stub
    assert "def tile_sum(arg0: Sequence[ArrayLike], /, *, s: float, out: jax.ShapeDtypeStruct | None = None)" in stub
    assert "def tile_add_list2d(arg0: ArrayLike, arg1: Sequence[ArrayLike], /, *," in stub
    manifest = (out / "bink.yaml").read_text()
    assert "tile_scale" in manifest
