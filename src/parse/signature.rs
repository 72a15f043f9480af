//! Parses one function signature with tree-sitter-cpp. The caller hands in
//! only the text from the start of the declaration to its body (never a whole
//! CUDA file, which tree-sitter cannot parse cleanly), so a parse is cheap and
//! launch syntax, `__global__` bodies and macros elsewhere never get in the way.
//! The plainest signatures (`void f(const BE::Tensor x, int n)`) are read
//! without tree-sitter, with the same result (see `parse_plain`).

use std::collections::{HashMap, HashSet};

use tree_sitter::{Node, Parser};

use crate::model::decl::{Indirection, TemplateKind, TemplateParam};
use crate::par::FxBuildHasher;

/// One parameter as written (no inference yet). Offsets are relative to the
/// parsed text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawParam {
    pub(crate) name: Option<String>,
    /// The type with whitespace normalised (`unsigned long long`,
    /// `BE::Tensor`, `std::complex<float>`), qualifiers removed.
    pub(crate) ty: String,
    pub(crate) is_const: bool,
    pub(crate) indirection: Indirection,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// A parsed declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParsedSig {
    pub(crate) name: String,
    pub(crate) name_start: usize,
    pub(crate) name_end: usize,
    pub(crate) params: Vec<RawParam>,
    /// The parameters of the `template <...>` the declaration sits in.
    pub(crate) template: Option<Vec<TemplateParam>>,
    /// The parameter list ends in `...`.
    pub(crate) variadic: bool,
    /// The return type as written, whitespace normalised, without
    /// `static`/`inline` or a leading `const`; a pointer or reference
    /// return ends in `*` or `&` (`void`, `ffi::Error`, `const char*`).
    pub(crate) ret: String,
}

/// Why a text is not a function declaration we can bind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SigError {
    /// No function declarator at all.
    NotAFunction,
    /// The parameter list has a syntax error at this offset.
    Syntax { start: usize, end: usize },
}

/// A reusable tree-sitter parser for signatures.
pub(crate) struct SignatureParser {
    parser: Parser,
    /// Words tree-sitter-cpp reads as keywords, and C++'s keywords (some,
    /// like `auto`, are named nodes in the grammar).
    keywords: HashSet<String, FxBuildHasher>,
    /// Signatures already read, by their text with the function's name cut
    /// out (see [`SignatureParser::parse_named`]).
    named: HashMap<Box<[u8]>, ParsedSig, FxBuildHasher>,
}

/// How many signatures a parser remembers: each is a declaration's head,
/// so this bounds the memory, not the hits (a tree's heads repeat by macro).
const REMEMBERED: usize = 4096;

