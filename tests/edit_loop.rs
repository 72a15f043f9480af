//! The edit–build loop and stale builds: a build with
//! nothing changed starts no process (fake tools that record their argv
//! stand in for the compiler, nm, objcopy and Python; `strace` checks it
//! too where installed, and for a CUDA build), nor does a repeated
//! `begen generate`; an edit recompiles one TU and lists one
//! object's symbols; a header that shadows another and an edit of the same
//! size with its time put back rebuild; `compile_commands.json` holds every
//! TU with a command that compiles; a compiler launcher sees every compile;
//! warnings are summarised and logged; generated code is `-Werror` clean.
//! Skipped without a Python that has jax (and nvcc for the CUDA test),
//! except under CI=true.

// Test code reads its switches from the environment directly (clippy.toml).
#![allow(clippy::disallowed_methods)]

mod support;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::{copy_tree, repo, scratch};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `program` on PATH.
fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(program)).find(|p| p.is_file())
}

/// A script `dir/name` that appends `name args...` to `log` and runs `real`.
fn shim(dir: &Path, name: &str, real: &Path, log: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    let text = format!("#!/bin/sh\necho \"{name} $*\" >> '{}'\nexec '{}' \"$@\"\n", log.display(), real.display());
    std::fs::write(&path, text).unwrap();
    executable(&path);
    path
}

/// begen's arguments `COMMAND DIR --out OUT`, and `--work-dir WORK` when given.
fn argv(command: &str, root: &Path, out: &Path, work: Option<&Path>) -> Vec<OsString> {
    let mut argv: Vec<OsString> = vec![command.into(), root.into(), "--out".into(), out.into()];
    if let Some(work) = work {
        argv.extend(["--work-dir".into(), work.into()]);
    }
    argv
}

/// The environment of every run: `envs`, with `BEGEN_PYTHON` and
/// `BEGEN_EXPLAIN=1`, XLA_FFI_INCLUDE_DIR unset so that the Python is asked.
fn setup(cmd: &mut Command, python: &Path, envs: &[(&str, &str)]) {
    cmd.env("BEGEN_PYTHON", python).env("BEGEN_EXPLAIN", "1").env_remove("XLA_FFI_INCLUDE_DIR");
    for (k, v) in envs {
        cmd.env(k, v);
    }
}

/// Runs `begen build DIR --out OUT --work-dir WORK` with `envs` (see [`setup`]).
fn build(python: &Path, root: &Path, out: &Path, work: &Path, args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_begen"));
    cmd.args(argv("build", root, out, Some(work))).args(args);
    setup(&mut cmd, python, envs);
    cmd.output().expect("running begen")
}

fn build_ok(python: &Path, root: &Path, out: &Path, work: &Path, args: &[&str], envs: &[(&str, &str)]) -> String {
    let built = build(python, root, out, work, args, envs);
    let log = stderr(&built);
    assert!(built.status.success(), "{log}");
    log
}

/// A scratch folder `name` with a writable copy of tests/e2e/`tree`:
/// (folder, kernel tree, OUT, work directory).
fn tree_copy(name: &str, tree: &str) -> (PathBuf, PathBuf, PathBuf, PathBuf) {
    let dir = scratch(name);
    let root = dir.join(tree);
    copy_tree(&repo().join("tests/e2e").join(tree), &root);
    let (out, work) = (dir.join("out"), dir.join("work"));
    (dir, root, out, work)
}

/// Makes `path` executable.
fn executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The lines of a shim log, emptied.
fn take(log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let _ = std::fs::remove_file(log);
    text.lines().map(str::to_string).collect()
}

/// The processes begen started with arguments `argv` (see [`setup`] for
/// `envs`), by `strace -f -e trace=execve` writing into `trace` (other than
/// begen itself); `None` without strace.
fn traced(python: &Path, argv: &[OsString], trace: &Path, envs: &[(&str, &str)]) -> Option<Vec<String>> {
    let strace = on_path("strace")?;
    let mut cmd = Command::new(strace);
    cmd.args(["-f", "-qq", "-e", "trace=execve", "-o"]).arg(trace).arg(env!("CARGO_BIN_EXE_begen")).args(argv);
    setup(&mut cmd, python, envs);
    let ran = cmd.output().expect("running strace");
    // strace may be refused (no ptrace in a container): then it proves nothing.
    if !ran.status.success() {
        eprintln!("SKIPPED: strace could not trace begen: {}", stderr(&ran));
        return None;
    }
    let text = std::fs::read_to_string(trace).unwrap_or_default();
    let begen = env!("CARGO_BIN_EXE_begen");
    Some(
        text.lines()
            .filter(|l| l.contains("execve(") && !l.contains("= -1") && !l.contains(begen))
            .map(str::to_string)
            .collect(),
    )
}

