//! `begen::Build`, the build.rs front end, run as a build script would run
//! it (outside one: with `.out_dir` and no `cargo:` lines): `.python_out`
//! places an importable module and its library inside a Python package.
//! Skipped without a Python that has jax, except under CI=true.

mod support;

use std::path::Path;
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
            .python_out(&pkg)
            .cargo_metadata(false)
            .try_compile("e2e_cpu")
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let built = build();
    assert_eq!(built.library_path, out.join("libe2e_cpu.so"), "the build itself stays in the out directory");
    for f in OUTPUTS {
        assert_eq!(std::fs::read(out.join(f)).unwrap(), std::fs::read(pkg.join(f)).unwrap(), "{f}");
    }
    assert!(!pkg.join(".begen").exists(), "no work files in the package");

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
