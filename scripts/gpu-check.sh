#!/usr/bin/env bash
# On a machine with an NVIDIA GPU, nvcc and JAX with CUDA: build the CUDA
# example kernels with begen, run them from JAX against numpy, then run the
# per-call overhead benchmark (bench/gpu) against a hand-written handler.
#
# usage: scripts/gpu-check.sh [BEGEN_BIN]     (default target/release/begen)
#   BEGEN_PYTHON (default python3) must import jax with a GPU backend.
#   STEPS="demo modules ..." (spaces or commas; the default: demo modules
#   typed structs algorithms prims sharding jaxmin binaries brainevent bench
#   bench-binary) runs only the steps named, in the script's order.
#   SKIP="jaxmin,brainevent" leaves out steps that STEPS names: they are
#   reported as skipped and do not fail the run. SKIP_BENCH=1 is
#   SKIP="bench,bench-binary".
#
# The script runs every step asked for, even after one fails, and ends with
# a table: each step, ok / FAILED / skipped with the reason, and its
# seconds. It exits 1 when a step failed or was skipped because an input it
# needs is missing (JAXMIN_DIR, brainevent's sources, a second GPU, ...)
# unless SKIP names that step; 2 for an unknown step name; 0 otherwise.
#
# Steps not in the default:
#   multigpu: the sharding step on a machine with 2 or more GPUs: its checks
#     on a mesh of all of them and the scaling rows of bench/gpu/sharding.py.
#   multiproc, where (2+ GPUs): the sharded kernels run by one process per
#     GPU, and the strong split's step taken apart.
#   brainevent-loop (needs OLD_BEGEN, an older begen binary) and
#   brainevent-ccache (needs CCACHE, a ccache binary), on brainevent's CUDA
#   tree: see those steps below.
#   native: CUDA kernels with XLA FFI's own types (tests/gpu/native).
#   torch: CUDA kernels built with --target jax,torch, called from PyTorch
#     (BEGEN_TORCH_PYTHON, default BEGEN_PYTHON, must import torch with CUDA).
#   torch-same: every CUDA op of five libraries (typed, algo, the CUDA
#     examples, prims, vocab) from torch on a side stream against the same
#     kernel from JAX (out= ops and CSR inputs given per op).
#   brainevent-torch: brainevent's whole CUDA tree built once for jax and
#     torch; a sample of its CSR kernels from torch against JAX and numpy.
#   torch-bench: the torch ops' per-call cost (bench/torch), CUDA and CPU.
#   torch-build-time: clean builds for jax alone and for jax,torch.
#   eager, bench-native: the eager-call and native-signature
#     (bench/ffi_native) per-call benchmarks.
#   tune: brainevent's CSR hybrid scatter with its 16 tuning candidates in
#     one library, `begen tune` against all 16 timed and against
#     brainevent's init_csr_config() (see the step below).
#   tune-algo: an algorithm tuned over its CUDA implementations.
#   lists: kernels over lists of tensors (`BE::Tensors`), launched per
#     element on XLA's stream.
#   vocab: begen's own vocabulary in CUDA kernels (tests/gpu/vocab):
#     BE::Attrs, string attributes, BE::Status errors and per-executable
#     state in device memory, eagerly and under jit.
#   state-devices (2+ GPUs): per-executable state of `T&` and `T*` kernels
#     under a shard_map over every GPU (tests/gpu/state_devices): one state
#     per GPU, made and destroyed with that GPU current.
# jaxmin needs JAXMIN_DIR: gpu_typed built elsewhere (CUDA) into
# JAXMIN_DIR/min with --jax-min 0.10.2 and into JAXMIN_DIR/new against a
# newer jaxlib than here.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BEGEN="${1:-$ROOT/target/release/begen}"
PY="${BEGEN_PYTHON:-python3}"
WORK="${GPU_CHECK_DIR:-$(mktemp -d)}"
mkdir -p "$WORK"
CORPUS="$ROOT/.cache/brainevent-0.3.0/corpus"
WHEEL="$ROOT/.cache/brainevent-0.3.0/wheel"