#[test]
fn a_no_op_build_starts_no_process_and_an_edit_recompiles_one_tu() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let (Some(cxx), Some(nm), Some(objcopy)) = (on_path("c++"), on_path("nm"), on_path("objcopy")) else {
        support::missing::<()>("c++, nm and objcopy on PATH");
        return;
    };
    let (dir, root, out, work) = tree_copy("loop_noop", "modules");
    let log = dir.join("tools.log");
    let shims = dir.join("shims");
    let cxx = shim(&shims, "c++", &cxx, &log);
    let (nm, objcopy) = (shim(&shims, "nm", &nm, &log), shim(&shims, "objcopy", &objcopy, &log));
    let python = shim(&shims, "python", &python, &log);
    let envs = [
        ("CXX", cxx.to_str().unwrap()),
        ("NM", nm.to_str().unwrap()),
        ("OBJCOPY", objcopy.to_str().unwrap()),
        ("BEGEN_CUDA_ARCH", "sm_90"),
    ];
    build_ok(&python, &root, &out, &work, &[], &envs);
    let first = take(&log);
    for tool in ["python", "c++ -E", "nm ", "objcopy ", "c++ -shared"] {
        assert!(first.iter().any(|l| l.starts_with(tool)), "a clean build runs `{tool}`: {first:#?}");
    }

    let again = build_ok(&python, &root, &out, &work, &[], &envs);
    assert!(again.contains("0 TUs compiled, 6 up to date"), "{again}");
    assert_eq!(take(&log), Vec::<String>::new(), "a no-op build started these:\n{again}");
    if let Some(started) = traced(&python, &argv("build", &root, &out, Some(&work)), &work.join("trace.txt"), &envs) {
        assert_eq!(started, Vec::<String>::new(), "strace saw a no-op build start these");
    }

    // One kernel body edited: its TU compiles, its object's symbols are
    // listed again, and the library is relinked; nothing else runs.
    let add = root.join("_ops/add.cpp");
    let text = std::fs::read_to_string(&add).unwrap();
    std::fs::write(&add, format!("{text}\n// edited\n")).unwrap();
    let edited = build_ok(&python, &root, &out, &work, &[], &envs);
    assert!(edited.contains("1 TUs compiled, 5 up to date"), "{edited}");
    let ran = take(&log);
    let compiles: Vec<&String> = ran.iter().filter(|l| l.starts_with("c++ ") && l.contains(" -c ")).collect();
    assert_eq!(compiles.len(), 1, "{ran:#?}");
    assert!(compiles[0].contains("gen/_ops__add.cpp.begen.cc"), "{ran:#?}");
    assert_eq!(ran.iter().filter(|l| l.starts_with("nm ")).count(), 1, "{ran:#?}");
    assert!(ran.iter().any(|l| l.starts_with("nm ") && l.contains("_ops__add")), "{ran:#?}");
    assert_eq!(ran.iter().filter(|l| l.starts_with("c++ -shared")).count(), 1, "{ran:#?}");
    assert!(!ran.iter().any(|l| l.starts_with("python") || l.contains(" -E ")), "no probe: {ran:#?}");
    assert!(edited.contains("listing its symbols") && edited.contains("linking, as"), "explained: {edited}");

    // The output removed: relinked (nothing compiled), and back in place.
    std::fs::remove_file(out.join("libe2e_modules.so")).unwrap();
    let relinked = build_ok(&python, &root, &out, &work, &[], &envs);
    assert!(relinked.contains("0 TUs compiled"), "{relinked}");
    assert!(out.join("libe2e_modules.so").is_file());
    let ran = take(&log);
    assert!(ran.iter().all(|l| l.starts_with("c++ -shared")) && ran.len() == 1, "{ran:#?}");

    // Another compiler binary (a new toolchain): probed again.
    std::fs::write(&cxx, std::fs::read_to_string(&cxx).unwrap() + "# another compiler\n").unwrap();
    let reprobed = build_ok(&python, &root, &out, &work, &[], &envs);
    assert!(reprobed.contains("probing host C++ compiler"), "{reprobed}");
    assert!(take(&log).iter().any(|l| l.starts_with("c++ -E")));
}

