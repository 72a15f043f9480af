//! The `begen scan` command line: output formats, exit statuses, `--help`.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::scratch;

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
    let path = support::repo().join("tests/snapshots/scan_help.txt");
    support::golden::assert_golden(&path, &help, "cargo test --test cli");
}

#[test]
fn a_closed_stderr_is_not_a_panic() {
    // `begen scan DIR 2>&1 >/dev/null | head -1`: stderr closed early.
    let mut child = Command::new(env!("CARGO_BIN_EXE_begen"))
        .args(["scan", &fixture("err_tokens")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_ne!(status.code(), Some(101), "begen panicked");
    assert_eq!(status.code(), Some(1));
}

#[test]
fn generate_leaves_other_files_in_its_output_alone() {
    let out = scratch("generate_keeps");
    std::fs::create_dir_all(out.join("gen/sub")).unwrap();
    std::fs::write(out.join("gen/important.txt"), "x").unwrap();
    std::fs::write(out.join("gen/sub/kernel.cu"), "y").unwrap();
    // Named like begen's, but no record says this library wrote it.
    std::fs::write(out.join("gen/stale.cpp.begen.cc"), "old").unwrap();
    let done = begen(&["generate", &fixture("seed_examples"), "--out", out.to_str().unwrap(), "--name", "k"]);
    assert_eq!(done.status.code(), Some(0), "{}", String::from_utf8_lossy(&done.stderr));
    assert!(out.join("gen/important.txt").is_file() && out.join("gen/sub/kernel.cu").is_file());
    assert!(out.join("gen/stale.cpp.begen.cc").is_file(), "only what the record names is removed");
    assert!(out.join("gen/k.begen-files").is_file());
}

/// A kernel tree of one source `name`.cpp with kernel `kernel`.
fn one_kernel_tree(dir: &Path, name: &str, kernel: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join(format!("{name}.cpp")),
        format!(
            "#include \"brainevent/common.h\"\n// @BE {kernel}\nvoid {kernel}(const BE::Tensor x, BE::Tensor y) {{}}\n"
        ),
    )
    .unwrap();
}

#[test]
fn generate_removes_only_what_this_library_wrote_before() {
    let base = scratch("generate_two");
    let (one, two, out) = (base.join("one"), base.join("two"), base.join("out"));
    one_kernel_tree(&one, "a", "f");
    one_kernel_tree(&one, "b", "g");
    one_kernel_tree(&two, "c", "h");
    let generate = |dir: &Path, name: &str| {
        begen(&["generate", dir.to_str().unwrap(), "--out", out.to_str().unwrap(), "--name", name])
    };
    assert_eq!(generate(&one, "one").status.code(), Some(0));
    assert_eq!(generate(&two, "two").status.code(), Some(0));
    for f in ["gen/a.cpp.begen.cc", "gen/b.cpp.begen.cc", "gen/one.begen.cc", "one.py", "gen/c.cpp.begen.cc", "two.py"]
    {
        assert!(out.join(f).is_file(), "{f}: the second library removed the first's files");
    }
    // A source of `one` deleted: its wrapper goes, `two`'s files stay.
    std::fs::remove_file(one.join("b.cpp")).unwrap();
    assert_eq!(generate(&one, "one").status.code(), Some(0));
    assert!(!out.join("gen/b.cpp.begen.cc").exists());
    assert!(out.join("gen/a.cpp.begen.cc").is_file() && out.join("gen/c.cpp.begen.cc").is_file());
    // Two libraries whose wrappers would share a name: refused, naming both.
    one_kernel_tree(&two, "a", "k");
    let clash = generate(&two, "two");
    assert_eq!(clash.status.code(), Some(1));
    let err = String::from_utf8_lossy(&clash.stderr);
    assert!(
        err.contains("gen/a.cpp.begen.cc` is library one's generated file") && err.contains("library two"),
        "{err}"
    );
}

#[test]
fn a_library_named_like_a_module_jax_imports_at_start_up_is_refused() {
    // JAX imports `jax_plugins` and looks for its GPU and TPU plugins by
    // top-level name when it starts: a module of that name first on
    // `sys.path` would be imported in their place.
    let base = scratch("jax_startup_names");
    let (dir, out) = (base.join("k"), base.join("out"));
    one_kernel_tree(&dir, "a", "f");
    for name in ["jax_plugins", "jax_cuda12_plugin", "libtpu"] {
        let done = begen(&["generate", dir.to_str().unwrap(), "--out", out.to_str().unwrap(), "--name", name]);
        assert_eq!(done.status.code(), Some(1), "{name}");
        let err = String::from_utf8_lossy(&done.stderr);
        assert!(err.contains(&format!("the library name `{name}` (the given name) is not usable")), "{err}");
        assert!(!out.join(format!("{name}.py")).exists(), "{name}: nothing written");
    }
}

#[test]
fn an_output_begen_did_not_write_is_refused() {
    let base = scratch("foreign_output");
    let (dir, out) = (base.join("k"), base.join("out"));
    one_kernel_tree(&dir, "a", "f");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("setup.py"), "from setuptools import setup\nsetup()\n").unwrap();
    let generate =
        |name: &str| begen(&["generate", dir.to_str().unwrap(), "--out", out.to_str().unwrap(), "--name", name]);
    let done = generate("setup");
    assert_eq!(done.status.code(), Some(1));
    let err = String::from_utf8_lossy(&done.stderr);
    assert!(err.contains("setup.py` is in the way") && err.contains("begen did not write it"), "{err}");
    assert_eq!(std::fs::read_to_string(out.join("setup.py")).unwrap(), "from setuptools import setup\nsetup()\n");
    assert!(!out.join("gen").exists(), "nothing written");
    // begen's own outputs are replaced: generate twice.
    assert_eq!(generate("k").status.code(), Some(0));
    std::fs::write(dir.join("a.cpp"), std::fs::read_to_string(dir.join("a.cpp")).unwrap() + "// edited\n").unwrap();
    assert_eq!(generate("k").status.code(), Some(0));
    // A directory where the manifest goes.
    let out2 = base.join("out2");
    std::fs::create_dir_all(out2.join("k.yaml")).unwrap();
    let err = begen(&["generate", dir.to_str().unwrap(), "--out", out2.to_str().unwrap(), "--name", "k"]);
    assert!(
        String::from_utf8_lossy(&err.stderr).contains("it is not a file"),
        "{}",
        String::from_utf8_lossy(&err.stderr)
    );
}

