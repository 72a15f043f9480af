#!/usr/bin/env bash
# The pip route, end to end, as a Python user meets it:
#
#   1. build begen's sdist and, from it, its wheel as they are released
#      (scripts/build-wheel.sh, the command of
#      .github/workflows/release.yml: a manylinux2014 wheel linked by zig
#      and audited by auditwheel; the distribution `begen-jax`: the `begen`
#      program + python/begen);
#   2. install it into a fresh venv, with no Rust toolchain on PATH, and use
#      it from an unrelated directory: `begen`, `python -m begen`, `begen
#      doctor` (installed by pip, embedded headers), `begen build` of a
#      kernel tree outside the repository;
#   3. build three kernel wheels at once as a user would: `pip wheel .` with
#      the newest pip, in an isolated build, begen-jax found through
#      PIP_FIND_LINKS and no constraint variables:
#      - examples/python-package (a hatchling project whose kernels begen's
#        build hook compiles); checked: a py3-none-manylinux_2_Y_x86_64
#        wheel (Y from the library's glibc and libstdc++ symbol versions)
#        holding the library, module, stub and manifest and nothing of
#        begen's work files, with its jax/jaxlib requirements and
#        begen.json; and `pip install -e .` refused clearly;
#      - two packages `begen new` makes, sharing their kernels' names:
#        snnkit, built with the machine's C++ compiler, and
#        otherkit, built with zig's C++ against glibc 2.28 as CXX (the CPU
#        route of docs/shipping.md): auditwheel must find it consistent with
#        manylinux_2_28 or an older tag;
#   4. install the example's wheel into another fresh venv with only jax and
#      numpy (no begen) and call its kernels from JAX against numpy
#      (check.py); then add both scaffolded packages and their test extras
#      (pytest, begen-jax for begen.testing.check_grads) and run both
#      packages' tests in one process: they load together, and each checks
#      its kernels' gradients.
#
# usage: scripts/wheel-check.sh        (from scripts/test.sh, or alone)
# Needs cargo, a C++ compiler and PyPI (the pip cache is used: the JAX
# wheels are those scripts/setup.sh downloaded for .venv). Work goes to
# target/wheel-check/, the build tools to target/wheel-tools/; the
# repository is not written to.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="$ROOT/target/wheel-check"
TOOLS="$ROOT/target/wheel-tools/venv"
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
unset BEGEN_PYTHON BEGEN_BIN XLA_FFI_INCLUDE_DIR NVCC CUDA_PATH CUDA_HOME VIRTUAL_ENV PYTHONPATH CXX
export PATH="$(printf '%s' "$PATH" | tr ':' '\n' | grep -v -e "^$ROOT/" | paste -sd: -)"
export PIP_DISABLE_PIP_VERSION_CHECK=1

rm -rf "$WORK/dist" "$WORK/build-env" "$WORK/user-env" "$WORK/elsewhere" "$WORK/unpacked" "$WORK/logs"
mkdir -p "$WORK/dist" "$WORK/elsewhere" "$WORK/bin" "$WORK/logs"

# 1. begen's wheel, by the release workflow's command (the tools venv and
# cargo's target/ are kept between runs: an unchanged tree relinks only).
t=$SECONDS
begen_whl="$(PYTHON="$PY" bash "$ROOT/scripts/build-wheel.sh" "$WORK/dist" | tail -1)"
[[ -f "$begen_whl" ]] || fail "scripts/build-wheel.sh built no wheel"
say "built and audited $(basename "$begen_whl") ($(du -k "$begen_whl" | cut -f1) KiB) in $((SECONDS - t))s"

# zig's C++ against glibc 2.28, the wrapper of docs/shipping.md (run by the
# tools' Python: an isolated build's has no ziglang).
cat > "$WORK/bin/zig-cxx" <<EOF
#!/bin/sh
# zig's C++ against glibc 2.28 (x86_64), for begen's CXX.
for arg do
  shift
  case "\$arg" in --target=*|-Wl,--exclude-libs,ALL) ;; *) set -- "\$@" "\$arg" ;; esac
done
exec "$TOOLS/bin/python" -m ziglang c++ -target x86_64-linux-gnu.2.28 "\$@"
EOF
chmod +x "$WORK/bin/zig-cxx"

# No Rust from here on: the PATH of a user who has none.
PATH="$(printf '%s' "$PATH" | tr ':' '\n' | while read -r d; do
    [[ -x "$d/cargo" || -x "$d/rustc" ]] || printf '%s\n' "$d"
done | paste -sd: -)"
export PATH
if command -v cargo >/dev/null || command -v rustc >/dev/null; then
    fail "cargo or rustc is still on PATH"
fi

