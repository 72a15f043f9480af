//! What `emit` hands `build`: the text of every generated file and what
//! each one is.

use crate::model::Platform;

/// What a generated file is, so the build stage knows what to do with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum FileKind {
    /// A wrapper translation unit (the source, then its trampolines):
    /// compile it with the compiler of its platform (host C++ for `Cpu`,
    /// nvcc for `Cuda`) and link it into `lib<name>.so` *instead of* the
    /// source it includes.
    Wrapper(Platform),
    /// The glue translation unit (every XLA FFI handler): compile it with
    /// the host C++ compiler, with XLA's FFI headers on the include path.
    Glue,
    /// The binaries translation unit (begen.yaml's `binaries:`: the
    /// embedded images and their handlers): compiled like the glue.
    Binaries,
    /// `<name>.py`.
    PythonModule,
    /// `<name>.pyi`.
    PythonStub,
    /// `<name>.yaml`.
    Manifest,
    /// `<name>.tune.json`, the shipped tuning table.
    TuneTable,
}

/// One generated file: where it goes (relative to the output directory,
/// `/`-separated), what it is, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GeneratedFile {
    pub(crate) rel_path: String,
    pub(crate) kind: FileKind,
    /// For a wrapper: the source it includes (relative to the root, as in
    /// `Function::file`).
    pub(crate) source: Option<String>,
    pub(crate) contents: String,
}

/// Everything `emit` produces, in a deterministic order: wrappers (sorted
/// by source), the glue (when the library has functions), then
/// `<name>.py`, `<name>.pyi`, `<name>.yaml`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Emitted {
    pub(crate) files: Vec<GeneratedFile>,
}

impl Emitted {
    /// The wrapper translation units, with their platforms.
    pub(crate) fn wrappers(&self) -> impl Iterator<Item = (&GeneratedFile, Platform)> {
        self.files.iter().filter_map(|f| match f.kind {
            FileKind::Wrapper(p) => Some((f, p)),
            _ => None,
        })
    }

    /// Every glue translation unit, the first first (one for a library of
    /// up to 64 handlers, none for a library without functions).
    pub(crate) fn glue_parts(&self) -> impl Iterator<Item = &GeneratedFile> {
        self.files.iter().filter(|f| f.kind == FileKind::Glue)
    }

    /// Every C++ translation unit: wrappers, then the glue.
    pub(crate) fn translation_units(&self) -> impl Iterator<Item = &GeneratedFile> {
        self.files.iter().filter(|f| matches!(f.kind, FileKind::Wrapper(_) | FileKind::Glue | FileKind::Binaries))
    }
}

/// FNV-1a, 64 bits: a hash that stays the same across Rust versions and
/// platforms (what names a file on disk or is written into one must).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// The symbol of the library's `const char* (void)` that returns the XLA
/// FFI API version its handlers were compiled against. Handler symbols are
/// `begen_<library>_...` (identifiers joined by single underscores after
/// the library's name), so a name starting `begen_ffi_api__` cannot be one
/// unless a library is called `ffi`; the library's name comes last.
pub(crate) fn ffi_api_symbol(library: &str) -> String {
    format!("begen_ffi_api__{library}")
}
