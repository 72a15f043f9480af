//! The library API the back half builds on: `begen::driver::run` fills
//! functions, options, half representations, sources and files_read.

use std::path::Path;

use begen::driver::Platform;

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name).join("input")
}

#[test]
fn functions_through_the_read_only_view() {
    let root = fixture("config_forms");
    let scan = begen::driver::run(&begen::driver::Settings::new(&root)).unwrap();
    assert!(!scan.has_errors(), "{:?}", scan.diagnostics);
    assert_eq!(scan.library.name(), "mykernels");
    let add_one = scan.library.functions().iter().find(|f| f.name() == "add_one").unwrap();
    assert_eq!(add_one.platform(), Platform::Cpu);
    assert_eq!((add_one.file(), add_one.target()), ("cpu.cpp", "mk.add_one"));
    assert_eq!(add_one.target(), format!("{}.{}", add_one.module(), add_one.name()));
    assert!(add_one.line() >= 1);
    let sub = scan.library.functions().iter().find(|f| f.name() == "sub_one").unwrap();
    assert_eq!(sub.arg_spec()[2], "attr.k:int32");
    for expected in ["begen.yaml", "cpu.cpp", "ops/add.cu", "inc/gen.h"] {
        assert!(scan.files_read.contains(&root.join(expected)), "{expected} not in {:?}", scan.files_read);
    }
    let json: serde_json::Value = serde_json::from_str(&scan.to_json()).unwrap();
    assert_eq!(json["functions"].as_array().map(Vec::len), Some(scan.library.functions().len()));
}

#[test]
fn unreadable_root_is_an_error() {
    assert!(begen::driver::run(&begen::driver::Settings::new("/nonexistent/begen/root")).is_err());
}

/// Collects the messages of the diagnostics a build reports.
#[derive(Default)]
struct Messages(Vec<String>);

impl begen::driver::Reporter for Messages {
    fn diagnostic(&mut self, d: &begen::diag::Diagnostic, _: &begen::diag::SourceMap) {
        if d.is_error() {
            self.0.push(d.message().to_string());
        }
    }
    fn progress(&mut self, _: &str) {}
    fn compiler_output(&mut self, _: &str, _: &str) {}
}

#[test]
fn a_library_name_python_cannot_import_is_an_error_when_building() {
    let mut settings = begen::driver::Settings::new(fixture("tensors"));
    settings.name = Some("lambda".into());
    let scan = begen::driver::run(&settings).unwrap();
    assert!(!scan.has_errors(), "a scan does not need a usable name");
    let out = std::env::temp_dir().join(format!("begen-scan-api-{}", std::process::id()));
    settings.out = Some(out.clone());
    let mut messages = Messages::default();
    let err = begen::driver::generate(&settings, &begen::driver::Env::new(), &mut messages).unwrap_err();
    assert_eq!(err.kind(), begen::ErrorKind::Diagnostics);
    assert!(
        messages.0.iter().any(|m| m.contains("the library name `lambda` (the given name) is not usable")),
        "{:?}",
        messages.0
    );
    assert!(!out.exists(), "nothing is written when the sources have errors");
}