#[test]
fn an_output_that_is_an_input_is_refused() {
    let dir = scratch("output_is_input");
    std::fs::write(dir.join("begen.yaml"), "prefix: mine\n").unwrap();
    std::fs::write(
        dir.join("k.cpp"),
        "#include \"brainevent/common.h\"\n// @BE f\nvoid f(const BE::Tensor x, BE::Tensor y) {}\n",
    )
    .unwrap();
    let d = dir.to_str().unwrap();
    let done = begen(&["generate", d, "--out", d, "--name", "begen"]);
    assert_eq!(done.status.code(), Some(1));
    let err = String::from_utf8_lossy(&done.stderr);
    assert!(err.contains("which begen reads as input"), "{err}");
    assert_eq!(std::fs::read_to_string(dir.join("begen.yaml")).unwrap(), "prefix: mine\n");
}

#[cfg(unix)]
#[test]
fn a_link_out_of_the_root_is_not_followed() {
    let dir = scratch("link_out");
    std::fs::write(
        dir.join("k.cpp"),
        "#include \"brainevent/common.h\"\n// @BE f\nvoid f(const BE::Tensor x, BE::Tensor y) {}\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("/", dir.join("everything")).unwrap();
    let out = begen(&["scan", dir.to_str().unwrap(), "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["functions"].as_array().unwrap().len(), 1);
    let d = &doc["diagnostics"][0];
    assert_eq!(d["severity"], "warning");
    assert_eq!(d["file"], "everything");
    assert!(d["message"].as_str().unwrap().contains("outside the kernel directory"), "{d}");
}

#[cfg(unix)]
#[test]
fn a_fifo_named_like_a_source_is_said_and_not_read() {
    let dir = scratch("fifo");
    std::fs::write(
        dir.join("k.cpp"),
        "#include \"brainevent/common.h\"\n// @BE f\nvoid f(const BE::Tensor x, BE::Tensor y) {}\n",
    )
    .unwrap();
    let made = Command::new("mkfifo").arg(dir.join("pipe.cu")).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("no mkfifo here; skipped");
        return;
    }
    let out = begen(&["scan", dir.to_str().unwrap(), "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["functions"].as_array().unwrap().len(), 1);
    assert_eq!(doc["diagnostics"][0]["file"], "pipe.cu");
    assert!(doc["diagnostics"][0]["message"].as_str().unwrap().contains("not a regular file"), "{doc}");
}

#[test]
fn building_an_empty_directory_warns() {
    let dir = scratch("empty_build");
    let out = scratch("empty_build_out");
    let done = begen(&["generate", dir.to_str().unwrap(), "--out", out.to_str().unwrap(), "--name", "k"]);
    assert_eq!(done.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&done.stderr).contains("no annotated function was found"));
}

#[test]
fn a_library_whose_only_kernel_fails_says_why_and_not_that_none_was_found() {
    // The kernel's error is the news: "no annotated function was found"
    // after it would say the annotation was not seen.
    let dir = scratch("failed_single");
    std::fs::write(
        dir.join("k.cpp"),
        "#include \"brainevent/common.h\"\n// @BE f arg:flaot32[n] ret\nvoid f(const float* x, BE::Tensor y) {}\n",
    )
    .unwrap();
    let out = scratch("failed_single_out");
    let done = begen(&["generate", dir.to_str().unwrap(), "--out", out.to_str().unwrap(), "--name", "k"]);
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("error"), "{stderr}");
    assert!(!stderr.contains("no annotated function was found"), "{stderr}");
}

#[test]
fn doctor_fails_on_a_compiler_that_does_not_run_or_a_bad_arch() {
    let run = |env: (&str, &str), args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_begen")).arg("doctor").args(args).env(env.0, env.1).output().unwrap()
    };
    let no_cxx = run(("CXX", "/nonexistent/c++"), &[]);
    assert_eq!(no_cxx.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&no_cxx.stdout).contains("`/nonexistent/c++` does not run"));
    let bad_arch = run(("NO_COLOR", "1"), &["--arch", "sm_x"]);
    assert_eq!(bad_arch.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad_arch.stdout).contains("`sm_x` is not a CUDA architecture"));
}