#[test]
fn a_cuda_no_op_build_starts_no_process_and_its_database_names_nvcc() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let Some(nvcc) = support::nvcc(&python) else {
        return;
    };
    let dir = scratch("loop_cuda");
    let (out, work) = (dir.join("out"), dir.join("work"));
    let root = repo().join("tests/e2e/cuda");
    let envs = [("NVCC", nvcc.to_str().unwrap()), ("BEGEN_CUDA_ARCH", "sm_90")];
    let first = build_ok(&python, &root, &out, &work, &[], &envs);
    assert!(first.contains("probing nvcc: no answer on record"), "{first}");
    let again = build_ok(&python, &root, &out, &work, &[], &envs);
    assert!(again.contains("0 TUs compiled"), "{again}");
    assert!(!again.contains("probing") && !again.contains("linking"), "nothing probed or linked: {again}");
    if let Some(started) = traced(&python, &argv("build", &root, &out, Some(&work)), &work.join("trace.txt"), &envs) {
        assert_eq!(started, Vec::<String>::new(), "strace saw a no-op CUDA build start these");
    }
    let db = database(&work.join("e2e_cuda"));
    let cu: Vec<&Entry> = db.iter().filter(|e| e.file.ends_with(".cu")).collect();
    assert!(!cu.is_empty(), "{db:#?}");
    for e in cu {
        assert_eq!(e.arguments[0], nvcc.display().to_string(), "{e:#?}");
        assert!(e.arguments.iter().any(|a| a == "-gencode=arch=compute_90,code=sm_90"), "{e:#?}");
    }
}

/// `begen generate` keeps the Python's answer (jax's headers, for the
/// manifest's XLA FFI API version) as a build does: generating again with
/// nothing changed starts no process; another Python binary or another
/// environment asks again. The answer is in the work directory, never OUT.
#[test]
fn a_repeated_generate_starts_no_process() {
    let Some(real) = support::python_with_jax() else {
        return;
    };
    let dir = scratch("loop_generate");
    let root = repo().join("tests/e2e/cpu");
    let (out, work, log) = (dir.join("out"), dir.join("work"), dir.join("tools.log"));
    let python = shim(&dir.join("shims"), "python", &real, &log);
    let cache = dir.join("cache");
    let generate = |work: Option<&Path>, envs: &[(&str, &str)]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_begen"));
        cmd.args(argv("generate", &root, &out, work)).env("XDG_CACHE_HOME", &cache);
        setup(&mut cmd, &python, envs);
        let done = cmd.output().expect("running begen");
        assert!(done.status.success(), "{}", stderr(&done));
        let probes = take(&log).iter().filter(|l| l.starts_with("python ")).count();
        (stderr(&done), probes)
    };
    let manifest = out.join("e2e_cpu.yaml");

    let (first, probes) = generate(Some(&work), &[]);
    assert_eq!(probes, 1, "{first}");
    assert!(first.contains("probing python: no answer on record"), "{first}");
    let api = std::fs::read_to_string(&manifest).unwrap();
    assert!(api.contains("xla_ffi_api_version: '"), "{api}");

    let (again, probes) = generate(Some(&work), &[]);
    assert_eq!(probes, 0, "a repeated generate ran the Python probe: {again}");
    assert!(!again.contains("probing"), "{again}");
    assert_eq!(std::fs::read_to_string(&manifest).unwrap(), api, "the kept answer gives the same manifest");
    let args = argv("generate", &root, &out, Some(&work));
    if let Some(started) =
        traced(&python, &args, &dir.join("trace.txt"), &[("XDG_CACHE_HOME", cache.to_str().unwrap())])
    {
        assert_eq!(started, Vec::<String>::new(), "strace saw a repeated generate start these");
    }

    // A variable the Python reads (a value the test's own environment
    // cannot already hold): asked again, then kept.
    let pycache = dir.join("pycache").display().to_string();
    let bytecode = [("PYTHONPYCACHEPREFIX", pycache.as_str())];
    let (changed, probes) = generate(Some(&work), &bytecode);
    assert_eq!(probes, 1, "{changed}");
    assert!(changed.contains("probing python: its inputs (program, settings or environment) changed"), "{changed}");
    assert_eq!(generate(Some(&work), &bytecode).1, 0);

    // The Python binary changed (its modification time): asked again.
    let file = std::fs::File::options().write(true).open(&python).unwrap();
    let earlier = std::fs::metadata(&python).unwrap().modified().unwrap() - std::time::Duration::from_secs(100);
    file.set_modified(earlier).unwrap();
    drop(file);
    let (touched, probes) = generate(Some(&work), &bytecode);
    assert_eq!(probes, 1, "{touched}");
    assert!(touched.contains(&format!("probing python: `{}` changed", python.display())), "{touched}");
    assert_eq!(generate(Some(&work), &bytecode).1, 0);

    // Where the answer is: WORK/<NAME>/probes.json; OUT holds only what
    // generate writes.
    assert!(work.join("e2e_cpu/probes.json").is_file());
    let mut in_out: Vec<String> = walkdir::WalkDir::new(&out)
        .into_iter()
        .map(|e| e.unwrap().path().strip_prefix(&out).unwrap().display().to_string())
        .collect();
    in_out.sort();
    assert!(!in_out.iter().any(|f| f.contains("probes") || f.ends_with("lock")), "{in_out:#?}");

    // Without --work-dir: the per-user cache's work directory keyed by OUT,
    // as for a build.
    let (default, probes) = generate(None, &[]);
    assert_eq!(probes, 1, "{default}");
    assert_eq!(generate(None, &[]).1, 0);
    let kept: Vec<PathBuf> = walkdir::WalkDir::new(cache.join("begen/work"))
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.ends_with("e2e_cpu/probes.json"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:#?}");
}

