"""Ask cuTile (pip `cuda-tile`) about kernel symbols, for begen's demangler tests.

    python cutile_signatures.py signatures OUT.json [--count N] [--seed S]
    python cutile_signatures.py export OUT_DIR

`signatures` builds many KernelSignatures (dtypes, ranks, index types,
divisibility, constant strides, lower bounds, base alignment, alias groups,
lists, scalars, constants; cutile_python_v1 and v2), has cuTile mangle each
and demangle the symbol again with its own `demangle_kernel_name`, and also
feeds `demangle_kernel_name` mutated symbols (characters dropped, doubled,
replaced). Each record is {"symbol", "ok", and either "name", "convention",
"params" (cuTile's reading, in a neutral JSON shape) or "error"}. begen's
demangler must agree on every record (tests/binary.rs).

`export` compiles a few kernels ahead of time for sm_90 (no GPU needed:
cuTile runs the `tileiras` assembler from pip) and writes OUT_DIR/*.cubin and
OUT_DIR/exports.json: [{"file", "symbol"}].
"""

import json
import math
import random
import struct
import sys
import warnings

import cuda.tile as ct
from cuda.tile.compilation import (
    ArrayConstraint,
    CallingConvention,
    ConstantConstraint,
    KernelSignature,
    ListConstraint,
    ScalarConstraint,
    demangle_kernel_name,
)
from cuda.tile.compilation._signature import TupleConstraint

# cuTile's dtypes and the codes begen expects in a symbol.
DTYPES = {
    ct.bool_: "b8", ct.uint8: "u8", ct.uint16: "u16", ct.uint32: "u32", ct.uint64: "u64",
    ct.int8: "i8", ct.int16: "i16", ct.int32: "i32", ct.int64: "i64",
    ct.float16: "f16", ct.float32: "f32", ct.float64: "f64", ct.bfloat16: "bf16",
    ct.tfloat32: "tf32", ct.float8_e4m3fn: "f8m3fn", ct.float8_e5m2: "f8m2",
    ct.float8_e8m0fnu: "f8m0fnu",
}
INDEX = {ct.int32: "int32", ct.uint32: "uint32", ct.int64: "int64"}
V1 = CallingConvention.cutile_python_v1()
V2 = CallingConvention.cutile_python_v2()


def to_json(c):
    """cuTile's constraint object as plain JSON (what tests/binary.rs renders begen's reading into)."""
    if isinstance(c, ArrayConstraint):
        return {
            "kind": "array", "dtype": DTYPES[c.dtype], "ndim": c.ndim, "index": INDEX[c.index_dtype],
            "shape_divisible_by": list(c.shape_divisible_by),
            "shape_constant": list(c.shape_constant),
            "stride_divisible_by": list(c.stride_divisible_by),
            "stride_constant": list(c.stride_constant),
            "stride_lower_bound": list(c.stride_lower_bound_incl),
            "base_addr_divisible_by": c.base_addr_divisible_by,
            "alias_groups": list(c.alias_groups),
            "may_alias_internally": c.may_alias_internally,
        }
    if isinstance(c, ListConstraint):
        return {"kind": "list", "element": to_json(c.element), "alias_groups": list(c.alias_groups),
                "elements_may_alias": c.elements_may_alias}
    if isinstance(c, ScalarConstraint):
        return {"kind": "scalar", "dtype": DTYPES[c.dtype]}
    if isinstance(c, TupleConstraint):
        return {"kind": "tuple", "items": [to_json(i) for i in c.items]}
    if isinstance(c, ConstantConstraint):
        v = c.value
        if isinstance(v, bool):
            return {"kind": "constant", "bool": v}
        if isinstance(v, int):
            return {"kind": "constant", "int": str(v)}
        if isinstance(v, float):
            return {"kind": "constant", "float_bits": "%016x" % struct.unpack("<Q", struct.pack("<d", v))[0]}
    raise TypeError(f"unexpected constraint {c!r}")


def demangled(symbol):
    try:
        name, sig = demangle_kernel_name(symbol)
    except Exception as e:  # cuTile raises ValueError/TypeError/KeyError for bad symbols
        return {"symbol": symbol, "ok": False, "error": f"{type(e).__name__}: {e}"}
    return {"symbol": symbol, "ok": True, "name": name, "convention": sig.calling_convention.name,
            "params": [to_json(p) for p in sig.parameters]}


def per_axis(rng, ndim, make):
    return [make() for _ in range(ndim)]