/// Output hygiene: terminal escape sequences and other controls
/// written in annotations and begen.yaml (`fixtures/err_escapes`) reach no
/// output raw, in the message, the snippet or a label, as text or JSON, with
/// or without colour.
#[test]
fn control_characters_in_the_input_never_reach_the_terminal() {
    let dir = fixture("err_escapes");
    let raw = |c: char| c.is_control() && !matches!(c, '\n' | '\t') || matches!(c, '\u{202a}'..='\u{202e}');
    for format in ["table", "json"] {
        let out = begen(&["scan", &dir, "--format", format]);
        assert_eq!(out.status.code(), Some(1));
        for stream in [&out.stdout, &out.stderr] {
            let text = String::from_utf8(stream.clone()).unwrap();
            assert!(!text.chars().any(raw), "{format}: {text:?}");
        }
        if format == "table" {
            let text = String::from_utf8(out.stderr).unwrap();
            assert!(text.contains("error: unknown arg_spec token `arg\\u{1b}[2K\\u{1b}[1A ret`"), "{text}");
            assert!(text.contains("// @BE tok arg\u{241b}[2K\u{241b}[1A ret"), "{text}");
        }
    }
    // With colour, the only escapes are the renderer's own colour codes
    // (`ESC [ ... m`), never the input's `ESC [2K` or `ESC [1A`.
    let scan = begen::driver::run(&begen::driver::Settings::new(&dir)).unwrap();
    for d in &scan.diagnostics {
        let text = begen::diag::render::render_text(d, &scan.sources, true);
        assert!(!text.contains("\x1b[2K") && !text.contains("\x1b[1A") && !text.contains("\x1b[31m"), "{text:?}");
        let stripped: String = text
            .split('\x1b')
            .enumerate()
            .map(|(k, s)| if k == 0 { s } else { s.split_once('m').map_or(s, |(_, r)| r) })
            .collect();
        assert!(!stripped.chars().any(raw), "{stripped:?}");
    }
}

