//! The source map: every file a run reads, each read once, with an id, and
//! the one place where locations are defined. A [`Span`] is a byte range in
//! one file; lines and columns are derived from it only when a diagnostic is
//! shown. The renderer takes its snippets from here, never from the disk.

pub(crate) mod lex;

use std::path::{Path, PathBuf};

/// A file of the [`SourceMap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct FileId(u32);

impl FileId {
    /// The position of the file in its map (0 for the first file added).
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }

    /// A file id for unit tests that need no map.
    #[cfg(test)]
    pub(crate) const TEST: FileId = FileId(0);
}

/// A byte range `start..end` in one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Span {
    /// The file the range is in.
    pub(crate) file: FileId,
    /// Byte offset of the first byte.
    pub(crate) start: usize,
    /// Byte offset just past the last byte (`start` for an empty span).
    pub(crate) end: usize,
}

impl Span {
    /// `start..end` in `file` (an `end` before `start` is taken as `start`).
    pub(crate) fn new(file: FileId, start: usize, end: usize) -> Span {
        Span { file, start, end: end.max(start) }
    }

    /// The empty span at the start of `file`: "the whole file".
    pub(crate) fn file(file: FileId) -> Span {
        Span { file, start: 0, end: 0 }
    }
}

/// One file as read.
#[derive(Debug, Clone, Default)]
pub(crate) struct SourceFile {
    /// Relative to the scanned root with `/` separators (what reports show).
    pub(crate) name: String,
    /// Where it was read from.
    pub(crate) path: PathBuf,
    /// Its bytes (empty when it could not be read, or once
    /// [`SourceMap::forget_texts`] let them go).
    pub(crate) bytes: Vec<u8>,
    /// How many bytes it has, also once its text is forgotten.
    len: usize,
    /// Where each line starts (u32: a source over 4 GiB is not a kernel).
    lines: Vec<u32>,
    /// How many characters come before each [`BLOCK`]-byte block: made
    /// the first time a character column is asked for, so a column on a
    /// long line costs at most a block's counting.
    blocks: std::sync::OnceLock<Vec<u32>>,
}

/// The block size of [`SourceFile`]'s character index.
const BLOCK: usize = 512;

impl SourceFile {
    /// A file as read, with its line index.
    pub(crate) fn new(name: impl Into<String>, path: impl Into<PathBuf>, bytes: Vec<u8>) -> SourceFile {
        // Sized exactly (counting is cheap): a large tree keeps every index.
        let mut lines = Vec::with_capacity(1 + memchr::memchr_iter(b'\n', &bytes).count());
        lines.push(0);
        lines.extend(memchr::memchr_iter(b'\n', &bytes).map(|i| u32::try_from(i + 1).unwrap_or(u32::MAX)));
        SourceFile { name: name.into(), path: path.into(), len: bytes.len(), bytes, lines, blocks: Default::default() }
    }

    /// Whether its text is still held (see [`SourceMap::forget_texts`]).
    pub(crate) fn has_text(&self) -> bool {
        self.bytes.len() == self.len
    }

    /// Puts the text read for this entry in place (an entry made with no
    /// text, filled later on the thread that reads it).
    pub(crate) fn fill(&mut self, bytes: Vec<u8>) {
        let SourceFile { name, path, .. } = std::mem::take(self);
        *self = SourceFile::new(name, path, bytes);
    }

    /// Lets go of its text; its length and line index stay, so positions
    /// and spans hold. Returns how many bytes it let go.
    pub(crate) fn forget_text(&mut self) -> usize {
        std::mem::take(&mut self.bytes).len()
    }

    /// A span of this file (`id`), clamped to it.
    pub(crate) fn span(&self, id: FileId, start: usize, end: usize) -> Span {
        let start = start.min(self.len);
        Span { file: id, start, end: end.clamp(start, self.len) }
    }

    /// 1-based (line, byte column) of an offset.
    pub(crate) fn position(&self, offset: usize) -> (usize, usize) {
        let line = self.lines.partition_point(|&s| s as usize <= offset).max(1);
        (line, offset - self.lines[line - 1] as usize + 1)
    }

