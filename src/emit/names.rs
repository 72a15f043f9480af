//! Names and paths written into generated files: where each wrapper and
//! the glue go, the symbols they define,
//! which include paths are safe to write, and how user names become Python
//! names and literals.

use std::collections::BTreeSet;
use std::path::Path;

use crate::model::Platform;

/// The wrapper file of one source, relative to the output directory:
/// `gen/<file with '/' as "__">.begen.cc` (`.begen.cu` for CUDA).
///
/// ```
/// use begen::emit::wrapper_rel_path;
/// use begen::model::Platform;
/// assert_eq!(wrapper_rel_path("sub/a.cu", Platform::Cuda), "gen/sub__a.cu.begen.cu");
/// ```
pub fn wrapper_rel_path(file: &str, platform: Platform) -> String {
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
    format!("gen/{flat}.begen.{ext}")
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

/// The handler symbol of a function: `begen_<library>_<function>`.
///
/// ```
/// assert_eq!(begen::emit::handler_symbol("mk", "scale_by"), "begen_mk_scale_by");
/// ```
pub fn handler_symbol(library: &str, function: &str) -> String {
    format!("begen_{library}_{function}")
}

/// The trampoline of a function, `begen_call_<library>_<function>`: the
/// hidden `extern "C"` function in the source's TU that the handler calls.
///
/// ```
/// assert_eq!(begen::emit::trampoline_symbol("mk", "scale_by"), "begen_call_mk_scale_by");
/// ```
pub fn trampoline_symbol(library: &str, function: &str) -> String {
    format!("begen_call_{library}_{function}")
}

/// The glue TU of a library, relative to the output directory:
/// `gen/<library>.begen.cc`. It cannot clash with a wrapper: the library
/// name is an identifier (no `.`), a wrapper's name keeps its source's
/// extension.
///
/// ```
/// assert_eq!(begen::emit::glue_rel_path("mk"), "gen/mk.begen.cc");
/// ```
pub fn glue_rel_path(library: &str) -> String {
    format!("gen/{library}.begen.cc")
}

/// The FFI target name of a function: `<prefix>.<function>`.
///
/// ```
/// assert_eq!(begen::emit::target_name("mk", "scale_by"), "mk.scale_by");
/// ```
pub fn target_name(prefix: &str, function: &str) -> String {
    format!("{prefix}.{function}")
}

/// Why a path cannot be written into `#include "..."`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IncludePathError {
    NotUtf8,
    Forbidden(char),
}

/// The text of a path for `#include "<text>"`: absolute, UTF-8, without `"`,
/// `\` or control characters (any of which could end the directive or
/// start a new line of C++).
///
/// ```
/// use begen::emit::include_path_text;
/// use std::path::Path;
/// assert_eq!(include_path_text(Path::new("/k/a.cu")).unwrap(), "/k/a.cu");
/// assert!(include_path_text(Path::new("/k/a\"b.cu")).is_err());
/// ```
pub fn include_path_text(path: &Path) -> Result<String, IncludePathError> {
    let text = path.to_str().ok_or(IncludePathError::NotUtf8)?;
    #[cfg(windows)]
    let text = &text.replace('\\', "/");
    if let Some(c) = text.chars().find(|&c| c == '"' || c == '\\' || c.is_control()) {
        return Err(IncludePathError::Forbidden(c));
    }
    Ok(text.to_string())
}

/// Text safe inside a `//` comment or a docstring line: control characters
/// and backslashes (a trailing `\` splices the next line into a C++ comment)
/// become `?`, and `"` (which could close a docstring) becomes `'`.
pub(crate) fn comment_text(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '"' => '\'',
            c if c.is_control() || c == '\\' => '?',
            c => c,
        })
        .collect()
}

/// A Python string literal for `s` (JSON's escapes are valid Python).
pub(crate) fn py_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| String::from("\"\""))
}

/// Python keywords: valid C++ identifiers that Python cannot use as names.
const PY_KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
    "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if",
    "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try",
    "while", "with", "yield",
];

/// Module-level and builtin names the generated typed functions use; a
/// parameter with one of these names would hide it.
pub(crate) const PY_MODULE_NAMES: [&str; 18] = [
    "register", "TARGETS", "LIBRARY", "_jax", "_np", "_ml_dtypes", "_begen_complex", "_begen_int",
    "_begen_bool", "_begen_float", "_begen_kind", "_begen_text", "_begen_show", "tuple", "list",
    "isinstance", "len", "TypeError",
];

pub(crate) fn is_py_keyword(name: &str) -> bool {
    PY_KEYWORDS.contains(&name)
}

/// The Python parameter name for a kernel parameter: its C++ name, with `_`
/// appended while it is a keyword, hides a module name, is `out` (reserved
/// for the output structs) or is already taken in this signature.
pub(crate) fn py_param_name(name: &str, taken: &mut BTreeSet<String>) -> String {
    let mut candidate = name.to_string();
    while is_py_keyword(&candidate)
        || PY_MODULE_NAMES.contains(&candidate.as_str())
        || candidate == "out"
        || taken.contains(&candidate)
    {
        candidate.push('_');
    }
    taken.insert(candidate.clone());
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapper_paths_are_flat_and_distinct() {
        assert_eq!(wrapper_rel_path("a.cpp", Platform::Cpu), "gen/a.cpp.begen.cc");
        let paths = dedup_paths(vec![
            wrapper_rel_path("a/b.cu", Platform::Cuda),
            wrapper_rel_path("a__b.cu", Platform::Cuda),
        ]);
        assert_eq!(paths, ["gen/a__b.cu.begen.cu", "gen/a__b.cu.2.begen.cu"]);
    }

    #[test]
    fn include_paths_reject_what_could_escape() {
        for bad in ["/a\"b.cu", "/a\nb.cu", "/a\\b.cu", "/a\u{1}.cu"] {
            assert!(include_path_text(Path::new(bad)).is_err(), "{bad:?}");
        }
        assert_eq!(include_path_text(Path::new("/dir with space/é.cu")).unwrap(), "/dir with space/é.cu");
    }

    #[test]
    fn python_names_avoid_keywords_and_module_names() {
        let mut taken = BTreeSet::new();
        assert_eq!(py_param_name("lambda", &mut taken), "lambda_");
        assert_eq!(py_param_name("out", &mut taken), "out_");
        assert_eq!(py_param_name("out_", &mut taken), "out__");
        assert_eq!(py_param_name("register", &mut taken), "register_");
        assert_eq!(py_param_name("_begen_int", &mut taken), "_begen_int_");
        assert_eq!(py_param_name("x", &mut taken), "x");
        assert_eq!(py_str("a\"b\\"), "\"a\\\"b\\\\\"");
    }
}
