//! `begen::Build`, the build.rs front end, run as a build script would run
//! it (outside one: with `.out_dir` and no `cargo:` lines): `.python_out`
//! places an importable module and its library inside a Python package
//! (skipped without a Python that has jax, except under CI=true); a build
//! script is told to rerun when any variable begen read changes, PATH too.

// Test code reads its switches from the environment directly (clippy.toml).
#![allow(clippy::disallowed_methods)]

mod support;

use std::path::{Path, PathBuf};
use std::time::SystemTime;

const OUTPUTS: [&str; 4] = ["libe2e_cpu.so", "e2e_cpu.py", "e2e_cpu.pyi", "e2e_cpu.yaml"];

fn mtimes(dir: &Path) -> Vec<SystemTime> {
    OUTPUTS.iter().map(|f| std::fs::metadata(dir.join(f)).unwrap().modified().unwrap()).collect()
}

#[test]
fn python_out_places_the_module_and_library_in_a_package() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    // The builder reads its environment itself: it finds JAX's headers
    // through BEGEN_PYTHON or XLA_FFI_INCLUDE_DIR (scripts/env.sh sets both).
    if std::env::var_os("BEGEN_PYTHON").is_none() && std::env::var_os("XLA_FFI_INCLUDE_DIR").is_none() {
        support::missing::<()>("neither BEGEN_PYTHON nor XLA_FFI_INCLUDE_DIR is set (source scripts/env.sh)");
        return;
    }
    let root = support::scratch("buildrs-python-out");
    let (out, pkg) = (root.join("out"), root.join("python/cpu_pkg"));
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("__init__.py"), "").unwrap();

    let build = || {
        // cc reads TARGET, HOST and OPT_LEVEL from Cargo in a build script;
        // here they are given.
        let triple = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
        let mut b = begen::Build::new();
        b.cc_host().target(&triple).host(&triple).opt_level(2);
        b.dir(support::repo().join("tests/e2e/cpu"))
            .platform("cpu")
            .out_dir(&out)
            .work_dir(root.join("work"))
            .python_out(&pkg)
            .cargo_metadata(false)
            .try_compile("e2e_cpu")
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let built = build();
    assert_eq!(built.library_path(), out.join("libe2e_cpu.so"), "the build itself stays in the out directory");
    for f in OUTPUTS {
        assert_eq!(std::fs::read(out.join(f)).unwrap(), std::fs::read(pkg.join(f)).unwrap(), "{f}");
    }
    assert!(!pkg.join(".begen").exists(), "no work files in the package");
    let mut held: Vec<_> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name()).collect();
    held.sort();
    assert_eq!(
        held,
        ["e2e_cpu.py", "e2e_cpu.pyi", "e2e_cpu.yaml", "libe2e_cpu.so"],
        "the out directory holds the outputs only"
    );
    assert!(root.join("work/e2e_cpu/obj").is_dir(), "the work files are in the work directory given");

    // A rebuild with nothing changed rewrites nothing in the package.
    let before = mtimes(&pkg);
    build();
    assert_eq!(before, mtimes(&pkg));

    let text = support::run_python(
        &python,
        &root.join("python"),
        "import jax, numpy as np\n\
         from cpu_pkg import e2e_cpu as m\n\
         assert m.LIBRARY.endswith('cpu_pkg/libe2e_cpu.so'), m.LIBRARY\n\
         x = jax.numpy.arange(4, dtype='float32')\n\
         y = m.scale(x, alpha=3.0, out=jax.ShapeDtypeStruct(x.shape, x.dtype))\n\
         np.testing.assert_allclose(y, 3.0 * np.arange(4))\n\
         print('ok')",
    );
    assert!(text.contains("ok"), "{text}");
}

/// The child run of [`a_build_script_reruns_when_path_changes`]: a CUDA build
/// as a build script runs it, its `cargo:` lines on stdout.
#[test]
#[ignore = "a probe: a_build_script_reruns_when_path_changes runs it in a child process"]
fn cuda_build_probe() {
    if !support::probe_requested("cuda_build_probe") {
        return;
    }
    let out = std::env::var_os("BEGEN_PROBE_OUT").expect("the probe's out directory");
    let triple = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    let mut b = begen::Build::new();
    b.cc_host().target(&triple).host(&triple).opt_level(2);
    let result = b
        .dir(support::repo().join("tests/e2e/cuda"))
        .platform("cuda")
        .out_dir(Path::new(&out))
        .cargo_metadata(true)
        .try_compile("e2e_cuda");
    println!("probe result: {}", result.map_or_else(|e| e.to_string(), |_| "built".to_string()));
}

