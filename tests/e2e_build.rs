//! The `begen build` / `generate` / `doctor` commands on the e2e fixtures:
//! determinism, incremental rebuilds, failures that keep earlier outputs,
//! warning-free generated code, platform choice, and the CUDA compile path
//! with pip's nvcc. Skipped without a Python that has jax (and nvcc for the
//! CUDA tests), except under CI=true.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use support::{begen, begen_ok, copy_tree, repo, scratch};

const OUTPUTS: [&str; 4] = ["libe2e_cpu.so", "e2e_cpu.py", "e2e_cpu.pyi", "e2e_cpu.yaml"];

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn snapshot(dir: &Path) -> Vec<(Vec<u8>, SystemTime)> {
    OUTPUTS
        .iter()
        .map(|f| {
            let p = dir.join(f);
            let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (bytes, std::fs::metadata(&p).unwrap().modified().unwrap())
        })
        .collect()
}

fn build_cpu(python: &Path, root: &Path, out: &Path) -> std::process::Output {
    let (root, out) = (root.display().to_string(), out.display().to_string());
    begen(python, &["build", &root, "--out", &out, "--platform", "cpu"], &[])
}

/// The kernel tree `tree` (relative to the repository) and a fresh scratch
/// output directory, with both as strings for the command line.
fn dirs(tree: &str, scratch_name: &str) -> (String, PathBuf, String) {
    let out = scratch(scratch_name);
    let out_s = out.display().to_string();
    (repo().join(tree).display().to_string(), out, out_s)
}

/// A writable copy of tests/e2e/cpu.
fn cpu_copy(name: &str) -> PathBuf {
    let dir = scratch(name).join("cpu");
    copy_tree(&repo().join("tests/e2e/cpu"), &dir);
    dir
}

#[test]
fn two_builds_are_byte_identical_and_a_rebuild_touches_nothing() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let root = repo().join("tests/e2e/cpu");
    let (a, b) = (scratch("det-a"), scratch("det-b"));
    assert!(build_cpu(&python, &root, &a).status.success());
    assert!(build_cpu(&python, &root, &b).status.success());
    for f in OUTPUTS {
        let (x, y) = (std::fs::read(a.join(f)).unwrap(), std::fs::read(b.join(f)).unwrap());
        assert!(x == y, "{f} differs between two builds");
    }
    let before = snapshot(&a);
    let again = build_cpu(&python, &root, &a);
    assert!(again.status.success());
    assert!(stderr(&again).contains("0 TUs compiled, 8 up to date"), "{}", stderr(&again));
    assert_eq!(snapshot(&a), before, "a no-op rebuild rewrote outputs");
}

#[test]
fn touching_one_source_recompiles_one_tu() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let root = cpu_copy("incr");
    let out = root.parent().unwrap().join("out");
    assert!(build_cpu(&python, &root, &out).status.success());
    for (file, unit) in [("basic.cpp", "gen/basic.cpp.begen.cc"), ("helper.cpp", "helper.cpp")] {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, format!("{text}\n// touched\n")).unwrap();
        let rebuilt = build_cpu(&python, &root, &out);
        let log = stderr(&rebuilt);
        assert!(rebuilt.status.success(), "{log}");
        assert!(log.contains(&format!("compiling 1/1 {unit}")), "{log}");
        assert!(log.contains("1 TUs compiled, 7 up to date"), "{log}");
    }
}