#[derive(Debug)]
struct Entry {
    directory: String,
    file: String,
    arguments: Vec<String>,
}

/// The compilation database of a library's work directory.
fn database(work: &Path) -> Vec<Entry> {
    let text = std::fs::read_to_string(work.join("compile_commands.json")).expect("compile_commands.json");
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let entries = json.as_array().expect("an array");
    entries
        .iter()
        .map(|e| Entry {
            directory: e["directory"].as_str().unwrap().to_string(),
            file: e["file"].as_str().unwrap().to_string(),
            arguments: e["arguments"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_string()).collect(),
        })
        .collect()
}

#[test]
fn compile_commands_cover_every_unit_with_commands_that_compile() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let (dir, root, out, work) = tree_copy("loop_compdb", "cpu");
    let log = build_ok(&python, &root, &out, &work, &["--platform", "cpu"], &[]);
    assert!(log.contains("8 TUs compiled"), "{log}");
    let lib_work = work.join("e2e_cpu");
    let db = database(&lib_work);
    assert_eq!(db.len(), 8, "one entry per TU: {db:#?}");
    let mut objects: Vec<String> = Vec::new();
    for e in &db {
        assert_eq!(Path::new(&e.directory), lib_work);
        assert!(Path::new(&e.file).is_file(), "{e:#?}");
        let o = e.arguments.iter().position(|a| a == "-o").expect("-o");
        objects.push(e.arguments[o + 1].clone());
        // The entry is the command begen ran: the same as the object's record.
        let recorded = std::fs::read_to_string(lib_work.join(format!("{}.cmd", e.arguments[o + 1]))).unwrap();
        let argv: Vec<&str> = recorded.lines().filter(|l| !l.starts_with("# ")).collect();
        assert_eq!(argv, e.arguments, "{}", e.file);
    }
    objects.sort();
    let mut on_disk: Vec<String> = walk_objects(&lib_work.join("obj"), &lib_work);
    on_disk.sort();
    assert_eq!(objects, on_disk, "every object is an entry's");

    // Each entry's command compiles as it is, in its directory (into
    // another object).
    for e in db.iter().filter(|e| e.file.ends_with("basic.cpp.begen.cc") || e.file.ends_with("helper.cpp")) {
        let mut argv = e.arguments.clone();
        let o = argv.iter().position(|a| a == "-o").unwrap();
        argv[o + 1] = dir.join("again.o").display().to_string();
        let mf = argv.iter().position(|a| a == "-MF").unwrap();
        argv[mf + 1] = dir.join("again.d").display().to_string();
        let ran = Command::new(&argv[0]).args(&argv[1..]).current_dir(&e.directory).output().unwrap();
        assert!(ran.status.success(), "{}: {}", e.file, stderr(&ran));
        assert!(dir.join("again.o").is_file());
        std::fs::remove_file(dir.join("again.o")).unwrap();
    }

    // Still every unit after an incremental build.
    let basic = root.join("basic.cpp");
    std::fs::write(&basic, std::fs::read_to_string(&basic).unwrap() + "\n// edited\n").unwrap();
    build_ok(&python, &root, &out, &work, &["--platform", "cpu"], &[]);
    assert_eq!(database(&lib_work).len(), 8);
}

