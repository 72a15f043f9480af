//! The host C++ backend: cc's C++ compiler (`CXX`), `-std=c++17 -fPIC`.
//! It compiles every host TU (the glue of XLA FFI handlers among them) and
//! its compiler driver links the library.

use super::{Backend, TuInputs, cc_error, detected};
use crate::build::compile::CompilerCmd;
use crate::build::toolchain::Discovery;
use crate::build::words;
use crate::error::{Error, Result};
use crate::model::Platform;
use crate::model::plan::BackendPlan;

/// Needs no probing of its own: cc finds the compiler.
pub(super) struct Cpu;

impl Backend for Cpu {
    fn platform(&self) -> Platform {
        Platform::Cpu
    }

    /// cc's compiler and flags, plus C++17, PIC, the include directories,
    /// the prefix maps and the plan's flags.
    fn command(
        &self,
        plan: &BackendPlan,
        tu: &TuInputs<'_>,
        discovery: &Discovery,
        remember: bool,
    ) -> Result<CompilerCmd> {
        let mut b = plan.cc.0.clone();
        b.cpp(true).pic(true).std("c++17").out_dir(tu.work.join("cc")).includes(tu.includes);
        for dir in tu.system_includes {
            b.flag("-isystem").flag(dir.as_os_str());
        }
        for flag in tu.prefix_maps.iter().chain(&plan.flags) {
            b.flag(flag);
        }
        detected(&b, "host C++ compiler", tu, discovery, remember, None, || {
            let tool = b.try_get_compiler().map_err(|e| cc_error("no usable host C++ compiler", e))?;
            let mut cmd = CompilerCmd::from_tool(&tool, None);
            if let Some((name, value)) = compiler_variable(&b, discovery) {
                shell_words(&mut cmd, &tool, &name, &value)?;
            }
            Ok(cmd)
        })
    }
}

/// The variable cc takes the C++ compiler from, as cc looks for it
/// (`CXX_<target>`, `CXX_<target_with_underscores>`, `HOST_CXX` or
/// `TARGET_CXX`, `CXX`), and its value; none where the build script named
/// the compiler itself, or none is set.
fn compiler_variable(b: &cc::Build, discovery: &Discovery) -> Option<(String, String)> {
    if !format!("{b:?}").contains("compiler: None") {
        return None;
    }
    let target = discovery.var("TARGET").unwrap_or_else(crate::settings::host_triple);
    let names = [
        format!("CXX_{target}"),
        format!("CXX_{}", target.replace('-', "_")),
        "HOST_CXX".into(),
        "TARGET_CXX".into(),
        "CXX".into(),
    ];
    names.into_iter().find_map(|name| discovery.var(&name).map(|value| (name, value)))
}

/// cc splits `CXX` at blanks; a shell splits it by its quotes too. A value
/// with quotes or backslashes takes its words from [`words::split`] (the
/// program, then the words after it, then cc's flags); one that needs a
/// shell to mean anything (`$CFLAGS`, a `;`) is refused, naming where. A
/// value that is a file's path as a whole (spaces and all) is that file,
/// as cc has it.
fn shell_words(cmd: &mut CompilerCmd, tool: &cc::Tool, name: &str, value: &str) -> Result<()> {
    let value = value.trim();
    if std::path::Path::new(value).is_file() {
        return Ok(());
    }
    let words = words::split(value).map_err(|e| {
        Error::toolchain(crate::diag::messages::command_value_unsplittable(name, value, e.column, &e.what))
    })?;
    if let Some((program, args)) = words.split_first().filter(|_| words::has_quoting(value)) {
        cmd.program = program.into();
        cmd.args = args.iter().map(Into::into).chain(tool.args().iter().cloned()).collect();
        cmd.lead = args.len();
    }
    Ok(())
}
