//! Renders diagnostics: rustc-style text for people, `cargo:warning=` lines
//! for build scripts. One renderer, two outputs.
//!
//! The layout is annotate-snippets', the library rustc and cargo render
//! their own messages with, so begen's read like the compiler's its users
//! already know: labelled spans over several files, notes and help in one
//! style, colour or plain. (codespan-reporting would do too, but wants its
//! own file database and a terminal-colour crate; annotate-snippets takes
//! the text to show and nothing else.) Snippets come from the in-memory
//! [`SourceMap`]: only the lines a diagnostic points at are handed over,
//! each span clipped to its first line.

use std::borrow::Cow;

use annotate_snippets::{Level, Renderer, Snippet};

use super::messages::{is_unsafe, q};
use super::{Diagnostic, Severity};
use crate::source::{FileId, SourceMap, Span};

/// rustc-like text: the message, `--> file:line:col`, the source lines with
/// the spans underlined and labelled, notes and the hint.
///
/// ```
/// use begen::diag::render::render_text;
/// let run = begen::driver::run(&begen::driver::Settings::new("fixtures/err_duplicates/input"))?;
/// let text = render_text(&run.diagnostics[1], &run.sources, false);
/// assert!(text.starts_with("error: 'once' is exported twice\n --> sub/b.cpp:3:8\n"), "{text}");
/// assert!(text.contains(" ::: a.cu:9:8") && text.contains("= help: function names must be unique"), "{text}");
/// # Ok::<(), begen::Error>(())
/// ```
pub fn render_text(d: &Diagnostic, map: &SourceMap, color: bool) -> String {
    let renderer = if color { Renderer::styled() } else { Renderer::plain() };
    // Every file the diagnostic points into, the primary one first.
    let mut files: Vec<FileId> = vec![d.span.file];
    for l in &d.labels {
        if !files.contains(&l.span.file) {
            files.push(l.span.file);
        }
    }
    let slices: Vec<Slice> = files.iter().filter_map(|&f| slice(d, map, f)).collect();
    // A file whose text was let go (`Settings::show_sources`) is named with
    // the position, without its lines.
    let places: Vec<String> = files
        .iter()
        .filter(|&&f| !d.whole_file && !map.get(f).has_text())
        .map(|&f| {
            let at = if f == d.span.file {
                d.span
            } else {
                d.labels.iter().find(|l| l.span.file == f).map_or(d.span, |l| l.span)
            };
            let (line, column) = map.position(at);
            format!("{}:{line}:{column}", clean(&map.get(f).name))
        })
        .collect();
    let title = clean(&d.message);
    let origin = clean(&map.get(d.span.file).name);
    let mut message = level(d.severity).title(&title);
    if d.whole_file {
        message = message.snippet(Snippet::source("").origin(&origin));
    }
    for place in &places {
        message = message.snippet(Snippet::source("").origin(place));
    }
    for s in &slices {
        let mut snippet = Snippet::source(&s.text).line_start(s.line).origin(&s.origin).fold(true);
        for (k, (range, label)) in s.marks.iter().enumerate() {
            // annotate-snippets draws `^` (no label prefix) for an error
            // mark and `-` for a warning's: primary and secondary.
            let mark = if k == 0 && s.primary { Level::Error } else { Level::Warning };
            snippet = snippet.annotation(mark.span(range.clone()).label(label));
        }
        message = message.snippet(snippet);
    }
    let notes: Vec<Cow<str>> = d.notes.iter().map(|n| clean(n)).collect();
    for n in &notes {
        message = message.footer(Level::Note.title(n));
    }
    let hint = d.hint.as_deref().map(clean);
    if let Some(h) = &hint {
        message = message.footer(Level::Help.title(h));
    }
    let mut out = renderer.render(message).to_string();
    // The renderer counts a mark's column from the start of the text it
    // was given: on a line cut short, the characters cut off its start are
    // added back.
    for s in slices.iter().filter(|s| s.shift > 0) {
        if let Some((range, _)) = s.marks.first().filter(|(r, _)| !s.text[..r.start].contains('\n')) {
            let column = s.text[..range.start].chars().count() + 1;
            let (cut, whole) = (format!("{}:{}:{column}\n", s.origin, s.line), column + s.shift);
            if let Some(at) = out.find(&cut) {
                out.replace_range(at..at + cut.len(), &format!("{}:{}:{whole}\n", s.origin, s.line));
            }
        }
    }
    if d.whole_file || !places.is_empty() {
        // No source to show: drop the empty gutter lines of the empty snippet.
        out = out.lines().filter(|l| l.trim() != "|").map(|l| format!("{l}\n")).collect();
    } else {
        out.push('\n');
    }
    out
}

