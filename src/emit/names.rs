//! Paths and literals written into generated files: where each wrapper and
//! the glue go, and how text becomes a comment or a Python literal. The
//! names themselves (targets, symbols, Python names) are decided by `check`.

use std::collections::BTreeSet;

use crate::model::Platform;

/// The wrapper file of one source, relative to the output directory:
/// `gen/<file with '/' as "__">.begen.cc` (`.begen.cu` for CUDA);
/// a variant's `gen/<file>.<variant>.begen.cc`.
pub(crate) fn wrapper_rel_path(file: &str, variant: Option<&str>, platform: Platform) -> String {
    let ext = match platform {
        Platform::Cpu => "cc",
        Platform::Cuda => "cu",
    };
    let flat: String = file
        .split('/')
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("__")
        .chars()
        .map(|c| if c.is_control() || c == '\\' || c == ':' { '_' } else { c })
        .collect();
    match variant {
        None => format!("gen/{flat}.begen.{ext}"),
        Some(v) => format!("gen/{flat}.{v}.begen.{ext}"),
    }
}

/// The tag of the wrapper of candidate `k` of a source tuned over its
/// defines: `gen/<file>.tune-<k>.begen.cc`. A variant's tag is a module
/// name (an identifier), so the two never meet.
pub(crate) fn tune_candidate_tag(k: usize) -> String {
    format!("tune-{k}")
}

/// Gives every wrapper path a distinct name: a flattened path that clashes
/// with an earlier one (`a/b.cu` and `a__b.cu`) gets `.2`, `.3`, ... before
/// `.begen`. Deterministic for sorted input.
pub(crate) fn dedup_paths(paths: Vec<String>) -> Vec<String> {
    let mut taken = BTreeSet::new();
    paths
        .into_iter()
        .map(|p| {
            let mut candidate = p.clone();
            let mut n = 2;
            while !taken.insert(candidate.clone()) {
                candidate = match p.rfind(".begen.") {
                    Some(i) => format!("{}.{n}{}", &p[..i], &p[i..]),
                    None => format!("{p}.{n}"),
                };
                n += 1;
            }
            candidate
        })
        .collect()
}

/// A glue TU of a library, relative to the output directory:
/// `gen/<library>.begen.cc` for the first part, `gen/<library>.part<k>.begen.cc`
/// for the others. They cannot clash with a wrapper: the library name is an
/// identifier (no `.`), a wrapper's name keeps its source's extension
/// before `.begen.`.
pub(crate) fn glue_rel_path(library: &str, part: usize) -> String {
    if part <= 1 { format!("gen/{library}.begen.cc") } else { format!("gen/{library}.part{part}.begen.cc") }
}

/// Text safe inside a `//` comment or a docstring line: control characters
/// and backslashes (a trailing `\` splices the next line into a C++ comment)
/// become `?`, and `"` (which could close a docstring) becomes `'`.
pub(crate) fn comment_text(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '"' => '\'',
            c if c.is_control() || c == '\\' || crate::model::is_invisible(c) => '?',
            c => c,
        })
        .collect()
}

/// A Python string literal for `s` (JSON's escapes are valid Python).
pub(crate) fn py_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| String::from("\"\""))
}

/// A value the generated module reads as data (a name, a dtype, a number,
/// a tuple of them), written as a Python literal: a serialization, like
/// [`py_str`]'s, of values, never of statements (those are the templates').
///
/// ```ignore
/// let dims = PyLit::tuple(["n".into(), PyLit::Raw("4".into())]);
/// assert_eq!(dims.to_string(), "(\"n\", 4)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PyLit {
    /// A string, quoted by [`py_str`].
    Str(String),
    /// Text that is already a literal: a number, `None`, `True`, a value
    /// `check` accepted as a Python literal.
    Raw(String),
    /// `()`, `(a,)`, `(a, b)`.
    Tuple(Vec<PyLit>),
}

impl PyLit {
    /// A tuple of `items`.
    pub(crate) fn tuple(items: impl IntoIterator<Item = PyLit>) -> PyLit {
        PyLit::Tuple(items.into_iter().collect())
    }

    /// A tuple of strings.
    pub(crate) fn strs<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> PyLit {
        PyLit::tuple(items.into_iter().map(|s| PyLit::Str(s.as_ref().to_string())))
    }
}

impl From<&str> for PyLit {
    fn from(s: &str) -> PyLit {
        PyLit::Str(s.to_string())
    }
}

impl std::fmt::Display for PyLit {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PyLit::Str(s) => out.write_str(&py_str(s)),
            PyLit::Raw(s) => out.write_str(s),
            PyLit::Tuple(items) => {
                out.write_str("(")?;
                for (k, item) in items.iter().enumerate() {
                    if k > 0 {
                        out.write_str(", ")?;
                    }
                    write!(out, "{item}")?;
                }
                out.write_str(if items.len() == 1 { ",)" } else { ")" })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapper_paths_are_flat_and_distinct() {
        assert_eq!(wrapper_rel_path("a.cpp", None, Platform::Cpu), "gen/a.cpp.begen.cc");
        let paths = dedup_paths(vec![
            wrapper_rel_path("a/b.cu", None, Platform::Cuda),
            wrapper_rel_path("a__b.cu", None, Platform::Cuda),
        ]);
        assert_eq!(paths, ["gen/a__b.cu.begen.cu", "gen/a__b.cu.2.begen.cu"]);
    }

    #[test]
    fn python_literals() {
        assert_eq!(py_str("a\"b\\"), "\"a\\\"b\\\\\"");
        assert_eq!(PyLit::tuple([]).to_string(), "()");
        assert_eq!(PyLit::strs(["a"]).to_string(), "(\"a\",)");
        assert_eq!(PyLit::tuple(["n".into(), PyLit::Raw("4".into())]).to_string(), "(\"n\", 4)");
    }
}

#[cfg(test)]
mod examples {
    #[test]
    fn wrapper_rel_path() {
        use crate::emit::wrapper_rel_path;
        use crate::model::Platform;
        assert_eq!(wrapper_rel_path("sub/a.cu", None, Platform::Cuda), "gen/sub__a.cu.begen.cu");
    }

    #[test]
    fn glue_rel_path() {
        assert_eq!(crate::emit::glue_rel_path("mk", 1), "gen/mk.begen.cc");
        assert_eq!(crate::emit::glue_rel_path("mk", 3), "gen/mk.part3.begen.cc");
    }
}
