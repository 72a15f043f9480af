"""`begen tune`: measures every compiled-in candidate of a library's tuned
kernels on this machine and writes the winners into a tuning table.

The `begen` program embeds this file and runs it with the Python that has
jax (BEGEN_PYTHON; with `--torch`, the one that has torch), as
`python -c <this file> ARGS`; the arguments are
already checked and normalised by the program (`begen tune --help`). It
imports the generated module from OUT and uses only what the module
declares in `_BEGEN_TUNE`, so any library begen built can be tuned by the
begen that built it.

For each kernel and key (from `--shapes`, or the keys a recorded run of the
user's program traced) it builds inputs (the kernel's `inputs:` generator,
else random data of the declared dtypes and shapes), checks every
candidate's outputs against the default's, times each candidate as many
calls inside one `jit`, and keeps a candidate other than the default only
when it wins by the margin. The table is written atomically, merged with
what the file held, under a lock on the table (`<table>.lock`). An algorithm tuned over its implementations
(`implementations: true`) is measured the same way: its candidates are its
implementations for the platform this machine runs (those that support the
call), the default the first of them in priority order. With `--torch`
the torch module's ops are measured instead (`TorchBackend`): the same
candidates, checks and table entries, each candidate timed as eager calls.
"""

import argparse
import itertools
import json
import math
import os
import subprocess
import sys
import tempfile
import time

# Tolerances a candidate's outputs must meet against the default's: a
# candidate may sum in another order, so floats are compared relative to
# their own precision; integers and booleans must be equal.
TOLERANCE = {
    "float16": (1e-2, 1e-2),
    "bfloat16": (5e-2, 5e-2),
    "float32": (1e-4, 1e-5),
    "float64": (1e-9, 1e-12),
    "complex64": (1e-4, 1e-5),
    "complex128": (1e-9, 1e-12),
}


def say(text):
    print(text, file=sys.stderr, flush=True)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="begen tune", add_help=False)
    p.add_argument("out")
    p.add_argument("name")
    p.add_argument("--shapes-json")
    p.add_argument("--record", nargs=argparse.REMAINDER)
    p.add_argument("--kernels", default="")
    p.add_argument("--margin", type=float, default=0.02)
    p.add_argument("--export")
    p.add_argument("--plot")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--target-ms", type=float, default=20.0)
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--torch", action="store_true")
    return p.parse_args(argv)


def load_module(out, name):
    sys.path.insert(0, os.path.abspath(out))
    import importlib

    return importlib.import_module(name)


def resolve(module, dotted):
    obj = module
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def recorded_keys(module, argv):
    # Runs the user's program with the module recording every tuned call it
    # traces; returns (kernel, dims, dtypes) of each distinct one.
    with tempfile.TemporaryDirectory(prefix="begen-tune-") as tmp:
        path = os.path.join(tmp, "keys.jsonl")
        env = dict(os.environ, BEGEN_TUNE_RECORD=path, BEGEN_TUNE="default")
        say(f"begen tune: recording the keys `{' '.join(argv)}` traces")
        rc = subprocess.call(argv, env=env)
        if rc != 0:
            raise SystemExit(f"begen tune: the recorded program exited with status {rc}; nothing was tuned")
        keys = []
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            lines = []
        for line in lines:
            rec = json.loads(line)
            keys.append((rec["kernel"], rec["dims"], tuple(rec["dtypes"])))
        return keys


def shape_keys(shapes):
    # (kernel, dims, dtypes or None) of each entry of --shapes.
    keys = []
    for kernel, entries in shapes.items():
        for dims in entries:
            dims = dict(dims)
            dtypes = dims.pop("dtypes", None)
            keys.append((kernel, dims, tuple(dtypes) if dtypes else None))
    return keys


def platform_of(module):
    # The platform an algorithm's call lowers for here ("cpu", "cuda").
    return module._begen_platform()