    /// How many characters (UTF-8 lead bytes and invalid bytes: every
    /// byte but a continuation byte) its text has before `offset`.
    pub(crate) fn chars_before(&self, offset: usize) -> usize {
        let count = |bytes: &[u8]| bytes.iter().filter(|&&b| b & 0xC0 != 0x80).count();
        let blocks = self.blocks.get_or_init(|| {
            let mut total = 0;
            let mut out = vec![0];
            for chunk in self.bytes.chunks(BLOCK) {
                total += count(chunk);
                out.push(u32::try_from(total).unwrap_or(u32::MAX));
            }
            out
        });
        let offset = offset.min(self.bytes.len());
        let block = offset / BLOCK;
        blocks.get(block).map_or(0, |&c| c as usize) + count(&self.bytes[block * BLOCK..offset])
    }

    /// The byte range of the 1-based `line`, without its line break.
    pub(crate) fn line_range(&self, line: usize) -> std::ops::Range<usize> {
        let start = self.lines.get(line.saturating_sub(1)).map_or(self.len, |&s| s as usize);
        let mut end = self.lines.get(line).map_or(self.len, |&s| s as usize - 1);
        if end > start && self.bytes.get(end - 1) == Some(&b'\r') {
            end -= 1;
        }
        start..end.max(start)
    }
}

/// Every file of one run, by id. Append-only: ids stay valid.
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    /// Adds a file and returns its id.
    pub(crate) fn add(&mut self, name: impl Into<String>, path: impl Into<PathBuf>, bytes: Vec<u8>) -> FileId {
        let id = FileId(u32::try_from(self.files.len()).unwrap_or(u32::MAX));
        self.files.push(SourceFile::new(name, path, bytes));
        id
    }

    /// Lets go of the text of every file but those `keep` names, once
    /// nothing will show it: names, line indexes and lengths stay, so
    /// positions and spans hold. (A large tree's text is most of a scan's
    /// memory, and machine-readable output shows none of it.)
    /// Returns how many bytes it let go.
    pub(crate) fn forget_texts(&mut self, keep: impl Fn(FileId) -> bool) -> usize {
        let mut freed = 0;
        for (k, f) in self.files.iter_mut().enumerate() {
            if !keep(FileId(k as u32)) {
                freed += f.forget_text();
            }
        }
        freed
    }

    /// Every entry, by index, each to be taken out and filled or read on
    /// its own thread.
    pub(crate) fn entries_mut(&mut self) -> Vec<Option<&mut SourceFile>> {
        self.files.iter_mut().map(Some).collect()
    }

    /// The file of an id.
    pub(crate) fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    /// The id of the file read from `path`, if it was.
    pub(crate) fn find(&self, path: &Path) -> Option<FileId> {
        self.files.iter().position(|f| f.path == path).map(|k| FileId(k as u32))
    }

    /// Every file with its id, in the order they were added.
    pub(crate) fn files(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files.iter().enumerate().map(|(k, f)| (FileId(k as u32), f))
    }

    /// A span, clamped to the file.
    pub(crate) fn span(&self, file: FileId, start: usize, end: usize) -> Span {
        self.get(file).span(file, start, end)
    }

    /// The relative name of a span's file.
    pub(crate) fn name(&self, span: Span) -> &str {
        &self.get(span.file).name
    }

    /// 1-based line and byte column of a span's start.
    pub(crate) fn position(&self, span: Span) -> (usize, usize) {
        self.get(span.file).position(span.start)
    }

    /// The text of a span (lossy for non-UTF-8 bytes): what tests compare
    /// spans with.
    #[cfg(test)]
    pub(crate) fn text(&self, span: Span) -> std::borrow::Cow<'_, str> {
        let bytes = &self.get(span.file).bytes;
        String::from_utf8_lossy(&bytes[span.start.min(bytes.len())..span.end.min(bytes.len())])
    }
}

/// `path` relative to `root`, with `/` separators: a file's name in reports.
pub(crate) fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

