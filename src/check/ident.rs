//! C++ identifier validation: every name begen writes into generated C++
//! passes through [`is_cpp_identifier`] first.

/// C++ keywords and alternative tokens (C++20), which are never valid names.
pub(crate) const KEYWORDS: &[&str] = &[
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
    "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
    "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
    "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
    "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
    "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
    "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
    "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
    "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
    "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
];

/// True when `name` is a plain ASCII C++ identifier that is not a keyword:
/// a letter or `_`, then letters, digits and `_`.
///
/// ```
/// use begen::check::is_cpp_identifier;
/// assert!(is_cpp_identifier("scale_by_2"));
/// assert!(!is_cpp_identifier("2x"));
/// assert!(!is_cpp_identifier("café"));
/// assert!(!is_cpp_identifier("float"));
/// assert!(!is_cpp_identifier("a);system(\"x\""));
/// ```
pub fn is_cpp_identifier(name: &str) -> bool {
    let mut bytes = name.bytes();
    let starts_well = matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_');
    starts_well
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !KEYWORDS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        assert!(is_cpp_identifier("_x"));
        assert!(is_cpp_identifier("X9"));
        assert!(!is_cpp_identifier(""));
        assert!(!is_cpp_identifier("a-b"));
        assert!(!is_cpp_identifier("a b"));
        assert!(!is_cpp_identifier("int"));
    }
}