#[test]
fn a_failed_build_keeps_the_previous_outputs() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let root = cpu_copy("keep");
    let out = root.parent().unwrap().join("out");
    assert!(build_cpu(&python, &root, &out).status.success());
    let before = snapshot(&out);
    let basic = root.join("basic.cpp");
    let good = std::fs::read_to_string(&basic).unwrap();

    // A compile error inside a body: the scan is fine, the compiler is not.
    std::fs::write(&basic, good.replace("out[i] = alpha * in[i];", "out[i] = alpha * in[i] +;")).unwrap();
    let failed = build_cpu(&python, &root, &out);
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    assert!(stderr(&failed).contains("compiling gen/basic.cpp.begen.cc failed"), "{}", stderr(&failed));
    assert_eq!(snapshot(&out), before);

    // An error diagnostic: nothing is compiled at all.
    std::fs::write(&basic, good.replace("BE::Tensor y, float alpha", "const BE::Tensor y, float alpha")).unwrap();
    let failed = build_cpu(&python, &root, &out);
    assert_eq!(failed.status.code(), Some(1));
    assert!(stderr(&failed).contains("No non-const Tensor output found in 'scale'"), "{}", stderr(&failed));
    assert_eq!(snapshot(&out), before);

    // Fixed again: builds, and the outputs are what they were.
    std::fs::write(&basic, &good).unwrap();
    assert!(build_cpu(&python, &root, &out).status.success());
    for (i, f) in OUTPUTS.iter().enumerate() {
        assert!(std::fs::read(out.join(f)).unwrap() == before[i].0, "{f} changed");
    }
}

#[test]
fn generated_cpp_has_no_warnings_under_werror() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    // The plain kernels, and the struct and array attributes (XLA's struct
    // decoding in the glue, aggregate initialisation in the trampolines).
    for (tree, scratch_name) in [("tests/e2e/cpu", "werror"), ("tests/e2e/structs", "werror_structs")] {
        let (root, _, out_s) = dirs(tree, scratch_name);
        // cc adds -Wall -Wextra by itself and reads CXXFLAGS.
        let built = begen(
            &python,
            &["build", &root, "--out", &out_s, "--platform", "cpu"],
            &[("CXXFLAGS", "-Wall -Wextra -Werror")],
        );
        assert!(built.status.success(), "{tree}: {}", stderr(&built));
        assert!(!stderr(&built).contains("warning"), "{tree}: {}", stderr(&built));
    }
}

#[test]
fn platform_cpu_skips_cuda_sources_with_a_warning() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let (root, out, out_s) = dirs("tests/e2e/cuda", "cpu-only");
    let built = begen_ok(&python, &["build", &root, "--out", &out_s, "--platform", "cpu"], &[]);
    let log = stderr(&built);
    assert!(log.contains("skipping CUDA source `vec.cu` for platform `cpu`"), "{log}");
    assert!(log.contains("`scale_cuda`"), "{log}");
    let exported = support::exported_symbols(&out.join("libe2e_cuda.so"));
    assert!(exported.contains(&"begen_e2e_cuda_host_negate".to_string()));
    assert!(!exported.iter().any(|s| s.contains("scale_cuda")));
}

#[test]
fn cuda_library_compiles_and_exports_every_handler() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let Some(nvcc) = support::nvcc(&python) else {
        return;
    };
    let (root, out, out_s) = dirs("tests/e2e/cuda", "cuda");
    let nvcc_s = nvcc.display().to_string();
    let built = begen_ok(
        &python,
        &["build", &root, "--out", &out_s, "--platform", "cuda", "--arch", "sm_90"],
        &[("NVCC", &nvcc_s), ("CXXFLAGS", "-Werror")],
    );
    let log = stderr(&built);
    assert!(!log.contains("warning"), "{log}");
    let exported = support::exported_symbols(&out.join("libe2e_cuda.so"));
    for f in ["add_cuda", "scale_cuda", "half_scale", "fill_f32", "fill_i32", "host_negate"] {
        let symbol = format!("begen_e2e_cuda_{f}");
        assert!(exported.contains(&symbol), "{symbol} missing from {exported:?}");
    }
    assert!(!exported.iter().any(|s| s.starts_with("cuda")), "cudart symbols leaked: {exported:?}");
    let manifest = std::fs::read_to_string(out.join("e2e_cuda.yaml")).unwrap();
    assert!(manifest.contains("cuda"), "{manifest}");
}

