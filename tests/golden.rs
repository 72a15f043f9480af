//! The golden harness itself (tests/support/golden.rs): only `BEGEN_BLESS=1`
//! rewrites an expected file, and a mismatch fails with a diff that names
//! the file and the command that accepts it.

// Test code reads its switches from the environment directly (clippy.toml).
#![allow(clippy::disallowed_methods)]

mod support;

use std::ffi::OsStr;
use std::path::Path;

use support::golden::{self, Goldens, Mode};

/// The child run of [`bless_rewrites_only_when_it_is_1`]: checks the file
/// named by `BEGEN_GOLDEN_PROBE_FILE` against `new\n` under the child's own
/// `BEGEN_BLESS`.
#[test]
#[ignore = "a probe: bless_rewrites_only_when_it_is_1 runs it in a child process"]
fn golden_probe() {
    if !support::probe_requested("golden_probe") {
        return;
    }
    let file = std::env::var_os("BEGEN_GOLDEN_PROBE_FILE").expect("the probe's file");
    golden::assert_golden(Path::new(&file), "new\n", "cargo test --test golden");
}

#[test]
fn bless_rewrites_only_when_it_is_1() {
    let dir = support::scratch("golden_bless");
    let file = dir.join("expected.txt");
    let path = file.to_str().unwrap();
    let shown = file.strip_prefix(support::repo()).unwrap_or(&file).display().to_string();
    for value in ["0", "", "true", "yes", "2"] {
        std::fs::write(&file, "old\n").unwrap();
        let out = support::run_probe("golden_probe", &[("BEGEN_BLESS", value), ("BEGEN_GOLDEN_PROBE_FILE", path)], &[]);
        let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "BEGEN_BLESS={value:?} compares, and the file differs:\n{text}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "old\n", "BEGEN_BLESS={value:?} rewrote the file");
        assert!(text.contains(&format!("--- {shown} (expected)")), "the diff names the file:\n{text}");
        assert!(text.contains("-old\n+new\n"), "{text}");
        assert!(text.contains("run `BEGEN_BLESS=1 cargo test --test golden` to accept"), "{text}");
    }
    // Unset compares too.
    let out = support::run_probe("golden_probe", &[("BEGEN_GOLDEN_PROBE_FILE", path)], &["BEGEN_BLESS"]);
    assert!(!out.status.success());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "old\n");

    let out = support::run_probe("golden_probe", &[("BEGEN_BLESS", "1"), ("BEGEN_GOLDEN_PROBE_FILE", path)], &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "new\n", "BEGEN_BLESS=1 rewrites");
}

#[test]
fn the_mode_is_bless_only_for_1() {
    assert_eq!(Mode::from_value(Some(OsStr::new("1"))), Mode::Bless);
    for value in ["0", "", "1 ", "true", "TRUE", "01"] {
        assert_eq!(Mode::from_value(Some(OsStr::new(value))), Mode::Compare, "{value:?}");
    }
    assert_eq!(Mode::from_value(None), Mode::Compare);
}

#[test]
fn compare_collects_every_mismatch_and_writes_nothing() {
    let dir = support::scratch("golden_compare");
    std::fs::write(dir.join("same.txt"), "a\n").unwrap();
    std::fs::write(dir.join("other.txt"), "a\n").unwrap();
    let mut goldens = Goldens::with_mode(Mode::Compare, "cargo test");
    goldens.check(&dir.join("same.txt"), "a\n");
    goldens.check(&dir.join("other.txt"), "b\n");
    goldens.check(&dir.join("missing.txt"), "c\n");
    let failures = goldens.failures();
    assert_eq!(failures.len(), 2, "{failures:?}");
    assert!(failures[0].contains("other.txt (expected)\n+++ actual\n@@ -1,1 +1,1 @@\n-a\n+b\n"), "{}", failures[0]);
    assert!(failures[1].contains("missing.txt (expected) (unreadable: "), "{}", failures[1]);
    assert!(!dir.join("missing.txt").exists());
    assert_eq!(std::fs::read_to_string(dir.join("other.txt")).unwrap(), "a\n");
}

#[test]
fn bless_writes_changed_files_and_creates_folders() {
    let dir = support::scratch("golden_write");
    std::fs::write(dir.join("same.txt"), "a\n").unwrap();
    let before = std::fs::metadata(dir.join("same.txt")).unwrap().modified().unwrap();
    let mut goldens = Goldens::with_mode(Mode::Bless, "cargo test");
    goldens.check(&dir.join("same.txt"), "a\n");
    goldens.check(&dir.join("sub/new.txt"), "n\n");
    assert!(goldens.failures().is_empty());
    goldens.finish();
    assert_eq!(std::fs::metadata(dir.join("same.txt")).unwrap().modified().unwrap(), before, "unchanged bytes");
    assert_eq!(std::fs::read_to_string(dir.join("sub/new.txt")).unwrap(), "n\n");
}

#[test]
fn the_diff_has_hunks_with_context() {
    let old: String = (1..=20).map(|i| format!("{i}\n")).collect();
    let new: String =
        (1..=21).filter(|&i| i != 18).map(|i| if i == 3 { "three\n".to_string() } else { format!("{i}\n") }).collect();
    let diff = golden::diff(&old, &new);
    assert_eq!(
        diff,
        "@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n\
         @@ -15,6 +15,6 @@\n 15\n 16\n 17\n-18\n 19\n 20\n+21\n"
    );
    assert!(golden::diff("a\n", "a").contains("final newline"));
}
