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

/// The files a run read, which diagnostics point into (see [`render`]).
pub use crate::source::SourceMap;
use crate::source::{FileId, Span};

/// How bad a diagnostic is: errors stop a build, warnings do not.
///
/// ```
/// use begen::diag::Severity;
/// assert!(Severity::Error > Severity::Warning);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Reported, but the library still builds.
    Warning,
    /// Stops a build; a function with an error is left out of the library.
    Error,
}

impl Severity {
    /// `"warning"` or `"error"`, as JSON shows it.
    ///
    /// ```
    /// assert_eq!(begen::diag::Severity::Error.as_str(), "error");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A further place a diagnostic points at, with what to say there.
///
/// ```
/// use begen::diag::Diagnostic;
/// use begen::source::SourceMap;
/// let mut map = SourceMap::default();
/// let a = map.add("a.cu", "a.cu", b"void f();".to_vec());
/// let b = map.add("b.cu", "b.cu", b"void f();".to_vec());
/// let d = Diagnostic::error(map.span(b, 5, 6), "duplicate `f`").with(map.span(a, 5, 6), "first defined here");
/// assert_eq!(d.labels[0].span.file, a);
/// assert_eq!(d.labels[0].text, "first defined here");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    /// The place, in any file of the map.
    pub span: Span,
    /// What is said there.
    pub text: String,
}

