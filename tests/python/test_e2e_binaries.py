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
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = root.parent / "out"
    proc = run_begen("build", root, "--out", out)
    assert "begen cannot list the kernels of fatbin `bin/ckernels.fatbin` yet" in proc.stderr, proc.stderr
    return out, import_module(out, "bink")


def lowered(jax, f, *args):
    return jax.jit(f).trace(*args).lower(lowering_platforms=("cuda",)).as_text()


def test_library_loads_and_runs_its_cpu_kernel(bink, jax_cpu):
    out, m = bink
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(out / "libbink.so")],
                             capture_output=True, text=True, check=True).stdout
    names = ("tile_scale", "tile_scale_i64", "tile_add2d", "tile_scalars", "affine", "axpy", "axpy_fat", "add_one",
             "cu_twice", "capture_probe")
    for name in names:
        assert f"begen_bink_{name}" in symbols
    # The driver is opened at run time: no libcuda in the library's needs.
    needed = subprocess.run(["readelf", "-d", str(out / "libbink.so")], capture_output=True, text=True).stdout
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


def test_stub_and_manifest_name_the_binaries(bink):
    out, _ = bink
    stub = (out / "bink.pyi").read_text()
    assert "def affine(arg1: ArrayLike, /, *, p: dict" in stub
    manifest = (out / "bink.yaml").read_text()
    assert "tile_scale" in manifest