def random_array(rng, groups, v2):
    ndim = rng.choice([0, 1, 1, 2, 2, 3, 4, 5])
    dtype = rng.choice(list(DTYPES))
    divs = [1, 1, 1, 2, 4, 8, 16, 3, 12, 128]
    stride_constant = per_axis(rng, ndim, lambda: rng.choice([None, None, None, 1, 0, 2, -1, 64]))
    lower = per_axis(rng, ndim, lambda: rng.choice([None, None, 0, 1, -4, 7]))
    stride_div = per_axis(rng, ndim, lambda: rng.choice(divs))
    for i in range(ndim):
        # cuTile rejects a divisibility or bound that contradicts a constant stride.
        if stride_constant[i] is not None:
            stride_div[i] = 1
            if lower[i] is not None and lower[i] > stride_constant[i]:
                lower[i] = None
    kwargs = {}
    if v2 and rng.random() < 0.5:
        kwargs["shape_constant"] = per_axis(rng, ndim, lambda: rng.choice([None, 1, 16, 100]))
    shape_div = per_axis(rng, ndim, lambda: rng.choice(divs))
    if "shape_constant" in kwargs:
        shape_div = [1 if s is not None and s % d else d for s, d in zip(kwargs["shape_constant"], shape_div)]
    return ArrayConstraint(
        dtype, ndim,
        index_dtype=rng.choice([ct.int32, ct.int32, ct.uint32, ct.int64]),
        stride_lower_bound_incl=rng.choice([None, 0, lower]),
        alias_groups=groups(),
        may_alias_internally=rng.random() < 0.2,
        stride_constant=rng.choice([None, stride_constant]),
        stride_divisible_by=rng.choice([1, stride_div]),
        shape_divisible_by=rng.choice([1, 16, shape_div]),
        base_addr_divisible_by=rng.choice([1, 1, 2, 8, 16, 128, 256]),
        **kwargs,
    )


def random_constant(rng):
    return rng.choice([
        True, False, 0, 1, -1, 16, -12345, 2**40, -(2**62), 2**70,
        0.0, -0.0, 1.5, -2.25e-300, math.inf, -math.inf, math.nan, 1e308,
    ])


def random_param(rng, groups, v2, depth=0):
    r = rng.random()
    if r < 0.4:
        return random_array(rng, groups, v2)
    if r < 0.55:
        element = random_array(rng, groups, v2)
        return ListConstraint(element, alias_groups=groups(), elements_may_alias=rng.random() < 0.3)
    if r < 0.75:
        return ScalarConstraint(rng.choice(list(DTYPES)))
    if v2 and depth < 2 and r < 0.82:
        return TupleConstraint([random_param(rng, groups, v2, depth + 1) for _ in range(rng.randint(0, 3))])
    return ConstantConstraint(random_constant(rng))


def random_signature(rng):
    v2 = rng.random() < 0.25
    pool = ["a", "b", "c", "d"]

    def groups():
        if rng.random() < 0.7:
            return ()
        return tuple(rng.sample(pool, rng.randint(1, 2)))

    params = [random_param(rng, groups, v2) for _ in range(rng.randint(0, 6))]
    name = rng.choice(["k", "scale", "my_Kernel", "gemm_2d", "f" * 3, "_x"])
    sig = KernelSignature(params, V2 if v2 else V1)
    return sig.with_mangled_symbol(name).symbol


def mutations(rng, symbol):
    alphabet = "_0123456789abcdefgilptuvwsABFILSTCKXz"
    out = []
    for _ in range(3):
        s = list(symbol)
        i = rng.randrange(len(s) + 1)
        op = rng.choice(["drop", "insert", "replace", "double"])
        if op == "drop" and i < len(s):
            del s[i]
        elif op == "insert":
            s.insert(i, rng.choice(alphabet))
        elif op == "replace" and i < len(s):
            s[i] = rng.choice(alphabet)
        elif op == "double" and i < len(s):
            s.insert(i, s[i])
        out.append("".join(s))
    return out


