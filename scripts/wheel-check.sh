#!/usr/bin/env bash
# The pip route, end to end, as a Python user meets it:
#
#   1. build begen's wheel with maturin (the distribution `begen-jax`: the
#      `begen` program + python/begen);
#   2. install it into a fresh venv and use it from an unrelated directory:
#      `begen`, `python -m begen`, `begen doctor` (installed by pip, embedded
#      headers), `begen build` of a kernel tree outside the repository;
#   3. build the wheel of examples/python-package (a hatchling project whose
#      kernels begen's build hook compiles) as a user would: `pip wheel .`
#      with the newest pip, in an isolated build, begen-jax found through
#      PIP_FIND_LINKS and no constraint variables; check it: a
#      py3-none-manylinux_2_Y_x86_64 wheel (Y from the library's glibc and
#      libstdc++ symbol versions) holding the library, module, stub and
#      manifest and nothing of begen's work files, with its jax/jaxlib
#      requirements and begen.json; and `pip install -e .` refused clearly;
#   4. install that wheel into another fresh venv with only jax and numpy (no
#      begen) and call its kernels from JAX against numpy (check.py).
#
# usage: scripts/wheel-check.sh        (from scripts/test.sh, or alone)
# Needs cargo, a C++ compiler and PyPI (the pip cache is used: the JAX
# wheels are those scripts/setup.sh downloaded for .venv). Work goes to
# target/wheel-check/; the repository is not written to.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="$ROOT/target/wheel-check"
# PYTHON, else the interpreter scripts/setup.sh chose for .venv, else
# python3: it must be Python >= 3.12 (requirements.txt pins jax 0.12).
PY="${PYTHON:-$("$ROOT/.venv/bin/python" -c 'import sys; print(sys._base_executable)' 2>/dev/null || echo python3)}"
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 12))' \
    || { echo "wheel-check: $("$PY" --version 2>&1) is older than 3.12, which jax 0.12 needs; run scripts/setup.sh or set PYTHON" >&2; exit 1; }
PIP=(python -m pip install --quiet --disable-pip-version-check)
# One set of pins for every venv: the JAX of .venv (cached) and the build tools.
PINS=(-c "$ROOT/scripts/requirements.txt" -c "$ROOT/scripts/wheel-requirements.txt")
start=$SECONDS

say() { echo "wheel-check: $*"; }
fail() { echo "wheel-check: FAILED: $*" >&2; exit 1; }

# Fresh environments: nothing of the caller's (env.sh's BEGEN_PYTHON, NVCC,
# XLA_FFI_INCLUDE_DIR, .venv on PATH) leaks into what a new user would have.
unset BEGEN_PYTHON BEGEN_BIN XLA_FFI_INCLUDE_DIR NVCC CUDA_PATH CUDA_HOME VIRTUAL_ENV PYTHONPATH
export PATH="$(printf '%s' "$PATH" | tr ':' '\n' | grep -v -e "^$ROOT/" | paste -sd: -)"
export PIP_DISABLE_PIP_VERSION_CHECK=1

rm -rf "$WORK/dist" "$WORK/build-env" "$WORK/user-env" "$WORK/elsewhere" "$WORK/unpacked"
mkdir -p "$WORK/dist" "$WORK/elsewhere"

# 1. begen's wheel. The tools venv is kept between runs (keyed on its pins).
tools="$WORK/tools"
stamp="$(sha256sum "$ROOT/scripts/wheel-requirements.txt" | cut -d' ' -f1)"
if [[ "$(cat "$tools/.stamp" 2>/dev/null)" != "$stamp" ]]; then
    rm -rf "$tools"
    "$PY" -m venv "$tools"
    (source "$tools/bin/activate" && "${PIP[@]}" -r "$ROOT/scripts/wheel-requirements.txt")
    echo "$stamp" > "$tools/.stamp"
fi
t=$SECONDS
(cd "$ROOT" && "$tools/bin/maturin" build --release --quiet -o "$WORK/dist") 2>&1 | grep -v '^\s*Compiling' || true
begen_whl="$(ls "$WORK"/dist/begen_jax-*.whl)" || fail "maturin built no begen-jax wheel"
say "built $(basename "$begen_whl") in $((SECONDS - t))s"

# 2. Install it into a fresh venv; use it from a directory unrelated to the repository.
"$PY" -m venv "$WORK/build-env"
(
    source "$WORK/build-env/bin/activate"
    "${PIP[@]}" "${PINS[@]}" "$begen_whl" jax
    cd "$WORK/elsewhere"
    [[ "$(command -v begen)" == "$WORK/build-env/bin/begen" ]] || fail "begen is not on the venv's PATH"
    begen --version
    python -m begen --version
    doctor="$(begen doctor || true)"
    echo "$doctor" | sed 's/^/  doctor | /'
    grep -q "^installed by: *pip, the begen-jax wheel ($WORK/build-env/lib/python3[.0-9]*/site-packages/begen_jax-" <<<"$doctor" \
        || fail "begen doctor does not say it was installed by pip"
    grep -q "^support headers: *embedded, version [0-9]" <<<"$doctor" || fail "begen doctor shows no header version"
    # A kernel tree outside the repository, built by the installed program:
    # the support headers come from the binary, not a source tree.
    cp -r "$ROOT/examples/python-package/kernels" k
    BEGEN_PYTHON="$(command -v python)" begen build k --out out --name elsewhere --quiet
    python -c "import sys; sys.path.insert(0, 'out'); import elsewhere, jax, numpy as np
x = np.arange(4, dtype=np.float32)
np.testing.assert_allclose(elsewhere.axpy(x, x, alpha=2.0, out=jax.ShapeDtypeStruct(x.shape, x.dtype)), 3 * x)"
    say "the installed begen built and ran kernels from $PWD"
)

