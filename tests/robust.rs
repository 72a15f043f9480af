//! begen never panics on user input: arbitrary bytes, near-C++ text,
//! unreadable files and symlink loops all become diagnostics.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;

/// A fresh, empty directory under the system temp dir.
fn temp_dir(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "begen-robust-{}-{tag}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn scan_bytes(name: &str, bytes: &[u8]) -> begen::driver::Run {
    let dir = temp_dir("prop");
    std::fs::write(dir.join(name), bytes).unwrap();
    let scan = begen::driver::run(&begen::driver::Settings::new(&dir)).expect("the root is readable");
    // Rendering reads the file back for snippets: it must not panic either.
    for d in &scan.diagnostics {
        let _ = begen::diag::render::render_text(d, &scan.sources, true);
        let _ = begen::diag::render::render_cargo(d, &scan.sources);
    }
    let _ = scan.to_json();
    std::fs::remove_dir_all(&dir).unwrap();
    scan
}

/// Pieces of C++ and CUDA that stress the lexer, the item splitter, the
/// macro expander and the signature parser when glued together at random.
const FRAGMENTS: &[&str] = &[
    "// @BE f",
    "// @BE f arg ret",
    "//@BE g attr.x:float16",
    "// @BE",
    "// @BEx",
    "\n",
    "\r\n",
    " ",
    "void f(",
    "void g(",
    "const BE::Tensor x",
    "BE::Tensor y",
    "BE::Tensor const& z",
    "int64_t stream",
    "float a",
    "__half h",
    "float* p",
    "T t",
    ",",
    "(",
    ")",
    "{",
    "}",
    ";",
    "<<<1,1>>>",
    "\"",
    "'",
    "/*",
    "*/",
    "R\"x(",
    ")x\"",
    "\\\n",
    "#define M(N, T) void N##_k(const BE::Tensor x, BE::Tensor y, T v)",
    "#define M(a) M(a) a",
    "#define S(x) #x",
    "M(f, float)",
    "M(",
    "#include \"a.cu\"",
    "#include \"",
    "template <typename T>",
    "__global__",
    "...",
    "##",
    "#",
    "é",
    "\u{0}",
    "\u{ff}",
    "= {1, 2}",
    "1'000",
    "attr.",
    "args",
    "ctx.stream",
    "extern \"C\" {",
    "[[nodiscard]]",
    "::",
    "<",
    ">",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        scan_bytes("a.cu", &bytes);
    }

    #[test]
    fn near_cpp_never_panics(parts in proptest::collection::vec(proptest::sample::select(FRAGMENTS), 0..80)) {
        let text = parts.concat();
        scan_bytes("a.cu", text.as_bytes());
        scan_bytes("b.cpp", text.as_bytes());
    }

    #[test]
    fn macro_expansion_terminates(body in "[A-Za-z_ #(),]{0,60}", call in "[A-Za-z_ #(),]{0,40}") {
        // Through the whole pipeline: the annotated item is the invocation.
        let src = format!("#define A(x, ...) {body}\n#define B A(B, A) A\n// @BE f\n{call}\n");
        scan_bytes("m.cu", src.as_bytes());
    }
}

#[test]
fn exponential_macros_are_bounded() {
    let mut src = String::from("#define X0 void f(const BE::Tensor x, BE::Tensor y)\n");
    for i in 1..40 {
        src.push_str(&format!("#define X{i} X{} X{}\n", i - 1, i - 1));
    }
    src.push_str("// @BE f\nX39\n");
    let scan = scan_bytes("a.cu", src.as_bytes());
    assert!(scan.library.functions().is_empty());
}

#[test]
fn deeply_nested_signature() {
    let src = format!("// @BE f\nvoid f({}int x{}) {{}}\n", "(".repeat(20000), ")".repeat(20000));
    let scan = scan_bytes("a.cu", src.as_bytes());
    assert!(scan.has_errors());
}

