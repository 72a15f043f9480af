"""Calls the example kernels from JAX and prints the results.

    cargo run                      # builds the kernels, prints DIR
    python run.py DIR [CUDA_DIR]   # DIR holds demo_cpu.py and libdemo_cpu.so

CUDA_DIR (from `cargo run --features cuda`) is used only when JAX sees a GPU.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)


def show(label, value):
    print(f"{label:<34} {np.asarray(value)}")


def run_cpu(m):
    x = jnp.arange(1.0, 6.0, dtype=jnp.float32)
    like = jax.ShapeDtypeStruct(x.shape, x.dtype)
    scalar = jax.ShapeDtypeStruct((), jnp.float32)

    show("scale(x, factor=2.5)", m.scale(x, factor=2.5, out=like))
    show("add(x, x)", m.add(x, x, out=like))
    mean, var = m.mean_var(x, out=(scalar, scalar))
    show("mean_var(x)", (mean, var))

    z = jnp.array([1 + 1j, 2 - 1j], dtype=jnp.complex64)
    show("complex_scale(z, factor=1j)", m.complex_scale(z, factor=1j, out=jax.ShapeDtypeStruct(z.shape, z.dtype)))
    show("half_fill(value=1.5)", m.half_fill(value=1.5, out=jax.ShapeDtypeStruct((3,), jnp.float16)))
    i = jnp.arange(3, dtype=jnp.int64)
    show("shift_i64(i, offset=2**40)", m.shift_i64(i, offset=2**40, out=jax.ShapeDtypeStruct(i.shape, i.dtype)))

    show("clamp_f32(x, lo=2, hi=4)", m.clamp_f32(x, lo=2.0, hi=4.0, out=like))
    k = jnp.arange(-3, 4, dtype=jnp.int32)
    show("clamp_i32(k, lo=-1, hi=1)", m.clamp_i32(k, lo=-1, hi=1, out=jax.ShapeDtypeStruct(k.shape, k.dtype)))

    show("jit(scale)(x, factor=-1)", jax.jit(lambda v: m.scale(v, factor=-1.0, out=like))(x))
    rows = jnp.stack([x, 2 * x])
    show("vmap(scale) over rows", jax.vmap(lambda r: m.scale(r, factor=10.0, out=like))(rows))

    try:
        m.safe_log(jnp.array([1.0, -1.0], dtype=jnp.float32),
                   out=jax.ShapeDtypeStruct((2,), jnp.float32)).block_until_ready()
    except Exception as e:  # XLA reports the kernel's BE_CHECK message
        print(f"{'safe_log([1, -1])':<34} raised: {str(e).splitlines()[0]}")
    show("safe_log(x) afterwards", m.safe_log(x, out=like))


def run_cuda(m):
    x = jnp.arange(8, dtype=jnp.float32)
    like = jax.ShapeDtypeStruct(x.shape, x.dtype)
    show("saxpy(x, x, a=3) [GPU]", m.saxpy(x, x, a=3.0, out=like))
    h = jnp.linspace(-2, 2, 5, dtype=jnp.float16)
    show("leaky_relu_f16(h, slope=0.5) [GPU]", m.leaky_relu_f16(h, slope=0.5, out=jax.ShapeDtypeStruct(h.shape, h.dtype)))
    show("iota_i32(start=7) [GPU]", m.iota_i32(start=7, out=jax.ShapeDtypeStruct((4,), jnp.int32)))


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    sys.path.insert(0, argv[1])
    import demo_cpu

    print(f"demo_cpu targets: {sorted(demo_cpu.TARGETS.values())}")
    run_cpu(demo_cpu)
    if len(argv) > 2:
        if not any(d.platform == "gpu" for d in jax.devices()):
            print("no GPU visible to JAX: skipping the CUDA kernels")
            return
        sys.path.insert(0, argv[2])
        import demo_cuda

        run_cuda(demo_cuda)


if __name__ == "__main__":
    main(sys.argv)
