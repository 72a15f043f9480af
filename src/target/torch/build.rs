//! The torch target as one of [`crate::target::TARGETS`]: its files (the
//! registration TU `gen/<NAME>.torch.cc`, a unit of its own compiled by the
//! host C++ compiler against the installed torch's headers; the module
//! `<NAME>_torch.py` and its stub), its warnings (the kernels it leaves
//! out) and its toolchain (torch's headers, asked of `BEGEN_TORCH_PYTHON`,
//! else `BEGEN_PYTHON`). The build links its library, `lib<NAME>_torch.so`,
//! from the same wrapper objects as every other selected target's (each
//! compiled once) and its own unit, and commits it with the others'.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

use crate::build::{Discovery, TargetHeaders, TargetToolchain};
use crate::diag::{Diagnostic, Severity};
use crate::emit::abi::TargetSection;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::model::generated::{FileKind, GeneratedFile, TORCH, TargetId};
use crate::model::plan::Plan;
use crate::model::{Function, Library};
use crate::source::SourceMap;

/// The outputs of the torch target of library `name`: its library, module
/// and stub.
pub(crate) fn outputs(name: &str) -> [String; 3] {
    [format!("lib{name}_torch.so"), format!("{name}_torch.py"), format!("{name}_torch.pyi")]
}

/// The torch target.
pub(crate) struct Torch;

impl crate::target::Target for Torch {
    fn id(&self) -> TargetId {
        TORCH
    }

    /// A warning per kernel it leaves out, at the kernel's line.
    fn check(&self, lib: &Library, sources: &SourceMap) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        for s in super::emit(lib).skipped {
            match super::skipped_warning(&s, sources) {
                Some(d) => out.push(d),
                None => {
                    let message = format!(
                        "the torch target leaves out kernel '{}' ({}:{}): {}",
                        s.function, s.file, s.line, s.reason
                    );
                    if let Some((id, _)) = sources.files().next() {
                        out.push(Diagnostic::file(Severity::Warning, id, message));
                    }
                }
            }
        }
        out
    }

    fn outputs(&self, lib: &Library) -> Vec<String> {
        outputs(&lib.name).to_vec()
    }

    /// Nothing: its ops call the wrappers' plain trampolines.
    fn wrapper_section(&self, _functions: &[&Function]) -> TargetSection {
        TargetSection::default()
    }

    fn emit(&self, lib: &Library, _api_version: Option<&str>) -> Vec<GeneratedFile> {
        let files = super::emit(lib);
        let [_, py, pyi] = outputs(&lib.name);
        vec![
            GeneratedFile {
                rel_path: format!("gen/{}.torch.cc", lib.name),
                kind: FileKind::TargetUnit { target: TORCH, heavy: false },
                source: None,
                contents: files.cc,
            },
            GeneratedFile { rel_path: py, kind: FileKind::PythonModule, source: None, contents: files.py },
            GeneratedFile { rel_path: pyi, kind: FileKind::PythonStub, source: None, contents: files.pyi },
        ]
    }

    fn toolchain(&self) -> &dyn TargetToolchain {
        &TorchHeaders
    }
}

/// The torch target's toolchain needs.
struct TorchHeaders;

impl TargetToolchain for TorchHeaders {
    /// torch's headers, for its own unit only (no kernel TU includes
    /// them), with the stable ABI's floor defined; the torch version and
    /// include folder as the fingerprint (a torch upgrade recompiles the
    /// unit). Its library resolves the stable ABI's symbols from torch when
    /// torch loads it: linked without `--no-undefined`, and with no libtorch.
    fn find(&self, plan: &Plan, _discovery: &Discovery, env: &Env) -> Result<TargetHeaders> {
        let (include, version) = torch_headers(env)?;
        Ok(TargetHeaders {
            target: TORCH,
            system_includes: Vec::new(),
            unit_args: vec![
                OsString::from("-isystem"),
                include.clone().into_os_string(),
                OsString::from(super::target_version_define()),
                // Its helpers are emitted whole, whichever ops call them.
                OsString::from("-Wno-unused-function"),
            ],
            fingerprint: format!("torch {version} {}", include.display()),
            api_version: None,
            library: outputs(&plan.outputs.name)[0].clone(),
            undefined_symbols: true,
        })
    }
}

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
