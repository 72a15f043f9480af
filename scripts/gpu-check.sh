#!/usr/bin/env bash
# On a machine with an NVIDIA GPU, nvcc and JAX with CUDA: build the CUDA
# example kernels with begen, run them from JAX against numpy, then run the
# per-call overhead benchmark (bench/gpu) against a hand-written handler.
#
# usage: scripts/gpu-check.sh [BEGEN_BIN]     (default target/release/begen)
#   BEGEN_PYTHON (default python3) must import jax with a GPU backend.
#   SKIP_BENCH=1 skips the benchmarks.
#   STEPS="demo modules typed structs algorithms prims sharding jaxmin binaries brainevent bench bench-binary"
#   (the default: all of them) runs only the steps named. `multigpu` (not in
#   the default) is the sharding step on a machine with 2 or more GPUs: its
#   checks on a mesh of all of them and the scaling rows of bench/gpu/sharding.py. `jaxmin` needs
#   JAXMIN_DIR: gpu_typed built elsewhere (CUDA) into JAXMIN_DIR/min with
#   --jax-min 0.10.2 and into JAXMIN_DIR/new against a newer jaxlib than here.
#   Also not in the default, on brainevent's CUDA tree: `brainevent-loop`
#   (needs OLD_BEGEN, an older begen binary) and `brainevent-ccache` (needs
#   CCACHE, a ccache binary): see those steps below. `native` (not in the
#   default): CUDA kernels with XLA FFI's own types (tests/gpu/native);
#   `eager` and `bench-native` (not in the default): the eager-call and
#   native-signature (bench/ffi_native) per-call benchmarks. `multiproc`
#   and `where` (not in the default; 2+ GPUs): the sharded kernels run by
#   one process per GPU, and the strong split's step taken apart.
#   `tune` (not in the default): brainevent's CSR hybrid scatter with its 16
#   tuning candidates in one library, `begen tune` against all 16 timed and
#   against brainevent's init_csr_config() (see the step below). `tune-algo`
#   (not in the default): an algorithm tuned over its CUDA implementations.
#   `lists` (not in the default): kernels over lists of tensors
#   (`BE::Tensors`), launched per element on XLA's stream.
#   `vocab` (not in the default): begen's own vocabulary in CUDA kernels
#   (tests/gpu/vocab): BE::Attrs, string attributes, BE::Status errors and
#   per-executable state in device memory, eagerly and under jit.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BEGEN="${1:-$ROOT/target/release/begen}"
PY="${BEGEN_PYTHON:-python3}"
WORK="${GPU_CHECK_DIR:-$(mktemp -d)}"
STEPS=" ${STEPS:-demo modules typed structs algorithms prims sharding jaxmin binaries brainevent bench bench-binary} "
[[ "${SKIP_BENCH:-0}" == 1 ]] && STEPS="${STEPS/ bench-binary / }" && STEPS="${STEPS/ bench / }"
step() { [[ "$STEPS" == *" $1 "* ]]; }

echo "== toolchain"
"$BEGEN" doctor || true
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader

if step demo; then
echo "== build examples/kernels-demo/kernels/cuda"
"$BEGEN" build examples/kernels-demo/kernels/cuda --out "$WORK/demo" --name demo_cuda --platform cuda
nm -D "$WORK/demo/libdemo_cuda.so" | grep ' T begen_' || { echo "no handler symbols" >&2; exit 1; }

echo "== run them from JAX"
"$PY" tests/gpu/check_cuda.py "$WORK/demo"
fi

if step modules; then
echo "== a library of several modules: one function and kernel name in three TUs"
"$BEGEN" build tests/gpu/modules --out "$WORK/modules" --platform cuda --quiet
"$PY" tests/gpu/check_modules.py "$WORK/modules"
fi

if step typed; then
echo "== shape contracts: typed tensors, dims, dtype instances, in place"
"$BEGEN" build tests/gpu/typed --out "$WORK/typed" --platform cuda --quiet
"$PY" tests/gpu/check_typed.py "$WORK/typed"
fi

if step structs; then
echo "== struct and array attributes: structs by value into CUDA kernels, half members, spans and vectors"
"$BEGEN" build tests/gpu/structs --out "$WORK/structs" --platform cuda --quiet
"$PY" tests/gpu/check_structs.py "$WORK/structs"
fi

