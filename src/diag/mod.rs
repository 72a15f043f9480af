//! Diagnostics about the user's input: one type, one catalogue of messages
//! (`messages`), one renderer (`render`) with two outputs (rustc-like text for
//! the CLI, `cargo:warning=` lines for build.rs).
//!
//! A diagnostic points at a span of a file in the [`SourceMap`] (or at a
//! whole file), and may carry further labelled spans in any file (a
//! duplicate points at both definitions), notes and a hint.
//!
//! ```
//! use begen::diag::render::render_text;
//! // A kernel directory that exports `twice` twice.
//! let run = begen::driver::run(&begen::driver::Settings::new("fixtures/err_duplicates/input"))?;
//! let text = render_text(&run.diagnostics[0], &run.sources, false);
//! assert!(text.starts_with("error: 'twice' is exported twice\n --> a.cu:6:8\n"), "{text}");
//! assert!(text.contains("first exported here"));
//! # Ok::<(), begen::Error>(())
//! ```

pub(crate) mod messages;
pub mod render;
pub(crate) mod suggest;

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Label {
    /// The place, in any file of the map.
    pub(crate) span: Span,
    /// What is said there.
    pub(crate) text: String,
}

/// A problem in the user's input.
///
/// ```
/// let run = begen::driver::run(&begen::driver::Settings::new("fixtures/err_duplicates/input"))?;
/// for d in &run.diagnostics {
///     let (file, line, column) = d.location(&run.sources);
///     println!("{file}:{line}:{column}: {}", d.message());
/// }
/// assert_eq!(run.diagnostics[1].message(), "'once' is exported twice");
/// # Ok::<(), begen::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Whether it stops the build.
    pub(crate) severity: Severity,
    /// The one-line message, shown first (`error: ...`).
    pub(crate) message: String,
    /// The primary location.
    pub(crate) span: Span,
    /// The diagnostic is about `span`'s whole file (line 0 in reports).
    pub(crate) whole_file: bool,
    /// Said under the primary span.
    pub(crate) label: Option<String>,
    /// Secondary locations, in any file.
    pub(crate) labels: Vec<Label>,
    /// Extra explanations, shown after the snippets as `= note: ...`.
    pub(crate) notes: Vec<String>,
    /// How to fix it.
    pub(crate) hint: Option<String>,
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
    pub(crate) fn error(span: Span, message: impl Into<String>) -> Self {
        Diagnostic::new(Severity::Error, span, message)
    }

    /// A warning at `span`.
    pub(crate) fn warning(span: Span, message: impl Into<String>) -> Self {
        Diagnostic::new(Severity::Warning, span, message)
    }

    /// A diagnostic about a whole file.
    pub(crate) fn file(severity: Severity, file: FileId, message: impl Into<String>) -> Self {
        Diagnostic { whole_file: true, ..Diagnostic::new(severity, Span::file(file), message) }
    }

    /// Sets the text under the primary span.
    pub(crate) fn label(mut self, text: impl Into<String>) -> Self {
        self.label = Some(text.into());
        self
    }

    /// Adds a secondary labelled span.
    pub(crate) fn with(mut self, span: Span, text: impl Into<String>) -> Self {
        self.labels.push(Label { span, text: text.into() });
        self
    }

    /// Adds a note.
    pub(crate) fn note(mut self, text: impl Into<String>) -> Self {
        self.notes.push(text.into());
        self
    }

    /// Sets the advice.
    pub(crate) fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Whether its severity is [`Severity::Error`].
    ///
    /// ```
    /// let run = begen::driver::run(&begen::driver::Settings::new("fixtures/err_duplicates/input"))?;
    /// assert!(run.diagnostics.iter().all(|d| d.is_error()) && run.has_errors());
    /// # Ok::<(), begen::Error>(())
    /// ```
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Whether it stops the build, or is a warning.
    ///
    /// ```
    /// use begen::diag::Severity;
    /// let run = begen::driver::run(&begen::driver::Settings::new("fixtures/err_duplicates/input"))?;
    /// assert!(run.diagnostics.iter().all(|d| d.severity() == Severity::Error));
    /// # Ok::<(), begen::Error>(())
    /// ```
    pub fn severity(&self) -> Severity {
        self.severity
    }

    /// The one-line message, shown first (`error: ...`); the snippet, the
    /// labels, notes and hint are in [`render::render_text`]'s text.
    ///
    /// ```
    /// let run = begen::driver::run(&begen::driver::Settings::new("fixtures/err_duplicates/input"))?;
    /// assert!(run.diagnostics.iter().all(|d| !d.message().is_empty()));
    /// # Ok::<(), begen::Error>(())
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The relative file name, 1-based line and byte column of the primary
    /// location ((name, 0, 0) for a whole file): what reports show.
    ///
    /// ```
    /// let run = begen::driver::run(&begen::driver::Settings::new("fixtures/err_duplicates/input"))?;
    /// assert_eq!(run.diagnostics[0].location(&run.sources), ("a.cu", 6, 8));
    /// assert_eq!(run.diagnostics[1].location(&run.sources), ("sub/b.cpp", 3, 8));
    /// # Ok::<(), begen::Error>(())
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

#[cfg(test)]
mod doc_examples {
    //! The examples of this module's crate-private items, run as unit tests
    //! (an example in a doc comment must compile outside the crate).