impl SignatureParser {
    pub(crate) fn new() -> Self {
        let mut parser = Parser::new();
        let language: tree_sitter::Language = tree_sitter_cpp::LANGUAGE.into();
        // The grammar is compiled in; a version mismatch is a build bug.
        parser.set_language(&language).expect("tree-sitter-cpp grammar matches the tree-sitter runtime");
        let keywords = (0..language.node_kind_count() as u16)
            .filter(|&id| !language.node_kind_is_named(id))
            .filter_map(|id| language.node_kind_for_id(id))
            .filter(|k| k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
            .chain(crate::model::KEYWORDS.iter().copied())
            .map(str::to_string)
            .collect();
        SignatureParser { parser, keywords, named: HashMap::default() }
    }

    /// [`parse`](Self::parse) for a text expected to declare the function
    /// `name`: the same answer, remembered by the text around the name's
    /// first occurrence. Macro-made functions share their heads but for the
    /// name (`void scale_f32(const BE::Tensor x, ...)`, `void
    /// scale_f64(...)`), so most heads of a tree are read once.
    ///
    /// Exact because an identifier's spelling changes nothing in either
    /// reader but the name it reports: a remembered text read `name` as the
    /// function's name exactly where this text has its own, with the same
    /// bytes around it, so the bytes beside the name end the word there in
    /// both; and a new name is remembered only when it is no keyword or
    /// primitive type, which both readers would read apart.
    pub(crate) fn parse_named(&mut self, text: &[u8], name: &str) -> Result<ParsedSig, SigError> {
        let at = match find(text, name.as_bytes()) {
            Some(at) if self.is_plain_name(name) => at,
            _ => return self.parse(text),
        };
        let end = at + name.len();
        // The text but for the name, and where the name was: two keys are
        // equal only when the texts before and after it are.
        let mut key = Vec::with_capacity(8 + text.len() - name.len());
        key.extend_from_slice(&(at as u64).to_le_bytes());
        key.extend_from_slice(&text[..at]);
        key.extend_from_slice(&text[end..]);
        if let Some(known) = self.named.get(key.as_slice()) {
            return Ok(renamed(known, name));
        }
        let sig = self.parse(text)?;
        if sig.name == name && sig.name_start == at && self.named.len() < REMEMBERED {
            self.named.insert(key.into_boxed_slice(), sig.clone());
        }
        Ok(sig)
    }

    /// Whether `name` is an identifier both readers read as one: no keyword
    /// of the grammar or of C++, no primitive type.
    fn is_plain_name(&self, name: &str) -> bool {
        crate::model::is_identifier(name) && !PRIMITIVE_TYPES.contains(&name) && !self.keywords.contains(name)
    }

    /// Parses `text` (a declaration without its body or `;`).
    pub(crate) fn parse(&mut self, text: &[u8]) -> Result<ParsedSig, SigError> {
        match self.parse_plain(text) {
            Some(sig) => Ok(sig),
            None => self.parse_tree_sitter(text),
        }
    }

    /// The common case read without tree-sitter (a tree-sitter parse costs
    /// tens of microseconds, most of a scan): `[static|inline]* void
    /// name(params)` where each parameter is `[const] type [const] name`,
    /// `type` one word or `A::B`. Anything else, `None`, and tree-sitter
    /// decides; where this answers, it answers exactly as tree-sitter would
    /// (a test compares them).
    fn parse_plain(&self, text: &[u8]) -> Option<ParsedSig> {
        let toks = plain_tokens(text)?;
        // Plain tokens are ASCII: every slice below is text.
        let text = std::str::from_utf8(text).ok()?;
        let word = |k: usize| match toks.get(k) {
            Some(&(PlainTok::Word, s, e)) => Some(&text[s..e]),
            _ => None,
        };
        // A word tree-sitter reads as an identifier (or a type, with `primitive`).
        let ident = |k: usize, primitive: bool| {
            word(k).filter(|w| match PRIMITIVE_TYPES.contains(w) {
                true => primitive,
                false => !primitive && !self.keywords.contains(*w),
            })
        };
        let punct = |k: usize, p: PlainTok| toks.get(k).is_some_and(|t| t.0 == p);
        let mut k = 0;
        while matches!(word(k), Some("static" | "inline")) {
            k += 1;
        }
        if word(k) != Some("void") || ident(k + 1, false).is_none() || !punct(k + 2, PlainTok::Open) {
            return None;
        }
        let (_, name_start, name_end) = toks[k + 1];
        k += 3;
        let mut params = Vec::new();
        let mut closed = punct(k, PlainTok::Close);
        k += usize::from(closed);
        while !closed {
            let start = toks.get(k)?.1;
            let const_before = word(k) == Some("const");
            k += usize::from(const_before);
            let ty_start = toks.get(k)?.1;
            if ident(k, true).is_some_and(|w| w != "void") {
                k += 1;
            } else {
                ident(k, false)?;
                k += 1;
                while punct(k, PlainTok::Scope) && ident(k + 1, false).is_some() {
                    k += 2;
                }
            }
            let ty_end = toks[k - 1].2;
            let const_after = word(k) == Some("const");
            if const_before && const_after {
                return None;
            }
            k += usize::from(const_after);
            ident(k, false)?;
            let (_, n_start, end) = toks[k];
            k += 1;
            closed = punct(k, PlainTok::Close);
            if !closed && !punct(k, PlainTok::Comma) {
                return None;
            }
            k += 1;
            params.push(RawParam {
                name: Some(text[n_start..end].to_string()),
                ty: normalize_type(&text[ty_start..ty_end]),
                is_const: const_before || const_after,
                indirection: Indirection::Value,
                start,
                end,
            });
        }
        // Nothing follows the list.
        if k != toks.len() {
            return None;
        }
        Some(ParsedSig {
            name: text[name_start..name_end].to_string(),
            name_start,
            name_end,
            params,
            template: None,
            variadic: false,
            ret: "void".to_string(),
        })
    }

    /// A tree-sitter parse of `text` as a translation unit (the struct
    /// reader's; `None` only if tree-sitter gives up).
    pub(super) fn tree(&mut self, text: &[u8]) -> Option<tree_sitter::Tree> {
        self.parser.parse(text, None)
    }

    fn parse_tree_sitter(&mut self, text: &[u8]) -> Result<ParsedSig, SigError> {
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
        let mut template = None;
        let mut up = func.parent();
        while let Some(n) = up {
            if n.kind() == "template_declaration" && template.is_none() {
                template = Some(template_params(n, &owned));
            }
            up = n.parent();
        }
        Ok(ParsedSig {
            name: text_of(name_node, &owned),
            name_start: name_node.start_byte(),
            name_end: name_node.end_byte(),
            params,
            template,
            variadic,
            ret: return_type(func, &owned),
        })
    }
}

impl Default for SignatureParser {
    fn default() -> Self {
        Self::new()
    }
}

/// Where `word` first occurs in `text` (a head: a few hundred bytes, searched
/// once, so no searcher worth building).
fn find(text: &[u8], word: &[u8]) -> Option<usize> {
    let (&first, rest) = word.split_first()?;
    let mut from = 0;
    while let Some(k) = memchr::memchr(first, &text[from..]) {
        let at = from + k;
        if text[at + 1..].starts_with(rest) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// `known`, read from a text that named another function where this one
/// names `name`: its name swapped and the offsets after it moved.
fn renamed(known: &ParsedSig, name: &str) -> ParsedSig {
    let (old_end, new_end) = (known.name_end, known.name_start + name.len());
    let moved = |at: usize| if at >= old_end { at - old_end + new_end } else { at };
    let mut sig = known.clone();
    sig.name = name.to_string();
    sig.name_end = new_end;
    for p in &mut sig.params {
        p.start = moved(p.start);
        p.end = moved(p.end);
    }
    sig
}

/// tree-sitter-cpp's `primitive_type` words.
const PRIMITIVE_TYPES: &[&str] = &[
    "bool",
    "char",
    "int",
    "float",
    "double",
    "void",
    "size_t",
    "ssize_t",
    "ptrdiff_t",
    "intptr_t",
    "uintptr_t",
    "charptr_t",
    "nullptr_t",
    "max_align_t",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "char8_t",
    "char16_t",
    "char32_t",
    "char64_t",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PlainTok {
    Word,
    Open,
    Close,
    Comma,
    Scope,
}

/// The tokens of a plain signature with their byte ranges; `None` at the
/// first byte outside ASCII words, spaces, `(`, `)`, `,` and `::`.
fn plain_tokens(text: &[u8]) -> Option<Vec<(PlainTok, usize, usize)>> {
    let mut out = Vec::with_capacity(32);
    let mut i = 0;
    while i < text.len() {
        let start = i;
        let tok = match text[i] {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i += 1;
                continue;
            }
            b'(' => PlainTok::Open,
            b')' => PlainTok::Close,
            b',' => PlainTok::Comma,
            b':' if text.get(i + 1) == Some(&b':') => {
                i += 1;
                PlainTok::Scope
            }
            b if b.is_ascii_alphabetic() || b == b'_' => {
                while text.get(i + 1).is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_') {
                    i += 1;
                }
                PlainTok::Word
            }
            _ => return None,
        };
        i += 1;
        out.push((tok, start, i));
    }
    Some(out)
}

/// The parameters of a `template_declaration`, in order.
fn template_params(decl: Node, src: &[u8]) -> Vec<TemplateParam> {
    let Some(list) = decl.child_by_field_name("parameters") else { return Vec::new() };
    let mut out = Vec::new();
    let mut cursor = list.walk();
    for child in list.named_children(&mut cursor) {
        let (name, kind) = match child.kind() {
            "type_parameter_declaration" | "optional_type_parameter_declaration" => {
                let name = child
                    .child_by_field_name("name")
                    .or_else(|| last_named_child(child).filter(|n| n.kind() == "type_identifier"))
                    .map(|n| text_of(n, src));
                (name, TemplateKind::Type)
            }
            "parameter_declaration" | "optional_parameter_declaration" => {
                let raw = raw_param(child, src);
                let kind = if raw.indirection == Indirection::Value {
                    TemplateKind::Value(raw.ty)
                } else {
                    TemplateKind::Other
                };
                (raw.name, kind)
            }
            "comment" => continue,
            _ => (None, TemplateKind::Other),
        };
        out.push(TemplateParam { name, kind });
    }
    out
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
            "reference_declarator" | "abstract_reference_declarator" if indirection == Indirection::Value => {
                indirection = if text_of(d, src).starts_with("&&") {
                    Indirection::RvalueReference
                } else {
                    Indirection::Reference
                };
            }
            "array_declarator" | "abstract_array_declarator" if indirection == Indirection::Value => {
                indirection = Indirection::Array;
            }
            "function_declarator" | "abstract_function_declarator" => indirection = Indirection::Function,
            _ => {}
        }
        decl = d.child_by_field_name("declarator").or_else(|| last_named_child(d));
    }
    RawParam { name, ty, is_const, indirection, start: node.start_byte(), end: node.end_byte() }
}

