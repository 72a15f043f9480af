//! Diagnostics about the user's sources: one type, one catalogue of
//! messages (`messages`), one renderer (`render`) with two outputs (rustc-like
//! text for the CLI, `cargo:warning=` lines for build.rs).

pub mod messages;
pub mod render;

use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A problem in the user's input, located in a file.
///
/// `file` is relative to the scanned root with `/` separators (what JSON
/// shows); `path` is where it was read from (what the renderer opens for the
/// snippet). `line`/`column` are 1-based; 0 means "the whole file".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub file: String,
    pub path: PathBuf,
    pub line: usize,
    pub column: usize,
    /// Length in bytes of the highlighted text on `line` (0: a caret only).
    pub len: usize,
    pub message: String,
    /// A short label printed under the snippet.
    pub label: Option<String>,
    /// Advice: how to fix it.
    pub hint: Option<String>,
}

impl Diagnostic {
    pub fn error(file: impl Into<String>, path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            file: file.into(),
            path: path.into(),
            line: 0,
            column: 0,
            len: 0,
            message: message.into(),
            label: None,
            hint: None,
        }
    }
    pub fn warning(file: impl Into<String>, path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Diagnostic { severity: Severity::Warning, ..Diagnostic::error(file, path, message) }
    }
    pub fn at(mut self, line: usize, column: usize, len: usize) -> Self {
        self.line = line;
        self.column = column;
        self.len = len;
        self
    }
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}