if step algorithms; then
echo "== algorithms and gradients: CUDA implementations beside CPU ones, vjps, export"
"$BEGEN" build tests/e2e/algo --out "$WORK/algo" --platform cuda --quiet
"$PY" tests/gpu/check_algorithms.py "$WORK/algo"
fi

if step prims; then
echo "== kernels as JAX primitives: a CSR product linear in weights and vector, CUDA transposes, zeroed outputs"
"$BEGEN" build tests/e2e/prims --out "$WORK/prims" --platform cuda --quiet
"$PY" tests/gpu/check_prims.py "$WORK/prims"
if step bench; then
    echo "== per-call cost: a begen primitive against the plain binding of the same kernel"
    "$BEGEN" build tests/gpu/prims_bench --out "$WORK/prims_bench" --platform cuda --quiet
    (cd bench/gpu && "$PY" prims_overhead.py "$WORK/prims_bench")
fi
fi

if step sharding || step multigpu; then
echo "== sharding: row-split, k-split (reduce) and block-row CSR CUDA kernels on a mesh of every GPU"
if step multigpu; then
    gpus="$(nvidia-smi -L | wc -l)"
    [[ "$gpus" -ge 2 ]] || { echo "step multigpu needs 2 or more GPUs; this machine has $gpus" >&2; exit 1; }
fi
"$BEGEN" build tests/e2e/sharding --out "$WORK/sharding" --platform cuda --quiet
"$PY" tests/gpu/check_sharding.py "$WORK/sharding"
if step bench || step multigpu; then
    echo "== sharding: per-call cost of an unsplit call; scaling on 2+ GPUs"
    (cd bench/gpu && "$PY" sharding.py "$WORK/sharding")
fi
if step multigpu; then
    # Strong scaling at a size that fills the GPUs better (a step's fixed
    # cost, `--fit`, weighs less), and a step's fixed and per-row cost.
    (cd bench/gpu && "$PY" sharding.py "$WORK/sharding" --rows 33554432 --only strong --no-gather --rounds 0 --steps 10)
    (cd bench/gpu && CUDA_VISIBLE_DEVICES=0 "$PY" sharding.py "$WORK/sharding" --fit --rows 8388608 --steps 10)
fi
fi

# Not in the default STEPS: both need 2 or more GPUs.
if step multiproc || step where; then
"$BEGEN" build tests/e2e/sharding --out "$WORK/sharding" --platform cuda --quiet
fi
if step multiproc; then
echo "== sharding across processes: one process per GPU, jax.distributed on 127.0.0.1, one global mesh"
"$PY" tests/gpu/check_multiprocess.py "$WORK/sharding"
fi
if step where; then
echo "== sharding: where a strong split's step goes (each GPU alone, independent programs, the split)"
for rows in 8388608 16777216; do
    (cd bench/gpu && "$PY" sharding.py "$WORK/sharding" --where --rows "$rows" --steps 12)
done
fi

if step jaxmin && [[ -n "${JAXMIN_DIR:-}" ]]; then
echo "== one build, every supported jax: built elsewhere with --jax-min 0.10.2, and against newer headers"
grep -E 'xla_ffi_api_version|jax_min' "$JAXMIN_DIR/min/gpu_typed.yaml"
"$PY" tests/gpu/check_typed.py "$JAXMIN_DIR/min"
grep -E 'xla_ffi_api_version' "$JAXMIN_DIR/new/gpu_typed.yaml"
"$PY" tests/gpu/check_jax_min.py "$JAXMIN_DIR/new"
fi

if step binaries; then
echo "== precompiled kernels: cuTile cubins, nvcc PTX/cubin, a CPU source, one library"
# cuTile's cubins (sm_90) are exported on a machine with pip cuda-tile
# (make_binaries.py, no GPU needed) and carried in tests/e2e/binaries/bin;
# here nvcc compiles the plain CUDA kernels for this GPU.
bins="$ROOT/tests/e2e/binaries/bin"
cutile_flag=--skip-cutile
"$PY" -c 'import cuda.tile' 2>/dev/null && cutile_flag=
if [[ -n "$cutile_flag" && ! -f "$bins/scale.cubin" ]]; then
    echo "binaries: SKIPPED: no cuda.tile here and no carried tests/e2e/binaries/bin/*.cubin" >&2
