//! Real-world corpus: `begen scan` against kernix on brainevent 0.3.0.
//!
//! Runs `tests/corpus/kernix_compare.py`, `tests/corpus/modules_compare.py`,
//! `tests/corpus/hazards.py`, `tests/corpus/tree_build.py` and
//! `tests/corpus/hybrid_build.py` (see
//! tests/corpus/README.md) with this build's `begen` binary. The scripts download the brainevent wheel with pip
//! into `.cache/` and need the project's Python (`scripts/setup.sh`). Where
//! that Python or the network is missing the test is skipped with a note,
//! except under `CI=true`, where a missing piece is a failure.

// Test code reads its switches from the environment directly (clippy.toml).
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// The project's Python: `$BEGEN_PYTHON`, else `.venv/bin/python`.
fn python(root: &Path) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("BEGEN_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let venv = root.join(".venv/bin/python");
    venv.exists().then_some(venv)
}

/// Skip with a note, or fail under CI.
fn unavailable(why: &str) {
    assert!(!ci(), "corpus check cannot run under CI=true: {why}");
    eprintln!("skipping the brainevent corpus check: {why}");
}

/// Runs one of the tests/corpus scripts with this build's begen: exit 0 passes,
/// 3 (corpus unavailable) skips outside CI, anything else fails with the output.
fn run_script(script: &str, extra: &[&str]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(python) = python(root) else {
        unavailable("no .venv/bin/python (run scripts/setup.sh) and no BEGEN_PYTHON");
        return;
    };
    let out = Command::new(&python)
        .arg(root.join("tests/corpus").join(script))
        .arg("--begen")
        .arg(env!("CARGO_BIN_EXE_begen"))
        .args(extra)
        .output();
    let out = match out {
        Ok(out) => out,
        Err(e) => {
            unavailable(&format!("cannot run {}: {e}", python.display()));
            return;
        }
    };
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    match out.status.code() {
        Some(0) => println!("{text}"),
        Some(3) => unavailable(&text),
        code => panic!("{script} exited {code:?}:\n{text}"),
    }
}

#[test]
fn brainevent_corpus_matches_kernix() {
    // The nvcc -E reference verifies the allow-list; it needs the pip toolkit.
    let reference = ci() || std::env::var_os("NVCC").is_some();
    run_script("kernix_compare.py", if reference { &["--reference"] } else { &[] });
}

#[test]
fn brainevent_tree_as_modules_matches_kernix() {
    // The whole tree as one library: per-file modules, then kernix's own names.
    run_script("modules_compare.py", &[]);
}

#[test]
fn kernix_hazards_match_the_preprocessor() {
    if !ci() && std::env::var_os("NVCC").is_none() {
        unavailable("NVCC is not set (source scripts/env.sh)");
        return;
    }
    run_script("hazards.py", &[]);
}

#[test]
fn brainevent_tree_builds_as_one_library() {
    // Compiles the whole tree (minutes, on 2 cores) with the pip toolkit's nvcc, unoptimised.
    if !ci() && std::env::var_os("NVCC").is_none() {
        unavailable("NVCC is not set (source scripts/env.sh)");
        return;
    }
    run_script("tree_build.py", &[]);
}

#[test]
fn brainevent_sources_with_ffi_headers_build_against_both_header_sets() {
    // The sources that include brainevent/dtypes.h or ffi_compat.h, each built
    // with begen's headers and with brainevent's first (one arch: the slowest test here).
    if !ci() && std::env::var_os("NVCC").is_none() {
        unavailable("NVCC is not set (source scripts/env.sh)");
        return;
    }
    run_script("hybrid_build.py", &[]);
}
