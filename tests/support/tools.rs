//! What both kinds of test use to find their tools: the repository, the
//! Python with jax, a command that must succeed, and the rule that a
//! missing tool skips a test except under `CI=true`. Shared by the
//! integration tests (`tests/support`) and the unit tests that run tools
//! (`src/binary/tests.rs`, through `#[path]`), which cannot use
//! `tests/support` itself (it needs the `begen` binary and cargo's test
//! directories).

use std::path::PathBuf;
use std::process::{Command, Output};

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Skips (returns `None` after a note) or, under CI, fails.
pub fn missing<T>(what: &str) -> Option<T> {
    if in_ci() {
        panic!("CI=true and {what}: this test must not be skipped in CI");
    }
    eprintln!("SKIPPED: {what}");
    None
}

/// `.venv/bin/python`, else `$BEGEN_PYTHON`, else `/tmp/probe-venv/bin/python`,
/// provided it imports jax.
pub fn python_with_jax() -> Option<PathBuf> {
    let mut candidates = vec![repo().join(".venv/bin/python")];
    if let Some(p) = std::env::var_os("BEGEN_PYTHON") {
        candidates.push(PathBuf::from(p));
    }
    candidates.push(PathBuf::from("/tmp/probe-venv/bin/python"));
    for python in candidates {
        let ok =
            Command::new(&python).args(["-c", "import jax, jax.ffi, numpy"]).output().is_ok_and(|o| o.status.success());
        if ok {
            return Some(python);
        }
    }
    missing("no Python with jax (.venv/bin/python, $BEGEN_PYTHON, /tmp/probe-venv/bin/python)")
}

/// Runs a command, failing the test (with its output) unless it succeeds.
pub fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}
