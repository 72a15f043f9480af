//! Renders diagnostics: rustc-style text for people, `cargo:warning=` lines
//! for build scripts. One renderer, two outputs.

use super::{Diagnostic, Severity};

const RED: &str = "\x1b[1;31m";
const YELLOW: &str = "\x1b[1;33m";
const BLUE: &str = "\x1b[1;34m";
const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

/// rustc-like text: the message, `--> file:line:col`, the source line with
/// the span underlined, and the hint. The snippet is read from `d.path`; an
/// unreadable file just has no snippet.
///
/// ```
/// use begen::diag::{Diagnostic, render::render_text};
/// let d = Diagnostic::error("a.cu", "/nonexistent/a.cu", "bad").at(3, 5, 2).hint("fix it");
/// let text = render_text(&d, false);
/// assert!(text.starts_with("error: bad\n --> a.cu:3:5\n"));
/// assert!(text.contains("= help: fix it"));
/// ```
pub fn render_text(d: &Diagnostic, color: bool) -> String {
    let paint = |code: &str, s: &str| if color { format!("{code}{s}{RESET}") } else { s.to_string() };
    let (sev_color, sev) = match d.severity {
        Severity::Error => (RED, "error"),
        Severity::Warning => (YELLOW, "warning"),
    };
    let mut out = String::new();
    let mut lines = d.message.lines();
    let first = lines.next().unwrap_or("");
    out.push_str(&format!("{}{}\n", paint(sev_color, sev), paint(BOLD, &format!(": {first}"))));
    for l in lines {
        out.push_str(l);
        out.push('\n');
    }
    let snippet = if d.line > 0 { source_line(d) } else { None };
    let gutter_width = if d.line > 0 { d.line.to_string().len() } else { 1 };
    let pad = " ".repeat(gutter_width);
    let location = match (d.line, d.column) {
        (0, _) => d.file.clone(),
        (l, 0) => format!("{}:{l}", d.file),
        (l, c) => format!("{}:{l}:{c}", d.file),
    };
    out.push_str(&format!("{pad}{} {location}\n", paint(BLUE, "-->")));
    if let Some(text) = snippet {
        let bar = paint(BLUE, "|");
        out.push_str(&format!("{pad} {bar}\n"));
        out.push_str(&format!("{} {bar} {}\n", paint(BLUE, &d.line.to_string()), expand_tabs(&String::from_utf8_lossy(&text))));
        let (indent, width) = caret_geometry(&text, d.column, d.len);
        let marks = paint(sev_color, &"^".repeat(width));
        let label = d.label.as_deref().map(|l| format!(" {}", paint(sev_color, l))).unwrap_or_default();
        out.push_str(&format!("{pad} {bar} {}{marks}{label}\n", " ".repeat(indent)));
    }
    if let Some(hint) = &d.hint {
        out.push_str(&format!("{pad} {} {}: {hint}\n", paint(BLUE, "="), paint(BOLD, "help")));
    }
    out
}

/// The diagnostic as `cargo:warning=` lines (cargo shows each one).
///
/// ```
/// use begen::diag::{Diagnostic, render::render_cargo};
/// let lines = render_cargo(&Diagnostic::warning("a.cu", "a.cu", "w"));
/// assert!(lines.iter().all(|l| l.starts_with("cargo:warning=")));
/// ```
pub fn render_cargo(d: &Diagnostic) -> Vec<String> {
    render_text(d, false).lines().map(|l| format!("cargo:warning={l}")).collect()
}

fn source_line(d: &Diagnostic) -> Option<Vec<u8>> {
    LAST_FILE.with(|last| {
        let mut last = last.borrow_mut();
        let stamp = std::fs::metadata(&d.path).ok().map(|m| (m.len(), m.modified().ok()))?;
        if !last.as_ref().is_some_and(|f| f.path == d.path && f.stamp == stamp) {
            *last = None;
            let bytes = std::fs::read(&d.path).ok()?;
            let mut starts = vec![0];
            starts.extend(memchr::memchr_iter(b'\n', &bytes).map(|k| k + 1));
            *last = Some(SnippetFile { path: d.path.clone(), stamp, bytes, starts });
        }
        let f = last.as_ref()?;
        let start = *f.starts.get(d.line - 1)?;
        let end = f.starts.get(d.line).map_or(f.bytes.len(), |s| s - 1);
        let line = &f.bytes[start..end];
        Some(line.strip_suffix(b"\r").unwrap_or(line).to_vec())
    })
}

/// The file the last snippet came from: diagnostics are sorted by file, so
/// the next one most likely needs it too. Size and modification time tell
/// when it must be read again.
struct SnippetFile {
    path: std::path::PathBuf,
    stamp: (u64, Option<std::time::SystemTime>),
    bytes: Vec<u8>,
    /// Where each line starts.
    starts: Vec<usize>,
}

thread_local! {
    static LAST_FILE: std::cell::RefCell<Option<SnippetFile>> = const { std::cell::RefCell::new(None) };
}

/// Display columns before the span and its width (tabs as 4, characters
/// counted once however many bytes they take).
fn caret_geometry(bytes: &[u8], column: usize, len: usize) -> (usize, usize) {
    let start = column.saturating_sub(1).min(bytes.len());
    let end = (start + len).min(bytes.len());
    let width = |b: &[u8]| expand_tabs(&String::from_utf8_lossy(b)).chars().count();
    (width(&bytes[..start]), width(&bytes[start..end]).max(1))
}

fn expand_tabs(s: &str) -> String {
    s.replace('\t', "    ")
}
