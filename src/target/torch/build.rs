//! Building the torch target's outputs: the registration TU compiled by the
//! host C++ compiler against the installed torch's headers, linked with the
//! library's wrapper objects (compiled once, for every target) into
//! `lib<NAME>_torch.so`; `<NAME>_torch.py` and `.pyi` beside it.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::TorchFiles;
use crate::env::Env;
use crate::error::{Error, Result};

/// The outputs of the torch target of library `name`.
pub(crate) fn outputs(name: &str) -> [String; 3] {
    [format!("lib{name}_torch.so"), format!("{name}_torch.py"), format!("{name}_torch.pyi")]
}

/// What the link of `lib<NAME>_torch.so` takes from the library's build.
pub(crate) use crate::build::StageJob as TorchJob;

/// The include folder of the torch that `BEGEN_TORCH_PYTHON` (else the
/// build's Python) imports, and its version.
pub(crate) fn torch_headers(env: &Env) -> Result<(PathBuf, String)> {
    let (python, from) = match env.var("BEGEN_TORCH_PYTHON") {
        Some(p) => (p, "BEGEN_TORCH_PYTHON"),
        None => (crate::build::python(env), "BEGEN_PYTHON (no BEGEN_TORCH_PYTHON)"),
    };
    let probe =
        "import os, torch; print(os.path.join(os.path.dirname(torch.__file__), 'include')); print(torch.__version__)";
    let output = Command::new(&python).args(["-c", probe]).output();
    let fail = |why: String| {
        Error::toolchain(format!(
            "the torch target needs PyTorch's headers, found by asking a Python that imports torch; {python} \
             (from {from}) {why}. Set BEGEN_TORCH_PYTHON to the python of an environment with torch {}.{} or \
             newer (scripts/setup-torch.sh makes one), or leave `torch` out of the targets.",
            super::FLOOR.0,
            super::FLOOR.1
        ))
    };
    let output = output.map_err(|e| fail(format!("could not be run ({e})")))?;
    if !output.status.success() {
        let err = String::from_utf8_lossy(&output.stderr);
        let last = err.lines().last().unwrap_or("").trim().to_string();
        return Err(fail(format!("could not import torch ({last})")));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let mut lines = text.lines();
    let include = PathBuf::from(lines.next().unwrap_or_default());
    let version = lines.next().unwrap_or_default().to_string();
    if !include.join("torch/csrc/stable/library.h").is_file() {
        return Err(fail(format!(
            "has torch {version}, whose headers at {} lack the stable ABI (torch/csrc/stable/library.h)",
            include.display()
        )));
    }
    let numbers: Vec<u64> = version.split(['.', '+']).take(2).filter_map(|p| p.parse().ok()).collect();
    if numbers.len() == 2 && (numbers[0], numbers[1]) < super::FLOOR {
        return Err(fail(format!("has torch {version}, older than the floor")));
    }
    Ok((include, version))
}

/// Compiles the registration TU, links `lib<NAME>_torch.so` and writes the
/// module and stub into OUT (each only when its bytes changed). Returns the
/// outputs written.
pub(crate) fn build(job: &TorchJob<'_>, files: &TorchFiles, torch_include: &Path) -> Result<Vec<PathBuf>> {
    let gen_rel = PathBuf::from(format!("gen/{}.torch.cc", job.name));
    let obj_rel = PathBuf::from(format!("obj/gen/{}.torch.cc.o", job.name));
    let path = job.work.join(&gen_rel);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    std::fs::write(&path, files.cc.as_bytes()).map_err(|e| Error::io(&path, e))?;
    if let Some(dir) = job.work.join(&obj_rel).parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let mut cmd = Command::new(job.compiler);
    cmd.args(job.compile_args)
        .arg("-isystem")
        .arg(torch_include)
        .arg(super::target_version_define())
        .arg("-c")
        .arg(&gen_rel)
        .arg("-o")
        .arg(&obj_rel)
        .current_dir(job.work);
    run(cmd, &format!("compiling {}", gen_rel.display()))?;
    // The stable ABI's symbols are torch's, resolved when torch loads the
    // library: no `--no-undefined` here, and no libtorch on the line.
    let mut args: Vec<String> = job.link_args.iter().filter(|a| *a != "-Wl,--no-undefined").cloned().collect();
    args.push(obj_rel.display().to_string());
    let mut link = Command::new(job.compiler);
    link.args(&args).current_dir(job.work);
    run(link, &format!("linking {}", outputs(job.name)[0]))?;
    let [lib, py, pyi] = outputs(job.name);
    let mut written = Vec::new();
    let staged = job.work.join(&job.staged);
    let bytes = std::fs::read(&staged).map_err(|e| Error::io(&staged, e))?;
    for (name, bytes) in [(lib, bytes), (py, files.py.clone().into_bytes()), (pyi, files.pyi.clone().into_bytes())] {
        let path = job.out.join(&name);
        if std::fs::read(&path).ok().as_deref() == Some(&bytes[..]) {
            continue;
        }
        let tmp = job.out.join(format!(".{name}.begen-tmp"));
        std::fs::write(&tmp, &bytes).map_err(|e| Error::io(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))?;
        written.push(path);
    }
    let _ = std::fs::remove_file(&staged);
    Ok(written)
}

fn run(mut cmd: Command, what: &str) -> Result<()> {
    let shown = format!(
        "{} {}",
        cmd.get_program().to_string_lossy(),
        cmd.get_args().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ")
    );
    let output = cmd.output().map_err(|e| Error::toolchain(format!("{what}: could not run `{shown}`: {e}")))?;
    if output.status.success() {
        return Ok(());
    }
    Err(Error::compile(
        what.to_string(),
        format!(
            "command: {shown}\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    ))
}