def candidates(spec, platform=None):
    # Every combination of the tuned consts' built values, the default first;
    # an algorithm's implementations for `platform`, in priority order.
    if spec.get("implementations") is not None:
        return [{"implementation": n} for n in spec["implementations"].get(platform, ())]
    names = list(spec["consts"])
    default = {n: spec["consts"][n][2] for n in names}
    built = spec.get("candidates")
    if built is not None:
        # A source tuned over its defines: only the combinations `where:` allows.
        every = [dict(zip(names, vals)) for vals in built]
    else:
        every = [dict(zip(names, vals)) for vals in itertools.product(*(spec["consts"][n][1] for n in names))]
    return [default] + [c for c in every if c != default]


def show(config):
    if list(config) == ["implementation"]:
        return config["implementation"]
    return ",".join(f"{k}={v}" for k, v in config.items())


def py_value(kind, text):
    if kind == "implementation":
        return text
    if kind == "bool":
        return text == "true"
    return int(text)


def make_inputs(backend, fn, spec, dims, dtypes, seed):
    # The call's positional arrays, attribute keywords, and the outputs
    # whose values are checked (None: all of them) for one key.
    import numpy as np

    if spec.get("inputs"):
        mod_name, _, func = spec["inputs"].partition(":")
        import importlib

        gen = getattr(importlib.import_module(mod_name), func)
        made = gen(kernel=fn, dims=dict(dims), dtypes=dtypes)
        checked = None
        if isinstance(made, tuple) and len(made) == 3 and isinstance(made[1], dict):
            # (arrays, attributes, the indices of the outputs to check): the
            # others are workspace whose contents any candidate may leave.
            made, checked = made[:2], tuple(int(k) for k in made[2])
        arrays, attrs = made if isinstance(made, tuple) and len(made) == 2 and isinstance(made[1], dict) else (made, {})
        return tuple(backend.array(a, spec) for a in arrays), dict(attrs), checked
    types = {}
    if dtypes:
        for (name, dtype, _), got in zip(spec["args"], dtypes):
            if isinstance(dtype, (tuple, list)):
                types[dtype[0]] = got
    for t, allowed in spec.get("types", {}).items():
        types.setdefault(t, allowed[0])
    rng = np.random.default_rng(seed)
    arrays = []
    for name, dtype, shape in spec["args"]:
        dtype = types[dtype[0]] if isinstance(dtype, (tuple, list)) else dtype
        missing = [w for w in shape if not isinstance(w, int) and w not in dims]
        if missing:
            raise SystemExit(
                f"begen tune: {fn}: the key gives no value for dimension '{missing[0]}' of input '{name}'; "
                f"give it in --shapes (e.g. {fn}: [{{{', '.join(f'{w}: 1024' for w in missing)}}}])"
            )
        extents = tuple(w if isinstance(w, int) else int(dims[w]) for w in shape)
        kind = np.dtype(dtype).kind if dtype not in ("bfloat16",) else "f"
        if kind in "fc":
            a = rng.standard_normal(extents).astype(dtype)
        else:
            # Integers could be indices: zeros stay in bounds. A kernel whose
            # speed depends on their values declares `inputs:`.
            a = np.zeros(extents, dtype)
        arrays.append(backend.array(a, spec))
    attrs = {
        name: (1.0 if kind in ("float", "complex") else False if kind == "bool" else 1)
        for name, kind in spec.get("attrs", ())
    }
    attrs.update(dims.get("attrs", {}) if isinstance(dims.get("attrs"), dict) else {})
    return tuple(arrays), attrs, None