/// A `BEGEN_PYTHON` that never exits, or writes without end, does not
/// hang `begen doctor` and `begen build`: the probe is stopped after
/// `BEGEN_PROBE_TIMEOUT` seconds or a mebibyte, and the message names it.
#[cfg(unix)]
#[test]
fn a_python_that_hangs_or_floods_is_stopped() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("cli-python-probe");
    let out_dir = dir.join("out");
    for (name, body, says) in [
        ("hangs", "exec sleep 1000", "did not answer within 1 s and was stopped (BEGEN_PROBE_TIMEOUT"),
        ("floods", "exec yes", "wrote more than 1048576 bytes and was stopped"),
    ] {
        let python = dir.join(name);
        std::fs::write(&python, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
        for args in [vec!["doctor"], vec!["build", &fixture("seed_examples"), "--out", out_dir.to_str().unwrap()]] {
            let start = std::time::Instant::now();
            let out = Command::new(env!("CARGO_BIN_EXE_begen"))
                .args(&args)
                .env("NO_COLOR", "1")
                .env("BEGEN_PYTHON", &python)
                .env("BEGEN_PROBE_TIMEOUT", "1")
                .env_remove("XLA_FFI_INCLUDE_DIR")
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
            // A hang catcher only: the 1 s limit is what the message says.
            assert!(start.elapsed().as_secs() < 300, "{args:?}: {:?}", start.elapsed());
            assert_eq!(out.status.code(), Some(1), "{args:?}: {text}");
            let named = format!("`{}` {says}", python.display());
            assert!(text.contains(&named), "{args:?}: {text}");
        }
    }
}

/// A per-user cache holding "jaxlib 0.10.2's" headers (API 0.3), so that
/// `--jax-min 0.10.2` needs no network.
fn jaxlib_cache(name: &str) -> PathBuf {
    let cache = scratch(name);
    let api = cache.join("begen/jaxlib-0.10.2/include/xla/ffi/api");
    std::fs::create_dir_all(&api).unwrap();
    std::fs::write(api.join("ffi.h"), "").unwrap();
    std::fs::write(api.join("c_api.h"), "#define XLA_FFI_API_MAJOR 0\n#define XLA_FFI_API_MINOR 3\n").unwrap();
    cache
}

#[test]
fn jax_min_takes_that_jaxlibs_headers_and_the_manifest_says_so() {
    let cache = jaxlib_cache("jax_min_cache");
    let out = scratch("jax_min_out");
    let dir = fixture("seed_examples");
    let run = |extra: &[&str]| {
        let mut args = vec!["generate", dir.as_str(), "--out", out.to_str().unwrap(), "--name", "k"];
        args.extend_from_slice(extra);
        Command::new(env!("CARGO_BIN_EXE_begen")).args(&args).env("XDG_CACHE_HOME", &cache).output().unwrap()
    };
    let done = run(&["--jax-min", "0.10.2"]);
    assert_eq!(done.status.code(), Some(0), "{}", String::from_utf8_lossy(&done.stderr));
    let manifest = std::fs::read_to_string(out.join("k.yaml")).unwrap();
    assert!(manifest.contains("xla_ffi_api_version: '0.3'\njax_min: 0.10.2\n"), "{manifest}");
    let doctor = Command::new(env!("CARGO_BIN_EXE_begen"))
        .args(["doctor", "--jax-min", "0.10.2"])
        .env("XDG_CACHE_HOME", &cache)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(text.contains("XLA FFI API 0.3 from jaxlib 0.10.2's headers"), "{text}");
    assert!(text.contains(": jax 0.10.2 and newer"), "{text}");
    // Not a release number: an error, nothing generated.
    let done = run(&["--jax-min", "0.10;x"]);
    assert_eq!(done.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(stderr.contains("jax_min `0.10;x` is not a jax release number"), "{stderr}");
    // A release number outside the supported range: an error naming it.
    for version in ["99.0", "0.4.1", "1.0"] {
        let done = run(&["--jax-min", version]);
        assert_eq!(done.status.code(), Some(1), "{version}");
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert!(stderr.contains(&format!("jax_min `{version}` is not a jax release begen supports: it builds for jax 0.10.2 and newer releases below 1.0")), "{stderr}");
    }
}

#[test]
fn prefix_sets_the_ffi_targets_over_begen_yaml() {
    let base = scratch("prefix_flag");
    let (dir, out) = (base.join("k"), base.join("out"));
    one_kernel_tree(&dir, "a", "f");
    std::fs::write(dir.join("begen.yaml"), "prefix: fromyaml\n").unwrap();
    let generate = |prefix: &str| {
        let d = dir.to_str().unwrap();
        begen(&["generate", d, "--out", out.to_str().unwrap(), "--name", "_kernels", "--prefix", prefix])
    };
    let done = generate("mypkg._kernels");
    assert_eq!(done.status.code(), Some(0), "{}", String::from_utf8_lossy(&done.stderr));
    let module = std::fs::read_to_string(out.join("_kernels.py")).unwrap();
    assert!(module.contains("\"f\": \"mypkg._kernels.f\""), "{module}");
    let bad = generate("my-pkg");
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("prefix `my-pkg` must be C++ identifiers joined by dots"));
}