/// A problem in the user's input.
///
/// ```
/// use begen::diag::{Diagnostic, Severity};
/// use begen::source::SourceMap;
/// let mut map = SourceMap::default();
/// let a = map.add("a.cu", "a.cu", b"void f();".to_vec());
/// let d = Diagnostic::warning(map.span(a, 5, 6), "unused").note("seen once");
/// assert_eq!(d.severity, Severity::Warning);
/// assert_eq!(d.notes, ["seen once"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Whether it stops the build.
    pub severity: Severity,
    /// The one-line message, shown first (`error: ...`).
    pub message: String,
    /// The primary location.
    pub span: Span,
    /// The diagnostic is about `span`'s whole file (line 0 in reports).
    pub whole_file: bool,
    /// Said under the primary span.
    pub label: Option<String>,
    /// Secondary locations, in any file.
    pub labels: Vec<Label>,
    /// Extra explanations, shown after the snippets as `= note: ...`.
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
    ///
    /// ```
    /// use begen::diag::{Diagnostic, Severity};
    /// use begen::source::SourceMap;
    /// let mut map = SourceMap::default();
    /// let a = map.add("a.cu", "a.cu", b"void f();".to_vec());
    /// let d = Diagnostic::error(map.span(a, 5, 6), "bad name");
    /// assert_eq!(d.severity, Severity::Error);
    /// ```
    pub fn error(span: Span, message: impl Into<String>) -> Self {
        Diagnostic::new(Severity::Error, span, message)
    }

    /// A warning at `span`.
    ///
    /// ```
    /// use begen::diag::{Diagnostic, Severity};
    /// use begen::source::SourceMap;
    /// let mut map = SourceMap::default();
    /// let a = map.add("a.cu", "a.cu", b"void f();".to_vec());
    /// let d = Diagnostic::warning(map.span(a, 5, 6), "odd name");
    /// assert_eq!(d.severity, Severity::Warning);
    /// ```
    pub fn warning(span: Span, message: impl Into<String>) -> Self {
        Diagnostic::new(Severity::Warning, span, message)
    }

    /// A diagnostic about a whole file.
    ///
    /// ```
    /// use begen::diag::{Diagnostic, Severity};
    /// use begen::source::SourceMap;
    /// let mut map = SourceMap::default();
    /// let a = map.add("a.cu", "a.cu", b"void f();".to_vec());
    /// let d = Diagnostic::file(Severity::Error, a, "cannot read");
    /// assert_eq!(d.location(&map), ("a.cu", 0, 0));
    /// ```
    pub fn file(severity: Severity, file: FileId, message: impl Into<String>) -> Self {
        Diagnostic { whole_file: true, ..Diagnostic::new(severity, Span::file(file), message) }
    }

    /// Sets the text under the primary span.
    ///
    /// ```
    /// use begen::diag::{Diagnostic, Severity};
    /// use begen::source::SourceMap;
    /// let mut map = SourceMap::default();
    /// let a = map.add("a.cu", "a.cu", b"void f();".to_vec());
    /// let d = Diagnostic::error(map.span(a, 5, 6), "bad name").label("here");
    /// assert_eq!(d.label.as_deref(), Some("here"));
    /// ```
    pub fn label(mut self, text: impl Into<String>) -> Self {
        self.label = Some(text.into());
        self
    }

    /// Adds a secondary labelled span.
    ///
    /// ```
    /// use begen::diag::{Diagnostic, Severity};
    /// use begen::source::SourceMap;
    /// let mut map = SourceMap::default();
    /// let a = map.add("a.cu", "a.cu", b"void f();".to_vec());
    /// let d = Diagnostic::error(map.span(a, 5, 6), "bad").with(map.span(a, 0, 4), "because of this");
    /// assert_eq!(d.labels.len(), 1);
    /// ```
    pub fn with(mut self, span: Span, text: impl Into<String>) -> Self {
        self.labels.push(Label { span, text: text.into() });
        self
    }

    /// Adds a note.
    ///
    /// ```
    /// use begen::diag::{Diagnostic, Severity};
    /// use begen::source::SourceMap;
    /// let mut map = SourceMap::default();
    /// let a = map.add("a.cu", "a.cu", b"void f();".to_vec());
    /// let d = Diagnostic::error(map.span(a, 5, 6), "bad").note("one").note("two");
    /// assert_eq!(d.notes, ["one", "two"]);
    /// ```
    pub fn note(mut self, text: impl Into<String>) -> Self {
        self.notes.push(text.into());
        self
    }

    /// Sets the advice.
    ///
    /// ```
    /// use begen::diag::{Diagnostic, Severity};
    /// use begen::source::SourceMap;
    /// let mut map = SourceMap::default();
    /// let a = map.add("a.cu", "a.cu", b"void f();".to_vec());
    /// let d = Diagnostic::error(map.span(a, 5, 6), "bad").hint("rename it");
    /// assert_eq!(d.hint.as_deref(), Some("rename it"));
    /// ```
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Whether its severity is [`Severity::Error`].
    ///
    /// ```
    /// use begen::diag::{Diagnostic, Severity};
    /// use begen::source::SourceMap;
    /// let mut map = SourceMap::default();
    /// let a = map.add("a.cu", "a.cu", b"void f();".to_vec());
    /// assert!(Diagnostic::error(map.span(a, 5, 6), "bad").is_error());
    /// assert!(!Diagnostic::warning(map.span(a, 5, 6), "odd").is_error());
    /// ```
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The relative file name, 1-based line and byte column of the primary
    /// location ((name, 0, 0) for a whole file): what reports show.
    ///
    /// ```
    /// use begen::diag::{Diagnostic, Severity};
    /// use begen::source::SourceMap;
    /// let mut map = SourceMap::default();
    /// let a = map.add("a.cu", "a.cu", b"void f();".to_vec());
    /// let d = Diagnostic::error(map.span(a, 5, 6), "bad");
    /// assert_eq!(d.location(&map), ("a.cu", 1, 6));
    /// ```
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
    // Files ranked by name once, so the keys are plain numbers.
    let mut ids: Vec<(FileId, &str)> = map.files().map(|(id, f)| (id, f.name.as_str())).collect();
    ids.sort_by(|a, b| a.1.cmp(b.1));
    let mut rank = vec![0usize; ids.len()];
    for (r, (id, _)) in ids.iter().enumerate() {
        rank[id.index()] = r;
    }
    diags.sort_by_cached_key(|d| {
        let (_, line, column) = d.location(map);
        (rank[d.span.file.index()], line, column)
    });
}