/// The `.o` files under `dir`, relative to `base`.
fn walk_objects(dir: &Path, base: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk_objects(&path, base));
        } else if path.extension().is_some_and(|e| e == "o") && !path.to_string_lossy().ends_with(".local.o") {
            found.push(path.strip_prefix(base).unwrap().display().to_string());
        }
    }
    found
}

/// `sub/k.cpp` includes `"m.h"`, found at the root; a new
/// `sub/m.h` would be found first by the compiler, so the TU rebuilds, and
/// the library is the one a clean build makes.
#[test]
fn a_new_header_that_shadows_another_rebuilds() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let dir = scratch("loop_shadow");
    let root = dir.join("k");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("m.h"), "#pragma once\ninline float shadow_value() { return 1.0f; }\n").unwrap();
    std::fs::write(
        root.join("sub/k.cpp"),
        "#include \"brainevent/common.h\"\n#include \"m.h\"\n\n// @BE fill\nvoid fill(const BE::Tensor x, BE::Tensor y) {\n    \
         float* out = y.data_ptr<float>();\n    for (int64_t i = 0; i < y.numel(); ++i) out[i] = shadow_value();\n    (void)x;\n}\n",
    )
    .unwrap();
    let (out, work) = (dir.join("out"), dir.join("work"));
    build_ok(&python, &root, &out, &work, &[], &[]);
    let before = std::fs::read(out.join("libk.so")).unwrap();
    std::fs::write(root.join("sub/m.h"), "#pragma once\ninline float shadow_value() { return 2.0f; }\n").unwrap();
    let log = build_ok(&python, &root, &out, &work, &[], &[]);
    assert!(log.contains("compiling 1/1 gen/sub__k.cpp.begen.cc"), "{log}");
    assert!(log.contains("sub/m.h appeared"), "explained: {log}");
    let after = std::fs::read(out.join("libk.so")).unwrap();
    assert!(after != before, "the new header changed nothing");
    let clean = dir.join("clean");
    build_ok(&python, &root, &clean, &dir.join("clean_work"), &[], &[]);
    assert!(std::fs::read(clean.join("libk.so")).unwrap() == after, "the incremental build differs from a clean one");
    let again = build_ok(&python, &root, &out, &work, &[], &[]);
    assert!(again.contains("0 TUs compiled"), "{again}");
}

/// An edit of the same size with its modification time put back
/// (`cp -p`, `rsync -t`, `tar -x` of another version) rebuilds.
#[test]
fn an_edit_of_the_same_size_with_its_time_put_back_rebuilds() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let (_, root, out, work) = tree_copy("loop_same_size", "cpu");
    build_ok(&python, &root, &out, &work, &["--platform", "cpu"], &[]);
    let path = root.join("basic.cpp");
    let meta = std::fs::metadata(&path).unwrap();
    let (size, time) = (meta.len(), meta.modified().unwrap());
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = text.replace("out[i] = alpha * in[i];", "out[i] = alpha + in[i];");
    assert_ne!(edited, text);
    std::fs::write(&path, &edited).unwrap();
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(time).unwrap();
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!((meta.len(), meta.modified().unwrap()), (size, time), "size and time as before");
    let log = build_ok(&python, &root, &out, &work, &["--platform", "cpu"], &[]);
    assert!(log.contains("compiling 1/1 gen/basic.cpp.begen.cc"), "{log}");
    // Only touched (same bytes, a new time): nothing compiles.
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(std::time::SystemTime::now()).unwrap();
    let log = build_ok(&python, &root, &out, &work, &["--platform", "cpu"], &[]);
    assert!(log.contains("0 TUs compiled"), "{log}");
}

