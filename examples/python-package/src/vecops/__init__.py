"""vecops: a begen example package. Its kernels (kernels/vecops.cpp) are
compiled when the wheel is built; the wheel carries the library
(lib_kernels.so) and the generated module (_kernels.py), so installing it
needs no compiler and no begen."""

import jax

from vecops import _kernels

__all__ = ["axpy", "cumsum", "norm"]


def _like(x):
    return jax.ShapeDtypeStruct(x.shape, x.dtype)


def axpy(alpha, x, y):
    """alpha * x + y, for float32 arrays of one size."""
    x, y = jax.numpy.asarray(x, "float32"), jax.numpy.asarray(y, "float32")
    return _kernels.axpy(x, y, alpha=alpha, out=_like(x))


def cumsum(x):
    """The running sum of a float32 array, in row-major order."""
    x = jax.numpy.asarray(x, "float32")
    return _kernels.cumsum(x, out=_like(x))


def norm(x):
    """The Euclidean norm of a float32 array, a 0-d array."""
    x = jax.numpy.asarray(x, "float32")
    return _kernels.norm(x, out=jax.ShapeDtypeStruct((), "float32"))