else
    cap="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)"
    NVCC="${NVCC:-nvcc}" "$PY" tests/e2e/binaries/make_binaries.py "$bins" --arch "sm_$cap" $cutile_flag
    "$BEGEN" build tests/e2e/binaries --out "$WORK/binaries" --quiet
    "$PY" tests/gpu/check_binaries.py "$WORK/binaries"
fi
fi

# brainevent's whole kernel tree as one library, when its sources travelled
# along (.cache/ is filled by tests/corpus/brainevent_corpus.py elsewhere).
CORPUS="$ROOT/.cache/brainevent-0.3.0/corpus"
if step brainevent && [[ -d "$CORPUS" && -f "$ROOT/.cache/brainevent-0.3.0/wheel/brainevent/include/cuda_common.h" ]]; then
    echo "== brainevent's tree, one library, $(nproc) cores"
    tree="$WORK/brainevent/kernels"; inc="$WORK/brainevent/inc"
    mkdir -p "$tree" "$inc"
    cp -r "$CORPUS/." "$tree/"
    cp "$ROOT/.cache/brainevent-0.3.0/wheel/brainevent/include/cuda_common.h" "$inc/"
    # Not buildable against the pinned headers: cuBLAS's headers, a header the wheel lacks.
    rm -f "$tree/_dense/binary_dense_cublas.cu" "$tree/_tcsr/tile_mm/binary_csrmm_tile.cu"
    printf 'name: brainevent_aot\nmodules:\n  per-file: true\n' > "$tree/begen.yaml"
    start=$SECONDS
    if "$BEGEN" build "$tree" --out "$WORK/brainevent/out" --platform cuda -I "$inc" --quiet; then
        echo "brainevent tree: built in $((SECONDS - start)) s; $(nm -D "$WORK/brainevent/out/libbrainevent_aot.so" | grep ' T begen_' | grep -vc ' T begen_ffi_api__') handlers"
    else
        echo "brainevent tree: FAILED after $((SECONDS - start)) s" >&2
    fi
fi