/// The return type of the function declarator `func`: the `type` of the
/// declaration around it, with `*`/`&` for each pointer or reference
/// declarator between them; empty where there is none (a constructor-like
/// macro call).
fn return_type(func: Node, src: &[u8]) -> String {
    let mut suffix = String::new();
    let mut up = func.parent();
    while let Some(n) = up {
        match n.kind() {
            "pointer_declarator" => suffix.insert(0, '*'),
            "reference_declarator" => suffix.insert_str(0, if text_of(n, src).starts_with("&&") { "&&" } else { "&" }),
            "parenthesized_declarator" | "attributed_declarator" => {}
            _ => {
                let ty = n.child_by_field_name("type").map(|t| normalize_type(&text_of(t, src))).unwrap_or_default();
                let mut is_const = false;
                let mut cursor = n.walk();
                for child in n.children(&mut cursor) {
                    if child.kind() == "type_qualifier" && text_of(child, src) == "const" {
                        is_const = true;
                    }
                }
                let constness = if is_const && !suffix.is_empty() { "const " } else { "" };
                return format!("{constness}{ty}{suffix}");
            }
        }
        up = n.parent();
    }
    String::new()
}

pub(super) fn last_named_child(node: Node) -> Option<Node> {
    let count = node.named_child_count();
    if count == 0 { None } else { node.named_child(count as u32 - 1) }
}