def agree(a, b):
    # Whether a candidate's outputs equal the default's to the tolerance of
    # their dtype; (ok, the largest difference seen).
    import numpy as np

    worst = 0.0
    for x, y in zip(a, b):
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape or x.dtype != y.dtype:
            return False, math.inf
        if x.size == 0:
            continue
        tol = TOLERANCE.get(x.dtype.name)
        if tol is None:
            if not np.array_equal(x, y):
                return False, math.inf
            continue
        xf, yf = (
            x.astype(np.complex128 if x.dtype.kind == "c" else np.float64),
            y.astype(np.complex128 if x.dtype.kind == "c" else np.float64),
        )
        if np.isfinite(xf).all() != np.isfinite(yf).all():
            return False, math.inf
        worst = max(worst, float(np.max(np.abs(xf - yf) / np.maximum(np.abs(yf), 1.0))))
        if not np.allclose(xf, yf, rtol=tol[0], atol=tol[1] * float(np.max(np.abs(yf)) or 1.0)):
            return False, worst
    return True, worst


def feed(carry, out):
    # The next call's inputs: the same, but for 0 * (an element of the
    # outputs) added to one element of an input. XLA can prove neither
    # that the call's result is unused nor that it is the same every
    # time, so it neither drops the call nor hoists it out of the loop;
    # the zero is made exactly zero (not NaN) so the inputs never change.
    import jax.numpy as jnp

    outs = out if isinstance(out, (tuple, list)) else (out,)
    tap = next((o.reshape(-1)[0] for o in outs if o.size), None)
    k = next((i for i, x in enumerate(carry) if x.size), None)
    if tap is None or k is None:
        return carry
    z = jnp.real(tap).astype(jnp.float32) * 0
    z = jnp.where(jnp.isfinite(z), z, 0.0)
    x = carry[k]
    at = (0,) * x.ndim
    x = x.at[at].set(x[at] | (z != 0)) if x.dtype == jnp.bool_ else x.at[at].add(z.astype(x.dtype))
    return (*carry[:k], x, *carry[k + 1 :])


def timer(call, arrays, reps):
    # A jitted loop of `reps` calls, each one's inputs depending on the
    # last one's outputs (`feed`).
    import jax

    def body(_, carry):
        return feed(carry, call(*carry))

    loop = jax.jit(lambda xs: jax.lax.fori_loop(0, reps, body, xs))

    def run():
        t0 = time.perf_counter()
        jax.block_until_ready(loop(arrays))
        return time.perf_counter() - t0

    run()  # compile
    return run


class JaxBackend:
    """The JAX module's functions: arrays on jax's default device, each
    candidate timed as many calls inside one jit (`timer`)."""

    def array(self, a, spec):
        import jax

        return jax.device_put(a)

    def dtype_name(self, a):
        return a.dtype.name

    def ready(self, outputs):
        import jax

        return jax.block_until_ready(outputs)

    def timer(self, call, arrays, reps):
        return timer(call, arrays, reps)

    def given(self, arrays):
        import jax

        return tuple(jax.ShapeDtypeStruct(a.shape, a.dtype) for a in arrays)


class TorchBackend:
    """The torch module's ops (`--torch`): tensors on the kernel's device
    (the CPU, or torch's current CUDA device), each candidate timed as
    `reps` eager calls of its typed function, then one synchronize. The
    call's own overhead is in every candidate's time alike."""

    def __init__(self, module):
        import torch

        self.torch = torch
        self.module = module

    def spec(self, fn, spec):
        # The torch module's entry says what the choice reads; what a call
        # takes (the typed function, its inputs' contracts, its
        # attributes) is in its op's `_begen_ops` row.
        for key, op in self.module._begen_ops.items():
            module = op["call"].rpartition(".")[0]
            if (f"{module}.{op['kernel']}" if module else op["kernel"]) != fn:
                continue
            if op.get("out"):
                raise SystemExit(
                    f"begen tune --torch: {fn}: an out= op (torch.ops.{self.module.NAMESPACE}.{key}) has no output "
                    "shapes to draw; tune it from the JAX side: the table serves both"
                )
            attrs = tuple((name, kind) for name, kind, _default in op["attrs"])
            return {**spec, "call": op["call"], "args": op["args"], "types": op["types"], "attrs": attrs}
        raise SystemExit(f"begen tune --torch: {fn} has no op in {self.module.__name__}")

    def device(self, spec):
        return "cuda" if spec.get("platform") == "cuda" else "cpu"

    def array(self, a, spec):
        import numpy as np

        return self.torch.from_numpy(np.ascontiguousarray(a)).to(self.device(spec))

    def dtype_name(self, a):
        return str(a.dtype).removeprefix("torch.")

    def _sync(self):
        if self.torch.cuda.is_available() and self.torch.cuda.is_initialized():
            self.torch.cuda.synchronize()

    def ready(self, outputs):
        # numpy arrays of the outputs (bfloat16 as float32: numpy has none).
        self._sync()
        torch = self.torch

        def numpy(t):
            t = t.detach()
            return (t.float() if t.dtype == torch.bfloat16 else t).cpu().numpy()

        return tuple(numpy(t) for t in outputs)

    def timer(self, call, arrays, reps):
        def run():
            self._sync()
            t0 = time.perf_counter()
            for _ in range(reps):
                call(*arrays)
            self._sync()
            return time.perf_counter() - t0

        run()  # the first call's one-time costs
        return run

    def given(self, arrays):
        return arrays