HANDPICKED = [
    "scale_Kt1_A1f32_1l0_A1f32_1l0_Sf32_I16",
    "scale_Kt1_A1f32_1i16t1_p16_A1f32_1i16t1_p16_Sf32_I16",
    "k_Kt1", "_Kt1", "k_K", "k_Kt1_", "k_Kt3_Sf32", "k_Kt1_A1f32_0", "k_Kt1_A1f32_2i4",
    "k_Kt1_A1f32_1i1", "k_Kt1_A1f32_1i0", "k_Kt1_A1f32_1i_4", "k_Kt1_A2f32_3i4_1i8",
    "k_Kt1_A1f32_1t1v2", "k_Kt1_A1f32_1t1l0", "k_Kt1_A1f32_g0", "k_Kt1_A1f32_g1_A1f32_g1",
    "k_Kt1_A1f32_g0_A1f32_g0", "k_Kt1_A1f32_g00_A1f32_g00", "k_Kt1_A1f32_g0_Lg0A1f32",
    "k_Kt1_Sf32X", "k_Kt1_LSf32", "k_Kt1_Q", "k_Kt1_D", "k_Kt1_Cs_abc_z", "k_Kt1_T1Sf32",
    "k_Kt2_T1Sf32", "k_Kt2_T0", "k_Kt1_A1f32_1s4", "k_Kt2_A1f32_1s4", "k_Kt2_A1f32_1s4i8",
    "k_Kt2_A1f32_1s_4", "k_Kt1_I99999999999999999999999999999999999999",
    "k_Kt1_F3ff8000000000000", "k_Kt1_F3FF8000000000000", "k_Kt1_F3ff800000000000",
    "k_Kt1_B2", "k_Kt1_B1", "k_Kt1_I_0", "k_Kt1_I007", "k_Kt1_A01f32", "k_Kt1_A1f32_01i4",
    "k_Kt1_A1f32_1", "k_Kt1_A1f32__p16", "k_Kt1_A1f32_pw", "k_Kt1_A1f32_p1", "k_Kt1_A1f32_wu",
    "k_Kt1_A1f32_x", "k_Kt1_A0b8", "k_Kt1_A2f8m3fn_3v16", "my_Kernel_Kt1_Sf32",
    "k_Kt1_A1f32_g0_A1f32_g1_A1f32_g0_A1f32_g2",
    "k_Kt1_A1f32_g0_A1f32_g1_A1f32_g1_A1f32_g2_A1f32_g0_A1f32_g2",
    "k_Kt1_Lg0ig1A2f32_3v2_Lg0g1A1f32",
    # Lists: every array extra on the element, a list of rank 0, lists around
    # scalars and constants, and malformed ones.
    "k_Kt1_LA3bf16_7i8t1_p128w_Si32_LiA0u8", "k_Kt1_LA1f32_u_I4_LA2f64_1l_3", "k_Kt1_LiA1f16_1v2l0_p8i",
    "k_Kt1_L", "k_Kt1_LA", "k_Kt1_LLA1f32", "k_Kt1_LiiA1f32", "k_Kt1_LI3", "k_Kt1_Lg0A1f32",
    "k_Kt1_LA1f32_g0_A1f32_g0", "k_Kt1_LA1f32_g0_LA1f32_g0", "k_Kt1_Lg0A1f32_Lg0A1f32",
    "k_Kt2_T2LA1f32Sf32", "k_Kt2_LA1f32_1s16", "k_Kt1_LA1f32_1s16",
]


def signatures(out, count, seed):
    rng = random.Random(seed)
    records, seen = [], set()

    def add(symbol):
        if symbol not in seen:
            seen.add(symbol)
            records.append(demangled(symbol))

    for s in HANDPICKED:
        add(s)
    made = 0
    while made < count:
        try:
            symbol = random_signature(rng)
        except (ValueError, TypeError, AssertionError):
            # An alias group used once, and the like: cuTile refuses to build the
            # signature (or, for some alias-group orders, fails its own round trip).
            continue
        made += 1
        add(symbol)
        for m in mutations(rng, symbol):
            add(m)
    with open(out, "w") as f:
        json.dump(records, f, indent=0)
    ok = sum(r["ok"] for r in records)
    print(f"{len(records)} symbols ({ok} valid, {len(records) - ok} refused) written to {out}")


# Kernels exported ahead of time: their cubins' parameter tables are the ground truth
# for begen's flat argument list.

@ct.kernel
def scale(x, y, s, TILE: ct.Constant[int]):
    bid = ct.bid(0)
    t = ct.load(x, index=(bid,), shape=(TILE,))
    ct.store(y, index=(bid,), tile=t * s)


@ct.kernel
def add2d(a, b, out, TM: ct.Constant[int], TN: ct.Constant[int]):
    i, j = ct.bid(0), ct.bid(1)
    ta = ct.load(a, index=(i, j), shape=(TM, TN))
    tb = ct.load(b, index=(i, j), shape=(TM, TN))
    ct.store(out, index=(i, j), tile=ta + tb)


@ct.kernel
def scalars(out, a, b, c, d, e, TILE: ct.Constant[int]):
    bid = ct.bid(0)
    t = ct.full((TILE,), 1.0, dtype=ct.float32)
    t = t * ct.astype(a, ct.float32) + ct.astype(b, ct.float32) + ct.astype(c, ct.float32)
    t = t + ct.astype(d, ct.float32) + ct.astype(e, ct.float32)
    ct.store(out, index=(bid,), tile=t)