/// The struct and array attributes of tests/gpu/structs (structs by value
/// into CUDA kernels, `__half` members, `BE::Span`, `std::vector` and
/// `xla::ffi::Span<const __half>`, a template per dtype): the wrappers
/// compile with nvcc and the glue with g++, warnings as errors, and every
/// handler is exported. tests/gpu/check_structs.py runs them on a GPU.
#[test]
fn cuda_struct_and_array_attributes_compile_without_warnings() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let Some(nvcc) = support::nvcc(&python) else {
        return;
    };
    let (root, out, out_s) = dirs("tests/gpu/structs", "cuda_structs");
    let nvcc_s = nvcc.display().to_string();
    let built = begen_ok(
        &python,
        &["build", &root, "--out", &out_s, "--platform", "cuda", "--arch", "sm_90"],
        &[("NVCC", &nvcc_s), ("CXXFLAGS", "-Wall -Wextra -Werror")],
    );
    let log = stderr(&built);
    assert!(!log.contains("warning"), "{log}");
    let exported = support::exported_symbols(&out.join("libgpu_structs.so"));
    for f in [
        "gpu_affine",
        "gpu_halves",
        "gpu_poly",
        "gpu_poly_vec",
        "gpu_half_poly",
        "gpu_scale__float32",
        "gpu_scale__float16",
    ] {
        let symbol = format!("begen_gpu_structs_{f}");
        assert!(exported.contains(&symbol), "{symbol} missing from {exported:?}");
    }
    let module = std::fs::read_to_string(out.join("gpu_structs.py")).unwrap();
    assert!(module.contains("def _begen_record(") && module.contains("def _begen_array("), "{module}");
}