ALL_STEPS="demo modules typed structs algorithms prims sharding multigpu multiproc where jaxmin binaries brainevent tune tune-algo lists vocab state-devices native torch torch-same brainevent-torch torch-bench torch-build-time brainevent-loop brainevent-ccache bench bench-binary eager bench-native"
DEFAULT_STEPS="demo modules typed structs algorithms prims sharding jaxmin binaries brainevent bench bench-binary"
STEPS=" $(echo "${STEPS:-$DEFAULT_STEPS}" | tr ',' ' ') "
SKIP=" $(echo "${SKIP:-}" | tr ',' ' ') "
[[ "${SKIP_BENCH:-0}" == 1 ]] && SKIP="$SKIP bench bench-binary "

# A name that is not a step: the closest by its first letters.
for name in $STEPS $SKIP; do
    if [[ " $ALL_STEPS " != *" $name "* ]]; then
        near=""
        for known in $ALL_STEPS; do
            [[ "$known" == "${name:0:3}"* ]] && { near="$known"; break; }
        done
        echo "gpu-check: unknown step '$name'${near:+; did you mean '$near'?} (steps: $ALL_STEPS)" >&2
        exit 2
    fi
done

# asked NAME: STEPS names it and SKIP does not.
asked() { [[ "$STEPS" == *" $1 "* && "$SKIP" != *" $1 "* ]]; }

# Inside a step: an input it needs is missing. The step stops, reported as
# skipped with REASON, and the run fails unless SKIP names the step.
missing() {
    echo "$*" > "$WORK/.missing"
    echo "skipped: $*" >&2
    exit 3
}

gpu_cap() { nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .; }
xla_include() { "$PY" -c 'import jax.ffi; print(jax.ffi.include_dir())'; }
need_gpus() {
    local gpus
    gpus="$(nvidia-smi -L 2>/dev/null | wc -l)"
    [[ "$gpus" -ge "$1" ]] || missing "needs $1 or more GPUs; this machine has $gpus"
}
need_corpus() {
    [[ -d "$CORPUS" && -f "$WHEEL/brainevent/include/cuda_common.h" ]] ||
        missing "needs brainevent's sources in $CORPUS and its wheel in $WHEEL (tests/corpus/brainevent_corpus.py fills .cache/)"
}

step_demo() {
echo "== build examples/kernels-demo/kernels/cuda"
"$BEGEN" build examples/kernels-demo/kernels/cuda --out "$WORK/demo" --name demo_cuda --platform cuda
nm -D "$WORK/demo/libdemo_cuda.so" | grep ' T begen_' || { echo "no handler symbols" >&2; exit 1; }

echo "== run them from JAX"
"$PY" tests/gpu/check_cuda.py "$WORK/demo"
}

step_modules() {
echo "== a library of several modules: one function and kernel name in three TUs"
"$BEGEN" build tests/gpu/modules --out "$WORK/modules" --platform cuda --quiet
"$PY" tests/gpu/check_modules.py "$WORK/modules"
}

step_typed() {
echo "== shape contracts: typed tensors, dims, dtype instances, in place"
"$BEGEN" build tests/gpu/typed --out "$WORK/typed" --platform cuda --quiet
"$PY" tests/gpu/check_typed.py "$WORK/typed"
}

step_structs() {
echo "== struct and array attributes: structs by value into CUDA kernels, half members, spans and vectors"
"$BEGEN" build tests/gpu/structs --out "$WORK/structs" --platform cuda --quiet
"$PY" tests/gpu/check_structs.py "$WORK/structs"
}

step_algorithms() {
echo "== algorithms and gradients: CUDA implementations beside CPU ones, vjps, export"
"$BEGEN" build tests/e2e/algo --out "$WORK/algo" --platform cuda --quiet
"$PY" tests/gpu/check_algorithms.py "$WORK/algo"
}

