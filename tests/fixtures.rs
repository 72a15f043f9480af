//! Golden tests: one test per folder under `fixtures/` (see fixtures/README.md).
//! `BEGEN_BLESS=1 cargo test --test fixtures` rewrites the expectations.

use std::path::{Path, PathBuf};

use begen::diag::render::render_text;
use begen::report::Report;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn run_case(name: &str) {
    let dir = fixtures().join(name);
    let scan = begen::driver::run(&begen::driver::Input::new(dir.join("input")))
        .expect("the fixture's input folder is readable");
    let json = Report::new(&scan).to_json();
    let text: String = scan.diagnostics.iter().map(|d| render_text(d, &scan.sources, false) + "\n").collect();
    let mut failures = Vec::new();
    for (file, actual) in [("scan.json", json), ("diagnostics.txt", text)] {
        if let Some(diff) = golden(&dir.join(file), &actual) {
            failures.push(format!("--- fixtures/{name}/{file} (expected)\n+++ actual\n{diff}"));
        }
    }
    assert!(failures.is_empty(), "\n{}\nrun `BEGEN_BLESS=1 cargo test --test fixtures` to accept", failures.join("\n"));
}

/// Compares `actual` with the file (or rewrites it when blessing); returns a
/// diff on mismatch.
fn golden(path: &Path, actual: &str) -> Option<String> {
    if std::env::var_os("BEGEN_BLESS").is_some() {
        std::fs::write(path, actual).expect("fixture expectations are writable");
        return None;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_default();
    (expected != actual).then(|| diff(&expected, actual))
}

/// A small unified-style line diff (longest common subsequence).
fn diff(a: &str, b: &str) -> String {
    let a: Vec<&str> = a.lines().collect();
    let b: Vec<&str> = b.lines().collect();
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            out.push_str(&format!(" {}\n", a[i]));
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push_str(&format!("+{}\n", b[j]));
            j += 1;
        } else {
            out.push_str(&format!("-{}\n", a[i]));
            i += 1;
        }
    }
    out
}

macro_rules! cases {
    ($($name:ident),* $(,)?) => {
        $( #[test] fn $name() { run_case(stringify!($name)); } )*
        const CASES: &[&str] = &[$(stringify!($name)),*];
    };
}

cases!(
    binaries,
    err_binaries,
    infer_table,
    err_algorithms,
    err_vjp,
    err_algorithms_yaml,
    tensors,
    explicit_types,
    seed_examples,
    syntax_variants,
    macros,
    pp_if0,
    pp_redefine,
    kernix_wrong,
    lookalikes,
    config_forms,
    unknown_macro_inline,
    err_no_output,
    err_no_tensors,
    err_indirect,
    err_not_inferred,
    err_tokens,
    err_identifiers,
    err_duplicates,
    err_contradictions,
    err_stream_cpu,
    err_locate,
    err_files,
    err_config_yaml,
    err_config_values,
    err_scope,
    modules,
    err_modules,
    err_library,
    err_link,
    err_variants,
    err_hardening,
    cr_only,
    ignored_files,
    macro_names,
    typed,
    err_typed,
    err_macro_limits,
    attrs,
    err_attrs,
    err_escapes,
);

/// Every fixture folder with a `scan.json` has a test above.
#[test]
fn every_fixture_has_a_test() {
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(fixtures()).expect("fixtures/ exists") {
        let entry = entry.expect("fixtures/ is readable");
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().join("scan.json").exists() && !CASES.contains(&name.as_str()) {
            missing.push(name);
        }
    }
    assert!(missing.is_empty(), "add these fixtures to `cases!` in tests/fixtures.rs: {missing:?}");
}