@ct.kernel
def first_of(xs, y, TILE: ct.Constant[int]):
    bid = ct.bid(0)
    t = ct.load(xs[0], index=(bid,), shape=(TILE,))
    ct.store(y, index=(bid,), tile=t)


@ct.kernel
def sum_list(xs, y, s, TILE: ct.Constant[int]):
    bid = ct.bid(0)
    acc = ct.full((TILE,), 0.0, dtype=ct.float32)
    for k in range(len(xs)):
        acc = acc + ct.load(xs[k], index=(bid,), shape=(TILE,))
    ct.store(y, index=(bid,), tile=acc * s)


@ct.kernel
def add_list2d(a, xs, out, TM: ct.Constant[int], TN: ct.Constant[int]):
    i, j = ct.bid(0), ct.bid(1)
    acc = ct.load(a, index=(i, j), shape=(TM, TN))
    for k in range(len(xs)):
        acc = acc + ct.load(xs[k], index=(i, j), shape=(TM, TN))
    ct.store(out, index=(i, j), tile=acc)


def array(dtype, ndim, index=ct.int32, **kw):
    kw.setdefault("stride_lower_bound_incl", 0)
    return ArrayConstraint(dtype, ndim, index_dtype=index, alias_groups=(), may_alias_internally=False, **kw)


def export(out_dir):
    import os
    from cuda.tile.compilation import export_kernel

    os.makedirs(out_dir, exist_ok=True)
    f32 = ScalarConstraint(ct.float32)
    jobs = [
        ("scale", scale, [array(ct.float32, 1, stride_constant=(1,), shape_divisible_by=16,
                                base_addr_divisible_by=16),
                          array(ct.float32, 1, stride_constant=(1,)), f32, 16]),
        ("scale_i64", scale, [array(ct.float32, 1, index=ct.int64), array(ct.float32, 1, index=ct.int64),
                              f32, 128]),
        ("add2d", add2d, [array(ct.float16, 2, stride_constant=(None, 1), stride_divisible_by=(8, 1)),
                          array(ct.float16, 2, index=ct.uint32),
                          array(ct.float16, 2, index=ct.int64, shape_divisible_by=(16, 16)), 16, 32]),
        ("scalars", scalars, [array(ct.float32, 1), ScalarConstraint(ct.int8), ScalarConstraint(ct.float64),
                              ScalarConstraint(ct.int16), ScalarConstraint(ct.bool_),
                              ScalarConstraint(ct.int64), 64]),
        ("first_of", first_of, [ListConstraint(array(ct.float32, 1), alias_groups=(), elements_may_alias=False),
                                array(ct.float32, 1), 32]),
        # Lists: a rank-1 list with the scale kernel's element assumptions, then a
        # rank-2 list of int64-index elements after an array.
        ("sum_list", sum_list, [ListConstraint(array(ct.float32, 1, stride_constant=(1,), shape_divisible_by=16,
                                                     base_addr_divisible_by=16),
                                               alias_groups=(), elements_may_alias=False),
                                array(ct.float32, 1), f32, 16]),
        ("add_list2d", add_list2d, [array(ct.float32, 2),
                                    ListConstraint(array(ct.float32, 2, index=ct.int64, stride_constant=(None, 1)),
                                                   alias_groups=(), elements_may_alias=True),
                                    array(ct.float32, 2, shape_divisible_by=(16, 32)), 16, 32]),
    ]
    exports = []
    for file, kernel, params in jobs:
        sig = KernelSignature(params, V1).with_mangled_symbol(kernel._annotated_function.pyfunc.__name__)
        path = os.path.join(out_dir, file + ".cubin")
        export_kernel(kernel, [sig], path, gpu_code="sm_90", output_format="cubin")
        exports.append({"file": file + ".cubin", "symbol": sig.symbol})
    with open(os.path.join(out_dir, "exports.json"), "w") as f:
        json.dump(exports, f, indent=1)
    print(f"{len(exports)} cubins exported to {out_dir}")


if __name__ == "__main__":
    # The pip tileiras (13.4) and nvcc (13.5) differ in version; cuTile warns and uses
    # the tileiras on PATH (scripts/env.sh puts the pip toolkit there).
    warnings.filterwarnings("ignore", message="Installed NVIDIA pip packages have mismatched versions")
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "signatures" and len(sys.argv) >= 3:
        args = sys.argv[3:]
        count = int(args[args.index("--count") + 1]) if "--count" in args else 2000
        seed = int(args[args.index("--seed") + 1]) if "--seed" in args else 10
        signatures(sys.argv[2], count, seed)
    elif cmd == "export" and len(sys.argv) == 3:
        export(sys.argv[2])
    else:
        sys.exit(__doc__)
