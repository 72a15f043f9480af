//! Operational errors (I/O, missing toolchain pieces, compiler failures):
//! one public type, opaque over a private representation (cc-rs's way), so
//! a new cause is not a breaking change; every I/O error names its path.

use std::fmt;
use std::path::PathBuf;

/// An error that stops a run: not a problem in a kernel's source (those are
/// [`crate::diag::Diagnostic`]s) but in the environment or the file system.
/// Its text is phrased for the user; [`Error::kind`] says which sort it is,
/// and [`std::error::Error::source`] gives the operating system's error of
/// an I/O failure.
///
/// ```no_run
/// let out = std::env::temp_dir().join("begen-doc-error");
/// match begen::Build::new().dir("no-such-dir").out_dir(&out).cargo_metadata(false).try_compile("k") {
///     Ok(_) => unreachable!(),
///     Err(e) => {
///         assert_eq!(e.kind(), begen::ErrorKind::Io);
///         assert!(e.to_string().starts_with("no-such-dir"));
///     }
/// }
/// ```
#[derive(Debug)]
pub struct Error {
    repr: Repr,
}

/// What an [`Error`] holds; private, so its variants can change.
#[derive(Debug)]
enum Repr {
    Io { path: PathBuf, source: std::io::Error },
    Toolchain(String),
    Compile { what: String, output: String },
    Diagnostics { errors: usize },
    Other(String),
}

/// The sort of an [`Error`], for callers that react to some of them.
///
/// ```no_run
/// let built = begen::Build::new().out_dir("out").cargo_metadata(false).try_compile("mykernels");
/// if let Err(e) = built {
///     if e.kind() == begen::ErrorKind::Toolchain {
///         eprintln!("install a C++ compiler (and nvcc for .cu sources): {e}");
///     }
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading or writing a file or directory failed (the text names it).
    Io,
    /// A toolchain piece is missing or unusable: the text is one paragraph
    /// saying what was tried and how to fix it.
    Toolchain,
    /// A compiler or linker ran and failed; the text includes its output.
    Compile,
    /// The sources have error diagnostics (reported already), so nothing
    /// was built.
    Diagnostics,
    /// Anything else (a bad setting, an output that would overwrite an input).
    Other,
}

impl Error {
    /// Which sort of error this is.
    ///
    /// ```no_run
    /// let e = begen::driver::run(&begen::driver::Settings::new("/no/such/dir")).unwrap_err();
    /// assert_eq!(e.kind(), begen::ErrorKind::Io);
    /// ```
    pub fn kind(&self) -> ErrorKind {
        match self.repr {
            Repr::Io { .. } => ErrorKind::Io,
            Repr::Toolchain(_) => ErrorKind::Toolchain,
            Repr::Compile { .. } => ErrorKind::Compile,
            Repr::Diagnostics { .. } => ErrorKind::Diagnostics,
            Repr::Other(_) => ErrorKind::Other,
        }
    }

    /// Reading or writing `path` failed.
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error { repr: Repr::Io { path: path.into(), source } }
    }

    /// A missing or unusable toolchain piece, as one paragraph.
    pub(crate) fn toolchain(message: impl Into<String>) -> Self {
        Error { repr: Repr::Toolchain(message.into()) }
    }

    /// `what` (a phrase: `compiling sub/a.cu`) failed with `output`.
    pub(crate) fn compile(what: impl Into<String>, output: impl Into<String>) -> Self {
        Error { repr: Repr::Compile { what: what.into(), output: output.into() } }
    }

    /// The sources had `errors` error diagnostics.
    pub(crate) fn diagnostics(errors: usize) -> Self {
        Error { repr: Repr::Diagnostics { errors } }
    }

    /// Anything else, already phrased for the user.
    pub(crate) fn other(message: impl Into<String>) -> Self {
        Error { repr: Repr::Other(message.into()) }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Repr::Toolchain(msg) | Repr::Other(msg) => f.write_str(msg),
            Repr::Compile { what, output } => write!(f, "{what} failed:\n{output}"),
            Repr::Diagnostics { errors } => {
                write!(f, "{errors} error(s) in the kernel sources; nothing was built")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.repr {
            Repr::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// A result whose error is begen's [`Error`].
///
/// ```no_run
/// fn build_kernels() -> begen::Result<std::path::PathBuf> {
///     let out = begen::Build::new().out_dir("out").cargo_metadata(false).try_compile("mykernels")?;
///     Ok(out.library_path().to_path_buf())
/// }
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn each_kind_reads_as_before() {
        let io = Error::io("k/a.cu", std::io::Error::other("denied"));
        assert_eq!((io.kind(), io.to_string()), (ErrorKind::Io, "k/a.cu: denied".to_string()));
        assert_eq!(io.source().map(|s| s.to_string()), Some("denied".to_string()));
        let e = Error::diagnostics(2);
        assert_eq!(e.kind(), ErrorKind::Diagnostics);
        assert_eq!(e.to_string(), "2 error(s) in the kernel sources; nothing was built");
        assert!(e.source().is_none());
        let e = Error::compile("linking libk.so", "ld: nope");
        assert_eq!((e.kind(), e.to_string()), (ErrorKind::Compile, "linking libk.so failed:\nld: nope".to_string()));
        let e = Error::toolchain("no nvcc");
        assert_eq!((e.kind(), e.to_string()), (ErrorKind::Toolchain, "no nvcc".to_string()));
        let e = Error::other("no name");
        assert_eq!((e.kind(), e.to_string()), (ErrorKind::Other, "no name".to_string()));
    }
}
