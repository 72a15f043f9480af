//! Parses one function signature with tree-sitter-cpp. The caller hands in
//! only the text from the start of the declaration to its body (never a whole
//! CUDA file, which tree-sitter cannot parse cleanly), so a parse is cheap and
//! launch syntax, `__global__` bodies and macros elsewhere never get in the way.

use tree_sitter::{Node, Parser};

/// How a parameter's declarator wraps its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Indirection {
    Value,
    Pointer,
    Reference,
    Array,
    /// A function or function pointer.
    Function,
}

/// One parameter as written (no inference yet). Offsets are relative to the
/// parsed text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawParam {
    pub name: Option<String>,
    /// The type with whitespace normalised (`unsigned long long`,
    /// `BE::Tensor`, `std::complex<float>`), qualifiers removed.
    pub ty: String,
    pub is_const: bool,
    pub indirection: Indirection,
    pub start: usize,
    pub end: usize,
}

/// A parsed declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedSig {
    pub name: String,
    pub name_start: usize,
    pub name_end: usize,
    pub params: Vec<RawParam>,
    /// The declaration sits inside `template <...>`.
    pub is_template: bool,
    /// The parameter list ends in `...`.
    pub variadic: bool,
}

/// Why a text is not a function declaration we can bind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SigError {
    /// No function declarator at all.
    NotAFunction,
    /// The parameter list has a syntax error at this offset.
    Syntax { start: usize, end: usize },
}

/// A reusable tree-sitter parser for signatures.
pub struct SignatureParser {
    parser: Parser,
}

impl SignatureParser {
    pub fn new() -> Self {
        let mut parser = Parser::new();
        // The grammar is compiled in; a version mismatch is a build bug.
        parser
            .set_language(&tree_sitter_cpp::LANGUAGE.into())
            .expect("tree-sitter-cpp grammar matches the tree-sitter runtime");
        SignatureParser { parser }
    }

    /// Parses `text` (a declaration without its body or `;`).
    pub fn parse(&mut self, text: &[u8]) -> Result<ParsedSig, SigError> {
        let mut owned = text.to_vec();
        owned.push(b';');
        let tree = self.parser.parse(&owned, None).ok_or(SigError::NotAFunction)?;
        let root = tree.root_node();
        let func = first_of_kind(root, "function_declarator").ok_or(SigError::NotAFunction)?;
        let name_node = func.child_by_field_name("declarator").ok_or(SigError::NotAFunction)?;
        if !matches!(name_node.kind(), "identifier" | "qualified_identifier" | "field_identifier") {
            return Err(SigError::NotAFunction);
        }
        let list = func.child_by_field_name("parameters").ok_or(SigError::NotAFunction)?;
        if let Some(bad) = first_error(list) {
            return Err(SigError::Syntax { start: bad.start_byte(), end: bad.end_byte().max(bad.start_byte() + 1) });
        }
        let mut params = Vec::new();
        let mut variadic = false;
        let mut cursor = list.walk();
        for child in list.children(&mut cursor) {
            match child.kind() {
                "parameter_declaration" | "optional_parameter_declaration" => {
                    params.push(raw_param(child, &owned));
                }
                "variadic_parameter_declaration" | "..." => variadic = true,
                _ => {}
            }
        }
        // `f(void)` takes no parameters.
        if params.len() == 1 && params[0].ty == "void" && params[0].name.is_none() {
            params.clear();
        }
        let mut is_template = false;
        let mut up = func.parent();
        while let Some(n) = up {
            is_template |= n.kind() == "template_declaration";
            up = n.parent();
        }
        Ok(ParsedSig {
            name: text_of(name_node, &owned),
            name_start: name_node.start_byte(),
            name_end: name_node.end_byte(),
            params,
            is_template,
            variadic,
        })
    }
}

impl Default for SignatureParser {
    fn default() -> Self {
        Self::new()
    }
}