def outputs_of(result):
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def tune_key(module, backend, fn, spec, dims, dtypes, args, index, total):
    call = resolve(module, spec["call"])
    arrays, attrs, checked = make_inputs(backend, fn, spec, dims, dtypes, seed=index)
    used_dtypes = [backend.dtype_name(a) for a in arrays]
    algorithm = spec.get("implementations") is not None
    cands = candidates(spec, platform_of(module) if algorithm else None)
    label = " ".join(f"{k}={v}" for k, v in dims.items() if k != "attrs")

    def run_one(cfg):
        got = outputs_of(call(*arrays, config={k: py_value(spec["consts"][k][0], v) for k, v in cfg.items()}, **attrs))
        return got if checked is None else tuple(got[k] for k in checked)

    refused = []
    if algorithm:
        # An implementation that refuses the call (an unsupported attribute
        # value) is reported and never chosen; the default is the first in
        # priority order that supports it, as a call without a table runs.
        while cands:
            try:
                reference = backend.ready(run_one(cands[0]))
                break
            except ValueError as e:
                refused.append({"config": cands.pop(0), "ok": False, "why": str(e)[:200], "time_us": None})
        if not cands:
            raise SystemExit(f"begen tune: {fn}: no implementation supports this call: {refused[0]['why']}")
    else:
        try:
            reference = backend.ready(run_one(cands[0]))
        except (TypeError, ValueError) as e:
            # What --shapes gave (an attribute's value) the kernel refuses.
            raise SystemExit(f"begen tune: {fn} {label}: the default candidate refuses the call: {e}") from None
    rows = []
    for i, cfg in enumerate(cands):
        say(f"[{index}/{total}] {fn} {label}: checking {i + 1}/{len(cands)} {show(cfg)}")
        try:
            got = backend.ready(run_one(cfg))
            ok, worst = agree(got, reference) if i else (True, 0.0)
        except Exception as e:  # a candidate that fails is reported, never chosen
            rows.append({"config": cfg, "ok": False, "why": f"{type(e).__name__}: {e}"[:200], "time_us": None})
            continue
        rows.append(
            {
                "config": cfg,
                "ok": ok,
                "why": None if ok else f"outputs differ from the default's (max relative {worst:.3g})",
                "time_us": None,
            }
        )
    usable = [r for r in rows if r["ok"]]
    # Calls per timed loop: about target_ms of the default candidate's
    # calls. A loop of one call times mostly the dispatch of the jit (on a
    # GPU often longer than a call), so a second loop of `reps` calls gives
    # a call's own time, the difference of the two over reps - 1. With the
    # loop filled by calls, the dispatch is a small and equal share of every
    # candidate's time.
    f0 = lambda *xs: call(*xs, config={k: py_value(spec["consts"][k][0], v) for k, v in cands[0].items()}, **attrs)
    target = args.target_ms / 1000
    probe = backend.timer(f0, arrays, 1)
    one = min(probe() for _ in range(3))
    reps = max(1, min(1000, int(target / max(one, 1e-6))))
    if reps > 1:
        probe = backend.timer(f0, arrays, reps)
        per_call = (min(probe() for _ in range(3)) - one) / (reps - 1)
        if per_call > 0:
            reps = max(reps, min(100_000, int(target / per_call)))
    runners = []
    for r in usable:
        cfg = {k: py_value(spec["consts"][k][0], v) for k, v in r["config"].items()}
        runners.append((r, backend.timer(lambda *xs, cfg=cfg: call(*xs, config=cfg, **attrs), arrays, reps)))
    times = {id(r): [] for r, _ in runners}

    def rounds(entries, count, what):
        # Round-robin, so drift hits every candidate alike. Each round starts
        # at another candidate and first runs one loop untimed: after the
        # host's pause between rounds a GPU's clock is still low, and
        # without both the first candidate of every round would be slowed.
        for rep in range(count):
            say(f"[{index}/{total}] {fn} {label}: {what} {rep + 1}/{count} ({len(entries)} candidates x {reps} calls)")
            k = rep % len(entries)
            turn = entries[k:] + entries[:k]
            turn[0][1]()
            for r, run in turn:
                times[id(r)].append(run() / reps)

    def median_us(r):
        ts = sorted(times[id(r)])
        return ts[len(ts) // 2] * 1e6

    rounds(runners, args.repeats, "timing round")
    for r, _ in runners:
        r["time_us"] = median_us(r)
    default = rows[0]
    best = min(usable, key=lambda r: r["time_us"]) if usable else default
    timed = default["ok"] and default["time_us"] is not None
    if timed and best is not default and best["time_us"] < default["time_us"] * (1.0 - args.margin):
        # A winner by the margin is confirmed head to head against the
        # default, over as many rounds again (the times pooled): among many
        # candidates, one is often fastest by noise alone.
        pair = [(r, run) for r, run in runners if r is default or r is best]
        rounds(pair, args.repeats, "confirming round")
        for r, _ in pair:
            r["time_us"] = median_us(r)
    beats = not timed or best["time_us"] < default["time_us"] * (1.0 - args.margin)
    chosen = best if beats else default
    return rows + refused, chosen, backend.given(arrays), used_dtypes


def print_table(fn, label, device, dtypes, rows, chosen, what="candidate"):
    default = rows[0]
    print(f"\n{fn}  {label}  ({', '.join(dtypes)}; {device})")
    print(f"  {what:<40} {'time (us)':>12} {'vs default':>11}")
    for r in rows:
        name = show(r["config"]) + (" (default)" if r is default else "")
        if r["time_us"] is None:
            print(f"  {name:<40} {'-':>12} {'-':>11}  not usable: {r['why']}")
            continue
        ratio = r["time_us"] / default["time_us"] if default["time_us"] else float("nan")
        mark = "  <- chosen" if r is chosen else ""
        print(f"  {name:<40} {r['time_us']:>12.1f} {ratio:>10.2f}x{mark}")


def refuse(e):
    # A table (or a path begen tune writes) the module's reader refuses:
    # the same words, and nothing written.
    return SystemExit(f"begen tune: {e}; it was left as it is and nothing was written: move it away and tune again")


def check_path(module, path, what):
    # `path` is a regular file or nothing, as the module's reader requires
    # of a table (the same code: the module's own).
    try:
        module._begen_tune_stat(path, what)
    except module._BegenTuneTableError as e:
        raise refuse(e) from None


def read_table(module, path):
    # The entries of the table at `path` ([] when there is none), read and
    # checked by the module's own reader: a table begen tune accepts (and
    # writes back) is one the module reads at call time.
    module._begen_tune_tables.pop(path, None)  # read again, never from the cache
    try:
        return list(module._begen_tune_entries(path))
    except module._BegenTuneTableError as e:
        raise refuse(e) from None


class TableLock:
    """An exclusive lock on the table at `path`, held across its read,
    merge and replace: a sidecar `<path>.lock` locked with flock (the table
    itself is replaced, so it cannot hold the lock). Another `begen tune`
    writing the same table waits, and says so."""

    def __init__(self, module, path):
        self.module, self.path, self.fd = module, path + ".lock", None

    def __enter__(self):
        import fcntl

        check_path(self.module, self.path, "lock file of a begen tuning table")
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            self.fd = os.open(self.path, flags, 0o644)
        except OSError as e:
            raise SystemExit(f"begen tune: cannot open the lock file {self.path}: {e.strerror}") from None
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"begen tune: waiting for lock on {self.path}")
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        os.close(self.fd)  # releases the lock
        return False


