//! A file as read: its name relative to the root, its bytes, and a line index,
//! so byte spans become diagnostics that point at a line and column.

use std::path::PathBuf;

use super::lex::LineIndex;
use crate::check::Loc;
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
        let (line, column, len) = self.place(span);
        let d = Diagnostic::error(self.file.clone(), self.path.clone(), message).at(line, column, len);
        Diagnostic { severity, ..d }
    }

    /// Where `span` is, as [`SourceText::diag`] would point at it.
    pub fn loc(&self, span: Span) -> Loc {
        let (line, column, len) = self.place(span);
        Loc { file: self.file.clone(), path: self.path.clone(), line, column, len }
    }

    /// Line, column and length of `span` clipped to its first line.
    fn place(&self, span: Span) -> (usize, usize, usize) {
        let (line, column) = self.index.position(span.start);
        let rest = &self.bytes[span.start.min(self.bytes.len())..];
        let line_end = memchr::memchr2(b'\n', b'\r', rest).map_or(self.bytes.len(), |k| span.start + k);
        (line, column, span.end.min(line_end).saturating_sub(span.start))
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
