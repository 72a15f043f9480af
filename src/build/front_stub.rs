//! TEMPORARY stand-ins for the front half's API (scan, render, identifier
//! check) until it is merged into main. Removed at that merge.

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::diag::Diagnostic;
use crate::error::Result;
use crate::model::{Function, SourceFile};

/// TEMPORARY: the shape of `begen::scan::Scan`.
#[derive(Debug, Clone, Default)]
#[allow(dead_code)]
pub struct Scan {
    pub root: PathBuf,
    pub config: Config,
    pub functions: Vec<Function>,
    pub sources: Vec<SourceFile>,
    pub diagnostics: Vec<Diagnostic>,
    pub files_read: Vec<PathBuf>,
}

/// TEMPORARY: finds no functions; lists `.cpp`/`.cu` sources only.
pub fn scan(root: &Path) -> Result<Scan> {
    let mut sources = Vec::new();
    for entry in walkdir::WalkDir::new(root).sort_by_file_name().into_iter().flatten() {
        let path = entry.path();
        let platform = match path.extension().and_then(|e| e.to_str()) {
            Some("cpp" | "cc" | "cxx") => crate::model::Platform::Cpu,
            Some("cu") => crate::model::Platform::Cuda,
            _ => continue,
        };
        let file = path.strip_prefix(root).unwrap_or(path).to_string_lossy().replace('\\', "/");
        sources.push(SourceFile { file, path: path.to_path_buf(), platform });
    }
    let files_read = sources.iter().map(|s| s.path.clone()).collect();
    Ok(Scan { root: root.to_path_buf(), sources, files_read, ..Scan::default() })
}

/// TEMPORARY: one line per diagnostic.
pub fn render_text(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|d| format!("{}: {}\n  --> {}:{}:{}\n", d.severity.as_str(), d.message, d.file, d.line, d.column))
        .collect()
}

/// TEMPORARY: an ASCII C++ identifier.
pub fn is_cpp_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}
