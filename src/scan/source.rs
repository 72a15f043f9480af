//! A file as read: its name relative to the root, its bytes, and a line index,
//! so byte spans become diagnostics that point at a line and column.

use std::path::PathBuf;

use super::lex::LineIndex;
use crate::diag::{Diagnostic, Severity};
use crate::parse::Span;

#[derive(Debug, Clone)]
pub struct SourceText {
    /// Relative to the root, `/`-separated.
    pub file: String,
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    pub index: LineIndex,
}

impl SourceText {
    pub fn new(file: String, path: PathBuf, bytes: Vec<u8>) -> Self {
        let index = LineIndex::new(&bytes);
        SourceText { file, path, bytes, index }
    }

    /// 1-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        self.index.position(offset).0
    }

    /// A diagnostic highlighting `span` (clipped to its first line).
    pub fn diag(&self, severity: Severity, span: Span, message: impl Into<String>) -> Diagnostic {
        let (line, column) = self.index.position(span.start);
        let line_end = self.bytes[span.start.min(self.bytes.len())..]
            .iter()
            .position(|b| *b == b'\n' || *b == b'\r')
            .map_or(self.bytes.len(), |k| span.start + k);
        let len = span.end.min(line_end).saturating_sub(span.start);
        let d = Diagnostic::error(self.file.clone(), self.path.clone(), message).at(line, column, len);
        Diagnostic { severity, ..d }
    }

    pub fn error(&self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.diag(Severity::Error, span, message)
    }

    pub fn warning(&self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.diag(Severity::Warning, span, message)
    }

    /// A diagnostic about the whole file (line 0).
    pub fn file_diag(&self, severity: Severity, message: impl Into<String>) -> Diagnostic {
        let d = Diagnostic::error(self.file.clone(), self.path.clone(), message);
        Diagnostic { severity, ..d }
    }
}
