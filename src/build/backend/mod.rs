//! The toolchains a build compiles with, one [`Backend`] each: how it is
//! probed, the command that compiles one of its translation units, and
//! what the link needs from it. The host C++ backend ([`cpu`]) compiles
//! every host TU and links; each other backend compiles the sources of
//! its platform. Adding one is a folder here and a line in [`probe`].

mod cpu;
mod cuda;

use std::path::{Path, PathBuf};

use super::compile::CompilerCmd;
use super::toolchain::Discovery;
use crate::error::{Error, Result};
use crate::model::Platform;
use crate::model::plan::BackendPlan;

/// One toolchain, as found on this machine.
pub(crate) trait Backend {
    /// The sources it compiles.
    fn platform(&self) -> Platform;

    /// The compiler command for its translation units (without the unit's
    /// own arguments): the plan's cc configuration and flags, begen's,
    /// and what probing the machine decides (GPU architectures). cc's
    /// detection is kept in the build's probes when `remember` is set.
    fn command(
        &self,
        plan: &BackendPlan,
        tu: &TuInputs<'_>,
        discovery: &Discovery,
        remember: bool,
    ) -> Result<CompilerCmd>;

    /// Folders of its toolkit where a library to link may be, searched
    /// after the plan's and before the system's (with a run path to them).
    fn library_dirs(&self, _lib: &str) -> Vec<PathBuf> {
        Vec::new()
    }

    /// What linking objects of this backend adds (its runtime), after the
    /// plan's arguments.
    fn link_needs(&self) -> Result<LinkNeeds> {
        Ok(LinkNeeds::default())
    }
}

/// Every backend, by the platform it compiles: the one list to extend.
/// Probing fails, saying what was tried, when the toolchain is missing.
pub(crate) fn probe(platform: Platform, discovery: &Discovery) -> Result<Box<dyn Backend>> {
    match platform {
        Platform::Cpu => Ok(Box::new(cpu::Cpu)),
        Platform::Cuda => Ok(Box::new(cuda::Cuda(discovery.cuda()?))),
    }
}

/// What every translation unit of a build is compiled with, whatever its
/// backend.
pub(crate) struct TuInputs<'a> {
    /// `-I` directories, in search order.
    pub(crate) includes: &'a [PathBuf],
    /// `-isystem` directories (XLA's FFI headers).
    pub(crate) system_includes: &'a [PathBuf],
    /// `-ffile-prefix-map` options for the compiler that preprocesses.
    pub(crate) prefix_maps: &'a [String],
    /// The work directory (cc's scratch folder is under it).
    pub(crate) work: &'a Path,
    /// cc prints `cargo:` lines: its answers are never kept.
    pub(crate) cc_metadata: bool,
}

/// A backend's part of the link: arguments, and the files they make the
/// linker read (whose change relinks).
#[derive(Debug, Clone, Default)]
pub(crate) struct LinkNeeds {
    pub(crate) args: Vec<String>,
    pub(crate) reads: Vec<PathBuf>,
}

fn cc_error(what: &str, e: cc::Error) -> Error {
    Error::toolchain(format!("{what}: {e}. Set CXX to a working C++17 compiler (g++ or clang++)."))
}

/// cc's answer for the configuration `b` (`detect` runs cc, which starts
/// the compiler to learn its family), kept in the build's probes while
/// `b`, the environment and the compiler binaries (the program, nvcc's
/// `-ccbin` host compiler) are the same. Not kept when cc prints `cargo:`
/// lines (build.rs): Cargo must hear of every variable cc reads, each time.
/// Either way the command carries the programs' identity, found now.
fn detected(
    b: &cc::Build,
    what: &str,
    tu: &TuInputs<'_>,
    discovery: &Discovery,
    remember: bool,
    nvcc: Option<&Path>,
    detect: impl FnOnce() -> Result<CompilerCmd>,
) -> Result<CompilerCmd> {
    let mut cmd = remembered(b, what, tu, remember.then_some(discovery), nvcc, detect)?;
    cmd.identity = identity(&cmd, discovery);
    Ok(cmd)
}

