"""On a GPU: brainevent's CSR hybrid scatter built by begen with brainevent's
16 candidates compiled in, after `begen tune` ran for each workload size,
against an exhaustive timing of the 16 and against brainevent's own
`init_csr_config()` (which recompiles the source with nvcc per candidate),
all in this one process. Run by scripts/gpu-check.sh step `tune`.

The 16 are timed two ways: as many calls inside one jit (the kernels' own
time, the way users run them and the way `begen tune` measures: the goal,
within 2% of the best, is judged on it), and by brainevent's method, one
jitted call per host-loop step (where a call is shorter than its dispatch,
that times the dispatch more than the kernel).

usage: check_tune_hybrid.py OUT WHEEL SIZES TUNE_TIMES
  OUT        the begen build of tests/gpu/tune_hybrid (BEGEN_TUNE_DIR set
             to the table `begen tune` wrote)
  WHEEL      brainevent 0.3.0's installed package folder (holds brainevent/)
  SIZES      n_pre x connections per row, comma-separated: 500000x2000,...
  TUNE_TIMES a file of `n_pre conn seconds` lines: each `begen tune` run's wall time
  BRAINEVENT_INIT=0 skips init_csr_config; ROUNDS (default 7) timed rounds.
"""

import importlib
import json
import os
import re
import sys
import time
import types

import jax
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tune_inputs

KERNEL = "binary_csrmv_wat_hybrid_homo_f32_bool"
NAMES = ("BE_HYBRID_BLOCK_SIZE", "BE_HYBRID_FIXED_SCATTER_BLOCKS", "BE_HYBRID_TPR_THRESHOLD", "BE_HYBRID_TASK_NNZ")


def config_of(c):
    return dict(zip(NAMES, c))


def show(c):
    return "(" + ",".join(str(v) for v in c) + ")"


def chosen_candidate(f, arrays, attrs):
    # The candidate the traced call names in its HLO (the tables' choice).
    text = jax.jit(lambda *xs: f(*xs, **attrs)).lower(*arrays).as_text()
    found = set(re.findall(r"tune_hybrid\." + KERNEL + r"\[([^\]]*)\]", text))
    if len(found) != 1:
        raise SystemExit(f"tune: the traced call names {len(found)} candidates of {KERNEL}: {sorted(found)}")
    values = dict(kv.split("=") for kv in found.pop().split(","))
    return tuple(int(values[n]) for n in NAMES)


def products(f, arrays, attrs):
    # The product of the tuned call (the tables' choice) and the default's.
    got = np.asarray(f(*arrays, **attrs)[0])
    return got, np.asarray(f(*arrays, config=config_of(tune_inputs.DEFAULT), **attrs)[0])


