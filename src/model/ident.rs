//! Names: every name begen writes into generated C++ passes through
//! [`is_identifier`] first, and every name it writes into Python is kept
//! clear of [`PY_KEYWORDS`]. Each list exists once, here.

use std::collections::HashSet;
use std::sync::OnceLock;

use crate::par::FxBuildHasher;

/// C++ keywords and alternative tokens (C++20), which are never valid names.
pub(crate) const KEYWORDS: &[&str] = &[
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "char8_t",
    "char16_t",
    "char32_t",
    "class",
    "compl",
    "concept",
    "const",
    "consteval",
    "constexpr",
    "constinit",
    "const_cast",
    "continue",
    "co_await",
    "co_return",
    "co_yield",
    "decltype",
    "default",
    "delete",
    "do",
    "double",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "requires",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "static_cast",
    "struct",
    "switch",
    "template",
    "this",
    "thread_local",
    "throw",
    "true",
    "try",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "wchar_t",
    "while",
    "xor",
    "xor_eq",
];

/// True when `name` is a plain ASCII C++ identifier that is not a keyword:
/// a letter or `_`, then letters, digits and `_`.
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut bytes = name.bytes();
    let starts_well = matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_');
    static SET: Words = Words::new(&[KEYWORDS]);
    starts_well && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_') && !SET.contains(name)
}

/// Word lists as a set, built on first use: every name in a tree is looked
/// up in them, and a list of 100 keywords costs 100 comparisons a name.
pub(crate) struct Words {
    lists: &'static [&'static [&'static str]],
    set: OnceLock<HashSet<&'static str, FxBuildHasher>>,
}

impl Words {
    pub(crate) const fn new(lists: &'static [&'static [&'static str]]) -> Words {
        Words { lists, set: OnceLock::new() }
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        self.set.get_or_init(|| self.lists.iter().flat_map(|l| l.iter().copied()).collect()).contains(name)
    }
}

/// Python keywords: valid C++ identifiers that Python cannot use as names.
pub(crate) const PY_KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

/// Whether `name` is a Python keyword.
pub(crate) fn is_py_keyword(name: &str) -> bool {
    static SET: Words = Words::new(&[&PY_KEYWORDS]);
    SET.contains(name)
}

/// Characters that change how text around them is shown (bidirectional
/// overrides and isolates, zero-width characters, the BOM): never written
/// into generated C++ or Python, where they could make code read other than
/// it compiles.
pub(crate) fn is_invisible(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

/// Whether `text` is a release number begen can ask pip for and name a
/// folder after: 1 to 4 parts of 1 to 6 digits (`0.10.2`, `0.12.0.1`).
pub(crate) fn is_release_number(text: &str) -> bool {
    let parts: Vec<&str> = text.split('.').collect();
    (1..=4).contains(&parts.len())
        && parts.iter().all(|p| (1..=6).contains(&p.len()) && p.chars().all(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        assert!(is_identifier("_x"));
        assert!(is_identifier("X9"));
        assert!(!is_identifier(""));
        assert!(!is_identifier("a-b"));
        assert!(!is_identifier("a b"));
        assert!(!is_identifier("int"));
    }

    #[test]
    fn release_numbers() {
        for ok in ["0.10.2", "0.12.0.1", "1", "0.4"] {
            assert!(is_release_number(ok), "{ok}");
        }
        for bad in ["", "0..2", "0.1.2.3.4", "v0.4", "0.4rc1", "0.4 ", "../x", "0.1234567", "0.4;rm"] {
            assert!(!is_release_number(bad), "{bad}");
        }
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples of this module's crate-private items, run as unit tests
    //! (an example in a doc comment must compile outside the crate).

    #[test]
    fn is_identifier() {
        use crate::model::is_identifier;
        assert!(is_identifier("scale_by_2"));
        assert!(!is_identifier("2x"));
        assert!(!is_identifier("café"));
        assert!(!is_identifier("float"));
        assert!(!is_identifier("a);system(\"x\""));
    }
}