# 2. Install it into a fresh venv; use it from a directory unrelated to the repository.
t=$SECONDS
"$PY" -m venv "$WORK/build-env"
(
    source "$WORK/build-env/bin/activate"
    "${PIP[@]}" "${PINS[@]}" "$begen_whl" jax
    say "installed $(basename "$begen_whl") into a fresh venv in $((SECONDS - t))s (with jax; no cargo, no rustc)"
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

# 3. The kernel projects' wheels, built as `pip wheel .` builds them: in an
# isolated environment with their [build-system] requires (hatchling,
# begen-jax, jax), by the newest pip, with no constraint variables: pip finds
# begen-jax through PIP_FIND_LINKS until it is on PyPI. From folders outside
# the repository; the three at once.
t=$SECONDS
new_start=$SECONDS
cp -r "$ROOT/examples/python-package" "$WORK/elsewhere/vecops"
rm -rf "$WORK/elsewhere/vecops/build" "$WORK/elsewhere/vecops/dist" "$WORK/elsewhere/vecops/.hatch"
(
    source "$WORK/build-env/bin/activate"
    python -m pip install --quiet --upgrade pip
    say "building with $(python -m pip --version | cut -d' ' -f1-2)"
    unset PIP_CONSTRAINT PIP_BUILD_CONSTRAINT PIP_NO_BUILD_ISOLATION
    export PIP_FIND_LINKS="$WORK/dist"
    (cd "$WORK/elsewhere" && begen new snnkit >/dev/null && begen new otherkit >/dev/null)
    wheel() { (cd "$WORK/elsewhere/$1" && shift && "$@" python -m pip wheel -v --no-deps . -w "$WORK/dist"); }
    wheel vecops env >"$WORK/logs/vecops.log" 2>&1 & vecops=$!
    wheel snnkit env >"$WORK/logs/snnkit.log" 2>&1 & snnkit=$!
    wheel otherkit env CXX="$WORK/bin/zig-cxx" >"$WORK/logs/otherkit.log" 2>&1 & otherkit=$!
    for p in vecops snnkit otherkit; do
        wait "${!p}" || { tail -40 "$WORK/logs/$p.log"; fail "pip wheel of $p (log: $WORK/logs/$p.log)"; }
        grep -h "begen hook:" "$WORK/logs/$p.log" | sed "s/^ */  $p | /" || true
    done
    # An editable install is refused, with the hook's message.
    cd "$WORK/elsewhere/vecops"
    if python -m pip install --no-deps -e . >"$WORK/editable.log" 2>&1; then
        fail "pip install -e . of a kernel project succeeded; the hook should refuse it"
    fi
    grep -q "editable installs (\`pip install -e\`) are not supported" "$WORK/editable.log" \
        || { cat "$WORK/editable.log"; fail "pip install -e . failed without the hook's message"; }
    say "pip install -e . is refused with the hook's message"
)
say "built three kernel wheels at once in $((SECONDS - t))s"
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
say "checked the example's wheel"
# The zig-built one: auditwheel's own reading of its library.
zig_whl="$(ls "$WORK"/dist/otherkit-*.whl)" || fail "no wheel of otherkit"
audit="$("$TOOLS/bin/auditwheel" show "$zig_whl" 2>&1)" || { echo "$audit"; fail "auditwheel show $zig_whl"; }
echo "$audit" | sed 's/^/  auditwheel | /'
zig_tag="$(tr -s ' \n' ' ' <<<"$audit" | grep -oE 'consistent with the following platform tag: "manylinux_2_[0-9]+_x86_64"' | grep -oE 'manylinux_2_[0-9]+_x86_64')" \
    || fail "auditwheel names no manylinux tag for $(basename "$zig_whl")"
zig_level="${zig_tag#manylinux_2_}"; zig_level="${zig_level%_x86_64}"
(( zig_level <= 28 )) || fail "the zig-built $(basename "$zig_whl") is $zig_tag, newer than manylinux_2_28"
say "$(basename "$zig_whl") (zig's C++, glibc 2.28 target): auditwheel says $zig_tag, which glibc 2.28 systems install"

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
# Then the two scaffolded packages and their test extras; both packages'
# tests in one pytest process (each imports its package: both load).
(
    source "$WORK/user-env/bin/activate"
    "${PIP[@]}" "${PINS[@]}" "$WORK"/dist/snnkit-*.whl "$WORK"/dist/otherkit-*.whl pytest "$begen_whl"
    # From a folder that holds no project named like a package (the
    # projects' own folders would shadow the installed packages).
    cd "$WORK"
    JAX_PLATFORMS=cpu python -P -m pytest -q -p no:cacheprovider -s elsewhere/snnkit/tests elsewhere/otherkit/tests \
        --import-mode=importlib
    JAX_PLATFORMS=cpu python -P -c "import jax, numpy as np, snnkit, otherkit
jax.config.update('jax_enable_x64', True)  # the scaffold's kernel takes float64
x = np.linspace(-1.0, 1.0, 5)
np.testing.assert_allclose(snnkit.square(x, scale=2.0), otherkit.square(x, scale=2.0))
assert snnkit._kernels.TARGETS['square'] == 'snnkit._kernels.square', snnkit._kernels.TARGETS
assert otherkit._kernels.TARGETS['square'] == 'otherkit._kernels.square', otherkit._kernels.TARGETS"
)
say "begen new to both packages' tests passing (built, installed into a fresh venv): $((SECONDS - new_start))s"
say "all passed in $((SECONDS - start))s"