# With `bench` asked too: the per-call cost of a primitive.
step_prims() {
echo "== kernels as JAX primitives: a CSR product linear in weights and vector, CUDA transposes, zeroed outputs"
"$BEGEN" build tests/e2e/prims --out "$WORK/prims" --platform cuda --quiet
"$PY" tests/gpu/check_prims.py "$WORK/prims"
if asked bench; then
    echo "== per-call cost: a begen primitive against the plain binding of the same kernel"
    "$BEGEN" build tests/gpu/prims_bench --out "$WORK/prims_bench" --platform cuda --quiet
    (cd bench/gpu && "$PY" prims_overhead.py "$WORK/prims_bench")
fi
}

# With `bench` asked too: the per-call cost of an unsplit call.
step_sharding() {
echo "== sharding: row-split, k-split (reduce) and block-row CSR CUDA kernels on a mesh of every GPU"
"$BEGEN" build tests/e2e/sharding --out "$WORK/sharding" --platform cuda --quiet
"$PY" tests/gpu/check_sharding.py "$WORK/sharding"
if asked bench; then
    echo "== sharding: per-call cost of an unsplit call"
    (cd bench/gpu && "$PY" sharding.py "$WORK/sharding")
fi
}

step_multigpu() {
need_gpus 2
echo "== sharding on 2+ GPUs: the checks on a mesh of all of them, scaling"
"$BEGEN" build tests/e2e/sharding --out "$WORK/sharding" --platform cuda --quiet
"$PY" tests/gpu/check_sharding.py "$WORK/sharding"
(cd bench/gpu && "$PY" sharding.py "$WORK/sharding")
# Strong scaling at a size that fills the GPUs better (a step's fixed
# cost, `--fit`, weighs less), and a step's fixed and per-row cost.
(cd bench/gpu && "$PY" sharding.py "$WORK/sharding" --rows 33554432 --only strong --no-gather --rounds 0 --steps 10)
(cd bench/gpu && CUDA_VISIBLE_DEVICES=0 "$PY" sharding.py "$WORK/sharding" --fit --rows 8388608 --steps 10)
}

step_multiproc() {
need_gpus 2
echo "== sharding across processes: one process per GPU, jax.distributed on 127.0.0.1, one global mesh"
"$BEGEN" build tests/e2e/sharding --out "$WORK/sharding" --platform cuda --quiet
"$PY" tests/gpu/check_multiprocess.py "$WORK/sharding"
}

step_where() {
need_gpus 2
echo "== sharding: where a strong split's step goes (each GPU alone, independent programs, the split)"
"$BEGEN" build tests/e2e/sharding --out "$WORK/sharding" --platform cuda --quiet
for rows in 8388608 16777216; do
    (cd bench/gpu && "$PY" sharding.py "$WORK/sharding" --where --rows "$rows" --steps 12)
done
}

step_jaxmin() {
[[ -n "${JAXMIN_DIR:-}" ]] || missing "JAXMIN_DIR is not set (gpu_typed built elsewhere into JAXMIN_DIR/min and JAXMIN_DIR/new)"
echo "== one build, every supported jax: built elsewhere with --jax-min 0.10.2, and against newer headers"
grep -E 'xla_ffi_api_version|jax_min' "$JAXMIN_DIR/min/gpu_typed.yaml"
"$PY" tests/gpu/check_typed.py "$JAXMIN_DIR/min"
grep -E 'xla_ffi_api_version' "$JAXMIN_DIR/new/gpu_typed.yaml"
"$PY" tests/gpu/check_jax_min.py "$JAXMIN_DIR/new"
}

step_binaries() {
echo "== precompiled kernels: cuTile cubins, nvcc PTX/cubin, a CPU source, one library"
# cuTile's cubins (sm_90) are exported on a machine with pip cuda-tile
# (make_binaries.py, no GPU needed) and carried in tests/e2e/binaries/bin;
# here nvcc compiles the plain CUDA kernels for this GPU.
local bins="$ROOT/tests/e2e/binaries/bin" cutile_flag=--skip-cutile
"$PY" -c 'import cuda.tile' 2>/dev/null && cutile_flag=
if [[ -n "$cutile_flag" && ! -f "$bins/scale.cubin" ]]; then
    missing "no cuda.tile here and no carried tests/e2e/binaries/bin/*.cubin"
fi
NVCC="${NVCC:-nvcc}" "$PY" tests/e2e/binaries/make_binaries.py "$bins" --arch "sm_$(gpu_cap)" $cutile_flag
"$BEGEN" build tests/e2e/binaries --out "$WORK/binaries" --quiet
"$PY" tests/gpu/check_binaries.py "$WORK/binaries"
}