/// What is at `path` when it is no regular file (`a FIFO`, `a symbolic
/// link to a directory`, `a dangling symbolic link`, ...), in the words of
/// the generated module's table reader; `Ok(None)` for a regular file,
/// `Err` when nothing is there or it cannot be looked at.
pub(crate) fn not_regular(path: &std::path::Path) -> Result<Option<String>, std::io::Error> {
    use std::os::unix::fs::FileTypeExt;
    let link = std::fs::symlink_metadata(path)?;
    let Ok(meta) = std::fs::metadata(path) else { return Ok(Some("a dangling symbolic link".into())) };
    let t = meta.file_type();
    if t.is_file() {
        return Ok(None);
    }
    let kind = if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a special file"
    };
    Ok(Some(if link.file_type().is_symlink() { format!("a symbolic link to {kind}") } else { kind.to_string() }))
}

#[cfg(test)]
mod doc_examples {
    //! The examples of this module's crate-private items, run as unit tests
    //! (an example in a doc comment must compile outside the crate).

    #[test]
    fn module() {
        use crate::diag::SourceMap;
        let mut map = SourceMap::default();
        let id = map.add("a.cu", "/k/a.cu", b"// @BE f\nvoid f();\n".to_vec());
        let span = map.span(id, 14, 15);
        assert_eq!(map.position(span), (2, 6));
        assert_eq!(map.text(span), "f");
    }

    #[test]
    fn file_id() {
        use crate::diag::SourceMap;
        let mut map = SourceMap::default();
        let a = map.add("a.cu", "/k/a.cu", Vec::new());
        let b = map.add("b.cu", "/k/b.cu", Vec::new());
        assert_ne!(a, b);
        assert_eq!(map.get(b).name, "b.cu");
    }

    #[test]
    fn span() {
        use crate::source::{SourceMap, Span};
        let mut map = SourceMap::default();
        let id = map.add("a.cu", "/k/a.cu", b"void f();".to_vec());
        let span = Span::new(id, 5, 6);
        assert_eq!((span.start, span.end), (5, 6));
        assert_eq!(map.text(span), "f");
    }

    #[test]
    fn span_new() {
        use crate::source::{SourceMap, Span};
        let mut map = SourceMap::default();
        let id = map.add("a.cu", "/k/a.cu", Vec::new());
        assert_eq!(Span::new(id, 4, 2).end, 4);
    }

    #[test]
    fn span_file() {
        use crate::source::{SourceMap, Span};
        let mut map = SourceMap::default();
        let id = map.add("a.cu", "/k/a.cu", b"x".to_vec());
        let whole = Span::file(id);
        assert_eq!((whole.start, whole.end), (0, 0));
    }

    #[test]
    fn source_file() {
        use crate::source::SourceFile;
        let f = SourceFile::new("sub/a.cu", "/k/sub/a.cu", b"x\n".to_vec());
        assert_eq!(f.name, "sub/a.cu");
        assert_eq!(f.bytes.len(), 2);
    }

    #[test]
    fn source_file_new() {
        use crate::source::SourceFile;
        let f = SourceFile::new("a.cu", "/k/a.cu", b"a\nb\n".to_vec());
        assert_eq!(f.position(2), (2, 1));
    }

    #[test]
    fn source_file_position() {
        use crate::source::SourceFile;
        let f = SourceFile::new("a.cu", "/k/a.cu", b"int x;\nvoid f();\n".to_vec());
        assert_eq!(f.position(0), (1, 1));
        assert_eq!(f.position(12), (2, 6));
    }

    #[test]
    fn source_file_line_range() {
        use crate::source::SourceFile;
        let f = SourceFile::new("a.cu", "/k/a.cu", b"int x;\r\nvoid f();\n".to_vec());
        assert_eq!(f.line_range(1), 0..6);
        assert_eq!(f.line_range(2), 8..17);
    }