/// Depth-first search without recursion (a crafted signature can nest
/// thousands of parentheses).
pub(super) fn first_of_kind<'t>(node: Node<'t>, kind: &str) -> Option<Node<'t>> {
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

pub(super) fn text_of(node: Node, src: &[u8]) -> String {
    String::from_utf8_lossy(&src[node.start_byte()..node.end_byte()]).into_owned()
}

/// Collapses whitespace to single spaces and drops it around punctuation:
/// `unsigned   long long` -> `unsigned long long`,
/// `std :: complex< float >` -> `std::complex<float>`.
pub(crate) fn normalize_type(ty: &str) -> String {
    // Most types are one ASCII word or `A::B`: nothing to normalise.
    if ty.bytes().all(|b| b.is_ascii_graphic()) {
        return ty.to_string();
    }
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
        let sig =
            parse("void f(const BE::Tensor x, BE::Tensor const & y, unsigned  long long n = 3, float* p, int a[])");
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

    /// Words and punctuation from which signatures, plain or nearly so, are glued.
    const PIECES: &[&str] = &[
        "void",
        "static",
        "inline",
        "extern",
        "f",
        "g_2",
        "const",
        "BE",
        "::",
        "Tensor",
        "int",
        "int64_t",
        "float",
        "double",
        "unsigned",
        "long",
        "size_t",
        "x",
        "stream",
        "T",
        "auto",
        "template",
        "<",
        ">",
        "(",
        ")",
        ",",
        "*",
        "&",
        "...",
        "=",
        "3",
        "[",
        "]",
        "__restrict__",
        "override",
        "NULL",
        "é",
        "\\\n",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 4096, ..Default::default() })]

        /// Wherever the plain reader answers, tree-sitter gives the same
        /// answer: on plain signatures, with a piece of something else
        /// inserted now and then.
        #[test]
        fn plain_reader_agrees_with_tree_sitter(
            head in proptest::sample::subsequence(&["static", "inline", "void", "f"][..], 2..=4),
            params in proptest::collection::vec(
                (
                    proptest::sample::select(&["", "const"][..]),
                    proptest::sample::select(&["BE::Tensor", "BE :: Tensor", "Tensor", "int", "int64_t", "float", "T", "void", "a::b::c"][..]),
                    proptest::sample::select(&["", "const"][..]),
                    proptest::sample::select(&["x", "stream", "n_2", "y", "alpha", "w", "int", "size_t", "auto", "final"][..]),
                ),
                0..5,
            ),
            noise in proptest::option::weighted(0.25, (0..40usize, proptest::sample::select(PIECES))),
            spaces in proptest::collection::vec(proptest::sample::select(&[" ", " ", " ", "", "\n  ", "\t"][..]), 20),
        ) {
            let mut words: Vec<&str> = head.clone();
            words.push("(");
            for (k, (c1, ty, c2, name)) in params.iter().enumerate() {
                if k > 0 {
                    words.push(",");
                }
                words.extend([*c1, *ty, *c2, *name].into_iter().filter(|w| !w.is_empty()));
            }
            words.push(")");
            if let Some((at, piece)) = noise {
                words.insert(at.min(words.len()), piece);
            }
            let mut text = String::new();
            for (k, w) in words.iter().enumerate() {
                text.push_str(if k == 0 { "" } else { spaces[k % spaces.len()] });
                text.push_str(w);
            }
            let mut parser = SignatureParser::new();
            if let Some(plain) = parser.parse_plain(text.as_bytes()) {
                proptest::prop_assert_eq!(Ok(plain), parser.parse_tree_sitter(text.as_bytes()), "{:?}", text);
            }
        }
    }

    #[test]
    fn plain_reader_takes_the_usual_forms() {
        let mut parser = SignatureParser::new();
        for text in [
            "void f()",
            "static inline void f_f32( const BE::Tensor x,\n  BE::Tensor const y, int n, int64_t stream)",
            "void g(T alpha, ::BE::Tensor y)",
            "void g(std::complex<float> a, BE::Tensor y)",
        ] {
            let plain = parser.parse_plain(text.as_bytes());
            let ts = parser.parse_tree_sitter(text.as_bytes());
            assert!(plain.is_none() || plain.as_ref() == ts.as_ref().ok(), "{text}");
        }
        let usual = b"static void f( const BE::Tensor x, BE::Tensor y, int n, float a, int64_t stream )";
        assert_eq!(parser.parse_plain(usual).map(|s| s.params.len()), Some(5));
        assert!(parser.parse_plain(b"void f(int x) const").is_none());
        assert!(parser.parse_plain(b"void f() int x)").is_none());
    }

    #[test]
    fn remembered_heads_read_as_fresh_ones() {
        // Each text read after the others gives what a fresh parser gives.
        let texts: &[(&str, &str)] = &[
            ("void scale_f32( const BE::Tensor x, BE::Tensor y, int64_t stream )", "scale_f32"),
            // The same head, a longer and a shorter name: remembered.
            ("void scale_float64( const BE::Tensor x, BE::Tensor y, int64_t stream )", "scale_float64"),
            ("void s( const BE::Tensor x, BE::Tensor y, int64_t stream )", "s"),
            // Through tree-sitter: a template, pointers, a default.
            ("template <typename T> static void g_a(const T* x, T* out, int n = 3)", "g_a"),
            ("template <typename T> static void g_bb(const T* x, T* out, int n = 3)", "g_bb"),
            // The name also names a parameter.
            ("void h(int h, float y)", "h"),
            ("void k(int h, float y)", "k"),
            // The wanted name is not the function's: never remembered as one.
            ("void other(int n, float f)", "f"),
            ("void other(int n, float q)", "q"),
            // The name inside a longer word first.
            ("void xf(int n)", "f"),
            ("void f(int nf)", "f"),
            ("void xg(int n)", "g"),
            // Words no identifier may stand for.
            ("void size_t(int n)", "size_t"),
            ("void int(int n)", "int"),
            ("void __global__(int n)", "__global__"),
        ];
        let mut remembering = SignatureParser::new();
        for (text, name) in texts {
            let fresh = SignatureParser::new().parse(text.as_bytes());
            assert_eq!(remembering.parse_named(text.as_bytes(), name), fresh, "{text}");
        }
        // Remembered: the three heads of the first seven texts, `void f(int
        // nf)` and `__global__` (an identifier to both readers; begen blanks
        // it before they see a text).
        assert_eq!(remembering.named.len(), 5);
        // Two texts that would be alike with a separator byte in place of
        // the name (a code view need not be UTF-8): the second is no
        // remembered head.
        let (first, second) = (&b"void f(int x, int c = '\xFF')"[..], &b"void \xFF(int x, int c = 'f')"[..]);
        assert_eq!(remembering.parse_named(first, "f").map(|s| s.name), Ok("f".to_string()));
        assert_eq!(remembering.parse_named(second, "f"), SignatureParser::new().parse(second));
    }

    #[test]
    fn normalizes_types() {
        assert_eq!(normalize_type("std :: complex< float >"), "std::complex<float>");
        assert_eq!(normalize_type("unsigned\n  char"), "unsigned char");
        assert_eq!(normalize_type("BE::Tensor"), "BE::Tensor");
        assert_eq!(normalize_type("\tint64_t\u{a0}"), "int64_t");
    }
}