# brainevent's whole kernel tree as one library, when its sources travelled
# along (.cache/ is filled by tests/corpus/brainevent_corpus.py elsewhere).
step_brainevent() {
need_corpus
echo "== brainevent's tree, one library, $(nproc) cores"
local tree="$WORK/brainevent/kernels" inc="$WORK/brainevent/inc" start
mkdir -p "$tree" "$inc"
cp -r "$CORPUS/." "$tree/"
cp "$WHEEL/brainevent/include/cuda_common.h" "$inc/"
# Not buildable against the pinned headers: cuBLAS's headers, a header the wheel lacks.
rm -f "$tree/_dense/binary_dense_cublas.cu" "$tree/_tcsr/tile_mm/binary_csrmm_tile.cu"
printf 'name: brainevent_aot\nmodules:\n  per-file: true\n' > "$tree/begen.yaml"
start=$SECONDS
"$BEGEN" build "$tree" --out "$WORK/brainevent/out" --platform cuda -I "$inc" --quiet
echo "brainevent tree: built in $((SECONDS - start)) s; $(nm -D "$WORK/brainevent/out/libbrainevent_aot.so" | grep ' T begen_' | grep -vc ' T begen_ffi_api__') handlers"
}

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
step_tune() {
[[ -f "$CORPUS/_csr/binary_csrmv_hybrid.cu" && -f "$WHEEL/brainevent/_csr/initialize.py" ]] ||
    missing "needs brainevent's sources in $CORPUS and its wheel in $WHEEL"
echo "== tune: brainevent's CSR hybrid scatter, 16 candidates in one library, begen tune against init_csr_config"
local tw="$WORK/tune" tcap start sizes size n conn t0
mkdir -p "$tw/kernels" "$tw/tables"
cp tests/gpu/tune_hybrid/begen.yaml "$CORPUS/_csr/binary_csrmv_hybrid.cu" \
    "$WHEEL/brainevent/include/cuda_common.h" "$tw/kernels/"
tcap="$(gpu_cap)"
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
}

step_tune-algo() {
echo "== tune-algo: an algorithm tuned over its CUDA implementations"
"$BEGEN" build tests/gpu/tune_algo --out "$WORK/tune_algo" --quiet
export BEGEN_TUNE_DIR="$WORK/tune_algo_tables"
mkdir -p "$BEGEN_TUNE_DIR"
"$PY" tests/gpu/check_tune_algo.py "$WORK/tune_algo" before
printf 'axpy: [{n: %d}]\n' $((1 << 22)) > "$WORK/tune_algo_shapes.yaml"
"$BEGEN" tune "$WORK/tune_algo" --shapes "$WORK/tune_algo_shapes.yaml"
"$PY" tests/gpu/check_tune_algo.py "$WORK/tune_algo" after
}

step_lists() {
echo "== lists of tensors: kernels over const BE::Tensors / BE::Tensors, per element on XLA's stream"
"$BEGEN" build tests/gpu/vocab --out "$WORK/lists" --platform cuda --quiet
"$PY" tests/gpu/check_lists.py "$WORK/lists"
}

step_vocab() {
echo "== begen's own vocabulary: BE::Attrs, string attributes, BE::Status, per-executable state in device memory"
"$BEGEN" build tests/gpu/vocab --out "$WORK/vocab" --platform cuda --quiet
"$PY" tests/gpu/check_vocab.py "$WORK/vocab"
}

# The torch target on the GPU (tests/gpu/torch, tests/gpu/typed): the ops
# from torch against numpy and the same kernels' JAX functions, forward and
# backward, a side stream ordered with torch's own ops, torch.compile.
step_torch() {
echo "== CUDA kernels from PyTorch and JAX: one build, both targets"
export BEGEN_TORCH_PYTHON="${BEGEN_TORCH_PYTHON:-$PY}"
"$BEGEN" build tests/gpu/torch --out "$WORK/torch" --platform cuda --target jax,torch --quiet
"$BEGEN" build tests/gpu/typed --out "$WORK/typed-torch" --platform cuda --target jax,torch --quiet
"$PY" tests/gpu/check_torch.py "$WORK/torch" "$WORK/typed-torch"
}