    #[test]
    fn module() {
        use crate::diag::SourceMap;
        use crate::diag::{Diagnostic, render::render_text};
        let mut map = SourceMap::default();
        let a = map.add("a.cu", "a.cu", b"// @BE f\nvoid f(BE::Tensor y);\n".to_vec());
        let d = Diagnostic::error(map.span(a, 14, 15), "bad").label("here").hint("fix it");
        let text = render_text(&d, &map, false);
        assert!(text.starts_with("error: bad\n --> a.cu:2:6\n"), "{text}");
        assert!(text.contains("= help: fix it"));
    }

    #[test]
    fn label() {
        use crate::diag::Diagnostic;
        use crate::diag::SourceMap;
        let mut map = SourceMap::default();
        let a = map.add("a.cu", "a.cu", b"void f();".to_vec());
        let b = map.add("b.cu", "b.cu", b"void f();".to_vec());
        let d = Diagnostic::error(map.span(b, 5, 6), "duplicate `f`").with(map.span(a, 5, 6), "first defined here");
        assert_eq!(d.labels[0].span.file, a);
        assert_eq!(d.labels[0].text, "first defined here");
    }

    #[test]
    fn diagnostic() {
        use crate::diag::SourceMap;
        use crate::diag::{Diagnostic, Severity};
        let mut map = SourceMap::default();
        let a = map.add("a.cu", "a.cu", b"void f();".to_vec());
        let d = Diagnostic::warning(map.span(a, 5, 6), "unused").note("seen once");
        assert_eq!(d.severity, Severity::Warning);
        assert_eq!(d.notes, ["seen once"]);
    }

    #[test]
    fn diagnostic_error() {
        use crate::diag::SourceMap;
        use crate::diag::{Diagnostic, Severity};
        let mut map = SourceMap::default();
        let a = map.add("a.cu", "a.cu", b"void f();".to_vec());
        let d = Diagnostic::error(map.span(a, 5, 6), "bad name");
        assert_eq!(d.severity, Severity::Error);
    }

    #[test]
    fn diagnostic_warning() {
        use crate::diag::SourceMap;
        use crate::diag::{Diagnostic, Severity};
        let mut map = SourceMap::default();
        let a = map.add("a.cu", "a.cu", b"void f();".to_vec());
        let d = Diagnostic::warning(map.span(a, 5, 6), "odd name");
        assert_eq!(d.severity, Severity::Warning);
    }

    #[test]
    fn diagnostic_file() {
        use crate::diag::SourceMap;
        use crate::diag::{Diagnostic, Severity};
        let mut map = SourceMap::default();
        let a = map.add("a.cu", "a.cu", b"void f();".to_vec());
        let d = Diagnostic::file(Severity::Error, a, "cannot read");
        assert_eq!(d.location(&map), ("a.cu", 0, 0));
    }

    #[test]
    fn diagnostic_label() {
        use crate::diag::Diagnostic;
        use crate::diag::SourceMap;
        let mut map = SourceMap::default();
        let a = map.add("a.cu", "a.cu", b"void f();".to_vec());
        let d = Diagnostic::error(map.span(a, 5, 6), "bad name").label("here");
        assert_eq!(d.label.as_deref(), Some("here"));
    }

    #[test]
    fn diagnostic_with() {
        use crate::diag::Diagnostic;
        use crate::diag::SourceMap;
        let mut map = SourceMap::default();
        let a = map.add("a.cu", "a.cu", b"void f();".to_vec());
        let d = Diagnostic::error(map.span(a, 5, 6), "bad").with(map.span(a, 0, 4), "because of this");
        assert_eq!(d.labels.len(), 1);
    }

    #[test]
    fn diagnostic_note() {
        use crate::diag::Diagnostic;
        use crate::diag::SourceMap;
        let mut map = SourceMap::default();
        let a = map.add("a.cu", "a.cu", b"void f();".to_vec());
        let d = Diagnostic::error(map.span(a, 5, 6), "bad").note("one").note("two");
        assert_eq!(d.notes, ["one", "two"]);
    }

    #[test]
    fn diagnostic_hint() {
        use crate::diag::Diagnostic;
        use crate::diag::SourceMap;
        let mut map = SourceMap::default();
        let a = map.add("a.cu", "a.cu", b"void f();".to_vec());
        let d = Diagnostic::error(map.span(a, 5, 6), "bad").hint("rename it");
        assert_eq!(d.hint.as_deref(), Some("rename it"));
    }

    #[test]
    fn diagnostic_is_error() {
        use crate::diag::Diagnostic;
        use crate::diag::SourceMap;
        let mut map = SourceMap::default();
        let a = map.add("a.cu", "a.cu", b"void f();".to_vec());
        assert!(Diagnostic::error(map.span(a, 5, 6), "bad").is_error());
        assert!(!Diagnostic::warning(map.span(a, 5, 6), "odd").is_error());
    }

    #[test]
    fn diagnostic_location() {
        use crate::diag::Diagnostic;
        use crate::diag::SourceMap;
        let mut map = SourceMap::default();
        let a = map.add("a.cu", "a.cu", b"void f();".to_vec());
        let d = Diagnostic::error(map.span(a, 5, 6), "bad");
        assert_eq!(d.location(&map), ("a.cu", 1, 6));
    }
}
