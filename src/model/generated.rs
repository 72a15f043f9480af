//! What `emit` hands `build`: the text of every generated file and what
//! each one is.

use crate::model::Platform;

/// A binding target, by the name the CLI and begen.yaml spell it (`jax`).
/// The targets themselves, and the one list of them, are `src/target/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct TargetId(pub(crate) &'static str);

impl TargetId {
    /// Its name, as the CLI and begen.yaml spell it.
    pub(crate) fn name(self) -> &'static str {
        self.0
    }
}

impl std::fmt::Display for TargetId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// The XLA/JAX target (`src/target/xla_jax`).
pub(crate) const JAX: TargetId = TargetId("jax");

/// The PyTorch target (`src/target/torch`).
pub(crate) const TORCH: TargetId = TargetId("torch");

/// The targets a build makes when none are asked for.
pub(crate) const DEFAULT_TARGETS: &[TargetId] = &[JAX];

/// What a generated file is, so the build stage knows what to do with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum FileKind {
    /// A wrapper translation unit (the source, then its trampolines):
    /// compile it with the compiler of its platform (host C++ for `Cpu`,
    /// nvcc for `Cuda`) and link it into `lib<name>.so` *instead of* the
    /// source it includes.
    Wrapper(Platform),
    /// A translation unit of one binding target (jax: each part of the glue,
    /// every XLA FFI handler, and the binaries TU, begen.yaml's `binaries:`
    /// embedded with their handlers): compiled with the host C++ compiler,
    /// with that target's headers, and linked into that target's library
    /// with the wrappers. `heavy`: slow to compile per byte (the glue's
    /// XLA FFI binding templates), so started early.
    TargetUnit { target: TargetId, heavy: bool },
    /// `<name>.py`.
    PythonModule,
    /// `<name>.pyi`.
    PythonStub,
    /// `<name>.yaml`.
    Manifest,
    /// `<name>.tune.json`, the shipped tuning table.
    TuneTable,
}

impl FileKind {
    /// Whether it is C++ to compile (a wrapper or a target's unit), not an
    /// output.
    pub(crate) fn is_translation_unit(self) -> bool {
        matches!(self, FileKind::Wrapper(_) | FileKind::TargetUnit { .. })
    }
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
/// by source), then each target's files in the plan's order (jax: the
/// glue when the library has functions, the binaries TU, `<name>.py`,
/// `<name>.pyi`, `<name>.yaml`), then the tuning table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Emitted {
    pub(crate) files: Vec<GeneratedFile>,
    /// The wrappers (by `rel_path`) that each hold one candidate of a
    /// source tuned over its defines: compiled once per candidate, their
    /// symbols clash like a namespaced library's modules' and are made
    /// local at the link.
    pub(crate) tune_candidates: std::collections::BTreeSet<String>,
}

impl Emitted {
    /// The wrapper translation units, with their platforms.
    pub(crate) fn wrappers(&self) -> impl Iterator<Item = (&GeneratedFile, Platform)> {
        self.files.iter().filter_map(|f| match f.kind {
            FileKind::Wrapper(p) => Some((f, p)),
            _ => None,
        })
    }

    /// The translation units of binding targets, in order, with their
    /// targets.
    pub(crate) fn target_units(&self) -> impl Iterator<Item = (&GeneratedFile, TargetId)> {
        self.files.iter().filter_map(|f| match f.kind {
            FileKind::TargetUnit { target, .. } => Some((f, target)),
            _ => None,
        })
    }

    /// Every C++ translation unit: wrappers, then the targets'.
    pub(crate) fn translation_units(&self) -> impl Iterator<Item = &GeneratedFile> {
        self.files.iter().filter(|f| f.kind.is_translation_unit())
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
