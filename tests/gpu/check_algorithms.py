"""Algorithms and gradients on the GPU: tests/e2e/algo built by begen with
`--platform cuda` into OUT_DIR (CPU and CUDA implementations in one library).

- `add` and `sq` dispatch to their CUDA implementations when lowered for
  the GPU (the HLO holds those targets only) and match their CPU
  implementations, run on the host CPU from the same library;
- gradients through the declared vjps run the CUDA backward kernel:
  jax.grad, jit(grad), vmap(grad) and jax.test_util.check_grads;
- the registry returns the CUDA implementation for platform "gpu";
- an export for ("cpu", "cuda") round-trips and runs on both;
- the library's recorded XLA FFI API version is the running jaxlib's.

usage: python tests/gpu/check_algorithms.py OUT_DIR
"""

import re
import sys

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)
sys.path.insert(0, sys.argv[1])
import e2e_algo as m  # noqa: E402

from jax.test_util import check_grads  # noqa: E402

gpu = jax.devices()[0]
assert gpu.platform == "gpu", jax.devices()
cpu = jax.devices("cpu")[0]


def targets(fn, *args, platform):
    text = jax.jit(fn).trace(*args).lower(lowering_platforms=(platform,)).as_text()
    return sorted(set(re.findall(r"custom_call @([\w.]+)", text)))


def on(device, *arrays):
    return [jax.device_put(a, device) for a in arrays]


rng = np.random.default_rng(0)
x = rng.standard_normal(100_003).astype(np.float32)
y = rng.standard_normal(100_003).astype(np.float32)

# Dispatch: the CUDA implementation on the GPU, the best CPU one on the CPU.
add = lambda a, b: m.add(a, b, alpha=2.0)  # noqa: E731
assert targets(add, x, y, platform="cuda") == ["e2e_algo.add_cuda"], targets(add, x, y, platform="cuda")
assert targets(add, x, y, platform="cpu") == ["e2e_algo.add_fast"]
got_gpu = jax.jit(add)(*on(gpu, x, y))
got_cpu = jax.jit(add)(*on(cpu, x, y))
assert next(iter(got_gpu.devices())).platform == "gpu" and next(iter(got_cpu.devices())).platform == "cpu"
np.testing.assert_allclose(np.asarray(got_gpu), x + 2 * y, rtol=1e-6)
np.testing.assert_allclose(np.asarray(got_gpu), np.asarray(got_cpu), rtol=1e-6)
np.testing.assert_allclose(np.asarray(m.add(*on(gpu, x, y), alpha=0.0)), x, rtol=1e-6)  # eager
# The implementation itself, from the registry.
assert m.registry.get("add", platform="gpu") is m.add_cuda
np.testing.assert_allclose(np.asarray(m.add_cuda(*on(gpu, x, y), alpha=-1.0)), x - y, rtol=1e-6)
# cuda_only has no CPU implementation but runs on the GPU.
np.testing.assert_allclose(np.asarray(m.cuda_only(*on(gpu, x, y), alpha=1.0)), x + y, rtol=1e-6)

# Gradients through the CUDA vjp.
xs = rng.uniform(0.1, 1.0, 4099)
loss = lambda a: m.sq(a, scale=3.0).sum()  # noqa: E731
assert targets(jax.value_and_grad(loss), xs, platform="cuda") == ["e2e_algo.square_cuda", "e2e_algo.square_cuda_bwd"]
(xg,) = on(gpu, xs)
np.testing.assert_allclose(np.asarray(jax.grad(loss)(xg)), 6 * xs, rtol=1e-12)
np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(loss))(xg)), 6 * xs, rtol=1e-12)
batch = np.stack([xs, 2 * xs])
np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(loss))(jax.device_put(batch, gpu))), 6 * batch, rtol=1e-12)
check_grads(lambda a: m.sq(a, scale=0.5), (xg,), order=1, modes=["rev"])
(xc,) = on(cpu, xs)
np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(loss))(xg)), np.asarray(jax.jit(jax.grad(loss))(xc)), rtol=1e-12)

# Export for both platforms; the deserialized function runs on each.
from jax import export  # noqa: E402

exp = export.export(jax.jit(lambda a: m.sq(a, scale=2.0)), platforms=("cpu", "cuda"),
                    disabled_checks=m.export_safety_checks())(xs)
again = m.deserialize(exp.serialize())
for device in (gpu, cpu):
    np.testing.assert_allclose(np.asarray(again.call(jax.device_put(xs, device))), 2 * xs * xs, rtol=1e-12)

# The version gate: built against the running jaxlib's XLA FFI API.
assert m._begen_built_ffi_api() == m._begen_running_ffi_api(), (m._begen_built_ffi_api(), m._begen_running_ffi_api())

print(f"check_algorithms: ok on {gpu.device_kind} (XLA FFI API {m._begen_built_ffi_api()})")
