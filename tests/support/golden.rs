//! The one golden-file harness: fixtures, `--help` texts, CLI snapshots and
//! the emit goldens all compare through it.
//!
//! One overwrite rule: `BEGEN_BLESS=1` rewrites the expected files with what
//! the test produced; any other value, or none, compares them and fails with
//! a unified diff that names the file and the command that accepts it.
//!
//! It uses only `std`, so the crate's own unit tests include it too
//! (`src/emit/tests.rs`, through `#[path]`).

// Every test crate includes this file; each uses a part of it.
#![allow(dead_code)]
// Test code reads its switches from the environment directly (clippy.toml).
#![allow(clippy::disallowed_methods)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The variable that rewrites expectations; `1` is the only value that does.
pub const BLESS_VAR: &str = "BEGEN_BLESS";

/// Lines of context around each change in a diff.
const CONTEXT: usize = 3;

/// Above this many line pairs the diff gives up on a minimal alignment and
/// shows the changed region as removed and added.
const MAX_LCS_CELLS: usize = 4_000_000;

/// What a golden check does with a mismatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Fail with a diff (the default, and every value but `1`).
    Compare,
    /// Rewrite the expected file (`BEGEN_BLESS=1`).
    Bless,
}

impl Mode {
    /// The mode the process environment asks for.
    pub fn from_env() -> Mode {
        Mode::from_value(std::env::var_os(BLESS_VAR).as_deref())
    }

    /// The mode for a value of `BEGEN_BLESS` (`None`: unset).
    pub fn from_value(value: Option<&OsStr>) -> Mode {
        if value == Some(OsStr::new("1")) { Mode::Bless } else { Mode::Compare }
    }
}

/// Golden files checked together: every mismatch is collected and
/// [`Goldens::finish`] fails once with all of them.
#[derive(Debug)]
pub struct Goldens {
    mode: Mode,
    command: String,
    failures: Vec<String>,
}

impl Goldens {
    /// Goldens accepted by `BEGEN_BLESS=1 <command>` (e.g. `cargo test --test fixtures`).
    pub fn new(command: &str) -> Goldens {
        Goldens::with_mode(Mode::from_env(), command)
    }

    /// Like [`Goldens::new`] with the mode given, not read.
    pub fn with_mode(mode: Mode, command: &str) -> Goldens {
        Goldens { mode, command: command.to_string(), failures: Vec::new() }
    }

    /// Compares `actual` with the file at `path`, or rewrites the file when
    /// blessing (only if its bytes change; parent folders are created).
    pub fn check(&mut self, path: &Path, actual: &str) {
        let expected = std::fs::read(path);
        if self.mode == Mode::Bless {
            if expected.as_deref().ok() != Some(actual.as_bytes()) {
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
                }
                std::fs::write(path, actual).unwrap_or_else(|e| panic!("blessing {}: {e}", path.display()));
            }
            return;
        }
        let shown = shown_path(path);
        let (expected, note) = match expected {
            Ok(bytes) => (String::from_utf8_lossy(&bytes).into_owned(), String::new()),
            Err(e) => (String::new(), format!(" (unreadable: {e})")),
        };
        if expected != actual {
            self.failures.push(format!("--- {shown} (expected){note}\n+++ actual\n{}", diff(&expected, actual)));
        }
    }

    /// The mismatches so far, each a diff with its header.
    pub fn failures(&self) -> &[String] {
        &self.failures
    }

    /// Fails the test with every mismatch and the command that accepts them.
    #[track_caller]
    pub fn finish(self) {
        assert!(
            self.failures.is_empty(),
            "golden mismatch:\n{}\nrun `{BLESS_VAR}=1 {}` to accept, then review `git diff`",
            self.failures.join("\n"),
            self.command
        );
    }
}

/// Checks one golden file; fails the test with a diff on mismatch.
#[track_caller]
pub fn assert_golden(path: &Path, actual: &str, command: &str) {
    let mut goldens = Goldens::new(command);
    goldens.check(path, actual);
    goldens.finish();
}

/// `path` relative to the repository when it is inside it.
fn shown_path(path: &Path) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    path.strip_prefix(&root).unwrap_or(path).display().to_string()
}

/// One step of an edit script: a line kept, removed or added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Same,
    Removed,
    Added,
}

/// A unified diff of `expected` against `actual`: `@@ -line,count +line,count @@`
/// hunks with three lines of context.
pub fn diff(expected: &str, actual: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let ops = edit_script(&a, &b);
    // Old and new line numbers before each op.
    let mut at = Vec::with_capacity(ops.len() + 1);
    let (mut i, mut j) = (0, 0);
    for op in &ops {
        at.push((i, j));
        match op {
            Op::Same => (i, j) = (i + 1, j + 1),
            Op::Removed => i += 1,
            Op::Added => j += 1,
        }
    }
    at.push((i, j));
    let changes: Vec<usize> = (0..ops.len()).filter(|&k| ops[k] != Op::Same).collect();
    if changes.is_empty() {
        return "(the lines are equal: the files differ in line endings or the final newline)\n".to_string();
    }
    let mut out = String::new();
    let mut k = 0;
    while k < changes.len() {
        // One hunk: changes whose gaps of kept lines fit in twice the context.
        let mut last = k;
        while last + 1 < changes.len() && changes[last + 1] - changes[last] <= 2 * CONTEXT + 1 {
            last += 1;
        }
        let start = changes[k].saturating_sub(CONTEXT);
        let end = (changes[last] + CONTEXT + 1).min(ops.len());
        let ((a0, b0), (a1, b1)) = (at[start], at[end]);
        out.push_str(&format!("@@ -{},{} +{},{} @@\n", a0 + 1, a1 - a0, b0 + 1, b1 - b0));
        for (op, &(i, j)) in ops[start..end].iter().zip(&at[start..end]) {
            match op {
                Op::Same => out.push_str(&format!(" {}\n", a[i])),
                Op::Removed => out.push_str(&format!("-{}\n", a[i])),
                Op::Added => out.push_str(&format!("+{}\n", b[j])),
            }
        }
        k = last + 1;
    }
    out
}

/// A shortest edit script from `a` to `b`: the common head and tail kept,
/// the middle aligned by a longest common subsequence.
fn edit_script(a: &[&str], b: &[&str]) -> Vec<Op> {
    let head = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let tail = a[head..].iter().rev().zip(b[head..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (ma, mb) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    let mut ops = vec![Op::Same; head];
    if (ma.len() + 1).saturating_mul(mb.len() + 1) > MAX_LCS_CELLS {
        ops.extend(std::iter::repeat_n(Op::Removed, ma.len()));
        ops.extend(std::iter::repeat_n(Op::Added, mb.len()));
    } else {
        let width = mb.len() + 1;
        let mut lcs = vec![0usize; (ma.len() + 1) * width];
        for i in (0..ma.len()).rev() {
            for j in (0..mb.len()).rev() {
                lcs[i * width + j] = if ma[i] == mb[j] {
                    lcs[(i + 1) * width + j + 1] + 1
                } else {
                    lcs[(i + 1) * width + j].max(lcs[i * width + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < ma.len() || j < mb.len() {
            if i < ma.len() && j < mb.len() && ma[i] == mb[j] {
                ops.push(Op::Same);
                (i, j) = (i + 1, j + 1);
            } else if i < ma.len() && (j == mb.len() || lcs[(i + 1) * width + j] >= lcs[i * width + j + 1]) {
                ops.push(Op::Removed);
                i += 1;
            } else {
                ops.push(Op::Added);
                j += 1;
            }
        }
    }
    ops.extend(std::iter::repeat_n(Op::Same, tail));
    ops
}