# The same CUDA kernels from torch and from JAX (tests/gpu/check_torch_same.py):
# five trees (typed, algorithms, the examples' CUDA kernels, the primitives'
# CSR kernels, the vocabulary), each built once for both targets; every CUDA
# op torch registers is compared with its JAX function, forward and backward,
# with a side stream current in torch.
step_torch-same() {
echo "== the same CUDA kernels from torch and JAX: every op of five libraries"
export BEGEN_TORCH_PYTHON="${BEGEN_TORCH_PYTHON:-$PY}"
local args=()
for tree in tests/gpu/typed tests/e2e/algo examples/kernels-demo/kernels/cuda tests/e2e/prims tests/gpu/vocab; do
    local name
    name=$(sed -n 's/^name: *//p' "$tree/begen.yaml")
    "$BEGEN" build "$tree" --out "$WORK/same-$name" --platform cuda --target jax,torch --quiet
    args+=("$WORK/same-$name" "$name")
done
"$PY" tests/gpu/check_torch_same.py "${args[@]}"
}

# Per-executable state on several GPUs: each GPU's state made and
# destroyed with that GPU current, for `T&` and `T*` kernels alike.
step_state-devices() {
need_gpus 2
echo "== per-executable state on 2+ GPUs: one state per GPU, made and destroyed with it current"
"$BEGEN" build tests/gpu/state_devices --out "$WORK/state_devices" --platform cuda --quiet
"$PY" tests/gpu/check_state_devices.py "$WORK/state_devices"
}

# CUDA kernels declared with XLA FFI's own types (tests/gpu/native):
# `cudaStream_t`, typed and untyped buffers, a result bound as an input by
# its token, a size_t attribute, state made in the instantiate stage.
step_native() {
echo "== XLA FFI's own types in CUDA kernels: streams, buffers, tokens, per-executable state"
"$BEGEN" build tests/gpu/native --out "$WORK/native" --platform cuda --quiet
"$PY" tests/gpu/check_native.py "$WORK/native"
}

# brainevent's CUDA tree as one library of per-file modules, in folder $1
# (its header copied in: the benchmarks below pass no -I).
brainevent_cuda_tree() {
    mkdir -p "$1"
    cp -r "$CORPUS/." "$1/"
    cp "$WHEEL/brainevent/include/cuda_common.h" "$1/"
    rm -f "$1/_dense/binary_dense_cublas.cu" "$1/_tcsr/tile_mm/binary_csrmm_tile.cu"
    printf 'name: brainevent_aot\nplatform: cuda\nmodules:\n  per-file: true\n' > "$1/begen.yaml"
}

# brainevent's whole CUDA tree built once for both targets; its CSR
# products (out= ops: brainevent's kernels are untyped) from torch against
# the same kernels from JAX and numpy (tests/gpu/check_brainevent_torch.py).
step_brainevent-torch() {
need_corpus
echo "== brainevent's tree for jax and torch, one build, $(nproc) cores"
export BEGEN_TORCH_PYTHON="${BEGEN_TORCH_PYTHON:-$PY}"
brainevent_cuda_tree "$WORK/bt/kernels"
local start=$SECONDS
"$BEGEN" build "$WORK/bt/kernels" --out "$WORK/bt/out" --target jax,torch --quiet 2>"$WORK/bt/warnings.log"
echo "brainevent tree for jax,torch: built in $((SECONDS - start)) s; $(grep -c 'leaves out' "$WORK/bt/warnings.log") kernels left out by torch"
grep -o "leaves out kernel '[^']*': .*" "$WORK/bt/warnings.log" | sed 's/kernel .[^:]*: //' | sort | uniq -c | sort -rn | head -5 || true
"$PY" -c 'import sys; sys.path[:0] = [sys.argv[1], "python"]; import brainevent_aot_torch as t; print(len(t._begen_ops), "torch ops")' "$WORK/bt/out"
"$PY" tests/gpu/check_brainevent_torch.py "$WORK/bt/out" brainevent_aot
}

