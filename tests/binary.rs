//! The run-time side of binary kernels, compiled and run on this
//! (GPU-less) machine: the CUDA driver header without a driver, the launch
//! helpers, and the generated handlers against a fake driver. The readers'
//! and conventions' own tests (against cuTile and nvcc) are unit tests
//! (src/binary/tests.rs).
//!
//! They need a C++ compiler, pip's nvcc or jax: skipped when missing,
//! failures under CI=true.

// Test code reads its switches from the environment directly (clippy.toml).
#![allow(clippy::disallowed_methods)]

mod support;

use std::path::PathBuf;
use std::process::Command;

use support::{repo, run, scratch};

fn nvcc_or_skip() -> Option<PathBuf> {
    let python = support::python_with_jax()?;
    support::nvcc(&python)
}

/// The run-time header without a driver: a library built with it loads,
/// and a launch is an error naming the kernel.
#[test]
#[ignore = "needs a C++ compiler and nvcc (pip); CI runs it"]
fn cuda_driver_header_without_a_driver() {
    let Some(nvcc) = nvcc_or_skip() else { return };
    let dir = scratch("binary-cuda-driver");
    let include = repo().join("build-support/include");
    let probe = repo().join("tests/binary/driver_probe.cc");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".to_string());
    let (lib, main) = (dir.join("libprobe.so"), dir.join("probe"));
    let flags = ["-std=c++17", "-Wall", "-Wextra", "-Werror", "-O1"];
    run(Command::new(&cxx)
        .args(flags)
        .args(["-shared", "-fPIC", "-fvisibility=hidden", "-I"])
        .arg(&include)
        .arg(&probe)
        .arg("-o")
        .arg(&lib)
        .arg("-ldl"));
    run(Command::new(&cxx).args(flags).arg("-DBEGEN_PROBE_MAIN").arg(&probe).arg("-o").arg(&main).arg("-ldl"));
    // The header also compiles in an nvcc translation unit.
    run(Command::new(&nvcc)
        .args(["-std=c++17", "-c", "-x", "cu", "-I"])
        .arg(&include)
        .arg(&probe)
        .arg("-o")
        .arg(dir.join("probe_nvcc.o")));

    // Nothing links the driver.
    let needed = run(Command::new("readelf").arg("-d").arg(&lib));
    assert!(!String::from_utf8_lossy(&needed.stdout).contains("libcuda"), "libprobe.so must not need libcuda");

    // A driver that is not there (forced, so the test means the same on a GPU machine).
    let out = run(Command::new(&main).arg(&lib).env("BEGEN_LIBCUDA", "libcuda-not-here.so.1"));
    let text = String::from_utf8_lossy(&out.stdout);
    let expected =
        "kernel `probe_scale` (symbol `scale_Kt1_A1f32_Sf32`): no CUDA driver (could not load libcuda-not-here.so.1: ";
    assert_eq!(text.lines().filter(|l| l.contains(expected)).count(), 2, "{text}");

    // This machine's own state: no driver in CI, so the same message.
    let out = run(Command::new(&main).arg(&lib).env_remove("BEGEN_LIBCUDA"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("prepare: kernel `probe_scale` (symbol `scale_Kt1_A1f32_Sf32`): "), "{text}");
    if support::in_ci() {
        assert!(text.contains("no CUDA driver (could not load libcuda.so.1, libcuda.so: "), "{text}");
    }
}

/// The handler-side helpers of binary kernels (`begen/binary_launch.h`):
/// launch arithmetic and cuTile's array checks, compiled and run here.
#[test]
#[ignore = "needs a C++ compiler; CI runs it"]
fn binary_launch_header() {
    let dir = scratch("binary-launch");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".to_string());
    let main = dir.join("launch_check");
    run(Command::new(&cxx)
        .args(["-std=c++17", "-Wall", "-Wextra", "-Werror", "-O1", "-I"])
        .arg(repo().join("build-support/include"))
        .arg(repo().join("tests/binary/launch_check.cc"))
        .arg("-o")
        .arg(&main));
    let out = run(&mut Command::new(&main));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "all ok");
}

/// The generated handlers of fixtures/binaries called directly with a fake
/// CUDA driver (tests/binary/fake_cuda.cc through `BEGEN_LIBCUDA`): the
/// bytes each launch packs at each offset, grid, block and shared memory,
/// the image loaded once (at the first launch), cuTile's assumptions and
/// int32 overflow refused before a launch, launch-expression and driver
/// errors naming the kernel; for cuTile lists, every word of the buffer the
/// fake runs `begen_write_words` to write (500 a launch), and each element
/// refused by its index (tests/binary/handler_probe.cc).
#[test]
#[ignore = "needs a C++ compiler and jax (XLA's FFI headers); CI runs it"]
fn binary_handlers_with_a_fake_driver() {
    let Some(python) = support::python_with_jax() else { return };
    let dir = scratch("binary-handlers");
    let input = repo().join("fixtures/binaries/input");
    let gen_dir = dir.join("gen");
    support::begen_ok(&python, &["generate", input.to_str().unwrap(), "--out", gen_dir.to_str().unwrap()], &[]);
    let xla = run(Command::new(&python).args(["-c", "import jax.ffi; print(jax.ffi.include_dir())"]));
    let xla = String::from_utf8_lossy(&xla.stdout).trim().to_string();
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".to_string());
    let fake = dir.join("libfakecuda.so");
    run(Command::new(&cxx)
        .args(["-std=c++17", "-O1", "-fPIC", "-shared"])
        .arg(repo().join("tests/binary/fake_cuda.cc"))
        .arg("-o")
        .arg(&fake));
    let probe = dir.join("handler_probe");
    let generated = gen_dir.join("gen/mixed.binaries.begen.cc");
    run(Command::new(&cxx)
        .args(["-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(repo().join("build-support/include"))
        .arg("-isystem")
        .arg(&xla)
        .arg(format!("-DBEGEN_GENERATED=\"{}\"", generated.display()))
        .arg(repo().join("tests/binary/handler_probe.cc"))
        .arg("-ldl")
        .arg("-o")
        .arg(&probe));
    let out = run(Command::new(&probe).arg(&fake).env("BEGEN_LIBCUDA", &fake));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "all ok");
}