def time_candidates(f, arrays, attrs, spikes, rounds):
    # brainevent's method, for every candidate alike: jitted calls from the
    # host, cycling through a batch of spike vectors, after a warm-up; the
    # candidates take turns in each round, and each keeps its median.
    calls = {c: jax.jit(lambda *xs, c=c: f(*xs, config=config_of(c), **attrs)[0]) for c in tune_inputs.CANDIDATES}
    w, idx, ptr, _, tb, te, st = arrays

    def run(call, steps):
        out = None
        t0 = time.perf_counter()
        for i in range(steps):
            out = call(w, idx, ptr, spikes[i % len(spikes)], tb, te, st)
        jax.block_until_ready(out)
        return time.perf_counter() - t0

    for call in calls.values():
        run(call, 50)
    one = min(run(calls[tune_inputs.DEFAULT], 50) / 50 for _ in range(3))
    steps = max(100, min(5000, int(0.05 / max(one, 1e-7))))
    times = {c: [] for c in calls}
    for _ in range(rounds):
        for c, call in calls.items():
            times[c].append(run(call, steps) / steps)
    return {c: sorted(ts)[len(ts) // 2] * 1e6 for c, ts in times.items()}, steps


def time_candidates_in_jit(f, arrays, attrs, rounds):
    # The way users run and the way `begen tune` measures: many calls inside
    # one jit (a fori_loop), each call's spike vector depending on the last
    # call's product (0 * one element, OR-ed into one spike), so XLA can
    # neither drop a call nor hoist it. No host dispatch per call: what is
    # timed is the kernels. The candidates take turns in each round.
    import jax.numpy as jnp

    # The arrays are the jitted loop's arguments (never captured constants).
    def loop_of(c, reps):
        def steps(w, idx, ptr, spk, tb, te, st):
            def body(_, s):
                y = f(w, idx, ptr, s, tb, te, st, config=config_of(c), **attrs)[0]
                z = jnp.where(jnp.isfinite(y[0]), y[0], 0.0) * 0
                return s.at[0].set(s[0] | (z != 0))

            return jax.lax.fori_loop(0, reps, body, spk)

        loop = jax.jit(steps)
        jax.block_until_ready(loop(*arrays))
        return loop

    def run(loop, reps):
        t0 = time.perf_counter()
        jax.block_until_ready(loop(*arrays))
        return (time.perf_counter() - t0) / reps

    probe = loop_of(tune_inputs.DEFAULT, 20)
    one = min(run(probe, 20) for _ in range(3))
    reps = max(20, min(2000, int(0.05 / max(one, 1e-7))))
    loops = {c: loop_of(c, reps) for c in tune_inputs.CANDIDATES}
    times = {c: [] for c in loops}
    for _ in range(rounds):
        for c, loop in loops.items():
            times[c].append(run(loop, reps))
    return {c: sorted(ts)[len(ts) // 2] * 1e6 for c, ts in times.items()}, reps


def load_initialize(wheel):
    # brainevent._csr.initialize without brainevent's package __init__
    # (which needs brainunit and more): only its compile pipeline (kernix:
    # jax and the standard library) is imported.
    root = os.path.join(wheel, "brainevent")
    for name, path in (
        ("brainevent", root),
        ("brainevent._op", os.path.join(root, "_op")),
        ("brainevent._csr", os.path.join(root, "_csr")),
    ):
        m = types.ModuleType(name)
        m.__path__ = [path]
        sys.modules[name] = m
    kernix = importlib.import_module("brainevent._op.kernix_pipeline")
    sys.modules["brainevent._op"].load_cuda_file = kernix.load_cuda_file
    sys.modules["brainevent._op"].get_cache_dir = kernix.get_cache_dir
    return importlib.import_module("brainevent._csr.initialize")


METHODS = {
    "times_jit": "many calls inside one jit (how users run, and how begen tune measures), median of rounds",
    "times": "brainevent's method (one jitted call per host-loop step, over 100 spike vectors), median of rounds",
}


def print_table(rows, device, key="times_jit"):
    print(f"\n== begen tune against the 16 candidates timed exhaustively and init_csr_config ({device})")
    print(f"   times: per call, {METHODS[key]}")
    head = f"{'n_pre x conn':<16} {'begen choice':<24} {'us':>8} {'best of 16':<24} {'us':>8} {'vs best':>8} {'default us':>10} {'vs def':>7} {'init_csr winner':<24} {'vs init':>8} {'tune s':>7} {'init s':>7}"
    print(head)
    ok = True
    for r in rows:
        t = r[key]
        c = r["choice"]
        b = min(t, key=t.get)
        within = t[c] / t[b]
        ok &= within <= 1.02
        init = r.get("init")
        vs_init = f"{t[c] / t[init]:.3f}x" if init else "-"
        init_s = f"{r['init_wall']:.1f}" if init else "-"
        tune_s = f"{r['begen_wall']:.1f}" if r["begen_wall"] is not None else "-"
        print(
            f"{str(r['n']) + 'x' + str(r['conn']):<16} {show(c):<24} {t[c]:8.2f} {show(b):<24} {t[b]:8.2f} {within:7.3f}x "
            f"{t[tune_inputs.DEFAULT]:10.2f} {t[c] / t[tune_inputs.DEFAULT]:6.3f}x {show(init) if init else '-':<24} {vs_init:>8} {tune_s:>7} {init_s:>7}"
        )
    print(
        "   init s: the first size compiles every candidate with nvcc (cold); the others reuse brainevent's compile cache"
    )
    print(f"   begen's choice within 2% of the best of 16 at every size: {'yes' if ok else 'NO'}")
    return ok


def main(out, wheel, sizes, tune_times):
    sys.path.insert(0, out)
    m = importlib.import_module("tune_hybrid")
    f = getattr(m, KERNEL)
    rounds = int(os.environ.get("ROUNDS", "7"))
    walls = {}
    with open(tune_times) as fh:
        for line in fh:
            n, conn, s = line.split()
            walls[(int(n), int(conn))] = float(s)
    device = jax.devices()[0].device_kind
    rows = []
    for n, conn in sizes:
        print(f"== n_pre=n_post={n}, {conn} connections per row (nnz {n * conn}), {device}", flush=True)
        host, attrs, _ = tune_inputs.csr_workload(KERNEL, {"n_pre": n, "nnz": n * conn})
        arrays = tuple(jax.device_put(a) for a in host)
        _, _, spikes_host = tune_inputs.workload(n, conn)
        spikes = [jax.device_put(s) for s in spikes_host]
        choice = chosen_candidate(f, arrays, attrs)
        times_jit, reps = time_candidates_in_jit(f, arrays, attrs, rounds)
        times, steps = time_candidates(f, arrays, attrs, spikes, rounds)
        # The chosen candidate's product equals the default's (a homogeneous
        # weight of 1: every sum is an exact integer, whatever the order).
        got, ref = products(f, arrays, attrs)
        if not np.array_equal(got, ref):
            raise SystemExit(
                f"tune: {show(choice)}'s output differs from the default's (max {np.max(np.abs(got - ref))})"
            )
        best = min(times_jit, key=times_jit.get)
        print(f"  {'candidate':<24} {'in one jit':>12} {'host loop':>12}")
        for c in sorted(times_jit, key=times_jit.get):
            mark = " <- begen" if c == choice else ""
            mark += " (default)" if c == tune_inputs.DEFAULT else ""
            print(f"  {show(c):<24} {times_jit[c]:9.2f} us {times[c]:9.2f} us{mark}")
        rows.append(
            {
                "n": n,
                "conn": conn,
                "choice": choice,
                "best": best,
                "times": times,
                "times_jit": times_jit,
                "steps": steps,
                "reps_in_jit": reps,
                "begen_wall": walls.get((n, conn)),
            }
        )
        del arrays, spikes
    print_table(rows, device, "times")  # begen's side, before brainevent's recompiles
    print_table(rows, device)
    if os.environ.get("BRAINEVENT_INIT", "1") != "0":
        init = load_initialize(wheel)
        for r in rows:
            # Cold for the first size (every candidate compiled by nvcc),
            # from brainevent's compile cache for the others.
            print(f"== init_csr_config(n_pre={r['n']}, conn={r['conn']})", flush=True)
            t0 = time.perf_counter()
            winner = init.init_csr_config(save=False, n_pre=r["n"], n_post=r["n"], conn=r["conn"], show_progress=False)
            r["init_wall"] = time.perf_counter() - t0
            r["init"] = (winner.block_size, winner.fixed_scatter_blocks, winner.tpr_threshold, winner.task_nnz)
    if "init" in rows[0]:
        print_table(rows, device, "times")
        print_table(rows, device)
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "tune-hybrid.json"), "w") as fh:
            json.dump(
                [
                    {
                        k: (
                            list(v)
                            if isinstance(v, tuple)
                            else {show(c): x for c, x in v.items()}
                            if k in ("times", "times_jit")
                            else v
                        )
                        for k, v in r.items()
                    }
                    for r in rows
                ],
                fh,
                indent=1,
            )


if __name__ == "__main__":
    out, wheel, sizes, tune_times = sys.argv[1:5]
    sizes = [tuple(int(x) for x in s.split("x")) for s in sizes.split(",")]
    main(out, wheel, sizes, tune_times)