/// The diagnostic as `cargo:warning=` lines (cargo shows each one).
///
/// ```
/// use begen::diag::render::render_cargo;
/// let run = begen::driver::run(&begen::driver::Settings::new("fixtures/err_duplicates/input"))?;
/// let lines = render_cargo(&run.diagnostics[0], &run.sources);
/// assert_eq!(lines[0], "cargo:warning=error: 'twice' is exported twice");
/// assert!(lines.iter().all(|l| l.starts_with("cargo:warning=")));
/// # Ok::<(), begen::Error>(())
/// ```
pub fn render_cargo(d: &Diagnostic, map: &SourceMap) -> Vec<String> {
    render_text(d, map, false).lines().map(|l| format!("cargo:warning={l}")).collect()
}

fn level(s: Severity) -> Level {
    match s {
        Severity::Error => Level::Error,
        Severity::Warning => Level::Warning,
    }
}

/// The lines of one file that a diagnostic points at, as text, with its
/// marks relative to that text (the primary mark first).
struct Slice {
    origin: String,
    text: String,
    line: usize,
    primary: bool,
    marks: Vec<(std::ops::Range<usize>, String)>,
    /// How many characters of its first line were cut off before `text`.
    shift: usize,
}

/// Lines longer than this are cut to [`CONTEXT`] bytes either side of the
/// marks when shown. The renderer shows at most a terminal's width (140
/// columns) of a line, at most half of it before the first mark, so the
/// cut loses nothing it would show while every diagnostic on a long line
/// costs the renderer a few hundred bytes, not the line's length.
const LONG_LINE: usize = 4096;
const CONTEXT: usize = 256;

fn slice(d: &Diagnostic, map: &SourceMap, file: FileId) -> Option<Slice> {
    let mut spans: Vec<(Span, &str)> = Vec::new();
    let primary = file == d.span.file && !d.whole_file;
    if primary {
        spans.push((d.span, d.label.as_deref().unwrap_or("")));
    }
    spans.extend(d.labels.iter().filter(|l| l.span.file == file).map(|l| (l.span, l.text.as_str())));
    if spans.is_empty() {
        return None;
    }
    let f = map.get(file);
    let lines: Vec<usize> = spans.iter().map(|(s, _)| f.position(s.start).0).collect();
    let (first, last) = (*lines.iter().min()?, *lines.iter().max()?);
    let (mut from, mut to) = (f.line_range(first).start, f.line_range(last).end);
    let line_start = from;
    // A very long line (a begen.yaml written on one line) is cut to the
    // neighbourhood of the marks, so that each of many diagnostics on it
    // costs no more than a short line does; the renderer shows only that
    // much of a line anyway.
    if to - from > LONG_LINE {
        let lo = spans.iter().map(|(s, _)| s.start).min().unwrap_or(from);
        let hi = spans.iter().map(|(s, _)| s.end).max().unwrap_or(to);
        let at_char = |mut k: usize| {
            while f.bytes.get(k).is_some_and(|b| b & 0xC0 == 0x80) {
                k += 1;
            }
            k
        };
        from = at_char(lo.saturating_sub(CONTEXT).max(from)).min(lo.max(from));
        to = at_char(hi.saturating_add(CONTEXT).min(to)).min(to).max(from);
    }
    // A file whose text was let go shows no snippet.
    let bytes = f.bytes.get(from..to).filter(|_| f.has_text())?;
    let text = shown(bytes);
    // Offsets into the shown text: lossy decoding and control pictures may
    // change lengths.
    let at = |offset: usize| -> usize {
        match &text {
            Cow::Borrowed(_) => offset - from,
            Cow::Owned(_) => shown(&bytes[..offset - from]).len(),
        }
    };
    // A span may start or end inside a character (a fixed-width cut of a
    // line, a fuzzed file): its mark covers the whole characters it touches.
    let floor = |mut k: usize| {
        while !text.is_char_boundary(k) {
            k -= 1;
        }
        k
    };
    let ceil = |mut k: usize| {
        while !text.is_char_boundary(k) {
            k += 1;
        }
        k
    };
    let marks = spans
        .iter()
        .zip(&lines)
        .map(|((s, label), &line)| {
            let end = s.end.min(f.line_range(line).end).max(s.start);
            let start = floor(at(s.start).min(text.len()));
            (start..ceil(at(end).min(text.len())).max(start), clean(label).into_owned())
        })
        .collect();
    let shift = if from > line_start { f.chars_before(from) - f.chars_before(line_start) } else { 0 };
    Some(Slice { origin: clean(&f.name).into_owned(), text: text.into_owned(), line: first, primary, marks, shift })
}