def write_table(module, path, new):
    # Merges `new` into the table at `path` (an entry of the same kernel,
    # device, dtypes and key replaced) and writes it atomically, holding
    # the table's lock from the read to the replace: two runs tuning one
    # table keep each other's entries.
    def ident(e):
        return (e.get("kernel"), e.get("device"), tuple(e.get("dtypes", ())), json.dumps(e.get("key"), sort_keys=True))

    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    with TableLock(module, path):
        kept = {ident(e): e for e in read_table(module, path)}
        for e in new:
            kept[ident(e)] = e
        entries = sorted(
            kept.values(),
            key=lambda e: json.dumps([e.get("kernel"), e.get("device"), e.get("dtypes"), e.get("key")], sort_keys=True),
        )
        text = json.dumps({"begen_tune": 1, "entries": entries}, indent=1, sort_keys=True) + "\n"
        # What the module would refuse is never written.
        try:
            module._begen_tune_parse(path, text.encode())
        except module._BegenTuneTableError as e:
            raise refuse(e) from None
        fd, tmp = tempfile.mkstemp(prefix=".begen-tune-", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise


def plot(path, results):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit("begen tune: --plot needs matplotlib in this Python (pip install matplotlib)") from None
    n = len(results)
    fig, axes = plt.subplots(n, 1, figsize=(8, 2.2 + 0.35 * max(len(r[3]) for r in results) * n), squeeze=False)
    for ax, (fn, label, device, rows, chosen) in zip(axes[:, 0], [(r[0], r[1], r[2], r[3], r[4]) for r in results]):
        usable = [r for r in rows if r["time_us"] is not None]
        names = [show(r["config"]) + (" *" if r is chosen else "") for r in usable]
        ax.barh(
            names, [r["time_us"] for r in usable], color=["tab:green" if r is chosen else "tab:gray" for r in usable]
        )
        ax.invert_yaxis()
        ax.set_xlabel("time per call (us)")
        ax.set_title(f"{fn}  {label}  ({device})", fontsize=9)
        ax.tick_params(axis="y", labelsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    say(f"begen tune: wrote {path}")


def main(argv):
    args = parse_args(argv)
    t0 = time.perf_counter()
    module = load_module(args.out, args.name + ("_torch" if args.torch else ""))
    backend = TorchBackend(module) if args.torch else JaxBackend()
    tuned = getattr(module, "_BEGEN_TUNE", {})
    if not tuned:
        raise SystemExit(f"begen tune: {args.name} declares no tuned kernel (begen.yaml `tune:`); nothing to tune")
    # Every table it will write is checked before anything is measured:
    # one it cannot read or replace fails now, not after the timing.
    user = module._begen_tune_user_table()
    if not args.dry_run:
        for path in [user] + ([args.export] if args.export else []):
            read_table(module, path)
            check_path(module, path + ".lock", "lock file of a begen tuning table")
    if args.plot:
        check_path(module, args.plot, "PNG file begen tune can write")
    if args.record:
        keys = recorded_keys(module, args.record)
    else:
        keys = shape_keys(json.loads(args.shapes_json or "{}"))
    wanted = set(filter(None, args.kernels.split(",")))
    for fn in sorted({k[0] for k in keys if k[0] not in tuned} | (wanted - set(tuned))):
        import difflib

        near = difflib.get_close_matches(fn, list(tuned), n=1)
        more = f" (did you mean {near[0]!r}?)" if near else ""
        raise SystemExit(
            f"begen tune: {fn!r} is not a tuned kernel of {args.name}{more}; its tuned kernels: {', '.join(sorted(tuned))}"
        )
    keys = [k for k in keys if k[0] in tuned and (not wanted or k[0] in wanted)]
    # One measurement per bucketed key: keys of one bucket share an entry.
    seen, unique = set(), []
    for fn, dims, dtypes in keys:
        spec = tuned[fn]
        ident = (fn, tuple(module._begen_tune_bucket(dims[k]) for k in spec["key"] if k in dims), dtypes)
        if ident not in seen:
            seen.add(ident)
            unique.append((fn, dims, dtypes))
    if not unique:
        raise SystemExit("begen tune: no key to tune (give --shapes FILE, or --record CMD that calls a tuned kernel)")
    entries, results = [], []
    for i, (fn, dims, dtypes) in enumerate(unique, 1):
        spec = backend.spec(fn, tuned[fn]) if args.torch else tuned[fn]
        given = dims.get("attrs", {})
        known = [name for name, _ in spec.get("attrs", ())]
        for name in given if not spec.get("inputs") else ():
            if name not in known:
                import difflib

                near = difflib.get_close_matches(name, known, n=1)
                more = f" (did you mean {near[0]!r}?)" if near else ""
                have = f"its attributes: {', '.join(known)}" if known else "it takes none"
                raise SystemExit(f"begen tune: {fn}: --shapes gives attribute {name!r}{more}; {have}")
        missing = [k for k in spec["key"] if k not in dims]
        if missing:
            raise SystemExit(
                f"begen tune: {fn}: the key needs dimension '{missing[0]}' (key: {', '.join(spec['key'])})"
            )
        algorithm = spec.get("implementations") is not None
        if algorithm:
            platform = platform_of(module)
            built = spec["implementations"].get(platform, ())
            if len(built) < 2:
                say(
                    f"[{i}/{len(unique)}] {fn}: {len(built)} implementation(s) on {platform}: nothing to choose, skipped"
                )
                continue
        rows, chosen, given, used = tune_key(module, backend, fn, spec, dims, dtypes, args, i, len(unique))
        if algorithm:
            # The key as the dispatch reads it: extents from the inputs.
            key = module._begen_tune_algorithm_key(fn, platform, given)
        else:
            key = module._begen_tune_key(fn, {k: (v, "") for k, v in dims.items()}, used)
        device, used_dtypes, bucketed = key
        label = " ".join(f"{k}={v}" for k, v in dims.items() if k != "attrs")
        print_table(fn, label, device, used_dtypes, rows, chosen, "implementation" if algorithm else "candidate")
        results.append((fn, label, device, rows, chosen))
        entries.append(
            {
                "kernel": spec["target"],
                "hash": spec["hash"],
                "device": device,
                "dtypes": list(used_dtypes),
                "key": bucketed,
                "config": chosen["config"],
                "times_us": {show(r["config"]): round(r["time_us"], 3) for r in rows if r["time_us"] is not None},
                "rejected": {show(r["config"]): r["why"] for r in rows if not r["ok"]},
            }
        )
    if not args.dry_run:
        write_table(module, user, entries)
        say(f"begen tune: wrote {len(entries)} entr{'y' if len(entries) == 1 else 'ies'} into {user}")
        if args.export:
            write_table(module, args.export, entries)
            say(f"begen tune: exported them into {args.export} (ship it with begen.yaml `tune: table:`)")
    if args.plot:
        plot(args.plot, results)
    say(f"begen tune: {len(unique)} key(s) tuned in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