# Tuning ahead of time on brainevent's CSR hybrid scatter
# (tests/gpu/tune_hybrid): `_csr/binary_csrmv_hybrid.cu` built with
# brainevent's own 16 DEFAULT_CANDIDATES of its scheduler defines compiled
# into one library; `begen tune` run once per workload size (TUNE_SIZES,
# n_pre x connections per row; the first is brainevent's default workload)
# and timed; then, in one process, all 16 timed exhaustively, the chosen
# candidate's output checked against the default's, and brainevent's
# init_csr_config() (nvcc per candidate; cold for the first size, its
# compile cache for the others) run for the same sizes, and a table of it
# all. Needs .cache/brainevent-0.3.0/{corpus,wheel} (only brainevent's
# compile pipeline is imported: jax and the standard library). Not in the
# default STEPS; BRAINEVENT_INIT=0 skips init_csr_config; TUNE_LIB=DIR
# takes the library from DIR (a `begen build` OUT of that tree) unbuilt.
if step tune; then
    WHEEL="$ROOT/.cache/brainevent-0.3.0/wheel"
    if [[ -f "$CORPUS/_csr/binary_csrmv_hybrid.cu" && -f "$WHEEL/brainevent/_csr/initialize.py" ]]; then
        echo "== tune: brainevent's CSR hybrid scatter, 16 candidates in one library, begen tune against init_csr_config"
        tw="$WORK/tune"
        mkdir -p "$tw/kernels" "$tw/tables"
        cp tests/gpu/tune_hybrid/begen.yaml "$CORPUS/_csr/binary_csrmv_hybrid.cu" \
            "$WHEEL/brainevent/include/cuda_common.h" "$tw/kernels/"
        tcap="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)"
        if [[ -n "${TUNE_LIB:-}" ]]; then
            # Built elsewhere (for this GPU's arch), to leave the call's time
            # to the tuning and to init_csr_config's recompiles.
            cp -r "$TUNE_LIB" "$tw/out"
            echo "tune: the library of 16 candidates from $TUNE_LIB"
        else
            start=$SECONDS
            "$BEGEN" build "$tw/kernels" --out "$tw/out" --arch "sm_$tcap" --quiet
            echo "tune: the library of 16 candidates built in $((SECONDS - start)) s"
        fi
        export BEGEN_TUNE_DIR="$tw/tables"
        : > "$tw/walls"
        sizes="${TUNE_SIZES:-500000x2000,100000x1000,20000x500}"
        for size in ${sizes//,/ }; do
            n="${size%x*}"; conn="${size#*x}"
            printf 'binary_csrmv_wat_hybrid_homo_f32_bool: [{n_pre: %d, nnz: %d}]\n' "$n" "$((n * conn))" > "$tw/shapes.yaml"
            t0=$EPOCHREALTIME
            PYTHONPATH="$ROOT/tests/gpu/tune_hybrid${PYTHONPATH:+:$PYTHONPATH}" \
                "$BEGEN" tune "$tw/out" --shapes "$tw/shapes.yaml" --export "$tw/shipped.tune.json"
            echo "$n $conn $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')" >> "$tw/walls"
        done
        env BRAINEVENT_CACHE_DIR="$tw/kernix" ${NVCC:+"BRAINEVENT_NVCC_PATH=$NVCC"} \
            "$PY" tests/gpu/tune_hybrid/check_tune_hybrid.py "$tw/out" "$WHEEL" "$sizes" "$tw/walls"
    else
        echo "== tune: skipped (needs brainevent's sources in $CORPUS and its wheel in $WHEEL)"
    fi
fi

if step tune-algo; then
    echo "== tune-algo: an algorithm tuned over its CUDA implementations"
    "$BEGEN" build tests/gpu/tune_algo --out "$WORK/tune_algo" --quiet
    export BEGEN_TUNE_DIR="$WORK/tune_algo_tables"
    mkdir -p "$BEGEN_TUNE_DIR"
    "$PY" tests/gpu/check_tune_algo.py "$WORK/tune_algo" before
    printf 'axpy: [{n: %d}]\n' $((1 << 22)) > "$WORK/tune_algo_shapes.yaml"
    "$BEGEN" tune "$WORK/tune_algo" --shapes "$WORK/tune_algo_shapes.yaml"
    "$PY" tests/gpu/check_tune_algo.py "$WORK/tune_algo" after
    unset BEGEN_TUNE_DIR
fi

if step lists; then
    echo "== lists of tensors: kernels over const BE::Tensors / BE::Tensors, per element on XLA's stream"
    "$BEGEN" build tests/gpu/vocab --out "$WORK/lists" --platform cuda --quiet
    "$PY" tests/gpu/check_lists.py "$WORK/lists"
fi

if step vocab; then
    echo "== begen's own vocabulary: BE::Attrs, string attributes, BE::Status, per-executable state in device memory"
    "$BEGEN" build tests/gpu/vocab --out "$WORK/vocab" --platform cuda --quiet
    "$PY" tests/gpu/check_vocab.py "$WORK/vocab"
fi

# brainevent's CUDA tree as one library of per-file modules, in folder $1
# (its header copied in: the benchmarks below pass no -I).
brainevent_cuda_tree() {
    mkdir -p "$1"
    cp -r "$CORPUS/." "$1/"
    cp "$ROOT/.cache/brainevent-0.3.0/wheel/brainevent/include/cuda_common.h" "$1/"
    rm -f "$1/_dense/binary_dense_cublas.cu" "$1/_tcsr/tile_mm/binary_csrmm_tile.cu"
    printf 'name: brainevent_aot\nplatform: cuda\nmodules:\n  per-file: true\n' > "$1/begen.yaml"
}

# The edit-build loop on brainevent's CUDA tree: an older begen
# (OLD_BEGEN) against this one, no-op and edit-one builds side by side
# (bench/loop_bench.sh); not in the default STEPS.
if step brainevent-loop && [[ -d "$CORPUS" && -n "${OLD_BEGEN:-}" ]]; then
    echo "== the edit-build loop on brainevent's tree: $OLD_BEGEN against $BEGEN, $(nproc) cores"
    tree="$WORK/brainevent-loop/brainevent"
    brainevent_cuda_tree "$tree"
    RUNS="${RUNS:-5}" EDITS="${EDITS:-2}" bash bench/loop_bench.sh "$OLD_BEGEN" "$BEGEN" "$tree"
fi

# A compiler cache on brainevent's CUDA tree: with
# BEGEN_COMPILER_LAUNCHER=$CCACHE and a fresh CCACHE_DIR under $WORK, a
# clean build (cold) and another clean build into new work and OUT
# directories (warm), with ccache's hit statistics, and the same clean
# build without a launcher (bench/ccache_bench.sh; PLAIN=0 skips it). CCACHE
# is a ccache binary (a machine without one: carry it and the libraries
# `ldd` names, with LD_LIBRARY_PATH); not in the default STEPS.
if step brainevent-ccache && [[ -d "$CORPUS" && -n "${CCACHE:-}" ]]; then
    echo "== ccache cold and warm on brainevent's tree: $CCACHE, $(nproc) cores"
    tree="$WORK/brainevent-ccache/brainevent"
    brainevent_cuda_tree "$tree"
    BENCH_DIR="$WORK/brainevent-ccache" bash bench/ccache_bench.sh "$tree" "$BEGEN" "$CCACHE"
elif step brainevent-ccache; then
    echo "== brainevent-ccache: skipped (needs CCACHE, a ccache binary, and brainevent's sources in $CORPUS)"
fi

# CUDA kernels declared with XLA FFI's own types (tests/gpu/native):
# `cudaStream_t`, typed and untyped buffers, a result bound as an input by
# its token, a size_t attribute, state made in the instantiate stage.
if step native; then
    echo "== XLA FFI's own types in CUDA kernels: streams, buffers, tokens, per-executable state"
    "$BEGEN" build tests/gpu/native --out "$WORK/native" --platform cuda --quiet
    "$PY" tests/gpu/check_native.py "$WORK/native"
fi

xla_inc="$("$PY" -c 'import jax.ffi; print(jax.ffi.include_dir())')"
cap="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)"
if step bench; then
    echo "== per-call overhead benchmark"
    "$BEGEN" build bench/gpu/kernels --out "$WORK/ovh" --name ovh --platform cuda
    "${NVCC:-nvcc}" -std=c++17 -O3 -arch="sm_$cap" -Xcompiler -fPIC -shared \
        -isystem "$xla_inc" bench/gpu/handwritten.cu -o "$WORK/hand.so"
    "$PY" bench/gpu/ffi_overhead.py "$WORK/ovh" "$WORK/hand.so" --rounds "${ROUNDS:-300}"
fi
if step bench-binary; then
    echo "== per-call overhead of a bound cubin (begen.yaml binaries:) against hand-written cuLaunchKernel"
    mkdir -p bench/gpu/binaries/bin
    "${NVCC:-nvcc}" -arch="sm_$cap" -cubin bench/gpu/binaries/add_one.cu -o bench/gpu/binaries/bin/add_one.cubin
    "$BEGEN" build bench/gpu/binaries --out "$WORK/ovhbin" --quiet
    g++ -std=c++17 -O3 -fPIC -shared -isystem "$xla_inc" bench/gpu/handwritten_binary.cc -ldl -o "$WORK/hand_binary.so"
    BEGEN_BENCH_CUBIN=bench/gpu/binaries/bin/add_one.cubin \
        XLA_FLAGS="${XLA_FLAGS:-} --xla_gpu_enable_command_buffer=FUSION,CUSTOM_CALL" \
        "$PY" bench/gpu/binary_overhead.py "$WORK/ovhbin" "$WORK/hand_binary.so" --rounds "${ROUNDS:-300}"
fi
if step eager; then
    echo "== eager calls: each binding of one CUDA kernel against a cached plain ffi_call of its target"
    "$BEGEN" build bench/gpu/eager --out "$WORK/eager" --platform cuda --quiet
    "$PY" bench/gpu/eager_overhead.py "$WORK/eager"
fi
if step bench-native; then
    echo "== per-call cost of a native XLA FFI signature bound by begen against the hand-written Bind (one library)"
    "$BEGEN" build bench/ffi_native/cuda --out "$WORK/nat" --name nat --platform cuda --quiet
    "$PY" bench/ffi_native/native_overhead.py "$WORK/nat" --platform cuda --rounds "${ROUNDS:-300}"
fi
