"""A third opinion on an arg_spec: read the signature the C preprocessor produces.

`nvcc -E` expands every macro and drops every comment, so the function that
`// @BE name` exports appears in its output as a plain `void name(...)`
definition. Classifying that parameter list by the seed's rules gives the
arg_spec a correct parser must find, independent of both kernix and begen.
Used to verify each allow-list entry (where begen and kernix differ and kernix
is wrong) and, with `kernix_compare.py --reference`, on the whole corpus.

Limits: signatures are found by name in the preprocessed text (exactly one
definition must exist), typedefs are not resolved, and headers the wheel does
not ship (`bn_tile.cuh`; `cublas_v2.h` from a CUDA package not installed) are
replaced by empty stubs, which is sound only while no exported signature uses
them (true for brainevent 0.3.0: the reference finds every function).
"""

import concurrent.futures
import os
import pathlib
import re
import shutil
import subprocess

# The seed's scalar table (C++ type -> attr type), `const` stripped first.
SCALARS = {
    "bool": "bool", "int8_t": "int8", "char": "int8", "uint8_t": "uint8",
    "unsigned char": "uint8", "int16_t": "int16", "short": "int16",
    "uint16_t": "uint16", "unsigned short": "uint16", "int32_t": "int32",
    "int": "int32", "uint32_t": "uint32", "unsigned int": "uint32",
    "int64_t": "int64", "long long": "int64", "uint64_t": "uint64",
    "unsigned long long": "uint64", "float": "float32", "double": "float64",
    "std::complex<float>": "complex64", "std::complex<double>": "complex128",
}
MISSING_HEADERS = ("bn_tile.cuh", "cublas_v2.h")


def find_nvcc() -> str | None:
    return os.environ.get("NVCC") or shutil.which("nvcc")


def ffi_include() -> str | None:
    d = os.environ.get("XLA_FFI_INCLUDE_DIR")
    if d:
        return d
    try:
        import jax.ffi
        return jax.ffi.include_dir()
    except ImportError:
        return None


def preprocess(nvcc: str, package: pathlib.Path, rel: str, stub: pathlib.Path) -> str:
    """`nvcc -E` one corpus file (given relative to the unpacked package)."""
    src = package / rel
    cmd = [nvcc, "-E", "-x", "cu", "-I", str(package / "include"), "-I", str(stub),
           "-I", str(src.parent)]
    ffi = ffi_include()
    if ffi:
        cmd += ["-I", ffi]
    r = subprocess.run(cmd + [str(src)], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} {src} failed:\n{r.stderr.strip()}")
    return r.stdout


def signatures(text: str) -> dict[str, list[str]]:
    """Parameter lists of every `void name(...)` in preprocessed text, by name."""
    out: dict[str, list[str]] = {}
    for m in re.finditer(r"\bvoid\s+([A-Za-z_]\w*)\s*\(", text):
        depth, j = 1, m.end()
        while depth and j < len(text):
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
        out.setdefault(m.group(1), []).append(text[m.end():j - 1])
    return out


def classify(params: str) -> list[str]:
    """arg_spec of one parameter list by the seed's rules; `error(...)` marks a
    parameter the seed cannot map (pointer, reference, unknown type)."""
    tokens = []
    for p in _split_top(params):
        p = " ".join(p.split())
        p = re.sub(r"\s*=.*$", "", p)  # a default argument does not change the type
        if re.search(r"\bTensor\b", p):
            tokens.append("arg" if re.search(r"\bconst\b", p) else "ret")
            continue
        m = re.match(r"^(.*?)\s*([A-Za-z_]\w*)$", p)
        if not m:
            tokens.append(f"error({p})")
            continue
        ty, name = m.group(1).strip(), m.group(2)
        ty = re.sub(r"^const\s+|\s+const$", "", ty)
        # `const int64_t stream` is still the stream (kernix makes it an attr).
        if ty == "int64_t" and name == "stream":
            tokens.append("stream")
            continue
        if ty in SCALARS:
            tokens.append(f"attr.{name}:{SCALARS[ty]}")
        else:
            tokens.append(f"error({p})")
    return tokens


def _split_top(params: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in params:
        if ch in "(<[{":
            depth += 1
        elif ch in ")>]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip() and p.strip() != "void"]


def reference_specs(package: pathlib.Path, wanted: dict[str, list[str]],
                    cache: pathlib.Path) -> dict[tuple[str, str], list[str] | str]:
    """{(file, function): spec, or a string saying why there is none} for the
    functions `wanted` names per file (files relative to the package)."""
    nvcc = find_nvcc()
    if not nvcc:
        raise RuntimeError("no nvcc: set NVCC or run scripts/setup.sh and source scripts/env.sh")
    stub = cache / "stub-include"
    stub.mkdir(parents=True, exist_ok=True)
    for h in MISSING_HEADERS:
        (stub / h).touch()

    def one(rel: str):
        sigs_by_name = signatures(preprocess(nvcc, package, rel, stub))
        res = {}
        for name in wanted[rel]:
            sigs = sigs_by_name.get(name, [])
            res[(rel, name)] = (classify(sigs[0]) if len(sigs) == 1
                                else f"{len(sigs)} definitions of void {name}(...) after nvcc -E")
        return res

    out = {}
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        for res in pool.map(one, sorted(wanted)):
            out.update(res)
    return out
