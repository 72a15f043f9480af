//! The host C++ backend: cc's C++ compiler (`CXX`), `-std=c++17 -fPIC`.
//! It compiles every host TU (the glue of XLA FFI handlers among them) and
//! its compiler driver links the library.

use super::{Backend, TuInputs, cc_error, detected};
use crate::build::compile::CompilerCmd;
use crate::build::toolchain::Discovery;
use crate::error::Result;
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
            Ok(CompilerCmd::from_tool(&tool, None))
        })
    }
}