# 3. The example project's wheel, built as `pip wheel .` builds it: in an
# isolated environment with its [build-system] requires (hatchling,
# begen-jax, jax), by the newest pip, with no constraint variables: pip finds
# begen-jax through PIP_FIND_LINKS until it is on PyPI. From a copy outside
# the repository.
t=$SECONDS
cp -r "$ROOT/examples/python-package" "$WORK/elsewhere/vecops"
rm -rf "$WORK/elsewhere/vecops/build" "$WORK/elsewhere/vecops/dist" "$WORK/elsewhere/vecops/.hatch"
(
    source "$WORK/build-env/bin/activate"
    python -m pip install --quiet --upgrade pip
    say "building with $(python -m pip --version | cut -d' ' -f1-2)"
    cd "$WORK/elsewhere/vecops"
    unset PIP_CONSTRAINT PIP_BUILD_CONSTRAINT PIP_NO_BUILD_ISOLATION
    PIP_FIND_LINKS="$WORK/dist" python -m pip wheel --quiet --no-deps . -w "$WORK/dist"
    # An editable install is refused, with the hook's message.
    if PIP_FIND_LINKS="$WORK/dist" python -m pip install --no-deps -e . >"$WORK/editable.log" 2>&1; then
        fail "pip install -e . of a kernel project succeeded; the hook should refuse it"
    fi
    grep -q "editable installs (\`pip install -e\`) are not supported" "$WORK/editable.log" \
        || { cat "$WORK/editable.log"; fail "pip install -e . failed without the hook's message"; }
    say "pip install -e . is refused with the hook's message"
)
vec_whl="$(ls "$WORK"/dist/begen_example_vecops-*.whl)" || fail "no wheel of the example"
[[ "$(basename "$vec_whl")" =~ ^begen_example_vecops-0\.1\.0-py3-none-manylinux_2_([0-9]+)_x86_64\.whl$ ]] \
    || fail "$(basename "$vec_whl") is not tagged py3-none-manylinux_2_Y_x86_64"
level="${BASH_REMATCH[1]}"
# The tag holds for what the library links: no glibc symbol version newer
# than 2.Y (objdump's reading, independent of the hook's), no library
# outside glibc's and the C++ runtime's.
"$PY" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("vecops/lib_kernels.so", sys.argv[2])' "$vec_whl" "$WORK/unpacked"
glibc="$(objdump -T "$WORK/unpacked/vecops/lib_kernels.so" | grep -oE 'GLIBC_2\.[0-9]+' | cut -d. -f2 | sort -n | tail -1)"
(( glibc <= level )) || fail "the library needs GLIBC_2.$glibc, above manylinux_2_$level"
objdump -p "$WORK/unpacked/vecops/lib_kernels.so" | awk '/NEEDED/ {print $2}' \
    | grep -vxE 'lib(c|m|dl|rt|pthread|gcc_s|stdc\+\+)\.so\.[0-9]+|ld-linux-x86-64\.so\.2' \
    && fail "the library needs a library a manylinux system does not provide"
say "$(basename "$vec_whl"): GLIBC_2.$glibc at most, manylinux_2_$level"
"$PY" - "$vec_whl" <<'PY' || fail "the example wheel's contents"
import json, sys, zipfile
whl = zipfile.ZipFile(sys.argv[1])
names = set(whl.namelist())
package = {"vecops/__init__.py", "vecops/lib_kernels.so", "vecops/_kernels.py", "vecops/_kernels.pyi", "vecops/_kernels.yaml"}
assert package <= names, f"{sorted(package - names)} not in the wheel: {sorted(names)}"
others = sorted(n for n in names - package if not n.startswith("begen_example_vecops-0.1.0.dist-info/"))
assert not others, f"files beside the package's (begen's work files?): {others}"
info = "begen_example_vecops-0.1.0.dist-info/"
wheel = whl.read(info + "WHEEL").decode()
assert "Root-Is-Purelib: false" in wheel, wheel
meta = whl.read(info + "METADATA").decode()
reqs = [l.split(":", 1)[1].strip() for l in meta.splitlines() if l.startswith("Requires-Dist:")]
assert any(r.startswith("jaxlib>=") for r in reqs) and any(r.startswith("jax>=") for r in reqs), reqs
built = json.loads(whl.read(info + "extra_metadata/begen.json"))
assert built["platform"] == "cpu" and built["xla_ffi_api_version"] and built["jaxlib"], built
assert built["platform_tag"] in sys.argv[1], built
print(f"wheel-check: {sys.argv[1].rsplit('/', 1)[-1]}: requires {reqs}; begen.json {built}")
PY
say "built and checked the example's wheel in $((SECONDS - t))s"

# 4. A user's venv: only the example's wheel and what it requires (jax,
# jaxlib, numpy); no begen, no build tools. Run from elsewhere, not the source.
t=$SECONDS
"$PY" -m venv "$WORK/user-env"
(
    source "$WORK/user-env/bin/activate"
    "${PIP[@]}" "${PINS[@]}" "$vec_whl"
    if python -c "import begen" 2>/dev/null || command -v begen >/dev/null; then
        fail "begen is installed in the user's venv"
    fi
    cd "$WORK/elsewhere"
    JAX_PLATFORMS=cpu python "$ROOT/examples/python-package/check.py"
)
say "installed the wheel into a fresh venv and called its kernels in $((SECONDS - t))s"
say "all passed in $((SECONDS - start))s"
