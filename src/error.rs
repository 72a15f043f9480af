//! Operational errors (I/O, missing toolchain pieces, compiler failures):
//! one public type; every I/O error names its path.

use std::fmt;
use std::path::PathBuf;

/// An error that stops a stage: not a problem in a kernel's source (those are
/// [`crate::diag::Diagnostic`]s) but in the environment or the file system.
#[derive(Debug)]
pub enum Error {
    /// Reading or writing `path` failed.
    Io { path: PathBuf, source: std::io::Error },
    /// A toolchain piece is missing or unusable: one paragraph saying what
    /// was tried and how to fix it.
    Toolchain(String),
    /// A compiler or linker ran and failed; its output is included.
    Compile { what: String, output: String },
    /// The sources have error diagnostics, so nothing was built.
    Diagnostics { errors: usize },
    /// Anything else, already phrased for the user.
    Other(String),
}

impl Error {
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

pub type Result<T, E = Error> = std::result::Result<T, E>;
