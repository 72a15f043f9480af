"""Realistic inputs for brainevent's CSR hybrid scatter (`inputs:` of
begen.yaml): the workload brainevent's own `init_csr_config()` times, a
COBA-like network of `n_pre = n_post` neurons with `nnz // n_pre` uniformly
random connections per row, a homogeneous weight of 1 and a spike vector
with one neuron in 250 active.

The kernels take `BE::Tensor` (no typed contract), so begen cannot make
inputs of its own: this generator gives the seven arrays, the task
workspace sized for every candidate, `out=`, and which output begen tune
checks (the product; the task ranges and status are workspace).
"""

import numpy as np

# brainevent._csr.initialize.DEFAULT_CANDIDATES, as (block size, fixed
# scatter blocks, tpr threshold, task nnz): the workspace must hold the
# tasks of whichever one runs.
CANDIDATES = (
    (128, 1024, 128, 2048),
    (128, 2048, 128, 4096),
    (256, 1024, 128, 4096),
    (256, 2048, 128, 4096),
    (256, 4096, 128, 4096),
    (512, 2048, 128, 4096),
    (512, 4096, 128, 4096),
    (256, 2048, 256, 4096),
    (128, 2048, 512, 2048),
    (256, 1024, 512, 2048),
    (256, 2048, 512, 2048),
    (512, 2048, 512, 2048),
    (256, 2048, 512, 4096),
    (256, 2048, 1024, 4096),
    (256, 4096, 128, 1024),
    (256, 2048, 128, 8192),
)
DEFAULT = (256, 2048, 128, 4096)
SPIKE_SPARSITY = 1.0 / 250.0


def task_capacity(n_pre, conn, config):
    # brainevent's `_task_capacity_for_uniform_rows`: heavy rows (more
    # than tpr_threshold connections) in chunks of task_nnz.
    _, _, tpr, task_nnz = config
    return 0 if conn <= tpr else n_pre * -(-conn // task_nnz)


# The last workload made: one key's arrays are asked for more than once
# (begen tune, then the GPU check), and the largest is gigabytes.
_last = {}


def workload(n_pre, conn, seed=123, batch=100):
    """Host arrays of one workload, as brainevent's `run_benchmark` makes them
    (the same seeds and draws): (indices, indptr, spikes[batch, n_pre])."""
    key = (n_pre, conn, seed, batch)
    if key not in _last:
        _last.clear()
        rng = np.random.default_rng(seed)
        nnz = n_pre * conn
        indices = rng.integers(0, n_pre, size=nnz, dtype=np.int32)
        indptr = np.arange(n_pre + 1, dtype=np.int64) * conn
        indptr = indptr.astype(np.int32 if nnz < 2**31 - 1 else np.int64)
        active = max(round(n_pre * SPIKE_SPARSITY), 1)
        spikes = np.zeros((batch, n_pre), dtype=np.bool_)
        rng = np.random.default_rng(seed + 1)
        for b in range(batch):
            spikes[b, rng.choice(n_pre, size=active, replace=False)] = True
        _last[key] = (indices, indptr, spikes)
    return _last[key]


def csr_workload(kernel, dims, dtypes=None):
    """begen tune's generator: `dims` gives n_pre and nnz (a multiple of it)."""
    import jax

    n_pre = int(dims["n_pre"])
    conn = int(dims["nnz"]) // n_pre
    indices, indptr, spikes = workload(n_pre, conn)
    cap = max(task_capacity(n_pre, conn, c) for c in CANDIDATES)
    arrays = (
        np.ones((1,), np.float32),
        indices,
        indptr,
        spikes[0],
        np.zeros((cap,), indptr.dtype),
        np.zeros((cap,), indptr.dtype),
        np.zeros((2,), np.int32),
    )
    out = (
        jax.ShapeDtypeStruct((n_pre,), np.float32),
        jax.ShapeDtypeStruct((cap,), indptr.dtype),
        jax.ShapeDtypeStruct((cap,), indptr.dtype),
        jax.ShapeDtypeStruct((2,), np.int32),
    )
    # Output 0 is the product; the task ranges and status are workspace.
    return arrays, {"task_capacity": cap, "out": out}, (0,)