# The edit-build loop on brainevent's CUDA tree: an older begen
# (OLD_BEGEN) against this one, no-op and edit-one builds side by side
# (bench/loop_bench.sh).
step_brainevent-loop() {
need_corpus
[[ -n "${OLD_BEGEN:-}" ]] || missing "OLD_BEGEN (an older begen binary) is not set"
echo "== the edit-build loop on brainevent's tree: $OLD_BEGEN against $BEGEN, $(nproc) cores"
local tree="$WORK/brainevent-loop/brainevent"
brainevent_cuda_tree "$tree"
RUNS="${RUNS:-5}" EDITS="${EDITS:-2}" bash bench/loop_bench.sh "$OLD_BEGEN" "$BEGEN" "$tree"
}

# A compiler cache on brainevent's CUDA tree: with
# BEGEN_COMPILER_LAUNCHER=$CCACHE and a fresh CCACHE_DIR under $WORK, a
# clean build (cold) and another clean build into new work and OUT
# directories (warm), with ccache's hit statistics, and the same clean
# build without a launcher (bench/ccache_bench.sh; PLAIN=0 skips it). CCACHE
# is a ccache binary (a machine without one: carry it and the libraries
# `ldd` names, with LD_LIBRARY_PATH).
step_brainevent-ccache() {
need_corpus
[[ -n "${CCACHE:-}" ]] || missing "CCACHE (a ccache binary) is not set"
echo "== ccache cold and warm on brainevent's tree: $CCACHE, $(nproc) cores"
local tree="$WORK/brainevent-ccache/brainevent"
brainevent_cuda_tree "$tree"
BENCH_DIR="$WORK/brainevent-ccache" bash bench/ccache_bench.sh "$tree" "$BEGEN" "$CCACHE"
}

step_bench() {
echo "== per-call overhead benchmark"
"$BEGEN" build bench/gpu/kernels --out "$WORK/ovh" --name ovh --platform cuda
"${NVCC:-nvcc}" -std=c++17 -O3 -arch="sm_$(gpu_cap)" -Xcompiler -fPIC -shared \
    -isystem "$(xla_include)" bench/gpu/handwritten.cu -o "$WORK/hand.so"
"$PY" bench/gpu/ffi_overhead.py "$WORK/ovh" "$WORK/hand.so" --rounds "${ROUNDS:-300}"
}

step_bench-binary() {
echo "== per-call overhead of a bound cubin (begen.yaml binaries:) against hand-written cuLaunchKernel"
mkdir -p bench/gpu/binaries/bin
"${NVCC:-nvcc}" -arch="sm_$(gpu_cap)" -cubin bench/gpu/binaries/add_one.cu -o bench/gpu/binaries/bin/add_one.cubin
"$BEGEN" build bench/gpu/binaries --out "$WORK/ovhbin" --quiet
g++ -std=c++17 -O3 -fPIC -shared -isystem "$(xla_include)" bench/gpu/handwritten_binary.cc -ldl -o "$WORK/hand_binary.so"
BEGEN_BENCH_CUBIN=bench/gpu/binaries/bin/add_one.cubin \
    XLA_FLAGS="${XLA_FLAGS:-} --xla_gpu_enable_command_buffer=FUSION,CUSTOM_CALL" \
    "$PY" bench/gpu/binary_overhead.py "$WORK/ovhbin" "$WORK/hand_binary.so" --rounds "${ROUNDS:-300}"
}

step_eager() {
echo "== eager calls: each binding of one CUDA kernel against a cached plain ffi_call of its target"
"$BEGEN" build bench/gpu/eager --out "$WORK/eager" --platform cuda --quiet
"$PY" bench/gpu/eager_overhead.py "$WORK/eager"
}

