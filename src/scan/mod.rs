//! Stage 1, scan: walk the kernel directory, read every source and header
//! into the source map (once), and find each source's annotations. The
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
use crate::model::decl::{Annotation, Scanned};
use crate::par;
use crate::source::{FileId, SourceFile, SourceMap, lex};
use annotation::{Comment, Word, classify};
pub(crate) use walk::Kind;

/// A file the walk found and read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Loaded {
    pub(crate) id: FileId,
    pub(crate) kind: Kind,
    /// Read and usable (not binary, not unreadable).
    pub(crate) usable: bool,
}

/// Walks `root` and reads every source and header under it into `map`, in
/// parallel, in walk order. Fails only when `root` itself cannot be read.
pub(crate) fn load(root: &Path, map: &mut SourceMap) -> Result<(Vec<Loaded>, Vec<Diagnostic>), Error> {
    let (entries, errors) = walk::walk(root)?;
    let mut diags = Vec::new();
    for e in errors {
        let id = map.add(e.entry.file, e.entry.path, Vec::new());
        let severity = if e.is_loop { Severity::Warning } else { Severity::Error };
        diags.push(Diagnostic::file(severity, id, msg::walk_error(&e.text)));
    }
    // Read, index and vet each file on the worker threads; enter them into
    // the map in walk order.
    let mut read: Vec<(walk::Entry, Option<Read>)> = entries.into_iter().map(|e| (e, None)).collect();
    par::for_each(&mut read, par::threads(), || (), |_, (e, out)| *out = Some(read_file(e)));
    let mut loaded = Vec::with_capacity(read.len());
    for (entry, r) in read {
        let kind = entry.kind;
        let (id, usable) = match r {
            Some(Read::Failed(e)) => {
                let id = map.add(entry.file, entry.path, Vec::new());
                diags.push(Diagnostic::file(Severity::Error, id, msg::unreadable(&e.to_string())));
                (id, false)
            }
            Some(Read::Binary) | None => {
                let id = map.add(entry.file, entry.path, Vec::new());
                diags.push(Diagnostic::file(Severity::Error, id, msg::BINARY));
                (id, false)
            }
            Some(Read::Text { file, bad_utf8, empty }) => {
                let id = map.insert(file);
                if let Some(at) = bad_utf8 {
                    diags.push(Diagnostic::warning(map.span(id, at, at + 1), msg::NOT_UTF8));
                }
                if empty && matches!(kind, Kind::Source(_)) {
                    diags.push(Diagnostic::file(Severity::Warning, id, msg::EMPTY));
                }
                (id, true)
            }
        };
        loaded.push(Loaded { id, kind, usable });
    }
    Ok((loaded, diags))
}

/// One file as read.
enum Read {
    Failed(std::io::Error),
    /// It holds NUL bytes.
    Binary,
    Text {
        file: SourceFile,
        /// Where the first invalid UTF-8 byte is.
        bad_utf8: Option<usize>,
        /// Nothing but whitespace.
        empty: bool,
    },
}

fn read_file(e: &walk::Entry) -> Read {
    match std::fs::read(&e.path) {
        Err(err) => Read::Failed(err),
        Ok(bytes) if memchr::memchr(0, &bytes).is_some() => Read::Binary,
        Ok(mut bytes) => {
            // Old Mac line ends (a lone `\r`, which compilers accept) read as
            // line breaks: byte for byte, so every offset holds.
            let lone: Vec<usize> =
                memchr::memchr_iter(b'\r', &bytes).filter(|&k| bytes.get(k + 1) != Some(&b'\n')).collect();
            for k in lone {
                bytes[k] = b'\n';
            }
            let bad_utf8 = std::str::from_utf8(&bytes).err().map(|e| e.valid_up_to());
            let empty = bytes.iter().all(u8::is_ascii_whitespace);
            Read::Text { file: SourceFile::new(e.file.clone(), e.path.clone(), bytes), bad_utf8, empty }
        }
    }
}

/// One usable file to scan, and what scanning it reported.
pub(crate) struct Pending {
    file: Loaded,
    /// begen.yaml's `sources:` names functions in it.
    wanted: bool,
    /// What scanning it reported, in order.
    pub(crate) diags: Vec<Diagnostic>,
}

/// Every usable file, each to be scanned by [`Pending::scan`] on any thread:
/// `parse::declare` scans and parses file by file, so only the files in
/// flight hold a code view. `wanted` holds the files with functions named
/// in begen.yaml.
pub(crate) fn pending(files: &[Loaded], wanted: &BTreeSet<FileId>) -> Vec<Pending> {
    files
        .iter()
        .filter(|f| f.usable)
        .map(|&file| Pending { file, wanted: wanted.contains(&file.id), diags: Vec::new() })
        .collect()
}

impl Pending {
    /// Lexes the file and finds its annotations. The file is handed on
    /// when it has annotations or is wanted; annotations in headers are
    /// reported and ignored.
    pub(crate) fn scan(&mut self, map: &SourceMap) -> Option<Scanned> {
        scan_file(map, self.file, self.wanted, &mut self.diags)
    }
}

fn scan_file(map: &SourceMap, file: Loaded, wanted: bool, diags: &mut Vec<Diagnostic>) -> Option<Scanned> {
    let id = file.id;
    let bytes = &map.get(id).bytes;
    let lexed = lex::lex(bytes);
    let word_span = |w: &Word| map.span(id, w.offset, w.offset + w.text.len());
    let mut annotations = Vec::new();
    for c in &lexed.comments {
        match classify(bytes, c) {
            Comment::Plain => {}
            Comment::LookAlike { word } => {
                diags.push(Diagnostic::warning(word_span(&word), msg::lookalike(&word.text)))
            }
            Comment::Annotation { at, name: None, .. } => {
                diags.push(Diagnostic::error(map.span(id, at, at + 3), msg::ANNOTATION_WITHOUT_NAME));
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
            let name = &map.get(id).name;
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
