//! Pins the `--help` text of `begen` itself and of `begen build`, `generate`, `doctor` and `new` (the
//! CLI contract people read). `BEGEN_BLESS=1 cargo test --test cli_help`
//! rewrites the expectations in tests/cli/ (tests/support/golden.rs).

mod support;

use std::process::Command;

fn check(subcommand: &str) {
    let args: &[&str] = if subcommand == "begen" { &["--help"] } else { &[subcommand, "--help"] };
    let out = Command::new(env!("CARGO_BIN_EXE_begen")).args(args).output().unwrap();
    assert!(out.status.success());
    let got = String::from_utf8(out.stdout).unwrap();
    let path = support::repo().join(format!("tests/cli/{subcommand}_help.txt"));
    support::golden::assert_golden(&path, &got, "cargo test --test cli_help");
}

#[test]
fn build_help() {
    check("build");
}

#[test]
fn generate_help() {
    check("generate");
}

#[test]
fn doctor_help() {
    check("doctor");
}

#[test]
fn top_level_help() {
    check("begen");
}

#[test]
fn new_help() {
    check("new");
}

#[test]
fn tune_help() {
    check("tune");
}
