//! Operational errors (I/O, missing toolchain pieces, compiler failures):
//! one public type; every I/O error names its path.

use std::fmt;
use std::path::PathBuf;

/// An error that stops a stage: not a problem in a kernel's source (those are
/// [`crate::diag::Diagnostic`]s) but in the environment or the file system.
///
/// ```
/// use begen::Error;
/// let e = Error::Diagnostics { errors: 2 };
/// assert_eq!(e.to_string(), "2 error(s) in the kernel sources; nothing was built");
/// ```
#[derive(Debug)]
pub enum Error {
    /// Reading or writing `path` failed.
    Io {
        /// The file or directory that was being read or written.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A toolchain piece is missing or unusable: one paragraph saying what
    /// was tried and how to fix it.
    Toolchain(String),
    /// A compiler or linker ran and failed; its output is included.
    Compile {
        /// What failed, as a phrase: `compiling sub/a.cu`, `linking ...`.
        what: String,
        /// The tools' stdout and stderr (per unit, or with the command line).
        output: String,
    },
    /// The sources have error diagnostics, so nothing was built.
    Diagnostics {
        /// How many error diagnostics there were.
        errors: usize,
    },
    /// Anything else, already phrased for the user.
    Other(String),
}

impl Error {
    /// An [`Error::Io`] for `path`.
    ///
    /// ```
    /// let e = begen::Error::io("k/a.cu", std::io::Error::other("denied"));
    /// assert_eq!(e.to_string(), "k/a.cu: denied");
    /// ```
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Toolchain(msg) | Error::Other(msg) => f.write_str(msg),
            Error::Compile { what, output } => write!(f, "{what} failed:\n{output}"),
            Error::Diagnostics { errors } => {
                write!(f, "{errors} error(s) in the kernel sources; nothing was built")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// A result whose error is begen's [`Error`].
///
/// ```
/// fn library_name(s: &str) -> begen::Result<String> {
///     if s.is_empty() { Err(begen::Error::Other("no name".into())) } else { Ok(s.to_string()) }
/// }
/// assert!(library_name("").is_err());
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;