fn raw_param(node: Node, src: &[u8]) -> RawParam {
    let ty = node.child_by_field_name("type").map(|t| normalize_type(&text_of(t, src))).unwrap_or_default();
    let mut is_const = false;
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if child.kind() == "type_qualifier" && text_of(child, src) == "const" {
            is_const = true;
        }
    }
    let mut name = None;
    let mut indirection = Indirection::Value;
    let mut decl = node.child_by_field_name("declarator");
    while let Some(d) = decl {
        match d.kind() {
            "identifier" => {
                name = Some(text_of(d, src));
                break;
            }
            "pointer_declarator" | "abstract_pointer_declarator" => indirection = Indirection::Pointer,
            "reference_declarator" | "abstract_reference_declarator"
                if indirection == Indirection::Value => {
                    indirection = Indirection::Reference;
                }
            "array_declarator" | "abstract_array_declarator"
                if indirection == Indirection::Value => {
                    indirection = Indirection::Array;
                }
            "function_declarator" | "abstract_function_declarator" => indirection = Indirection::Function,
            _ => {}
        }
        decl = d.child_by_field_name("declarator").or_else(|| last_named_child(d));
    }
    RawParam { name, ty, is_const, indirection, start: node.start_byte(), end: node.end_byte() }
}

fn last_named_child(node: Node) -> Option<Node> {
    let count = node.named_child_count();
    if count == 0 { None } else { node.named_child(count as u32 - 1) }
}

/// Depth-first search without recursion (a crafted signature can nest
/// thousands of parentheses).
fn first_of_kind<'t>(node: Node<'t>, kind: &str) -> Option<Node<'t>> {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.kind() == kind {
            return Some(n);
        }
        let mut cursor = n.walk();
        let children: Vec<Node<'t>> = n.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    None
}

/// The first ERROR or MISSING node, ignoring default arguments (their
/// expressions are never used, and `= {1, 2}` confuses the grammar).
fn first_error(node: Node) -> Option<Node> {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.is_error() || n.is_missing() {
            return Some(n);
        }
        if !n.has_error() {
            continue;
        }
        let skip = n.child_by_field_name("default_value").map(|d| d.id());
        let mut cursor = n.walk();
        let children: Vec<Node> = n.children(&mut cursor).filter(|c| Some(c.id()) != skip).collect();
        stack.extend(children.into_iter().rev());
    }
    None
}

fn text_of(node: Node, src: &[u8]) -> String {
    String::from_utf8_lossy(&src[node.start_byte()..node.end_byte()]).into_owned()
}

/// Collapses whitespace to single spaces and drops it around punctuation:
/// `unsigned   long long` -> `unsigned long long`,
/// `std :: complex< float >` -> `std::complex<float>`.
pub fn normalize_type(ty: &str) -> String {
    let mut out = String::with_capacity(ty.len());
    let mut pending_space = false;
    for c in ty.chars() {
        if c.is_whitespace() {
            pending_space = true;
            continue;
        }
        let word = c.is_alphanumeric() || c == '_';
        if pending_space && word && out.chars().last().is_some_and(|p| p.is_alphanumeric() || p == '_') {
            out.push(' ');
        }
        pending_space = false;
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> ParsedSig {
        SignatureParser::new().parse(s.as_bytes()).unwrap()
    }

    #[test]
    fn tensors_and_scalars() {
        let sig = parse("void f(const BE::Tensor x, BE::Tensor const & y, unsigned  long long n = 3, float* p, int a[])");
        assert_eq!(sig.name, "f");
        let p = &sig.params;
        assert_eq!((p[0].ty.as_str(), p[0].is_const, p[0].indirection), ("BE::Tensor", true, Indirection::Value));
        assert_eq!((p[1].is_const, p[1].indirection), (true, Indirection::Reference));
        assert_eq!((p[2].ty.as_str(), p[2].name.as_deref()), ("unsigned long long", Some("n")));
        assert_eq!(p[3].indirection, Indirection::Pointer);
        assert_eq!(p[4].indirection, Indirection::Array);
    }

    #[test]
    fn void_and_variadic() {
        assert!(parse("void k(void)").params.is_empty());
        assert!(parse("void k(int x, ...)").variadic);
    }

    #[test]
    fn syntax_errors_are_reported() {
        let r = SignatureParser::new().parse(b"void f(int x y z, )");
        assert!(matches!(r, Err(SigError::Syntax { .. })));
        assert_eq!(SignatureParser::new().parse(b"int x = 3"), Err(SigError::NotAFunction));
    }

    #[test]
    fn normalizes_types() {
        assert_eq!(normalize_type("std :: complex< float >"), "std::complex<float>");
        assert_eq!(normalize_type("unsigned\n  char"), "unsigned char");
    }
}
