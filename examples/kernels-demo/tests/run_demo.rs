//! The build script's outputs exist and `run.py` calls every kernel from
//! JAX. Needs a Python with jax (`BEGEN_PYTHON`, else `python3`); without
//! one the JAX part is skipped, except under CI=true.

use std::path::Path;
use std::process::Command;

const OUT: &str = env!("BEGEN_DEMO_CPU_DIR");

#[test]
fn outputs_are_beside_each_other() {
    for f in ["libdemo_cpu.so", "demo_cpu.py", "demo_cpu.pyi", "demo_cpu.yaml"] {
        assert!(Path::new(OUT).join(f).is_file(), "{f} missing from {OUT}");
    }
}

#[test]
fn run_py_calls_every_kernel() {
    let python = std::env::var("BEGEN_PYTHON").unwrap_or_else(|_| "python3".into());
    let has_jax = Command::new(&python).args(["-c", "import jax"]).output().is_ok_and(|o| o.status.success());
    if !has_jax {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "CI=true and `{python}` has no jax");
        eprintln!("SKIPPED: `{python}` has no jax");
        return;
    }
    let out = Command::new(&python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("run.py"))
        .arg(OUT)
        .env("JAX_PLATFORMS", "cpu")
        .output()
        .expect("running run.py");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "run.py failed:\n{text}");
    for expected in [
        "scale(x, factor=2.5)               [ 2.5  5.   7.5 10.  12.5]",
        "mean_var(x)                        [3. 2.]",
        "complex_scale(z, factor=1j)        [-1.+1.j  1.+2.j]",
        "half_fill(value=1.5)               [1.5 1.5 1.5]",
        "clamp_i32(k, lo=-1, hi=1)          [-1 -1 -1  0  1  1  1]",
        "x[1] = -1 is not positive",
        "safe_log(x) afterwards",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
}