#[test]
fn empty_binary_and_non_utf8_files() {
    let dir = temp_dir("files");
    std::fs::write(dir.join("empty.cu"), b"").unwrap();
    std::fs::write(dir.join("bin.cu"), b"\x00\x01// @BE f\n").unwrap();
    std::fs::write(dir.join("latin.cpp"), b"// \xe9\n// @BE f\nvoid f(const BE::Tensor x, BE::Tensor y) {}\n").unwrap();
    let scan = begen::driver::run(&begen::driver::Settings::new(&dir)).unwrap();
    let files: Vec<&str> = scan.diagnostics.iter().map(|d| d.location(&scan.sources).0).collect();
    assert_eq!(files, vec!["bin.cu", "empty.cu", "latin.cpp"]);
    assert_eq!(scan.library.functions().len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn symlink_loops_are_reported_not_followed() {
    let dir = temp_dir("loop");
    std::fs::create_dir(dir.join("sub")).unwrap();
    std::os::unix::fs::symlink(&dir, dir.join("sub/back")).unwrap();
    std::os::unix::fs::symlink(dir.join("sub/self"), dir.join("sub/self")).unwrap();
    std::fs::write(dir.join("sub/k.cu"), b"// @BE k\nvoid k(const BE::Tensor x, BE::Tensor y) {}\n").unwrap();
    let scan = begen::driver::run(&begen::driver::Settings::new(&dir)).unwrap();
    assert_eq!(scan.library.functions().len(), 1);
    let messages: Vec<String> =
        scan.diagnostics.iter().map(|d| format!("{}: {}", d.location(&scan.sources).0, d.message())).collect();
    assert!(messages.iter().any(|m| m.starts_with("sub/back: ") && m.contains("loop")), "{messages:?}");
    assert!(messages.iter().any(|m| m.starts_with("sub/self: ")), "{messages:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A source that exists but cannot be read is an error diagnostic naming it,
/// and the scan goes on.
#[cfg(target_os = "linux")]
#[test]
fn unreadable_files_are_diagnosed() {
    let dir = temp_dir("unreadable");
    // Readable as a regular file to `stat`, but `read` fails with EIO, even for root.
    std::os::unix::fs::symlink("/proc/self/mem", dir.join("mem.cu")).unwrap();
    std::fs::write(dir.join("ok.cu"), b"// @BE k\nvoid k(const BE::Tensor x, BE::Tensor y) {}\n").unwrap();
    let scan = begen::driver::run(&begen::driver::Settings::new(&dir)).unwrap();
    assert_eq!(scan.library.functions().len(), 1);
    let d = scan.diagnostics.iter().find(|d| d.location(&scan.sources).0 == "mem.cu").expect("a diagnostic for mem.cu");
    assert!(d.is_error() && d.message().starts_with("cannot read this file"), "{d:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn root_that_is_a_file_is_an_error() {
    let dir = temp_dir("rootfile");
    let file = dir.join("x.cu");
    std::fs::write(&file, b"").unwrap();
    assert!(begen::driver::run(&begen::driver::Settings::new(&file)).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Found by tests/fuzz.rs: a diagnostic whose span is cut at a fixed width
/// (80 bytes of a declaration that is not one) ended inside a multi-byte
/// character, and the renderer panicked. Every cut position is tried.
#[test]
fn spans_ending_inside_a_character_render() {
    for pad in 0..4 {
        let text = format!("// @BE add\nvoid add]({}int64\u{202e}_t é ｘ stream) {{}}\n", "a".repeat(60 + pad));
        let scan = scan_bytes("k.cpp", text.as_bytes());
        assert!(scan.has_errors(), "{text}");
    }
}

/// A launch expression of 100,000 `+1` terms (a flat chain: parentheses are
/// bounded, chains once were not, and overflowed the stack) is an error.
#[test]
fn long_launch_expressions_are_refused() {
    let dir = temp_dir("launch");
    std::fs::write(
        dir.join("k.ptx"),
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 x)\n{ ret; }\n",
    )
    .unwrap();
    let chain = format!("1{}", "+1".repeat(100_000));
    let yaml = format!(
        "name: m\nbinaries:\n  - file: k.ptx\n    convention: c\n    kernels:\n      k:\n        params: [\"ret:float32[8]\"]\n        grid: [\"{chain}\"]\n        block: [1]\n"
    );
    std::fs::write(dir.join("begen.yaml"), yaml).unwrap();
    let scan = begen::driver::run(&begen::driver::Settings::new(&dir)).unwrap();
    assert!(
        scan.diagnostics.iter().any(|d| d.is_error() && d.message().contains("at most 256 operators")),
        "{:?}",
        scan.diagnostics.iter().map(|d| d.message()).collect::<Vec<_>>()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `begen.yaml` nesting flow collections 200,000 deep (the YAML parser is
/// quadratic in the depth) is refused at once, located.
#[test]
fn deep_yaml_nesting_is_refused_quickly() {
    let dir = temp_dir("deepyaml");
    std::fs::write(dir.join("begen.yaml"), format!("name: {}", "[".repeat(200_000))).unwrap();
    let start = std::time::Instant::now();
    let scan = begen::driver::run(&begen::driver::Settings::new(&dir)).unwrap();
    // A hang catcher only (a debug build on a loaded machine takes a few
    // seconds): the bound is the refusal, which the depth error shows.
    assert!(start.elapsed().as_secs() < 120, "{:?}", start.elapsed());
    let d = scan.diagnostics.iter().find(|d| d.message().contains("nested more than 64 deep")).expect("a depth error");
    assert!(d.is_error());
    let (file, line, col) = d.location(&scan.sources);
    assert_eq!((file, line, col), ("begen.yaml", 1, 71), "{}", d.message());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An `#include` of a FIFO in the tree, or of a device (`/dev/zero`), is
/// refused before anything compiles (the compile would block on it), with
/// a message naming the include and the file; the scan itself never opens it.
#[cfg(unix)]
#[test]
fn includes_of_fifos_and_devices_are_refused() {
    let dir = temp_dir("fifo");
    let made = std::process::Command::new("mkfifo").arg(dir.join("pipe.h")).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    let kernel = |inc: &str| format!("#include \"{inc}\"\n// @BE k\nvoid k(const BE::Tensor x, BE::Tensor y) {{}}\n");
    for (inc, named) in [("pipe.h", dir.join("pipe.h").display().to_string()), ("/dev/zero", "/dev/zero".into())] {
        std::fs::write(dir.join("k.cpp"), kernel(inc)).unwrap();
        let scan = begen::driver::run(&begen::driver::Settings::new(&dir)).unwrap();
        let want = format!("`#include \"{inc}\"` names `{named}`, which is not a regular file");
        let d = scan.diagnostics.iter().find(|d| d.message().starts_with(&want));
        let all: Vec<_> = scan.diagnostics.iter().map(|d| d.message()).collect();
        let d = d.unwrap_or_else(|| panic!("{all:?}"));
        assert!(d.is_error());
        assert_eq!(d.location(&scan.sources).0, "k.cpp");
        assert_eq!(d.location(&scan.sources).1, 1);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Equal keys in any map of begen.yaml are refused (the typed reading
/// alone would keep the last), located at their map.
#[test]
fn duplicate_keys_are_refused_at_every_level() {
    let dir = temp_dir("dupkeys");
    std::fs::write(dir.join("k.cpp"), "// @BE f attr.a\nvoid f(const BE::Tensor x, BE::Tensor y, float a) {}\n")
        .unwrap();
    for (yaml, says, line) in [
        (
            "functions:\n  f: {command_buffer: true}\n  f: {command_buffer: false}\n",
            "functions: duplicate entry with key \"f\"",
            2,
        ),
        ("functions:\n  f: {unsupported: {a: [1.0], a: [2.0]}}\n", "duplicate entry with key \"a\"", 2),
        ("structs: {S: [a:int32], S: [b:int32]}\n", "structs: duplicate entry with key \"S\"", 1),
        ("variants:\n  k.cpp: [{module: v, defines: {A: 1, A: 2}}]\n", "duplicate entry with key \"A\"", 2),
    ] {
        std::fs::write(dir.join("begen.yaml"), yaml).unwrap();
        let scan = begen::driver::run(&begen::driver::Settings::new(&dir)).unwrap();
        let all: Vec<_> = scan.diagnostics.iter().map(|d| d.message().to_string()).collect();
        let d =
            scan.diagnostics.iter().find(|d| d.message().contains(says)).unwrap_or_else(|| panic!("{yaml}: {all:?}"));
        assert!(d.is_error() && d.message().starts_with("invalid begen.yaml: "), "{}", d.message());
        assert_eq!(d.location(&scan.sources).0, "begen.yaml");
        assert_eq!(d.location(&scan.sources).1, line, "{yaml}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A begen.yaml that is a directory, a FIFO or a device is an error that
/// says so, and is never read.
#[cfg(unix)]
#[test]
fn a_begen_yaml_that_is_not_a_file_is_said_so() {
    let dir = temp_dir("yamlkind");
    std::fs::write(dir.join("k.cpp"), "// @BE f\nvoid f(const BE::Tensor x, BE::Tensor y) {}\n").unwrap();
    let yaml = dir.join("begen.yaml");
    let make: [(&str, &dyn Fn()); 3] = [
        ("a directory", &|| std::fs::create_dir(&yaml).unwrap()),
        ("a FIFO", &|| assert!(std::process::Command::new("mkfifo").arg(&yaml).status().unwrap().success())),
        ("/dev/zero", &|| std::os::unix::fs::symlink("/dev/zero", &yaml).unwrap()),
    ];
    for (what, make) in make {
        make();
        let scan = begen::driver::run(&begen::driver::Settings::new(&dir)).unwrap();
        let d = scan.diagnostics.iter().find(|d| d.message().starts_with("begen.yaml is not a regular file"));
        let d = d.unwrap_or_else(|| {
            panic!("{what}: {:?}", scan.diagnostics.iter().map(|d| d.message()).collect::<Vec<_>>())
        });
        assert!(d.is_error(), "{what}");
        let _ = std::fs::remove_dir(&yaml).or_else(|_| std::fs::remove_file(&yaml));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `structs:` that grow exponentially (each level two of the one below),
/// a chain of 8,000 nested structs declared innermost last and one struct
/// of 100,000 members are laid out or refused at once (a layout that copies
/// nested members, or searches for the next ready struct, is exponential,
/// cubic or quadratic on them); a struct over CUDA's 4 KB of parameters is
/// an error naming it.
#[test]
fn hostile_structs_are_bounded_and_fast() {
    let run = |tag: &str, structs: String, param: &str| {
        let dir = temp_dir(tag);
        std::fs::write(
            dir.join("k.ptx"),
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 x)\n{ ret; }\n",
        )
        .unwrap();
        let yaml = format!(
            "name: m\nstructs:\n{structs}binaries:\n  - file: k.ptx\n    convention: c\n    kernels:\n      k:\n        params: [\"{param}\", \"ret:float32[8]\"]\n        grid: [1]\n        block: [1]\n"
        );
        std::fs::write(dir.join("begen.yaml"), yaml).unwrap();
        let start = std::time::Instant::now();
        let scan = begen::driver::run(&begen::driver::Settings::new(&dir)).unwrap();
        // A hang catcher only: a debug build on a loaded machine took 10.7 s
        // for `structs_wide`; the bounds are the errors asserted below.
        assert!(start.elapsed().as_secs() < 300, "{tag}: {:?}", start.elapsed());
        std::fs::remove_dir_all(&dir).unwrap();
        scan.diagnostics.iter().map(|d| d.message().to_string()).collect::<Vec<_>>()
    };
    let mut doubling = "  D0: [x:float64]\n".to_string();
    for i in 1..69 {
        doubling.push_str(&format!("  D{i}: [a:D{}, b:D{}]\n", i - 1, i - 1));
    }
    let found = run("structs_exp", doubling, "attr.s:D68");
    assert!(found.iter().any(|m| m.contains("struct `D10` is 8192 bytes or more")), "{found:?}");
    assert!(found.iter().any(|m| m.contains("struct `D11` contains struct `D10`, which has an error")), "{found:?}");
    assert!(!found.iter().any(|m| m.contains("contains itself")), "{found:?}");

    // Innermost last: each struct waits for the one after it.
    let chain: String = (0..8000)
        .map(|i| if i == 7999 { format!("  S{i}: [x:int8]\n") } else { format!("  S{i}: [x:S{}]\n", i + 1) })
        .collect();
    let found = run("structs_chain", chain, "attr.s:S0");
    assert!(!found.iter().any(|m| m.contains("struct")), "{found:?}");

    let wide = format!("  W: [{}]\n", (0..100_000).map(|i| format!("m{i}:int8")).collect::<Vec<_>>().join(", "));
    let found = run("structs_wide", wide, "attr.s:W");
    assert!(found.iter().any(|m| m.contains("struct `W` is 4097 bytes or more")), "{found:?}");
}

/// `include_dirs:` and `link: dirs:`: a relative path is read from the
/// kernel directory and may lead out of it, an absolute one is taken as it
/// is; only one that is not a directory is an error, said the same way for
/// both.
#[test]
fn include_and_link_dirs_may_be_outside_the_root() {
    let dir = temp_dir("dirs_outside");
    let (root, shared) = (dir.join("k"), dir.join("shared"));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&shared).unwrap();
    let abs = shared.display().to_string();
    std::fs::write(
        root.join("begen.yaml"),
        format!("include_dirs: [../shared, \"{abs}\", ../nowhere]\nlink: {{dirs: [../shared, \"{abs}\", /nowhere/at/all]}}\n"),
    )
    .unwrap();
    let scan = begen::driver::run(&begen::driver::Settings::new(&root)).unwrap();
    let errors: Vec<&str> = scan.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.message()).collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].starts_with("`include_dirs:` lists `../nowhere`, which is not a directory (a relative"),
        "{errors:?}"
    );
    assert!(
        errors[1].starts_with("`link: dirs:` lists `/nowhere/at/all`, which is not a directory (a relative"),
        "{errors:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The caller's `-I DIR`: a relative one is read from the caller's folder
/// (not the work directory the compilers run in), and one that is not a
/// directory is an error.
#[test]
fn include_options_are_read_from_the_callers_folder_and_must_exist() {
    let dir = temp_dir("include_options");
    std::fs::write(dir.join("k.cc"), "int x;\n").unwrap();
    let mut settings = begen::driver::Settings::new(&dir);
    // Tests run in the package's folder, which has `tests/` and `src/`.
    settings.includes = vec!["tests".into(), "src".into(), "no/such/dir".into(), dir.join("gone")];
    let scan = begen::driver::run(&settings).unwrap();
    let errors: Vec<&str> = scan.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.message()).collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].starts_with("the include directory `-I no/such/dir` is not a directory"), "{errors:?}");
    assert!(errors[1].contains("/gone` is not a directory"), "{errors:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Many errors on one long begen.yaml line: each diagnostic shows only the
/// neighbourhood of its mark, so rendering them all is linear in their
/// number, not their number times the line's length.
#[test]
fn many_errors_on_one_long_line_render_quickly() {
    let dir = temp_dir("long_line");
    std::fs::write(dir.join("k.cc"), "// @BE f\nvoid f() {}\n").unwrap();
    let names: Vec<String> = (0..1500).map(|i| format!("bad{i}: {{}}")).collect();
    std::fs::write(dir.join("begen.yaml"), format!("functions: {{{}}}\n", names.join(","))).unwrap();
    let scan = begen::driver::run(&begen::driver::Settings::new(&dir)).unwrap();
    let start = std::time::Instant::now();
    let mut shown = 0;
    for d in scan.diagnostics.iter().filter(|d| d.is_error()) {
        shown += begen::diag::render::render_text(d, &scan.sources, false).len();
    }
    assert!(scan.diagnostics.len() >= 1500);
    assert!(shown < 1500 * 2048, "{shown}");
    // A hang catcher only: the bound is `shown`, the rendered size.
    assert!(start.elapsed() < std::time::Duration::from_secs(300), "{:?}", start.elapsed());
    std::fs::remove_dir_all(&dir).unwrap();
}