#[test]
fn a_compiler_launcher_sees_every_compile() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let (dir, root, out, work) = tree_copy("loop_launcher", "cpu");
    let log = dir.join("launcher.log");
    // A launcher runs its arguments (the compiler command).
    let launcher = dir.join("record-launch");
    std::fs::write(&launcher, format!("#!/bin/sh\necho \"$*\" >> '{}'\nexec \"$@\"\n", log.display())).unwrap();
    executable(&launcher);
    let cpu = ["--platform", "cpu"];
    let built = build_ok(&python, &root, &out, &work, &cpu, &[("BEGEN_COMPILER_LAUNCHER", launcher.to_str().unwrap())]);
    assert!(built.contains("8 TUs compiled"), "{built}");
    let seen = take(&log);
    assert_eq!(seen.len(), 8, "{seen:#?}");
    assert!(seen.iter().all(|l| l.contains(" -c ") && !l.contains("-shared")), "compiles only: {seen:#?}");
    // The launcher is no part of a unit's command: off again, nothing compiles.
    let off = build_ok(&python, &root, &out, &work, &cpu, &[]);
    assert!(off.contains("0 TUs compiled"), "{off}");

    // begen.yaml's `compiler_launcher`, after an edit: that one compile.
    let config = root.join("begen.yaml");
    let yaml = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{yaml}\ncompiler_launcher: {}\n", launcher.display())).unwrap();
    let helper = root.join("helper.cpp");
    std::fs::write(&helper, std::fs::read_to_string(&helper).unwrap() + "\n// edited\n").unwrap();
    build_ok(&python, &root, &out, &work, &cpu, &[]);
    let seen = take(&log);
    assert_eq!(seen.len(), 1, "{seen:#?}");
    assert!(seen[0].contains("helper.cpp"), "{seen:#?}");

    // One that does not exist: an error that says where it was set.
    let missing = build(&python, &root, &out, &work, &cpu, &[("BEGEN_COMPILER_LAUNCHER", "begen-no-such-launcher")]);
    assert_eq!(missing.status.code(), Some(1), "{}", stderr(&missing));
    assert!(
        stderr(&missing)
            .contains("the compiler launcher `begen-no-such-launcher` (from BEGEN_COMPILER_LAUNCHER) was not found"),
        "{}",
        stderr(&missing)
    );
}