/// nvcc is looked up on PATH, so PATH is among the variables a build script
/// reruns on (toolchain.rs once read it around `Env`, and Cargo never knew).
#[test]
fn a_build_script_reruns_when_path_changes() {
    let root = support::scratch("buildrs-rerun-path");
    let (xla, bin, out) = (root.join("xla"), root.join("bin"), root.join("out"));
    std::fs::create_dir_all(xla.join("xla/ffi/api")).unwrap();
    std::fs::write(xla.join("xla/ffi/api/ffi.h"), "").unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let (xla, bin, out) = (path(&xla), path(&bin), path(&out));
    // No nvcc anywhere: the search goes through PATH (an empty folder) and fails.
    let child = support::run_probe(
        "cuda_build_probe",
        &[
            ("PATH", &bin),
            ("XLA_FFI_INCLUDE_DIR", &xla),
            ("BEGEN_PYTHON", "/nonexistent/begen-python"),
            ("CUDA_PATH", "/nonexistent/begen-cuda"),
            ("BEGEN_PROBE_OUT", &out),
        ],
        &["NVCC", "CUDA_HOME"],
    );
    let stdout = String::from_utf8_lossy(&child.stdout);
    assert!(child.status.success(), "{stdout}{}", String::from_utf8_lossy(&child.stderr));
    assert!(stdout.contains("probe result: "), "the probe ran:\n{stdout}");
    let reruns: Vec<&str> = stdout.lines().filter_map(|l| l.strip_prefix("cargo:rerun-if-env-changed=")).collect();
    for name in ["PATH", "NVCC", "CUDA_PATH", "CUDA_HOME", "XLA_FFI_INCLUDE_DIR"] {
        assert!(reruns.contains(&name), "no rerun-if-env-changed={name} in {reruns:?}:\n{stdout}");
    }
}

#[test]
fn an_unknown_target_fails_the_build_with_the_closest_name() {
    let root = support::scratch("buildrs-targets");
    let Err(err) = begen::Build::new()
        .dir(support::repo().join("tests/e2e/cpu"))
        .targets(&["jax", "trch"])
        .out_dir(root.join("out"))
        .cargo_metadata(false)
        .try_compile("e2e_cpu")
    else {
        panic!("an unknown target is an error");
    };
    let said = err.to_string();
    assert!(said.contains(".targets(): unknown target 'trch'") && said.contains("did you mean 'torch'?"), "{said}");
    assert!(!root.join("out").join("libe2e_cpu.so").exists());
}

#[test]
fn targets_jax_and_torch_put_the_torch_ops_in_the_package_too() {
    if support::python_with_jax().is_none() {
        return;
    }
    if std::env::var_os("BEGEN_PYTHON").is_none() && std::env::var_os("XLA_FFI_INCLUDE_DIR").is_none() {
        support::missing::<()>("neither BEGEN_PYTHON nor XLA_FFI_INCLUDE_DIR is set (source scripts/env.sh)");
        return;
    }
    // The builder reads BEGEN_TORCH_PYTHON from the environment, as a build
    // script's would; the torch venv of scripts/setup-torch.sh otherwise.
    let torch_python = match std::env::var_os("BEGEN_TORCH_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => {
            let venv = support::repo().join("target/venv-torch-2.15/bin/python");
            if !venv.exists() {
                support::missing::<()>("no torch Python (BEGEN_TORCH_PYTHON, target/venv-torch-2.15)");
                return;
            }
            // SAFETY: every test here that sets it sets this same value,
            // and only the torch target's header search reads it.
            unsafe { std::env::set_var("BEGEN_TORCH_PYTHON", &venv) };
            venv
        }
    };
    let root = support::scratch("buildrs-torch");
    let pkg = root.join("python/torch_pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("__init__.py"), "").unwrap();
    let triple = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    let mut b = begen::Build::new();
    b.cc_host().target(&triple).host(&triple).opt_level(2);
    b.dir(support::repo().join("tests/e2e/cpu"))
        .platform("cpu")
        .targets(&["jax", "torch"])
        .out_dir(root.join("out"))
        .work_dir(root.join("work"))
        .python_out(&pkg)
        .cargo_metadata(false)
        .try_compile("e2e_cpu")
        .unwrap_or_else(|e| panic!("{e}"));
    for f in ["libe2e_cpu_torch.so", "e2e_cpu_torch.py", "e2e_cpu_torch.pyi", "libe2e_cpu.so", "e2e_cpu.py"] {
        assert!(pkg.join(f).is_file(), "{f} in the package");
    }
    // The torch module from the package, in the torch venv (no jax there):
    // importing it loads the library beside it.
    let text = support::run_python(
        &torch_python,
        &root.join("python"),
        "import torch\n\
         from torch_pkg import e2e_cpu_torch as m\n\
         assert m.__file__.endswith('torch_pkg/e2e_cpu_torch.py'), m.__file__\n\
         print('ok', m.NAMESPACE)",
    );
    assert!(text.contains("ok e2e_cpu"), "{text}");
}