/// Source bytes as a snippet shows them: invalid UTF-8 replaced, and every
/// character a terminal would act on (an escape sequence's `ESC`, C1
/// controls, bidirectional overrides) shown as a visible stand-in (C0 as
/// its Unicode control picture, `ESC` as `␛`), so a source can never move
/// the cursor or rewrite a line of the report. Tabs and line ends stay.
fn shown(bytes: &[u8]) -> Cow<'_, str> {
    let text = String::from_utf8_lossy(bytes);
    if !text.chars().any(|c| is_unsafe(c) && !matches!(c, '\t' | '\n' | '\r')) {
        return text;
    }
    let picture = |c: char| match c {
        '\t' | '\n' | '\r' => c,
        '\0'..='\u{1f}' => char::from_u32(0x2400 + u32::from(c)).unwrap_or('\u{fffd}'),
        '\u{7f}' => '\u{2421}',
        c if is_unsafe(c) => '\u{fffd}',
        c => c,
    };
    Cow::Owned(text.chars().map(picture).collect())
}

/// A text the catalogue built, as the renderer prints it: anything that
/// escaped [`q`](super::messages::q) (a file name, an I/O error's words) is
/// escaped here, line breaks kept (the arg_spec system's texts have them).
fn clean(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| is_unsafe(c) && c != '\n') {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.split('\n').map(|line| q(line).to_string()).collect::<Vec<_>>().join("\n"))
}

#[cfg(test)]
mod long_lines {
    use crate::diag::{Diagnostic, SourceMap};
    use crate::source::Span;

    /// Many diagnostics on one long line (a begen.yaml written on one
    /// line) each hand the renderer a bounded slice of it, whatever the
    /// line's length: counted, not timed.
    #[test]
    fn each_mark_on_a_long_line_renders_a_bounded_slice() {
        let names: Vec<String> = (0..20_000).map(|i| format!("bad_{i}")).collect();
        let line =
            format!("functions: {{{}}}\n", names.iter().map(|n| format!("{n}: {{}}")).collect::<Vec<_>>().join(", "));
        let mut map = SourceMap::default();
        let file = map.add("begen.yaml", "begen.yaml", line.clone().into_bytes());
        let mut shown = 0;
        for (i, name) in names.iter().enumerate().step_by(97) {
            let start = line.find(&format!("{name}:")).unwrap();
            let d = Diagnostic::error(Span { file, start, end: start + name.len() }, format!("bad name {i}"));
            let slice = super::slice(&d, &map, file).unwrap();
            assert!(slice.text.len() <= 2 * super::CONTEXT + name.len() + 4, "{} bytes", slice.text.len());
            let (range, _) = &slice.marks[0];
            assert_eq!(&slice.text[range.clone()], name);
            shown += slice.text.len();
            let text = super::render_text(&d, &map, false);
            assert!(text.contains(&format!(" --> begen.yaml:1:{}\n", start + 1)), "{text}");
            assert!(text.contains(&format!("{name}: {{}}")) && text.lines().all(|l| l.len() < 300), "{text}");
        }
        // The line is far longer than all the slices together.
        assert!(shown < line.len() / 2, "{shown} of {}", line.len());
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples of this module's crate-private items, run as unit tests
    //! (an example in a doc comment must compile outside the crate).

    #[test]
    fn render_text() {
        use crate::diag::SourceMap;
        use crate::diag::{Diagnostic, Severity, render::render_text};
        let mut map = SourceMap::default();
        let a = map.add("a.cu", "a.cu", Vec::new());
        let d = Diagnostic::file(Severity::Warning, a, "empty file");
        assert_eq!(render_text(&d, &map, false), "warning: empty file\n--> a.cu\n");
    }

    #[test]
    fn render_cargo() {
        use crate::diag::SourceMap;
        use crate::diag::{Diagnostic, Severity, render::render_cargo};
        let mut map = SourceMap::default();
        let a = map.add("a.cu", "a.cu", b"x".to_vec());
        let lines = render_cargo(&Diagnostic::file(Severity::Warning, a, "w"), &map);
        assert!(lines.iter().all(|l| l.starts_with("cargo:warning=")));
    }
}