/// `CXX` and the launcher with arguments, one of each class: a compiler
/// with flags (one quoted, with a blank and quotes in it), a compiler cache
/// cc knows in front of the compiler, a driver with a sub-command and a
/// target (`zig c++ -target …`), a launcher with arguments (`env A=1 …`);
/// and values only a shell could give a meaning, refused with where.
#[test]
fn cxx_and_launcher_values_with_arguments_split_as_a_shell_does() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let Some(cxx) = on_path("c++") else {
        support::missing::<()>("c++ on PATH");
        return;
    };
    let (dir, root, out, work) = tree_copy("loop_cxx_words", "cpu");
    let log = dir.join("argv.log");
    // Each program logs its arguments one a line, after a `--` line.
    let program = |name: &str, runs: &str| {
        let path = dir.join(name);
        let text = format!("#!/bin/sh\nprintf '%s\\n' -- \"$@\" >> '{}'\n{runs}\n", log.display());
        std::fs::write(&path, text).unwrap();
        executable(&path);
        path.display().to_string()
    };
    let cpu = ["--platform", "cpu"];
    let argvs = |log: &Path| -> Vec<Vec<String>> {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let _ = std::fs::remove_file(log);
        text.split("--\n").skip(1).map(|a| a.lines().map(str::to_string).collect()).collect()
    };
    let compiles = |argvs: &[Vec<String>]| argvs.iter().filter(|a| a.iter().any(|w| w == "-c")).count();

    // Flags, one quoted: every compile and the link get them, in order.
    let rec = program("rec", &format!("exec '{}' \"$@\"", cxx.display()));
    let value = format!("{rec} '-DMSG=\"a b\"' -DX");
    build_ok(&python, &root, &out, &work, &cpu, &[("CXX", &value)]);
    let seen = argvs(&log);
    assert_eq!(compiles(&seen), 8, "{seen:#?}");
    let ran: Vec<&Vec<String>> = seen.iter().filter(|a| a.iter().any(|w| w == "-c" || w == "-shared")).collect();
    assert_eq!(ran.len(), 9, "{seen:#?}");
    assert!(ran.iter().all(|a| a[..2] == ["-DMSG=\"a b\"", "-DX"]), "{ran:#?}");

    // A compiler cache cc knows, then the compiler: the cache runs it.
    let ccache = program("ccache", "exec \"$@\"");
    let value = format!("{ccache} {}", cxx.display());
    let again = build_ok(&python, &root, &out, &work, &cpu, &[("CXX", &value)]);
    assert!(again.contains("8 TUs compiled"), "{again}");
    let seen = argvs(&log);
    assert_eq!(compiles(&seen), 8, "{seen:#?}");
    assert!(seen.iter().all(|a| a[0] == cxx.display().to_string()), "{seen:#?}");

    // A driver with its own sub-command and target, as `zig c++ -target`
    // (named apart: cc gives a program named `zig` clang's flags).
    let zig = program(
        "driver",
        &format!(
            "[ \"$1 $2 $3\" = 'c++ -target x86_64-linux-gnu.2.28' ] || exit 7\nshift 3\nexec '{}' \"$@\"",
            cxx.display()
        ),
    );
    let value = format!("{zig} c++ -target x86_64-linux-gnu.2.28");
    let built = build_ok(&python, &root, &out, &work, &cpu, &[("CXX", &value)]);
    assert!(built.contains("8 TUs compiled"), "{built}");
    let seen = argvs(&log);
    assert!(seen.iter().filter(|a| a.iter().any(|w| w == "-c" || w == "-shared")).count() == 9, "{seen:#?}");

    // A launcher with arguments: `env` sets a variable for the compile.
    let launcher = program("launch", "[ \"$BEGEN_TEST_MARK\" = 1 ] || exit 8\nexec \"$@\"");
    let value = format!("env BEGEN_TEST_MARK=1 {launcher}");
    let helper = root.join("helper.cpp");
    std::fs::write(&helper, std::fs::read_to_string(&helper).unwrap() + "\n// edited\n").unwrap();
    let built = build_ok(&python, &root, &out, &work, &cpu, &[("BEGEN_COMPILER_LAUNCHER", &value)]);
    assert!(built.contains("TUs compiled"), "{built}");
    assert!(argvs(&log).iter().any(|a| a.iter().any(|w| w.ends_with("helper.cpp"))), "the launcher ran");

    // What needs a shell: refused, naming the variable and the character.
    for (var, value, words) in [
        ("CXX", "g++ $CFLAGS", "at character 5, `$` needs a shell"),
        ("CXX", "g++ 'unterminated", "at character 5, this `'` is never closed"),
        ("CXX", "g++ -O2; rm -rf x", "at character 8, `;` needs a shell"),
        ("BEGEN_COMPILER_LAUNCHER", "ccache `which g++`", "at character 8, `` ` `` needs a shell"),
    ] {
        let refused = build(&python, &root, &out, &work, &cpu, &[(var, value)]);
        let text = stderr(&refused);
        assert_eq!(refused.status.code(), Some(1), "{value}: {text}");
        assert!(
            text.contains(&format!("{var} = `{value}` cannot be split")) && text.contains(words),
            "{value}: {text}"
        );
    }
}