/// What the programs a compiler command runs are now (the program and
/// nvcc's host compiler; links resolved): each one's path, size and
/// modification time. A compiler replaced or edited in place (a wrapper
/// script) at the same path is another compiler: every unit recompiles.
fn identity(cmd: &CompilerCmd, discovery: &Discovery) -> String {
    let mut text = String::new();
    for program in programs(cmd) {
        let file = discovery.program_file(&program).and_then(|f| std::fs::canonicalize(&f).ok());
        let stamp = file.as_deref().and_then(super::stamp::Stamp::of);
        match (file, stamp) {
            (Some(file), Some(s)) => text.push_str(&format!("{} {} {} ", file.display(), s.size, s.mtime)),
            _ => text.push_str(&format!("{} unknown ", program.display())),
        }
    }
    text.trim_end().to_string()
}

fn remembered(
    b: &cc::Build,
    what: &str,
    tu: &TuInputs<'_>,
    discovery: Option<&Discovery>,
    nvcc: Option<&Path>,
    detect: impl FnOnce() -> Result<CompilerCmd>,
) -> Result<CompilerCmd> {
    let config = cc_config(b);
    let Some(discovery) = discovery.filter(|_| !tu.cc_metadata && !config.contains("metadata: true")) else {
        return detect();
    };
    let inputs = format!("{config}\nnvcc {}", nvcc.map(|p| p.display().to_string()).unwrap_or_default());
    let mut failure = None;
    let cmd: Option<CompilerCmd> = discovery.remembered(what, &inputs, || match detect() {
        Ok(cmd) => {
            let files: Option<Vec<PathBuf>> = programs(&cmd).iter().map(|p| discovery.program_file(p)).collect();
            (Some(cmd), files)
        }
        Err(e) => {
            failure = Some(e);
            (None, None)
        }
    });
    match (cmd, failure) {
        (Some(cmd), _) => Ok(cmd),
        (None, Some(e)) => Err(e),
        (None, None) => Err(Error::other(format!("internal: no answer for the {what}"))),
    }
}

/// The compiler caches cc recognizes at the head of `CXX`.
const WRAPPERS: [&str; 7] = ["ccache", "distcc", "sccache", "icecc", "cachepot", "buildcache", "kache"];

/// The programs a compiler command runs: its own, the compiler a cache
/// runs, and nvcc's `-ccbin` host compiler.
fn programs(cmd: &CompilerCmd) -> Vec<PathBuf> {
    let mut programs = vec![cmd.program.clone()];
    // A compiler cache in `CXX` (`ccache g++`) runs the compiler after it.
    let stem = cmd.program.file_stem().map(|s| s.to_string_lossy().to_ascii_lowercase());
    if stem.is_some_and(|s| WRAPPERS.contains(&s.as_str()))
        && let Some(compiler) = cmd.args.first()
    {
        programs.push(PathBuf::from(compiler));
    }
    let mut args = cmd.args.iter().map(|a| a.to_string_lossy());
    while let Some(arg) = args.next() {
        match arg.strip_prefix("-ccbin") {
            Some("") => programs.extend(args.next().map(|a| PathBuf::from(a.as_ref()))),
            Some(rest) => programs.push(PathBuf::from(rest.trim_start_matches('='))),
            None => {}
        }
    }
    programs
}

/// cc's configuration as text, without its caches (filled as cc runs) and
/// its once-only flags, which say nothing about the compiler it picks.
fn cc_config(b: &cc::Build) -> String {
    let mut text = format!("{b:?}");
    for field in ["build_cache: ", "checked_dbg_var: "] {
        text = without_field(&text, field);
    }
    text
}

/// `text` (a `Debug` rendering) without the value of `field`: up to the
/// next `,` or closing bracket outside brackets and quotes.
fn without_field(text: &str, field: &str) -> String {
    let Some(start) = text.find(field) else {
        return text.to_string();
    };
    let value = start + field.len();
    let (mut depth, mut quoted, mut escaped) = (0i32, false, false);
    let mut end = text.len();
    for (i, c) in text[value..].char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            _ if quoted => {}
            '{' | '[' | '(' => depth += 1,
            '}' | ']' | ')' if depth == 0 => {
                end = value + i;
                break;
            }
            '}' | ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                end = value + i;
                break;
            }
            _ => {}
        }
    }
    format!("{}{}", &text[..value], &text[end..])
}
