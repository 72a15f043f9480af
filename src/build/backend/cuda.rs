//! The CUDA backend: the nvcc begen found, driven with cc's flags for nvcc
//! (`-ccbin` = the host compiler, `-Xcompiler -fPIC`), `-std=c++17` and one
//! `-gencode` per architecture (see [`arch`](crate::build::arch)). Its
//! objects link the *static* CUDA runtime (`libcudart_static.a`, nvcc's own
//! default), so the library needs no `libcudart.so` on the loader's path.

use std::path::PathBuf;

use super::{Backend, LinkNeeds, TuInputs, cc_error, detected};
use crate::build::arch;
use crate::build::compile::CompilerCmd;
use crate::build::toolchain::{self, Discovery};
use crate::error::{Error, Result};
use crate::model::Platform;
use crate::model::plan::BackendPlan;

/// nvcc and its toolkit, as found.
pub(super) struct Cuda(pub(super) toolchain::Cuda);

impl Backend for Cuda {
    fn platform(&self) -> Platform {
        Platform::Cuda
    }

    /// cc's flags for nvcc with begen's nvcc as the program, for the
    /// architectures asked for, else this machine's GPUs, else begen's list.
    fn command(
        &self,
        plan: &BackendPlan,
        tu: &TuInputs<'_>,
        discovery: &Discovery,
        remember: bool,
    ) -> Result<CompilerCmd> {
        let (archs, _) = discovery.cuda_archs(plan.arch.as_ref(), &self.0)?;
        let mut b = plan.cc.0.clone();
        // cc's `.std()` would reach only the host compiler (`-Xcompiler`); nvcc's
        // own front end needs the dialect too.
        b.cpp(true).cuda(true).pic(true).out_dir(tu.work.join("cc")).includes(tu.includes).flag("-std=c++17");
        for dir in tu.system_includes {
            b.flag("-isystem").flag(dir.as_os_str());
        }
        for flag in arch::gencode_flags(&archs) {
            b.flag(flag);
        }
        // nvcc has no prefix map of its own: its host compiler, which also
        // preprocesses the device code, does the mapping.
        for flag in tu.prefix_maps.iter().map(|m| format!("-Xcompiler={m}")).chain(plan.flags.iter().cloned()) {
            b.flag(flag);
        }
        let nvcc = &self.0.nvcc;
        detected(&b, "CUDA compiler", tu, discovery, remember, Some(nvcc), || {
            // cc asserts (panics) when CXX carries arguments in CUDA mode; turn that
            // into an error rather than a backtrace.
            let tool = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| b.try_get_compiler()))
                .map_err(|_| {
                    Error::toolchain(
                        "cc cannot drive nvcc when CXX carries arguments; set CXX to the compiler alone \
                         (flags go in CXXFLAGS)"
                            .to_string(),
                    )
                })?
                .map_err(|e| cc_error("no usable host compiler for nvcc", e))?;
            Ok(CompilerCmd::from_tool(&tool, Some(nvcc)))
        })
    }

    /// The toolkit's own folders, then pip's `nvidia/<lib>/lib` and every
    /// other `nvidia/*/lib`.
    fn library_dirs(&self, lib: &str) -> Vec<PathBuf> {
        let Some(top) = self.0.nvcc.parent().and_then(|p| p.parent()) else {
            return Vec::new();
        };
        let mut dirs =
            vec![top.join("lib64"), top.join("lib"), top.join(format!("targets/{}-linux/lib", std::env::consts::ARCH))];
        if let Some(nvidia) = top.parent() {
            dirs.push(nvidia.join(lib).join("lib"));
            if let Ok(entries) = std::fs::read_dir(nvidia) {
                let mut more: Vec<PathBuf> = entries.flatten().map(|e| e.path().join("lib")).collect();
                more.sort();
                dirs.extend(more);
            }
        }
        dirs
    }

    /// The static runtime, whose symbols `--exclude-libs,ALL` keeps private
    /// so they never clash with the runtime JAX loads (CUDA and XLA share
    /// the driver's primary context, so XLA's stream is valid in it).
    fn link_needs(&self) -> Result<LinkNeeds> {
        let Some(dir) = &self.0.cudart_dir else {
            return Err(Error::toolchain(
                "CUDA kernels link the static CUDA runtime, and `libcudart_static.a` was not \
                 found beside nvcc (tried `lib64`, `lib` and `targets/<arch>-linux/lib` of its \
                 toolkit, and pip's `nvidia/cuda_runtime/lib`). Install the CUDA runtime \
                 (`pip install nvidia-cuda-runtime`, or the toolkit's cudart package)."
                    .to_string(),
            ));
        };
        // nvcc names its temporary files after its process id, and they
        // reach the objects as local file symbols: dropping local symbols
        // keeps the library byte-identical across builds.
        let mut args = vec!["-Wl,--discard-all".to_string(), format!("-L{}", dir.display())];
        args.extend(["-lcudart_static", "-ldl", "-lrt", "-lpthread"].map(String::from));
        Ok(LinkNeeds { args, reads: vec![dir.join("libcudart_static.a")] })
    }
}
