//! Diagnostics about the user's input: one type, one catalogue of messages
//! (`messages`), one renderer (`render`) with two outputs (rustc-like text for
//! the CLI, `cargo:warning=` lines for build.rs).
//!
//! A diagnostic points at a [`Span`] of the [`SourceMap`] (or at a whole
//! file), and may carry further labelled spans in any file (a duplicate
//! points at both definitions), notes and a hint.
//!
//! ```
//! use begen::diag::{render::render_text, Diagnostic};
//! use begen::source::SourceMap;
//! let mut map = SourceMap::default();
//! let a = map.add("a.cu", "a.cu", b"// @BE f\nvoid f(BE::Tensor y);\n".to_vec());
//! let d = Diagnostic::error(map.span(a, 14, 15), "bad").label("here").hint("fix it");
//! let text = render_text(&d, &map, false);
//! assert!(text.starts_with("error: bad\n --> a.cu:2:6\n"), "{text}");
//! assert!(text.contains("= help: fix it"));
//! ```

pub(crate) mod messages;
pub mod render;

use crate::source::{FileId, SourceMap, Span};

/// How bad a diagnostic is: errors stop a build, warnings do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Warning,
    Error,
}

impl Severity {
    /// `"warning"` or `"error"`, as JSON shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A further place a diagnostic points at, with what to say there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub text: String,
}

/// A problem in the user's input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    /// The primary location.
    pub span: Span,
    /// The diagnostic is about `span`'s whole file (line 0 in reports).
    pub whole_file: bool,
    /// Said under the primary span.
    pub label: Option<String>,
    /// Secondary locations, in any file.
    pub labels: Vec<Label>,
    pub notes: Vec<String>,
    /// How to fix it.
    pub hint: Option<String>,
}

impl Diagnostic {
    fn new(severity: Severity, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            message: message.into(),
            span,
            whole_file: false,
            label: None,
            labels: Vec::new(),
            notes: Vec::new(),
            hint: None,
        }
    }

    /// An error at `span`.
    pub fn error(span: Span, message: impl Into<String>) -> Self {
        Diagnostic::new(Severity::Error, span, message)
    }

    /// A warning at `span`.
    pub fn warning(span: Span, message: impl Into<String>) -> Self {
        Diagnostic::new(Severity::Warning, span, message)
    }

    /// A diagnostic about a whole file.
    pub fn file(severity: Severity, file: FileId, message: impl Into<String>) -> Self {
        Diagnostic { whole_file: true, ..Diagnostic::new(severity, Span::file(file), message) }
    }

    /// Sets the text under the primary span.
    pub fn label(mut self, text: impl Into<String>) -> Self {
        self.label = Some(text.into());
        self
    }

    /// Adds a secondary labelled span.
    pub fn with(mut self, span: Span, text: impl Into<String>) -> Self {
        self.labels.push(Label { span, text: text.into() });
        self
    }

    /// Adds a note.
    pub fn note(mut self, text: impl Into<String>) -> Self {
        self.notes.push(text.into());
        self
    }

    /// Sets the advice.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The relative file name, 1-based line and byte column of the primary
    /// location ((name, 0, 0) for a whole file): what reports show.
    pub fn location<'m>(&self, map: &'m SourceMap) -> (&'m str, usize, usize) {
        let name = map.name(self.span);
        if self.whole_file {
            return (name, 0, 0);
        }
        let (line, column) = map.position(self.span);
        (name, line, column)
    }
}

/// Sorts diagnostics by file name, line and column (stable: diagnostics at
/// one place keep the order they were found in).
pub(crate) fn sort(diags: &mut [Diagnostic], map: &SourceMap) {
    diags.sort_by_cached_key(|d| {
        let (file, line, column) = d.location(map);
        (file.to_string(), line, column)
    });
}