/// tests/gpu/tune_algo, an algorithm tuned over its CUDA implementations:
/// both compile with nvcc, warnings as errors, are exported, and the module
/// lists them as the algorithm's CUDA candidates. tests/gpu/check_tune_algo.py
/// tunes and runs them on a GPU.
#[test]
fn cuda_algorithm_implementations_to_tune_compile() {
    let Some(out) = cuda_tree_compiles("tests/gpu/tune_algo", "tune_algo", &["axpy_one_block", "axpy_grid"]) else {
        return;
    };
    let module = std::fs::read_to_string(out.join("tune_algo.py")).unwrap();
    assert!(module.contains(r#""implementations": {"cuda": ("axpy_one_block", "axpy_grid")}"#), "{module}");
}

/// Builds the CUDA tree `tree` (library `lib`) with nvcc for sm_90,
/// warnings as errors, and checks that each of `functions` has its
/// exported handler: the output folder, or `None` where JAX or nvcc is
/// missing (a failure under CI).
fn cuda_tree_compiles(tree: &str, lib: &str, functions: &[&str]) -> Option<PathBuf> {
    let python = support::python_with_jax()?;
    let nvcc = support::nvcc(&python)?;
    let (root, out, out_s) = dirs(tree, &format!("cuda_{lib}"));
    let nvcc_s = nvcc.display().to_string();
    let built = begen_ok(
        &python,
        &["build", &root, "--out", &out_s, "--arch", "sm_90"],
        &[("NVCC", &nvcc_s), ("CXXFLAGS", "-Wall -Wextra -Werror")],
    );
    let log = stderr(&built);
    assert!(!log.contains("warning"), "{log}");
    let exported = support::exported_symbols(&out.join(format!("lib{lib}.so")));
    for f in functions {
        let symbol = format!("begen_{lib}_{f}");
        assert!(exported.contains(&symbol), "{symbol} missing from {exported:?}");
    }
    Some(out)
}

/// tests/gpu/vocab, begen's own vocabulary in CUDA kernels (`BE::Attrs`,
/// `std::string_view` attributes, `BE::Status`, per-executable state made
/// by an `instantiate:` function that allocates device memory): the
/// wrappers compile with nvcc and the glue with g++, warnings as errors, and
/// every handler, instantiate handler and state type is exported.
/// tests/gpu/check_vocab.py runs them on a GPU.
#[test]
fn cuda_vocab_attrs_strings_status_and_state_compile_without_warnings() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let Some(nvcc) = support::nvcc(&python) else {
        return;
    };
    let (root, out, out_s) = dirs("tests/gpu/vocab", "cuda_vocab");
    let nvcc_s = nvcc.display().to_string();
    let built = begen_ok(
        &python,
        &["build", &root, "--out", &out_s, "--platform", "cuda", "--arch", "sm_90"],
        &[("NVCC", &nvcc_s), ("CXXFLAGS", "-Wall -Wextra -Werror")],
    );
    let log = stderr(&built);
    assert!(!log.contains("warning"), "{log}");
    let exported = support::exported_symbols(&out.join("libgpu_vocab.so"));
    let lists = ["gpu_sum_all", "gpu_neg_each", "gpu_copies", "gpu_pick", "gpu_first_only"];
    for f in ["vocab_affine", "vocab_scale_count", "vocab_apply", "vocab_add_length", "vocab_clip"].iter().chain(&lists)
    {
        let symbol = format!("begen_gpu_vocab_{f}");
        assert!(exported.contains(&symbol), "{symbol} missing from {exported:?}");
    }
    for f in ["vocab_read_counter", "vocab_add_count", "vocab_no_counter"] {
        for suffix in ["", "__instantiate", "__state_type_id", "__state_type_info"] {
            let symbol = format!("begen_gpu_vocab_{f}{suffix}");
            assert!(exported.contains(&symbol), "{symbol} missing from {exported:?}");
        }
    }
    assert!(!exported.iter().any(|s| s.starts_with("cuda")), "cudart symbols leaked: {exported:?}");
    let module = std::fs::read_to_string(out.join("gpu_vocab.py")).unwrap();
    assert!(module.contains("def vocab_affine(x, /, *, out, **attrs):"), "{module}");
    assert!(module.contains("def vocab_apply(x, /, *, op, out):"), "{module}");
    assert!(module.contains("def vocab_read_counter(*, out):"), "{module}");
}

/// tests/gpu/state_devices, per-executable state of a `T& state` kernel and
/// of a `T* state` kernel of XLA FFI's types, each device's made and
/// destroyed with that device current (`begen::tr::DeviceScope`, and
/// `begen::native::DeviceStates` for the `T*` kernel): the wrappers compile
/// with nvcc and the glue with g++, warnings as errors, with the instantiate
/// handlers and state types exported. tests/gpu/check_state_devices.py runs
/// them on 2 or more GPUs.
#[test]
fn cuda_state_per_device_compiles_without_warnings() {
    let stateful = ["be_made_on", "NativeMadeOn"];
    let functions = [stateful.as_slice(), &["state_destructions"]].concat();
    let Some(out) = cuda_tree_compiles("tests/gpu/state_devices", "gpu_state_devices", &functions) else {
        return;
    };
    let exported = support::exported_symbols(&out.join("libgpu_state_devices.so"));
    for f in stateful {
        for suffix in ["__instantiate", "__state_type_id", "__state_type_info"] {
            let symbol = format!("begen_gpu_state_devices_{f}{suffix}");
            assert!(exported.contains(&symbol), "{symbol} missing from {exported:?}");
        }
    }
    assert!(!exported.iter().any(|s| s.starts_with("cuda")), "cudart symbols leaked: {exported:?}");
}

#[test]
fn cuda_modules_with_one_function_name_in_three_sources_link() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let Some(nvcc) = support::nvcc(&python) else {
        return;
    };
    // `fill(BE::Tensor, float, int64_t)` is defined in three .cu files, each
    // its own module: without localizing, the link fails on a duplicate symbol.
    let (root, out, out_s) = dirs("fixtures/modules/input", "cuda_modules");
    let nvcc_s = nvcc.display().to_string();
    begen_ok(
        &python,
        &["build", &root, "--out", &out_s, "--name", "mods", "--arch", "sm_90", "--quiet"],
        &[("NVCC", &nvcc_s)],
    );
    let exported = support::exported_symbols(&out.join("libmods.so"));
    for m in ["jit_csr", "jit_coo", "dense_mm"] {
        let symbol = format!("begen_mods_{m}_fill");
        assert!(exported.contains(&symbol), "{symbol} missing from {exported:?}");
    }
    let module = std::fs::read_to_string(out.join("mods.py")).unwrap();
    assert!(module.contains("def jit_coo():") && module.contains("\"jit_coo.fill\": \"jit_coo.fill\""), "{module}");
}

#[test]
fn bench_gpu_kernels_build_for_cuda() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let Some(_) = support::nvcc(&python) else {
        return;
    };
    let (root, out, out_s) = dirs("bench/gpu/kernels", "ovh");
    begen_ok(&python, &["build", &root, "--out", &out_s, "--platform", "cuda", "--arch", "sm_90"], &[]);
    let exported = support::exported_symbols(&out.join("libovh.so"));
    assert!(exported.contains(&"begen_ovh_add_one_graph".to_string()), "{exported:?}");
}

