"""brainevent's own CUDA kernels from PyTorch and from JAX (scripts/gpu-check.sh,
STEPS=brainevent-torch).

OUT is brainevent 0.3.0's whole CUDA tree, as brainevent ships it (untyped
`BE::Tensor`s: their outputs are given by the caller, `out=` on both
sides), built once with `--target jax,torch` under the library name NAME,
with per-file modules; MODULE is the module of `_csr/binary_csrmv.cu` and
`_csr/float_csrmv.cu` (`csr_binary_csrmv`, `csr_float_csrmv`). A sample of their kernels (homogeneous and
heterogeneous weights, bool and float events, f32 and f64, the
non-transposed and the transposed products) runs on two CSR matrices whose
mean row lengths take the thread-per-row and the warp-per-row paths. Each
kernel's output from torch must equal its output from JAX, and both must
equal numpy's product.

usage: python tests/gpu/check_brainevent_torch.py OUT NAME
"""

import sys
from pathlib import Path

import numpy as np

# begen.testing, from this checkout (the device has no begen installed).
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))


def csr(rng, m, n, per_row):
    counts = rng.integers(0, 2 * per_row + 1, size=m)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    indices = np.concatenate([np.sort(rng.choice(n, size=c, replace=False)) for c in counts]).astype(np.int32)
    return indptr, indices


def dense(indptr, indices, weights, m, n):
    a = np.zeros((m, n))
    for i in range(m):
        for j in range(indptr[i], indptr[i + 1]):
            a[i, indices[j]] += weights[0] if weights.size == 1 else weights[j]
    return a


def main(out, name):
    import jax
    import jax.numpy as jnp
    import torch
    from begen.testing import torch_ops

    sys.path.insert(0, out)
    jm = __import__(name)
    tm = __import__(f"{name}_torch")
    ops = torch_ops(tm)

    def functions(module, kernel):
        # JAX: the module's namespace; torch: the op `<module>__<kernel>`'s
        # typed function.
        # An untyped kernel is the out= op `<kernel>_out`.
        spec = ops.get(f"{module}__{kernel}_out") or ops.get(f"{module}__{kernel}")
        if spec is None:
            raise AssertionError(f"{name}_torch has no op {module}__{kernel}_out")
        tfn = tm
        for part in spec["call"].split("."):
            tfn = getattr(tfn, part)
        return getattr(getattr(jm, module), kernel), tfn

    jax.config.update("jax_enable_x64", True)
    assert torch.cuda.is_available(), "torch sees no GPU"
    rng = np.random.default_rng(0)
    kernels = []
    for w in ("homo", "hetero"):
        for f in ("f32", "f64"):
            for e in ("bool", "float"):
                kernels.append(("csr_binary_csrmv", f"binary_csrmv_nt_auto_{w}_{f}_{e}", w, f, e, False))
    for f in ("f32", "f64"):
        kernels.append(("csr_float_csrmv", f"csrmv_nt_auto_{f}", "homo", f, "value", False))
        kernels.append(("csr_float_csrmv", f"csrmv_t_warp_{f}", "homo", f, "value", True))
    compared = bitwise = 0
    m, n = 300, 257
    for per_row in (3, 40):
        indptr, indices = csr(rng, m, n, per_row)
        for module, kernel, w, f, e, transposed in kernels:
            jfn, tfn = functions(module, kernel)
            dtype = np.float32 if f == "f32" else np.float64
            weights = rng.standard_normal(1 if w == "homo" else indices.size).astype(dtype)
            length = m if transposed else n
            if e == "bool":
                vector = rng.random(length) < 0.4
            elif e == "float":
                # The `_float` kernels take float32 events whatever their weights.
                vector = (rng.random(length) < 0.4).astype(np.float32)
            else:
                vector = rng.standard_normal(length).astype(dtype)
            a = dense(indptr, indices, weights, m, n)
            want = (a.T if transposed else a) @ vector.astype(np.float64)
            rows = n if transposed else m
            args = (weights, indices, indptr, vector)
            got_jax = np.asarray(jfn(*map(jnp.asarray, args), out=jax.ShapeDtypeStruct((rows,), dtype)))
            targs = [torch.from_numpy(np.ascontiguousarray(x)).cuda() for x in args]
            tout = torch.empty(rows, dtype=getattr(torch, str(np.dtype(dtype))), device="cuda")
            got_torch = tfn(*targs, out=tout)
            got_torch = got_torch.cpu().numpy()
            tol = 1e-4 if f == "f32" else 1e-10
            np.testing.assert_allclose(got_jax, want, rtol=tol, atol=tol, err_msg=f"{kernel} (JAX) against numpy")
            if transposed:
                # The transposed product adds with atomics: the order of the
                # additions, and so the last bits, differ between runs.
                np.testing.assert_allclose(
                    got_torch, got_jax, rtol=tol, atol=tol, err_msg=f"{kernel}: torch against JAX"
                )
            else:
                np.testing.assert_array_equal(got_torch, got_jax, err_msg=f"{kernel}: torch against JAX")
                bitwise += 1
            compared += 1
            print(f"PASS {kernel} (mean row length {per_row}): torch equals JAX equals numpy")
    print(f"brainevent-torch: {compared} kernel calls compared, {bitwise} bitwise equal between torch and JAX")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
