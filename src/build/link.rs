//! Linking the objects into `lib<NAME>.so` with the host compiler driver.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};

/// One link: objects and output are relative to `work`, where it runs.
pub struct LinkJob<'a> {
    pub work: &'a Path,
    pub linker: &'a Path,
    pub objects: &'a [PathBuf],
    pub output: &'a Path,
    /// `None`: a CPU-only library. `Some(dir)`: link the static CUDA runtime
    /// from `dir` (`Some(None)`: CUDA, but no `libcudart_static.a` was found).
    pub cudart_dir: Option<Option<&'a Path>>,
}

/// The linker's argv (without the program).
pub fn link_args(job: &LinkJob<'_>) -> Result<Vec<String>> {
    let mut args = vec![
        "-shared".to_string(),
        "-o".to_string(),
        job.output.display().to_string(),
    ];
    args.extend(job.objects.iter().map(|o| o.display().to_string()));
    let soname = job
        .output
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    args.push(format!("-Wl,-soname,{soname}"));
    args.push("-Wl,--no-undefined".to_string());
    args.push("-Wl,--exclude-libs,ALL".to_string());
    match job.cudart_dir {
        None => {}
        Some(Some(dir)) => {
            // nvcc names its temporary files after its process id, and they
            // reach the objects as local file symbols: dropping local symbols
            // keeps the library byte-identical across builds.
            args.push("-Wl,--discard-all".to_string());
            args.push(format!("-L{}", dir.display()));
            for lib in ["-lcudart_static", "-ldl", "-lrt", "-lpthread"] {
                args.push(lib.to_string());
            }
        }
        Some(None) => {
            return Err(Error::Toolchain(
                "CUDA kernels link the static CUDA runtime, and `libcudart_static.a` was not \
                 found beside nvcc (tried `lib64`, `lib` and `targets/<arch>-linux/lib` of its \
                 toolkit, and pip's `nvidia/cuda_runtime/lib`). Install the CUDA runtime \
                 (`pip install nvidia-cuda-runtime`, or the toolkit's cudart package)."
                    .to_string(),
            ));
        }
    }
    Ok(args)
}

/// Links; on failure the error carries the command and the linker's output.
pub fn link(job: &LinkJob<'_>) -> Result<()> {
    let args = link_args(job)?;
    let output = Command::new(job.linker)
        .args(&args)
        .current_dir(job.work)
        .output()
        .map_err(|e| {
            Error::Toolchain(format!(
                "could not run the linker `{}`: {e}",
                job.linker.display()
            ))
        })?;
    if output.status.success() {
        return Ok(());
    }
    Err(Error::Compile {
        what: format!("linking {}", job.output.display()),
        output: format!(
            "command: {} {}\n{}{}",
            job.linker.display(),
            args.join(" "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    })
}
