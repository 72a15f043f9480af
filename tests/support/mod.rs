//! Helpers shared by the end-to-end tests: the Python with JAX, scratch
//! directories, running the `begen` binary and Python snippets.
//!
//! A test that needs something missing (JAX, nvcc) is skipped with a note on
//! stderr, except under `CI=true`, where a missing piece is a failure.

#![allow(dead_code)]
// Test code reads its switches from the environment directly (clippy.toml).
#![allow(clippy::disallowed_methods)]

pub mod golden;
mod tools;

// Each test binary uses some of them.
#[allow(unused_imports)]
pub use tools::{in_ci, missing, python_with_jax, repo, run};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Names the probe that a child run of a test binary performs ([`run_probe`]).
const PROBE_VAR: &str = "BEGEN_TEST_PROBE";

/// Whether this process is the child run of probe `name` that [`run_probe`]
/// started; a probe test does nothing otherwise.
pub fn probe_requested(name: &str) -> bool {
    std::env::var(PROBE_VAR).is_ok_and(|v| v == name)
}

/// Runs the test `name` of this test binary in a child process with `set`
/// added to and `unset` removed from its environment: for what a test cannot
/// watch in its own process (its environment, its stdout). The test named
/// is a probe: it acts only when [`probe_requested`] says so.
pub fn run_probe(name: &str, set: &[(&str, &str)], unset: &[&str]) -> Output {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut cmd = Command::new(exe);
    cmd.args(["--exact", name, "--include-ignored", "--nocapture", "--test-threads=1"]).env(PROBE_VAR, name);
    for (k, v) in set {
        cmd.env(k, v);
    }
    for k in unset {
        cmd.env_remove(k);
    }
    cmd.output().expect("running the test binary again")
}

/// The pip (or system) nvcc the build would use: the `nvcc:` line of
/// `begen doctor` run with `BEGEN_PYTHON=python`.
pub fn nvcc(python: &Path) -> Option<PathBuf> {
    let out = begen(python, &["doctor"], &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(line) = text.lines().find_map(|l| l.strip_prefix("nvcc:")) else {
        return missing(&format!("no `nvcc:` line in begen doctor's output:\n{text}"));
    };
    let found = line.trim();
    match found.split_once(" (") {
        Some((path, _)) if !found.starts_with("not found:") => Some(PathBuf::from(path)),
        _ => missing(&format!("no nvcc: {found}")),
    }
}

/// A fresh, empty directory under the target dir.
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Copies a directory tree (for tests that edit sources).
pub fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let dest = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

/// Runs the `begen` binary with `BEGEN_PYTHON` set.
pub fn begen(python: &Path, args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_begen"));
    cmd.args(args).env("BEGEN_PYTHON", python).env("BEGEN_EXPLAIN", "1");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().expect("running begen")
}

/// Like [`begen`], failing the test (with its output) unless it succeeds.
pub fn begen_ok(python: &Path, args: &[&str], envs: &[(&str, &str)]) -> Output {
    let out = begen(python, args, envs);
    assert!(
        out.status.success(),
        "begen {args:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs a Python snippet with `dir` on `sys.path`; fails the test on error.
pub fn run_python(python: &Path, dir: &Path, code: &str) -> String {
    let out = Command::new(python)
        .args(["-c", code])
        .env("PYTHONPATH", dir)
        .env("JAX_PLATFORMS", "cpu")
        .output()
        .expect("running python");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "python failed:\n{text}");
    text
}

/// The dynamic symbols a shared library defines (`nm -D --defined-only`).
pub fn exported_symbols(lib: &Path) -> Vec<String> {
    let out = Command::new("nm").args(["-D", "--defined-only"]).arg(lib).output().expect("running nm");
    assert!(out.status.success(), "nm failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_string))
        .collect()
}