#[test]
fn new_writes_a_package_and_overwrites_nothing() {
    let base = scratch("new_package");
    let dir = base.join("my-kernels");
    let made = begen(&["new", dir.to_str().unwrap(), "--cuda"]);
    assert_eq!(made.status.code(), Some(0), "{}", String::from_utf8_lossy(&made.stderr));
    for f in [
        "pyproject.toml",
        "README.md",
        ".gitignore",
        "kernels/begen.yaml",
        "kernels/square.cpp",
        "kernels/square_cuda.cu",
        "src/my_kernels/__init__.py",
        "tests/test_package.py",
    ] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(!text.contains("{{"), "{f} has an unfilled placeholder:\n{text}");
    }
    let pyproject = std::fs::read_to_string(dir.join("pyproject.toml")).unwrap();
    assert!(pyproject.contains("packages = [\"src/my_kernels\"]") && pyproject.contains("name = \"my-kernels\""));
    // The scaffold's kernels check out.
    let scan = begen(&["scan", dir.join("kernels").to_str().unwrap(), "--format", "json"]);
    assert_eq!(scan.status.code(), Some(0), "{}", String::from_utf8_lossy(&scan.stdout));
    // A second time, or a bad package name: refused, nothing written.
    std::fs::write(dir.join("kernels/square.cpp"), "mine").unwrap();
    let again = begen(&["new", dir.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists and is not an empty folder"));
    assert_eq!(std::fs::read_to_string(dir.join("kernels/square.cpp")).unwrap(), "mine");
    let bad = begen(&["new", base.join("class").to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not a usable Python package name"));
    assert!(!base.join("class").exists());
}

/// `begen new --package NAME` refuses every kind of name that would hide a
/// module (its wheel installed would replace it): Python's standard library
/// as the Python asked says, and from the built-in lists when none
/// answers; begen's own modules; JAX's and the generated code's imports;
/// anything importable in the environment. Each with a free name offered,
/// and nothing written.
#[test]
fn new_refuses_package_names_that_shadow_a_module() {
    let base = scratch("new_shadow");
    // Importable in the environment: two packages on PYTHONPATH.
    let site = base.join("site");
    for m in ["zz_mine", "jax_kernels"] {
        std::fs::create_dir_all(site.join(m)).unwrap();
        std::fs::write(site.join(m).join("__init__.py"), "").unwrap();
    }
    // The test's switch: the Python env.sh chose, else python3.
    #[allow(clippy::disallowed_methods)]
    let python = std::env::var("BEGEN_PYTHON").unwrap_or_else(|_| "python3".into());
    let new = |name: &str, python: &str| {
        let dir = base.join("p");
        let out = Command::new(env!("CARGO_BIN_EXE_begen"))
            .args(["new", dir.to_str().unwrap(), "--package", name])
            .env("NO_COLOR", "1")
            .env("BEGEN_PYTHON", python)
            .env("PYTHONPATH", &site)
            .output()
            .unwrap();
        let made = dir.exists();
        let _ = std::fs::remove_dir_all(&dir);
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned(), made)
    };
    let stdlib = "a module of Python's standard library";
    let imports = "a module that Python, JAX or the generated code imports";
    let cases: &[(&str, &str, &str)] = &[
        ("os", stdlib, "os_kernels"),
        ("typing", stdlib, "typing_kernels"),
        ("site", stdlib, "site_kernels"),
        ("builtins", stdlib, "builtins_kernels"),
        ("test", "a package of Python's standard library", "test_kernels"),
        ("begen", "one of begen's own modules", "begen_kernels"),
        ("begen_runtime", "one of begen's own modules", "begen_runtime_kernels"),
        ("jax", imports, "my_jax"), // jax_kernels is taken (on PYTHONPATH)
        ("numpy", imports, "numpy_kernels"),
        ("jax_plugins", imports, "jax_plugins_kernels"),
        ("zz_mine", "importable in this environment already", "zz_mine_kernels"),
    ];
    for (name, why, free) in cases {
        let (code, text, made) = new(name, &python);
        assert_eq!(code, Some(2), "{name}: {text}");
        assert!(text.contains(&format!("`{name}` (--package) is {why}")), "{name}: {text}");
        assert!(text.contains(&format!("did you mean `--package {free}`?")), "{name}: {text}");
        assert!(!made, "{name}: something was written");
    }
    // No Python answers: the built-in lists still refuse.
    for name in ["site", "test", "begen", "jax", "typing"] {
        let (code, text, made) = new(name, "/nonexistent/python");
        assert!(code == Some(2) && !made, "{name}: {text}");
    }
    // A free name is fine.
    let (code, text, _) = new("zz_free_name", &python);
    assert_eq!(code, Some(0), "{text}");
    std::fs::remove_dir_all(&base).unwrap();
}

/// `--config FILE`: two configurations over one kernel directory, each read
/// instead of DIR/begen.yaml (generated under its own name), its errors
/// located in it; a missing file is a usage error.
#[test]
fn config_names_another_begen_yaml() {
    let base = scratch("config_routes");
    let (dir, out) = (base.join("k"), base.join("out"));
    one_kernel_tree(&dir, "a", "scale");
    std::fs::write(dir.join("begen.yaml"), "name: plain\n").unwrap();
    std::fs::write(base.join("route.yaml"), "name: routed\nfunctions:\n  scale: {vmap_method: broadcast_all}\n")
        .unwrap();
    std::fs::write(dir.join("bad.yaml"), "name: bad\nfunctions:\n  scal: {vmap_method: sequential}\n").unwrap();
    let (d, o) = (dir.to_str().unwrap(), out.to_str().unwrap());
    let route = base.join("route.yaml");
    let done = begen(&["generate", d, "--out", o, "--config", route.to_str().unwrap()]);
    assert_eq!(done.status.code(), Some(0), "{}", String::from_utf8_lossy(&done.stderr));
    let module = std::fs::read_to_string(out.join("routed.py")).unwrap();
    assert!(module.contains("broadcast_all"), "the route's options are the ones read");
    assert!(!out.join("plain.py").exists());
    let plain = base.join("plain");
    assert_eq!(begen(&["generate", d, "--out", plain.to_str().unwrap()]).status.code(), Some(0));
    assert!(plain.join("plain.py").is_file(), "without --config, DIR/begen.yaml");
    // An error in the named file is located in it, by its name under DIR.
    let bad = begen(&["scan", d, "--config", dir.join("bad.yaml").to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(1));
    let stderr = String::from_utf8(bad.stderr).unwrap();
    assert!(stderr.contains(" --> bad.yaml:3:3\n") && stderr.contains("did you mean `scale`?"), "{stderr}");
    let json = begen(&["scan", d, "--format", "json", "--config", dir.join("bad.yaml").to_str().unwrap()]);
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["diagnostics"][0]["file"], "bad.yaml");
    let missing = begen(&["build", d, "--out", o, "--config", "/nonexistent/route.yaml"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8(missing.stderr).unwrap().contains("/nonexistent/route.yaml: no such file (--config)"));
}