    #[test]
    fn source_map_forget_texts() {
        use crate::diag::render::render_text;
        use crate::diag::{Diagnostic, SourceMap};
        let mut map = SourceMap::default();
        let a = map.add("a.cu", "/k/a.cu", b"int x;\r\nvoid f();\n".to_vec());
        let b = map.add("begen.yaml", "/k/begen.yaml", b"name: k\n".to_vec());
        let d = Diagnostic::error(map.span(a, 13, 14), "here");
        assert!(render_text(&d, &map, false).contains("void f();"));
        assert_eq!(map.forget_texts(|id| id == b), 18);
        let (fa, fb) = (map.get(a), map.get(b));
        assert!(!fa.has_text() && fa.bytes.is_empty() && fb.has_text());
        // Positions, spans and line ranges hold without the text.
        assert_eq!(fa.position(13), (2, 6));
        let clamped = map.span(a, 16, 99);
        assert_eq!((clamped.start, clamped.end), (16, 18));
        assert_eq!(map.get(a).line_range(2), 8..17);
        // A diagnostic still renders, without a snippet.
        let shown = render_text(&d, &map, false);
        assert_eq!(shown, "error: here\n--> a.cu:2:6\n");
    }

    #[test]
    fn source_map() {
        use crate::diag::SourceMap;
        let mut map = SourceMap::default();
        let id = map.add("a.cu", "/k/a.cu", b"void f();".to_vec());
        assert_eq!(map.files().count(), 1);
        assert_eq!(map.get(id).name, "a.cu");
    }

    #[test]
    fn source_map_add() {
        use crate::diag::SourceMap;
        let mut map = SourceMap::default();
        let id = map.add("a.cu", "/k/a.cu", b"void f();".to_vec());
        assert_eq!(map.get(id).bytes, b"void f();");
    }

    #[test]
    fn source_map_entries_filled_on_other_threads() {
        use crate::source::SourceMap;
        let mut map = SourceMap::default();
        let a = map.add("a.cu", "/k/a.cu", Vec::new());
        let b = map.add("b.cu", "/k/b.cu", Vec::new());
        std::thread::scope(|scope| {
            for (k, slot) in map.entries_mut().into_iter().flatten().enumerate() {
                scope.spawn(move || slot.fill(format!("// {k}\nvoid f{k}();\n").into_bytes()));
            }
        });
        assert_eq!(map.position(map.span(b, 10, 12)), (2, 6));
        assert_eq!(map.text(map.span(a, 10, 12)), "f0");
        assert_eq!(map.get(b).name, "b.cu");
    }

    #[test]
    fn source_map_get() {
        use crate::diag::SourceMap;
        let mut map = SourceMap::default();
        let id = map.add("a.cu", "/k/a.cu", Vec::new());
        assert_eq!(map.get(id).path, std::path::Path::new("/k/a.cu"));
    }

    #[test]
    fn source_map_find() {
        use crate::diag::SourceMap;
        use std::path::Path;
        let mut map = SourceMap::default();
        let id = map.add("a.cu", "/k/a.cu", Vec::new());
        assert_eq!(map.find(Path::new("/k/a.cu")), Some(id));
        assert_eq!(map.find(Path::new("/k/b.cu")), None);
    }

    #[test]
    fn source_map_files() {
        use crate::diag::SourceMap;
        let mut map = SourceMap::default();
        map.add("a.cu", "/k/a.cu", Vec::new());
        map.add("b.cpp", "/k/b.cpp", Vec::new());
        let names: Vec<&str> = map.files().map(|(_, f)| f.name.as_str()).collect();
        assert_eq!(names, ["a.cu", "b.cpp"]);
    }

    #[test]
    fn source_map_span() {
        use crate::diag::SourceMap;
        let mut map = SourceMap::default();
        let id = map.add("a.cu", "/k/a.cu", b"abc".to_vec());
        let span = map.span(id, 1, 99);
        assert_eq!((span.start, span.end), (1, 3));
    }

    #[test]
    fn source_map_name() {
        use crate::diag::SourceMap;
        let mut map = SourceMap::default();
        let id = map.add("sub/a.cu", "/k/sub/a.cu", b"abc".to_vec());
        assert_eq!(map.name(map.span(id, 0, 1)), "sub/a.cu");
    }

    #[test]
    fn source_map_position() {
        use crate::diag::SourceMap;
        let mut map = SourceMap::default();
        let id = map.add("a.cu", "/k/a.cu", b"// @BE f\nvoid f();\n".to_vec());
        assert_eq!(map.position(map.span(id, 14, 15)), (2, 6));
    }
}