#[test]
fn generate_writes_sources_only() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let (root, out, out_s) = dirs("tests/e2e/cpu", "generate");
    begen_ok(&python, &["generate", &root, "--out", &out_s], &[]);
    for f in [
        "e2e_cpu.py",
        "e2e_cpu.pyi",
        "e2e_cpu.yaml",
        "gen/basic.cpp.begen.cc",
        "gen/macros.cpp.begen.cc",
        "gen/e2e_cpu.begen.cc",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    assert!(!out.join("libe2e_cpu.so").exists());
    // Relocatable: the wrappers include their sources relative to the root.
    let wrapper = std::fs::read_to_string(out.join("gen/basic.cpp.begen.cc")).unwrap();
    assert!(wrapper.contains("#include \"basic.cpp\""), "{wrapper}");
    assert!(!wrapper.contains(&root), "{wrapper}");
}

#[test]
fn a_bad_library_name_is_an_error() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let (root, _, out_s) = dirs("tests/e2e/cpu", "badname");
    let failed = begen(&python, &["build", &root, "--out", &out_s, "--name", "9lives"], &[]);
    assert_eq!(failed.status.code(), Some(1));
    assert!(
        stderr(&failed).contains("the library name `9lives` (the given name) is not usable"),
        "{}",
        stderr(&failed)
    );
    let missing = begen(&python, &["build", "/nonexistent/begen", "--out", &out_s], &[]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn doctor_reports_the_toolchain() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let out = begen_ok(&python, &["doctor", "--arch", "sm_90a,sm_80"], &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("XLA FFI headers:"), "{text}");
    assert!(text.contains("(API 0."), "{text}");
    assert!(text.contains("environment read:"), "{text}");
    // Where this binary came from, and the embedded headers' version.
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_begen")).unwrap();
    assert!(text.contains(&format!("installed at:          {}\n", exe.display())), "{text}");
    assert!(text.contains("installed by:          a cargo build ("), "{text}");
    assert!(text.contains("support headers:       embedded, version 1."), "{text}");
    if text.contains("nvcc:") && !text.contains("nvcc:                  not found") {
        assert!(
            text.contains("-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90a,code=sm_90a -gencode=arch=compute_80,code=compute_80"),
            "{text}"
        );
    }
}

#[test]
fn outputs_inside_the_kernel_directory_are_not_sources() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let root = cpu_copy("inside");
    let r = root.display().to_string();
    let (gen_out, out) = (root.join("generated").display().to_string(), root.join("out").display().to_string());
    begen_ok(&python, &["generate", &r, "--out", &gen_out], &[]);
    let built = begen_ok(&python, &["build", &r, "--out", &out, "--platform", "cpu"], &[]);
    let log = stderr(&built);
    assert!(log.contains("skipping `generated/gen/basic.cpp.begen.cc`: it is a wrapper begen generated"), "{log}");
    assert!(log.contains("8 TUs compiled"), "{log}");
    // OUT itself is inside the kernel directory too: a rebuild ignores it.
    let again = begen_ok(&python, &["build", &r, "--out", &out, "--platform", "cpu"], &[]);
    assert!(stderr(&again).contains("0 TUs compiled, 8 up to date"), "{}", stderr(&again));
}