/// Paths that are not UTF-8: a kernel directory and a work directory work
/// as any other; a source whose name is not UTF-8 (its wrapper could not
/// name it) and an OUT whose path is not (the link's arguments could not)
/// are named errors, never a lossy path and a compiler error about a file
/// that does not exist.
#[test]
fn paths_that_are_not_utf8_build_or_are_named_errors() {
    use std::os::unix::ffi::OsStrExt;
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let dir = scratch("loop_not_utf8");
    let odd = |name: &[u8]| dir.join(std::ffi::OsStr::from_bytes(name));
    let root = odd(b"ker\xffnels");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    let kernel = |name: &str| {
        format!(
            "#include <cstdint>\n// @BE {name}\nvoid {name}(const BE::Tensor x, BE::Tensor y) {{ (void)x; (void)y; }}\n"
        )
    };
    std::fs::write(root.join("ok.cpp"), kernel("ok")).unwrap();
    let cpu = ["--platform", "cpu", "--name", "k"];
    let (out, work) = (dir.join("out"), odd(b"wo\xferk"));
    let built = build_ok(&python, &root, &out, &work, &cpu, &[]);
    assert!(built.contains("1 kernels"), "{built}");
    assert!(out.join("k.py").is_file() && out.join("libk.so").is_file(), "{built}");

    // OUT: refused before anything runs.
    let odd_out = odd(b"o\xfdut");
    let refused = build(&python, &root, &odd_out, &work, &cpu, &[]);
    let text = stderr(&refused);
    assert_eq!(refused.status.code(), Some(1), "{text}");
    assert!(text.contains("has a path that is not valid UTF-8"), "{text}");
    assert!(!odd_out.exists() || std::fs::read_dir(&odd_out).unwrap().count() == 0, "{text}");

    // A source in a folder, or with a name, that is not UTF-8: named.
    for name in [&b"sub/k\xff.cpp"[..], b"s\xfeub/k.cpp"] {
        let source = root.join(std::ffi::OsStr::from_bytes(name));
        std::fs::create_dir_all(source.parent().unwrap()).unwrap();
        std::fs::write(&source, kernel("odd")).unwrap();
        let refused = build(&python, &root, &out, &work, &cpu, &[]);
        let text = stderr(&refused);
        assert_eq!(refused.status.code(), Some(1), "{text}");
        assert!(text.contains("it is not valid UTF-8") && !text.contains("No such file"), "{text}");
        std::fs::remove_file(&source).unwrap();
    }
}

#[test]
fn warnings_are_summarised_and_all_of_them_logged() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let dir = scratch("loop_warnings");
    let root = dir.join("k");
    std::fs::create_dir_all(&root).unwrap();
    let unused: String = (0..5).map(|i| format!("    int unused_{i} = 0;\n")).collect();
    std::fs::write(
        root.join("noisy.cpp"),
        format!(
            "#include \"brainevent/common.h\"\n\n// @BE noisy\nvoid noisy(const BE::Tensor x, BE::Tensor y) {{\n{unused}    (void)x; (void)y;\n}}\n"
        ),
    )
    .unwrap();
    let (out, work) = (dir.join("out"), dir.join("work"));
    let log = build_ok(&python, &root, &out, &work, &[], &[]);
    assert!(log.contains("5 warnings, the first 3:"), "{log}");
    assert!(log.contains("unused_0") && log.contains("unused_2") && !log.contains("unused_3"), "{log}");
    let all = work.join("k/warnings.log");
    assert!(log.contains(&format!("all of them are in {}", all.display())), "{log}");
    let text = std::fs::read_to_string(&all).unwrap();
    assert!((0..5).all(|i| text.contains(&format!("unused_{i}"))), "{text}");
    // -v: every warning as the compiler wrote it.
    std::fs::write(root.join("noisy.cpp"), std::fs::read_to_string(root.join("noisy.cpp")).unwrap() + "// again\n")
        .unwrap();
    let verbose = build_ok(&python, &root, &out, &work, &["-v"], &[]);
    assert!((0..5).all(|i| verbose.contains(&format!("unused_{i}"))), "{verbose}");
    assert!(!verbose.contains("the first 3"), "{verbose}");
}

/// begen's own generated code (handlers, trampolines, modules, typed
/// contracts) compiles warning-free under `-Wall -Wextra
/// -Werror` (the plain and struct trees: tests/e2e_build.rs).
#[test]
fn generated_code_of_more_trees_has_no_warnings_under_werror() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    for tree in ["modules", "typed"] {
        let dir = scratch(&format!("loop_werror_{tree}"));
        let log = build_ok(
            &python,
            &repo().join("tests/e2e").join(tree),
            &dir.join("out"),
            &dir.join("work"),
            &["--platform", "cpu", "-v"],
            &[("CXXFLAGS", "-Wall -Wextra -Werror")],
        );
        assert!(!log.contains("warning"), "{tree}: {log}");
    }
}