# The torch ops' per-call cost against a hand-written stable-ABI op and a
# torch.library.custom_op of the same kernel (bench/torch), on the GPU and
# on this machine's CPU, eager and inside torch.compile.
step_torch-bench() {
echo "== torch ops: begen against a hand-written STABLE_TORCH_LIBRARY op and a custom_op, CUDA and CPU"
export BEGEN_TORCH_PYTHON="${BEGEN_TORCH_PYTHON:-$PY}"
"$BEGEN" build bench/torch/cuda --out "$WORK/torch-bench-cuda" --platform cuda --quiet
"$BEGEN" build bench/torch/cpu --out "$WORK/torch-bench-cpu" --quiet
"$BEGEN_TORCH_PYTHON" bench/torch/torch_overhead.py "$WORK/torch-bench-cuda" --device cuda --rounds "${ROUNDS:-30}"
"$BEGEN_TORCH_PYTHON" bench/torch/torch_overhead.py "$WORK/torch-bench-cpu" --device cpu --rounds "${ROUNDS:-30}"
}

# The extra build time of the torch target: each tree built clean (a new
# OUT, so a new work directory) for jax alone and for jax,torch, twice in
# turn; brainevent's CUDA tree too when its sources travelled along.
step_torch-build-time() {
echo "== build time: --target jax against --target jax,torch, clean builds, $(nproc) cores"
export BEGEN_TORCH_PYTHON="${BEGEN_TORCH_PYTHON:-$PY}"
local trees=("examples/kernels-demo/kernels/cpu" "examples/kernels-demo/kernels/cuda" "examples/python-package/kernels" "tests/gpu/torch")
if [[ -d "$CORPUS" && -f "$WHEEL/brainevent/include/cuda_common.h" ]]; then
    brainevent_cuda_tree "$WORK/tbt-brainevent"
    trees+=("$WORK/tbt-brainevent")
fi
local tree t rep t0 t1
for tree in "${trees[@]}"; do
    for rep in 1 2; do
        for t in jax jax,torch; do
            t0=${EPOCHREALTIME/./}
            "$BEGEN" build "$tree" --out "$WORK/tbt/$rep-${t/,/-}-$(basename "$tree")" --target "$t" --quiet 2>"$WORK/tbt-warnings.log"
            t1=${EPOCHREALTIME/./}
            printf '%-44s %-10s run %s %6d ms\n' "$tree" "$t" "$rep" "$(( (t1 - t0) / 1000 ))"
        done
    done
done
}

step_bench-native() {
echo "== per-call cost of a native XLA FFI signature bound by begen against the hand-written Bind (one library)"
"$BEGEN" build bench/ffi_native/cuda --out "$WORK/nat" --name nat --platform cuda --quiet
"$PY" bench/ffi_native/native_overhead.py "$WORK/nat" --platform cuda --rounds "${ROUNDS:-300}"
}

echo "== toolchain"
"$BEGEN" doctor || echo "gpu-check: '$BEGEN doctor' failed" >&2
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader || echo "gpu-check: nvidia-smi failed" >&2

# Each step asked for, in ALL_STEPS' order, in a subshell of its own with
# `set -e`: a failing command ends that step, not the run.
rows=()
status=0
for name in $ALL_STEPS; do
    [[ "$STEPS" == *" $name "* ]] || continue
    if [[ "$SKIP" == *" $name "* ]]; then
        rows+=("$name|skipped|0|SKIP names it")
        continue
    fi
    rm -f "$WORK/.missing"
    start=$SECONDS
    ( set -e; "step_$name" )
    rc=$?
    took=$((SECONDS - start))
    if [[ $rc -eq 0 ]]; then
        rows+=("$name|ok|$took|")
    elif [[ $rc -eq 3 && -f "$WORK/.missing" ]]; then
        rows+=("$name|skipped|$took|missing input: $(cat "$WORK/.missing")")
        status=1
    else
        rows+=("$name|FAILED|$took|exit status $rc")
        status=1
    fi
done
rm -f "$WORK/.missing"

echo "== summary"
printf '%-18s %-8s %7s  %s\n' step status seconds note
for row in "${rows[@]}"; do
    IFS='|' read -r name st took note <<< "$row"
    printf '%-18s %-8s %7s  %s\n' "$name" "$st" "$took" "$note"
done
exit "$status"