#[test]
fn out_holds_the_four_outputs_and_the_work_files_go_elsewhere() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let root = repo().join("tests/e2e/cpu").display().to_string();
    let base = scratch("work_dir");
    let held = |dir: &Path| {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    };
    let mut four: Vec<String> = OUTPUTS.iter().map(|s| s.to_string()).collect();
    four.sort();
    // The default: a per-user cache keyed by OUT.
    let (out, cache) = (base.join("out"), base.join("cache"));
    let out_s = out.display().to_string();
    let cache_s = cache.display().to_string();
    let env = [("XDG_CACHE_HOME", cache_s.as_str())];
    let built = begen_ok(&python, &["build", &root, "--out", &out_s, "--platform", "cpu"], &env);
    assert!(stderr(&built).contains("8 TUs compiled"), "{}", stderr(&built));
    assert_eq!(held(&out), four);
    let keys = held(&cache.join("begen/work"));
    assert_eq!(keys.len(), 1, "{keys:?}");
    assert!(cache.join("begen/work").join(&keys[0]).join("e2e_cpu/obj").is_dir());
    let again = begen_ok(&python, &["build", &root, "--out", &out_s, "--platform", "cpu"], &env);
    assert!(stderr(&again).contains("0 TUs compiled, 8 up to date"), "{}", stderr(&again));
    // OUT removed: the next build is a clean one.
    std::fs::remove_dir_all(&out).unwrap();
    let fresh = begen_ok(&python, &["build", &root, "--out", &out_s, "--platform", "cpu"], &env);
    if std::fs::metadata(&out).unwrap().created().is_ok() {
        assert!(stderr(&fresh).contains("8 TUs compiled"), "{}", stderr(&fresh));
    }
    assert_eq!(held(&out), four);

    // --work-dir: WORK_DIR/NAME, and incremental from there.
    let (out2, work) = (base.join("out2"), base.join("work"));
    let (out2_s, work_s) = (out2.display().to_string(), work.display().to_string());
    let args = ["build", &root, "--out", &out2_s, "--platform", "cpu", "--work-dir", &work_s];
    begen_ok(&python, &args, &env);
    assert_eq!(held(&out2), four);
    assert_eq!(held(&work), ["e2e_cpu"]);
    assert!(work.join("e2e_cpu/obj").is_dir() && work.join("e2e_cpu/include").is_dir());
    let again = begen_ok(&python, &args, &env);
    assert!(stderr(&again).contains("0 TUs compiled, 8 up to date"), "{}", stderr(&again));
    assert_eq!(held(&cache.join("begen/work")).len(), 1, "a work directory given leaves the cache alone");
}

#[test]
fn a_relative_output_directory_builds() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    // Compilers run in the work directory: every path begen hands them
    // (the support headers' folder included) must hold from there.
    let (root, out, _) = dirs("tests/e2e/cpu", "relative_out");
    let parent = out.parent().unwrap();
    let name = out.file_name().unwrap().to_str().unwrap();
    let built = std::process::Command::new(env!("CARGO_BIN_EXE_begen"))
        .args(["build", &root, "--out", name, "--platform", "cpu", "--quiet"])
        .env("BEGEN_PYTHON", &python)
        .current_dir(parent)
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", stderr(&built));
    assert!(out.join("libe2e_cpu.so").is_file());
}

#[test]
fn parallel_builds_into_one_output_wait_for_each_other() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let root = repo().join("tests/e2e/cpu");
    let (shared, alone) = (scratch("parallel-shared"), scratch("parallel-alone"));
    let spawn = |out: &std::path::Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_begen"))
            .args(["build", root.to_str().unwrap(), "--out", out.to_str().unwrap(), "--platform", "cpu"])
            .env("BEGEN_PYTHON", &python)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let children: Vec<_> = (0..3).map(|_| spawn(&shared)).collect();
    let logs: Vec<_> = children.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
    for log in &logs {
        assert!(log.status.success(), "{}", stderr(log));
    }
    assert!(logs.iter().any(|l| stderr(l).contains("Blocking waiting for file lock")), "no build waited");
    assert!(build_cpu(&python, &root, &alone).status.success());
    for f in OUTPUTS {
        let (x, y) = (std::fs::read(shared.join(f)).unwrap(), std::fs::read(alone.join(f)).unwrap());
        assert!(x == y, "{f}: the parallel builds left another result than one build");
    }
}

