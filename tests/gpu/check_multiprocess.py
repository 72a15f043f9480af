"""Sharded CUDA kernels across processes, one GPU each (scripts/gpu-check.sh
step `multiproc`): the way a multi-node job runs, on one host.

`python check_multiprocess.py OUT` starts one process per GPU
(`jax.distributed` with its coordinator on 127.0.0.1, each process owning
one GPU through `local_device_ids`) and waits for all of them. Each process
builds the same global inputs from one seed, keeps its own blocks
(`jax.make_array_from_callback`), runs tests/e2e/sharding's CUDA kernels on
one global mesh of every GPU, with explicit and with auto axes, and compares
every block it holds with numpy:

- row splits (`rowscale_cuda` with an attribute, `rowsum_cuda`,
  `matvec_cuda`, the block-row CSR `csr_rows_cuda`): the compiled HLO has no
  collective at all and per-GPU operand shapes;
- `matvec_cuda` split along `k` (`reduce: [k]`): exactly one all-reduce,
  across the processes, and no all-gather;
- a split input beside a replicated numpy constant (`inc_cuda(x) + c`).

Each process prints one JSON line; this driver checks them all and prints
the number of checks passed. A process that fails or hangs fails the step
(every process is killed after TIMEOUT_S).

usage: python tests/gpu/check_multiprocess.py OUT   (e2e_sharding built with --platform cuda)
       python tests/gpu/check_multiprocess.py OUT --worker PORT PROCESS_ID PROCESSES
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

TIMEOUT_S = 300
HERE = Path(__file__).resolve()


def inputs(G):
    import numpy as np

    rng = np.random.default_rng(7)
    n, k = 64 * G, 32 * G
    b, r, per_row = 2 * G, 32, 5
    nnz = r * per_row
    a = {
        "x": rng.normal(size=(n, k)).astype(np.float32),
        "v": rng.normal(size=k).astype(np.float32),
        "c": rng.normal(size=n).astype(np.float32),
        "indptr": np.tile(np.arange(0, nnz + 1, per_row, dtype=np.int32), (b, 1)),
        "indices": rng.integers(0, k, size=(b, nnz)).astype(np.int32),
        "data": rng.normal(size=(b, nnz)).astype(np.float32),
    }
    want = {
        "rowscale": 2.0 * (a["x"] + np.arange(k, dtype=np.float32)),
        "rowsum": a["x"].sum(1),
        "matvec": a["x"] @ a["v"],
        "csr_rows": (a["data"] * a["v"][a["indices"]]).reshape(b, r, per_row).sum(2),
        "inc_plus_c": a["x"][:, 0] + 1.0 + a["c"],
    }
    return a, want


def worker(out_dir, port, pid, G):
    sys.path.insert(0, out_dir)
    sys.path.insert(0, str(HERE.parents[1] / "python"))
    import jax

    jax.distributed.initialize(
        coordinator_address=f"127.0.0.1:{port}",
        num_processes=G,
        process_id=pid,
        local_device_ids=[pid],
        initialization_timeout=120,
    )
    import e2e_sharding as m
    import numpy as np
    from hlo_collectives import ops
    from jax.sharding import AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    a, want = inputs(G)
    results = {"process": jax.process_index(), "devices": [jax.device_count(), jax.local_device_count()]}
    results["kind"] = jax.local_devices()[0].device_kind

    def case(key, name, f, args, rtol=1e-5):
        try:
            y = jax.jit(f)(*args)
            blocks, equal = 0, True
            for shard in y.addressable_shards:
                if not np.allclose(np.asarray(shard.data), want[name][shard.index], rtol=rtol, atol=1e-4):
                    equal = False
                blocks += 1
            text = jax.jit(f).lower(*args).compile().as_text()
            operands = re.findall(
                r'custom_call_target="e2e_sharding\.[a-z_]+", operand_layout_constraints=\{([^}]*)\}', text
            )
            results[key] = {
                "blocks": blocks,
                "equal": equal,
                "collectives": {k: v for k, v in ops(text).items() if v},
                "operand": re.findall(r"[a-z]+\d*\[[\d,]*\]", operands[0])[0] if operands else None,
            }
        except Exception as e:  # reported, not raised: the driver names the case
            results[key] = {"error": f"{type(e).__name__}: {e}"}

    csr_out = jax.ShapeDtypeStruct(want["csr_rows"].shape, np.float32)
    for kind, axis_type in (("explicit", AxisType.Explicit), ("auto", AxisType.Auto)):
        mesh = jax.make_mesh((G,), ("x",), axis_types=(axis_type,))

        def g(name, *spec, mesh=mesh):
            arr = a[name]
            return jax.make_array_from_callback(arr.shape, NamedSharding(mesh, P(*spec)), lambda i, arr=arr: arr[i])

        case(f"{kind}/rowscale", "rowscale", lambda x: m.rowscale_cuda(x, s=2.0), (g("x", "x"),))
        case(f"{kind}/rowsum", "rowsum", m.rowsum_cuda, (g("x", "x"),))
        case(f"{kind}/matvec_rows", "matvec", m.matvec_cuda, (g("x", "x"), g("v")))
        case(f"{kind}/matvec_k", "matvec", m.matvec_cuda, (g("x", None, "x"), g("v", "x")))
        case(
            f"{kind}/csr_rows",
            "csr_rows",
            lambda d, i, p, w: m.csr_rows_cuda(d, i, p, w, out=csr_out),
            (g("data", "x"), g("indices", "x"), g("indptr", "x"), g("v")),
        )
        case(f"{kind}/inc_plus_c", "inc_plus_c", lambda x: m.inc_cuda(x[:, 0]) + a["c"], (g("x", "x"),))

    print(json.dumps(results), flush=True)
    jax.distributed.shutdown()


def gpu_count():
    out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, check=True).stdout
    return sum(1 for line in out.splitlines() if line.startswith("GPU "))


def driver(out_dir):
    G = gpu_count()
    assert G >= 2, f"step multiproc needs 2 or more GPUs; this machine has {G}"
    sys.path.insert(0, str(HERE.parents[1] / "python"))
    from process_group import free_port, run_group

    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    commands = [[sys.executable, str(HERE), out_dir, "--worker", str(port), str(pid), str(G)] for pid in range(G)]
    try:
        runs = run_group(commands, env, TIMEOUT_S)
    except TimeoutError as e:
        raise SystemExit(f"multiproc: {e}") from None
    checks, failed = 0, []

    def check(cond, what):
        # Every failure is collected, so that one run names them all.
        nonlocal checks
        if cond:
            checks += 1
        else:
            failed.append(what)

    for pid, (rc, out, err) in enumerate(runs):
        if rc != 0:
            raise SystemExit(f"multiproc: process {pid} exited {rc}:\n{out}\n{err[-4000:]}")
        r = json.loads(out.strip().splitlines()[-1])
        check(r["process"] == pid and r["devices"] == [G, 1], f"process {pid}: {r['process']}, {r['devices']}")
        for key, res in r.items():
            if "/" not in key:
                continue
            check("error" not in res, f"process {pid}, {key}: {res.get('error')}")
            # One GPU per process: each holds one block (a replicated output
            # is one full copy).
            check(res["equal"] and res["blocks"] == 1, f"process {pid}, {key}: {res}")
            name = key.split("/", 1)[1]
            if name == "matvec_k":
                # k's partial sums added across the processes: one all-reduce.
                check(res["collectives"] == {"all-reduce": 1}, f"process {pid}, {key}: {res['collectives']}")
            elif name == "inc_plus_c":
                check("all-gather" not in res["collectives"], f"process {pid}, {key}: {res['collectives']}")
            else:
                check(res["collectives"] == {}, f"process {pid}, {key}: {res['collectives']}")
            if name in ("rowscale", "rowsum", "matvec_rows"):
                check(res["operand"].startswith("f32[64,"), f"process {pid}, {key}: operand {res['operand']}")
            if name == "csr_rows":
                check(res["operand"] == "f32[2,160]", f"process {pid}, {key}: operand {res['operand']}")
    if failed:
        raise SystemExit("multiproc: FAILED:\n  " + "\n  ".join(failed) + f"\n({checks} checks passed)")
    kind = json.loads(runs[0][1].strip().splitlines()[-1])["kind"]
    print(f"multiproc: {checks} checks passed: {G} processes of one GPU each ({kind}), explicit and auto axes")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "--worker":
        worker(sys.argv[1], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    else:
        driver(sys.argv[1])
