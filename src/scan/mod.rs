//! Stage 1, scan: walk the kernel directory, enter every source and header
//! into the source map, and read each (once) and find its annotations. The
//! first half of the annotated-source front end; `parse` is the second.
//!
//! Nothing here decides what an annotation means: a name that is not an
//! identifier, a token that is not one, are `check`'s to report.

pub(crate) mod annotation;
pub(crate) mod walk;

use std::collections::BTreeSet;
use std::path::Path;

use crate::Error;
use crate::diag::{Diagnostic, Severity, messages as msg};
use crate::model::Platform;
use crate::model::decl::{Annotation, Scanned, ToScan};
use crate::source::{FileId, SourceFile, SourceMap, lex};
use annotation::{Comment, Word, classify};
pub(crate) use walk::Kind;

/// A file the walk found, entered into the source map unread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entered {
    pub(crate) id: FileId,
    pub(crate) kind: Kind,
}

/// Walks `root` and enters every source and header under it into `map`,
/// in walk order, unread: each is read by the worker that scans it
/// ([`Pending::scan`]), so a file is read, scanned and parsed in one go.
/// Fails only when `root` itself cannot be read.
pub(crate) fn enter(root: &Path, map: &mut SourceMap) -> Result<(Vec<Entered>, Vec<Diagnostic>), Error> {
    let (entries, errors) = walk::walk(root)?;
    let mut diags = Vec::new();
    for e in errors {
        let id = map.add(e.entry.file, e.entry.path, Vec::new());
        let severity = if e.is_loop { Severity::Warning } else { Severity::Error };
        diags.push(Diagnostic::file(severity, id, msg::walk_error(&e.text)));
    }
    let loaded =
        entries.into_iter().map(|e| Entered { id: map.add(e.file, e.path, Vec::new()), kind: e.kind }).collect();
    Ok((loaded, diags))
}

/// Reads a file into its entry of the map (`slot`) and vets it. Returns
/// whether it is usable (readable, not binary); what is wrong with it goes
/// to `diags`.
fn read(file: Entered, slot: &mut SourceFile, diags: &mut Vec<Diagnostic>) -> bool {
    let id = file.id;
    let mut bytes = match std::fs::read(&slot.path) {
        Ok(bytes) => bytes,
        Err(e) => {
            diags.push(Diagnostic::file(Severity::Error, id, msg::unreadable(&e.to_string())));
            return false;
        }
    };
    if memchr::memchr(0, &bytes).is_some() {
        diags.push(Diagnostic::file(Severity::Error, id, msg::BINARY));
        return false;
    }
    // Old Mac line ends (a lone `\r`, which compilers accept) read as line
    // breaks: byte for byte, so every offset holds.
    let lone: Vec<usize> = memchr::memchr_iter(b'\r', &bytes).filter(|&k| bytes.get(k + 1) != Some(&b'\n')).collect();
    for k in lone {
        bytes[k] = b'\n';
    }
    let bad_utf8 = std::str::from_utf8(&bytes).err().map(|e| e.valid_up_to());
    let empty = bytes.iter().all(u8::is_ascii_whitespace);
    slot.fill(bytes);
    if let Some(at) = bad_utf8 {
        diags.push(Diagnostic::warning(slot.span(id, at, at + 1), msg::NOT_UTF8));
    }
    if empty && matches!(file.kind, Kind::Source(_)) {
        diags.push(Diagnostic::file(Severity::Warning, id, msg::EMPTY));
    }
    true
}

/// One file to read and scan, and what reading and scanning it reported.
pub(crate) struct Pending {
    file: Entered,
    /// begen.yaml's `sources:` names functions in it.
    wanted: bool,
    /// What reading and scanning it reported, in order.
    pub(crate) diags: Vec<Diagnostic>,
}

/// Every file the walk found, each to be read and scanned by
/// [`Pending::scan`] on any thread: `parse::declare` reads, scans and
/// parses file by file, so only the files in flight hold a code view.
/// `wanted` holds the files with functions named in begen.yaml.
pub(crate) fn pending(files: &[Entered], wanted: &BTreeSet<FileId>) -> Vec<Pending> {
    files.iter().map(|&file| Pending { file, wanted: wanted.contains(&file.id), diags: Vec::new() }).collect()
}

impl ToScan for Pending {
    fn file(&self) -> FileId {
        self.file.id
    }

    /// Reads the file into `slot`, lexes it and finds its annotations. The
    /// file is handed on when it has annotations or is wanted; annotations
    /// in headers are reported and ignored.
    fn scan(&mut self, slot: &mut SourceFile) -> Option<Scanned> {
        if !read(self.file, slot, &mut self.diags) {
            return None;
        }
        scan_file(slot, self.file, self.wanted, &mut self.diags)
    }
}

fn scan_file(source: &SourceFile, file: Entered, wanted: bool, diags: &mut Vec<Diagnostic>) -> Option<Scanned> {
    let id = file.id;
    let bytes = &source.bytes;
    let lexed = lex::lex(bytes);
    let word_span = |w: &Word| source.span(id, w.offset, w.offset + w.text.len());
    let mut annotations = Vec::new();
    for c in &lexed.comments {
        match classify(bytes, c) {
            Comment::Plain => {}
            Comment::LookAlike { word } => {
                diags.push(Diagnostic::warning(word_span(&word), msg::lookalike(&word.text)))
            }
            Comment::Annotation { at, name: None, .. } => {
                diags.push(Diagnostic::error(source.span(id, at, at + 3), msg::ANNOTATION_WITHOUT_NAME));
            }
            Comment::Annotation { name: Some(name), tokens, .. } => annotations.push(Annotation {
                name_span: word_span(&name),
                tokens: tokens.iter().map(|t| (t.text.clone(), word_span(t))).collect(),
                name: name.text,
                end: c.end,
            }),
        }
    }
    let platform: Platform = match file.kind {
        Kind::Source(p) => p,
        Kind::Header => {
            for a in &annotations {
                diags.push(Diagnostic::warning(a.name_span, msg::annotation_in_header(&a.name)).hint(msg::HINT_HEADER));
            }
            return None;
        }
        Kind::Ignored => {
            let name = &source.name;
            for a in &annotations {
                diags.push(
                    Diagnostic::warning(a.name_span, msg::annotation_in_ignored(&a.name, name))
                        .hint(msg::HINT_EXTENSIONS),
                );
            }
            return None;
        }
    };
    if annotations.is_empty() && !wanted {
        return None;
    }
    Some(Scanned { file: id, platform, code: lexed.code, annotations })
}