#[test]
fn a_source_put_back_with_an_older_date_is_rebuilt() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    // `cp -p` / `tar x` / `rsync -a`: new contents, an old modification time.
    let root = cpu_copy("older_date");
    let out = root.parent().unwrap().join("out");
    assert!(build_cpu(&python, &root, &out).status.success());
    let path = root.join("basic.cpp");
    let old_time = std::fs::metadata(&path).unwrap().modified().unwrap() - std::time::Duration::from_secs(3600);
    let text = std::fs::read_to_string(&path).unwrap().replace("alpha * in[i]", "alpha * in[i] + 1.0f");
    std::fs::write(&path, text).unwrap();
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(old_time).unwrap();
    let rebuilt = build_cpu(&python, &root, &out);
    let log = stderr(&rebuilt);
    assert!(rebuilt.status.success(), "{log}");
    assert!(log.contains("compiling 1/1 gen/basic.cpp.begen.cc"), "{log}");
}

#[test]
fn a_compile_that_hangs_is_stopped() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let (_, out, out_s) = dirs("tests/e2e/cpu", "hang");
    let root = out.parent().unwrap().join("hang_kernels");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    // The preprocessor reads /dev/zero forever: through a computed include,
    // which begen does not resolve (a plain `#include "/dev/zero"` is refused
    // before compiling: tests/robust.rs).
    std::fs::write(
        root.join("k.cpp"),
        "#include \"brainevent/common.h\"\n#define ZERO \"/dev/zero\"\n#include ZERO\n// @BE f\nvoid f(const BE::Tensor x, BE::Tensor y) {}\n",
    )
    .unwrap();
    let start = std::time::Instant::now();
    let failed = begen(
        &python,
        &["build", root.to_str().unwrap(), "--out", &out_s, "--quiet"],
        &[("BEGEN_COMPILE_TIMEOUT", "3")],
    );
    assert_eq!(failed.status.code(), Some(1));
    assert!(stderr(&failed).contains("did not finish within 3 s and was stopped"), "{}", stderr(&failed));
    // A hang catcher only: the 3 s limit is what the message says.
    assert!(start.elapsed() < std::time::Duration::from_secs(600), "{:?}", start.elapsed());
}

/// A kernel tree for the crash test: `scale` multiplies by `factor`; with
/// `extra`, a second kernel changes the module too.
fn crash_tree(dir: &Path, factor: &str, extra: bool) {
    std::fs::create_dir_all(dir).unwrap();
    let mut text = format!(
        "#include \"brainevent/common.h\"\n// @BE scale\nvoid scale(const BE::Tensor x, BE::Tensor y) {{\n    \
         for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = {factor} * x.data_ptr<const float>()[i];\n}}\n"
    );
    if extra {
        text.push_str("// @BE extra\nvoid extra(const BE::Tensor x, BE::Tensor y) {}\n");
    }
    std::fs::write(dir.join("k.cpp"), text).unwrap();
}

/// A build killed (SIGKILL, injected by strace) at each rename and each
/// hard link begen makes leaves OUT with one working build: the module
/// imports and computes the old numbers with the old kernels, or the new
/// ones; the next build finishes and OUT holds the four outputs again.
#[test]
fn a_build_killed_at_any_rename_leaves_one_build_working() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    if Command::new("strace").arg("-V").output().is_err() {
        support::missing::<()>("strace");
        return;
    }
    let base = scratch("crash");
    let (old, new, out) = (base.join("old"), base.join("new"), base.join("out"));
    crash_tree(&old, "2.0f", false);
    crash_tree(&new, "3.0f", true);
    let out_s = out.display().to_string();
    let args = |tree: &Path, work: &str| {
        let (tree, work) = (tree.display().to_string(), base.join(work).display().to_string());
        ["build", &tree, "--out", &out_s, "--name", "k", "--platform", "cpu", "--work-dir", &work].map(str::to_string)
    };
    let (old_args, new_args) = (args(&old, "work-old"), args(&new, "work-new"));
    fn as_strs(a: &[String; 10]) -> Vec<&str> {
        a.iter().map(String::as_str).collect()
    }
    begen_ok(&python, &as_strs(&new_args), &[]);
    let check = "import numpy as np, k\nprint(float(k.scale(np.ones(4, np.float32), \
                 out=np.ones(4, np.float32))[0]), hasattr(k, 'extra'))";
    let mut snapshots = Vec::new();
    for family in ["rename,renameat,renameat2", "link,linkat"] {
        for n in 1.. {
            begen_ok(&python, &as_strs(&old_args), &[]);
            let injected = format!("inject={family}:signal=SIGKILL:when={n}");
            let killed = Command::new("strace")
                .args(["-qq", "-o", "/dev/null", "-e", &format!("trace={family}"), "-e", &injected])
                .arg(env!("CARGO_BIN_EXE_begen"))
                .args(&new_args)
                .env("BEGEN_PYTHON", &python)
                .output()
                .unwrap();
            if killed.status.success() {
                assert!(n > 1, "strace injected nothing: {}", stderr(&killed));
                break;
            }
            let snap = base.join(format!("snap-{}-{n}", &family[..4]));
            copy_tree(&out, &snap);
            snapshots.push(snap);
            // The next build finishes and cleans up.
            begen_ok(&python, &as_strs(&new_args), &[]);
            let mut held: Vec<String> =
                std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
            held.sort();
            assert_eq!(held, ["k.py", "k.pyi", "k.yaml", "libk.so"], "after a kill at {family} {n}");
        }
    }
    assert!(snapshots.len() >= 4, "{snapshots:?}");
    for snap in &snapshots {
        let got = support::run_python(&python, snap, check);
        assert!(
            got.trim_end().ends_with("2.0 False") || got.trim_end().ends_with("3.0 True"),
            "{}: {got}",
            snap.display()
        );
    }
}

