//! The `begen scan` command line: output formats, exit statuses, `--help`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn begen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_begen")).args(args).env("NO_COLOR", "1").output().unwrap()
}

fn fixture(name: &str) -> String {
    let p: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name).join("input");
    p.to_string_lossy().into_owned()
}

#[test]
fn json_clean_exits_zero() {
    let out = begen(&["scan", &fixture("seed_examples"), "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let first = &doc["functions"][0];
    assert_eq!(first["name"], "add_one");
    assert_eq!(first["file"], "cpu.cpp");
    assert_eq!(first["platform"], "cpu");
    assert_eq!(first["arg_spec"], serde_json::json!(["arg", "ret"]));
    // Field order is part of the contract.
    let text = String::from_utf8(out.stdout).unwrap();
    let pos = |k: &str| text.find(&format!("\"{k}\"")).unwrap();
    assert!(pos("functions") < pos("name") && pos("name") < pos("file") && pos("file") < pos("line"));
    assert!(pos("line") < pos("platform") && pos("platform") < pos("arg_spec") && pos("arg_spec") < pos("diagnostics"));
}

#[test]
fn errors_exit_one_and_still_print_the_document() {
    let out = begen(&["scan", &fixture("err_no_output"), "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = &doc["diagnostics"][0];
    assert_eq!(d["severity"], "error");
    assert_eq!((d["file"].as_str(), d["line"].as_u64(), d["column"].as_u64()), (Some("a.cu"), Some(3), Some(8)));
    assert!(d["message"].as_str().unwrap().starts_with("No non-const Tensor output found in 'my_func'."));
}

#[test]
fn warnings_only_exit_zero() {
    let out = begen(&["scan", &fixture("lookalikes"), "--format", "yaml"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("functions:\n- name: real_one\n"), "{text}");
}

#[test]
fn table_renders_diagnostics_on_stderr() {
    let out = begen(&["scan", &fixture("err_indirect")]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("error: parameter 'alpha' of 'pointer_attr' is a pointer or reference"));
    assert!(stderr.contains(" --> a.cu:4:53\n"));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.starts_with("FUNCTION"));
}

#[test]
fn missing_dir_and_bad_usage_exit_two() {
    let out = begen(&["scan", "/nonexistent/begen/dir", "--format", "json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("/nonexistent/begen/dir"));
    assert_eq!(begen(&["scan"]).status.code(), Some(2));
    assert_eq!(begen(&["scan", ".", "--format", "xml"]).status.code(), Some(2));
}

/// `begen scan --help` is pinned; `BEGEN_BLESS=1` rewrites the snapshot.
#[test]
fn scan_help_is_pinned() {
    let out = begen(&["scan", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8(out.stdout).unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/scan_help.txt");
    if std::env::var_os("BEGEN_BLESS").is_some() {
        std::fs::write(&path, &help).unwrap();
    }
    assert_eq!(help, std::fs::read_to_string(&path).unwrap_or_default());
}