/// OUT the kernel directory itself, or its parent (`cd proj && begen build
/// kernels --out .`): every source is under OUT and is still compiled (once
/// every build failed on an empty `#include ""`); `begen generate`'s own
/// wrappers in OUT/gen are not sources.
#[test]
fn out_holding_the_kernel_directory_builds() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let proj = scratch("out_holds_root");
    crash_tree(&proj.join("kernels"), "2.0f", false);
    let check = "import numpy as np, k\nprint(float(k.scale(np.ones(4, np.float32), out=np.ones(4, np.float32))[0]))";
    for out in [".", "kernels"] {
        let build = |cmd: &str| {
            let done = Command::new(env!("CARGO_BIN_EXE_begen"))
                .args([cmd, "kernels", "--out", out, "--name", "k", "--platform", "cpu"])
                .current_dir(&proj)
                .env("BEGEN_PYTHON", &python)
                .output()
                .unwrap();
            assert!(done.status.success(), "begen {cmd} --out {out}: {}", stderr(&done));
        };
        build("generate");
        build("build");
        let got = support::run_python(&python, &proj.join(out), check);
        assert!(got.trim_end().ends_with("2.0"), "--out {out}: {got}");
    }
}

/// `__FILE__` is relative to the kernel directory (`-ffile-prefix-map`):
/// BE_CHECK's message names `sub/k.cpp`, not the build machine's path, and
/// the same tree built in two directories gives the same library bytes.
#[test]
fn the_same_tree_in_two_directories_builds_the_same_library() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let base = scratch("reproducible");
    let text = "#include \"brainevent/common.h\"\n// @BE f\nvoid f(const BE::Tensor x, BE::Tensor y) {\n    \
                BE_CHECK(x.numel() == 3) << \"want 3\";\n}\n";
    let mut libs = Vec::new();
    for tree in ["a", "somewhere/else/b"] {
        let root = base.join(tree);
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/k.cpp"), text).unwrap();
        let (r, out) = (root.display().to_string(), base.join(format!("out-{}", libs.len())));
        let out_s = out.display().to_string();
        begen_ok(&python, &["build", &r, "--out", &out_s, "--name", "k", "--platform", "cpu"], &[]);
        libs.push(out);
    }
    let (a, b) = (std::fs::read(libs[0].join("libk.so")).unwrap(), std::fs::read(libs[1].join("libk.so")).unwrap());
    assert!(a == b, "libk.so differs between the two directories");
    let root = base.display().to_string();
    assert!(memchr::memmem::find(&a, root.as_bytes()).is_none(), "libk.so holds {root}");
    let said = support::run_python(
        &python,
        &libs[0],
        "import numpy as np, k\ntry:\n    k.f(np.ones(2, np.float32), out=np.ones(2, np.float32))\n\
         except Exception as e:\n    print(e)",
    );
    assert!(said.contains("sub/k.cpp:4") && !said.contains(&root), "{said}");
}
