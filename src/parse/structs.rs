//! Struct definitions that attributes name (`attr.p:Affine`, or a parameter
//! of type `Affine`). A byte scan of a file's code view (comments and
//! literals blanked) finds every struct defined at file scope, `struct S
//! { ... };` and `typedef struct { ... } S;`, without parsing; only a
//! definition that a function names is read with tree-sitter, and only its
//! own text, so a CUDA file is never handed to tree-sitter whole.

use std::borrow::Cow;
use std::collections::HashMap;

use tree_sitter::Node;

use super::blank_cuda_words;
use super::item;
use super::signature::{SignatureParser, first_of_kind, last_named_child, normalize_type, text_of};
use crate::model::decl::{DeclMember, DeclStruct, Indirection, StructProblem};
use crate::source::{FileId, Span};

/// A struct definition the scan found at file scope.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// The names it is known by (its tag, a typedef's alias), each with
    /// where it is written.
    pub(crate) names: Vec<(String, usize)>,
    pub(crate) file: FileId,
    /// Where its `struct` keyword is.
    start: usize,
    /// The code from `struct` to the closing `}`, with everything between
    /// the keyword and the `{` blanked (attributes, name, base clause):
    /// tree-sitter reads `struct { ... }`, offsets unchanged.
    text: Vec<u8>,
    /// What the scan already saw (a template head, a base clause), as
    /// offsets in the file.
    problems: Vec<(usize, usize, StructProblem)>,
    /// Where its `{` is, and the offset after its `}`.
    head_end: usize,
    end: usize,
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The identifier starting at `i`, if one does.
fn word_at(code: &[u8], i: usize) -> Option<(usize, usize)> {
    let first = *code.get(i)?;
    if !(first.is_ascii_alphabetic() || first == b'_') {
        return None;
    }
    let end = i + code[i..].iter().take_while(|b| is_ident(**b)).count();
    Some((i, end))
}

/// How far from its `struct` keyword a definition's head (attributes,
/// name, base clause) and the `typedef`/`template` before it may reach:
/// bounds every search per keyword, so a crafted file of keywords costs
/// linear time.
const HEAD_LIMIT: usize = 4096;

/// Every struct defined at file scope (outside any block but `extern "C"`
/// and anonymous namespaces) in `code`, the lexer's code view of `file`.
pub(crate) fn scan(code: &[u8], file: FileId) -> Vec<Found> {
    at_file_scope(code, candidates(code, file))
}

/// Every struct definition in `code` outside `#define`s, at file scope or
/// not: what [`at_file_scope`] keeps from. Cheap where the scope is not
/// (a file of many functions has many blocks to classify).
pub(crate) fn candidates(code: &[u8], file: FileId) -> Vec<Found> {
    let hits: Vec<usize> = memchr::memmem::find_iter(code, b"struct")
        .filter(|&at| (at == 0 || !is_ident(code[at - 1])) && code.get(at + 6).is_none_or(|b| !is_ident(*b)))
        .collect();
    if hits.is_empty() {
        return Vec::new();
    }
    // A `#define` whose body defines a struct defines none by itself.
    let directives = directive_ranges(code);
    let mut d = 0;
    let outside = |at: &usize| {
        while directives.get(d).is_some_and(|&(_, end)| end <= *at) {
            d += 1;
        }
        directives.get(d).is_none_or(|&(start, _)| *at < start)
    };
    let hits: Vec<usize> = hits.into_iter().filter(outside).collect();
    let closes = brace_pairs(code);
    hits.into_iter().filter_map(|at| definition(code, at, file, &closes)).collect()
}

/// The `candidates` of `code` defined at file scope, with their text.
pub(crate) fn at_file_scope(code: &[u8], mut found: Vec<Found>) -> Vec<Found> {
    if found.is_empty() {
        return found;
    }
    let offsets: Vec<usize> = found.iter().map(|f| f.start).collect();
    let keep = item::at_file_scope(code, &offsets);
    let mut k = 0;
    found.retain(|_| {
        k += 1;
        keep[k - 1]
    });
    for f in &mut found {
        f.text = code[f.start..f.end].to_vec();
        for b in &mut f.text[6..f.head_end - f.start] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
    found
}

/// The preprocessor directives of `code` (with their continuation lines),
/// in order: `(start, end)`.
fn directive_ranges(code: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut line = 0;
    while line < code.len() {
        let first = line + code[line..].iter().take_while(|b| **b == b' ' || **b == b'\t').count();
        let end = if code.get(first) == Some(&b'#') {
            let end = item::directive_end(code, first);
            out.push((first, end));
            end
        } else {
            memchr::memchr(b'\n', &code[line..]).map_or(code.len(), |k| line + k)
        };
        line = end + 1;
    }
    out
}

/// Offsets of `}`s by the offsets of the `{`s they close.
type Closes = HashMap<usize, usize, crate::par::FxBuildHasher>;

/// The offset of the `}` closing each `{` that is closed, by the `{`'s offset.
fn brace_pairs(code: &[u8]) -> Closes {
    let mut open = Vec::new();
    let mut out = Closes::default();
    for k in memchr::memchr2_iter(b'{', b'}', code) {
        if code[k] == b'{' {
            open.push(k);
        } else if let Some(o) = open.pop() {
            out.insert(o, k);
        }
    }
    out
}

/// The struct defined by the `struct` keyword at `at`, if it starts a
/// definition with a name.
fn definition(code: &[u8], at: usize, file: FileId, closes: &Closes) -> Option<Found> {
    let head = &code[..code.len().min(at + HEAD_LIMIT)];
    let mut i = at + 6;
    let mut tag = None;
    // Attributes (`alignas(16)`, `__align__(16)`, `[[...]]`), the tag, `final`.
    loop {
        i = item::skip_spaces(head, i);
        if head[i..].starts_with(b"[[") {
            i = i + memchr::memmem::find(&head[i..], b"]]")? + 2;
            continue;
        }
        let Some((ws, we)) = word_at(head, i) else { break };
        let next = item::skip_spaces(head, we);
        if head.get(next) == Some(&b'(') {
            i = item::matching(head, next, b'(', b')')? + 1;
            continue;
        }
        if &code[ws..we] != b"final" {
            if tag.is_some() {
                // `struct S s;`: a use, not a definition.
                return None;
            }
            tag = Some((String::from_utf8_lossy(&code[ws..we]).into_owned(), ws));
        }
        i = next;
    }
    let mut problems = Vec::new();
    let brace = match head.get(i) {
        Some(b'{') => i,
        Some(b':') if head.get(i + 1) != Some(&b':') => {
            let k = memchr::memchr2(b'{', b';', &head[i..])? + i;
            if head[k] != b'{' {
                return None;
            }
            problems.push((i, k, StructProblem::BaseClass));
            k
        }
        _ => return None,
    };
    let close = *closes.get(&brace)?;
    // The statement's words before `struct`: `typedef`, `template <...>`.
    let window = at.saturating_sub(HEAD_LIMIT);
    let stmt = memchr::memrchr3(b'{', b'}', b';', &code[window..at]).map_or(window, |k| window + k + 1);
    let stmt = item::skip_trivia(&code[..at], stmt);
    let before = &code[stmt..at];
    let has_word = |w: &[u8]| {
        memchr::memmem::find_iter(before, w)
            .any(|k| (k == 0 || !is_ident(before[k - 1])) && before.get(k + w.len()).is_none_or(|b| !is_ident(*b)))
    };
    if has_word(b"template") {
        problems.push((stmt, at + 6, StructProblem::Template));
    }
    let mut names: Vec<(String, usize)> = tag.into_iter().collect();
    if has_word(b"typedef") {
        let j = item::skip_spaces(code, close + 1);
        if let Some((ws, we)) = word_at(code, j)
            && matches!(code.get(item::skip_spaces(code, we)), Some(b';' | b','))
        {
            names.push((String::from_utf8_lossy(&code[ws..we]).into_owned(), ws));
        }
    }
    if names.is_empty() {
        return None;
    }
    // The text is copied once the definition is known to be at file scope
    // (file-scope definitions do not nest: the copies are disjoint).
    Some(Found { names, file, start: at, text: Vec::new(), problems, head_end: brace, end: close + 1 })
}

/// Reads a found definition under `name` (one of its names): its data
/// members and whatever makes it unbindable.
pub(crate) fn read(found: &Found, name: &str, parser: &mut SignatureParser) -> DeclStruct {
    // Offsets into the parsed text (one `;` longer than the definition),
    // kept inside the definition and never empty.
    let len = found.text.len();
    let span = |s: usize, e: usize| {
        let s = s.min(len.saturating_sub(1));
        Span::new(found.file, found.start + s, found.start + e.min(len).max(s + 1))
    };
    let name_at = found.names.iter().find(|(n, _)| n == name).map_or(found.start, |(_, at)| *at);
    let mut out = DeclStruct {
        name: name.to_string(),
        name_span: Span::new(found.file, name_at, name_at + name.len()),
        members: Vec::new(),
        problems: found.problems.iter().map(|&(s, e, p)| (Span::new(found.file, s, e.max(s + 1)), p)).collect(),
    };
    let mut text = Cow::Borrowed(&found.text[..]);
    blank_cuda_words(&mut text);
    let mut owned = text.into_owned();
    owned.push(b';');
    let tree = parser.tree(&owned);
    let body = tree.as_ref().and_then(|tree| first_of_kind(tree.root_node(), "field_declaration_list"));
    if let Some(body) = body {
        read_body(body, &owned, &span, &mut out);
    } else {
        out.problems.push((span(0, found.text.len()), StructProblem::Syntax));
    }
    out
}

/// Reads the members of a `field_declaration_list` into `out`.
fn read_body(body: Node, src: &[u8], span: &dyn Fn(usize, usize) -> Span, out: &mut DeclStruct) {
    if let Some(bad) = first_problem(body) {
        out.problems.push((span(bad.start_byte(), bad.end_byte()), StructProblem::Syntax));
    }
    let mut access = "public";
    let mut cursor = body.walk();
    for child in body.named_children(&mut cursor) {
        match child.kind() {
            "access_specifier" => {
                access = match text_of(child, src).as_str() {
                    "private" => "private",
                    "protected" => "protected",
                    _ => "public",
                }
            }
            "field_declaration" => read_field(child, src, access, span, out),
            k if k.starts_with("preproc_") && first_of_kind(child, "field_declaration").is_some() => {
                out.problems.push((span(child.start_byte(), child.end_byte()), StructProblem::Conditional));
            }
            // Member functions, constructors, nested types, `static_assert`,
            // `using`, friends: not part of a value of the struct.
            _ => {}
        }
    }
}

/// The first ERROR or MISSING node under `node`.
fn first_problem(node: Node) -> Option<Node> {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.is_error() || n.is_missing() {
            return Some(n);
        }
        if n.has_error() {
            let mut cursor = n.walk();
            let children: Vec<Node> = n.children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
        }
    }
    None
}

/// One `field_declaration`: a member per declarator (none for a member
/// function's declaration).
fn read_field(node: Node, src: &[u8], access: &'static str, span: &dyn Fn(usize, usize) -> Span, out: &mut DeclStruct) {
    let Some(ty_node) = node.child_by_field_name("type") else { return };
    let at = span(node.start_byte(), node.end_byte());
    let mut cursor = node.walk();
    let declarators: Vec<Node> = node.children_by_field_name("declarator", &mut cursor).collect();
    let compound = matches!(ty_node.kind(), "struct_specifier" | "union_specifier" | "class_specifier");
    if declarators.is_empty() {
        if compound && ty_node.child_by_field_name("body").is_some() {
            out.problems.push((at, StructProblem::Anonymous));
        }
        return;
    }
    let ty = if compound || ty_node.kind() == "enum_specifier" {
        let keyword = ty_node.kind().trim_end_matches("_specifier");
        let name = ty_node.child_by_field_name("name").map_or_else(|| "<anonymous>".to_string(), |n| text_of(n, src));
        format!("{keyword} {name}")
    } else {
        normalize_type(&text_of(ty_node, src))
    };
    let mut is_const = false;
    let mut is_static = false;
    let mut bitfield = false;
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        match child.kind() {
            "type_qualifier" if text_of(child, src) == "const" => is_const = true,
            "storage_class_specifier" if text_of(child, src) == "static" => is_static = true,
            "bitfield_clause" => bitfield = true,
            _ => {}
        }
    }
    for d in declarators {
        let mut name = None;
        let mut indirection = Indirection::Value;
        let mut decl = Some(d);
        while let Some(n) = decl {
            match n.kind() {
                "field_identifier" | "identifier" => {
                    name = Some(text_of(n, src));
                    break;
                }
                "pointer_declarator" => indirection = Indirection::Pointer,
                "reference_declarator" if indirection == Indirection::Value => {
                    indirection = if text_of(n, src).starts_with("&&") {
                        Indirection::RvalueReference
                    } else {
                        Indirection::Reference
                    };
                }
                "array_declarator" if indirection == Indirection::Value => indirection = Indirection::Array,
                // A member function's declaration.
                "function_declarator" => return,
                _ => {}
            }
            decl = n.child_by_field_name("declarator").or_else(|| last_named_child(n));
        }
        let Some(name) = name else { continue };
        let nested = compound;
        out.members.push(DeclMember {
            name,
            ty: ty.clone(),
            is_const,
            is_static,
            indirection,
            bitfield,
            access,
            nested,
            span: at,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: FileId = FileId::TEST;

    fn found(code: &str) -> Vec<Found> {
        scan(code.as_bytes(), F)
    }

    fn names(code: &str) -> Vec<String> {
        found(code).iter().flat_map(|f| f.names.iter().map(|(n, _)| n.clone())).collect()
    }

    #[test]
    fn scan_finds_file_scope_definitions_only() {
        let code = "struct A { int x; };\nstruct B;\nstruct A a;\nvoid f(struct A a) { struct L { int y; }; }\n\
                    namespace n { struct N { int z; }; }\nnamespace { struct Anon { int w; }; }\n\
                    extern \"C\" { struct C { int v; }; }\ntypedef struct { float q; } T;\n\
                    typedef struct Tag { float q; } Alias;\nstruct alignas(16) Al final { float a; };\n\
                    struct __align__(8) Cu { float a; };\nstruct D : A { int e; };\n";
        assert_eq!(names(code), ["A", "Anon", "C", "T", "Tag", "Alias", "Al", "Cu", "D"]);
        let d = found(code).into_iter().find(|f| f.names[0].0 == "D").unwrap();
        assert_eq!(d.problems.len(), 1);
        assert!(
            names("#define DEF(N) struct N { int a; };\n#define LONG \\\n  struct M { int b; };\nDEF(Q)").is_empty()
        );
        let t = found("template <typename T>\nstruct Box { T v; };");
        assert_eq!(t[0].problems[0].2, StructProblem::Template);
    }

    /// A crafted file of keywords, unclosed heads and nested bodies is
    /// scanned in linear time.
    #[test]
    fn scan_is_linear() {
        for piece in ["struct a { ", "struct alignas( ", "struct ", "typedef struct { } ", "#define X struct a {\n"] {
            let code = piece.repeat(200_000 / piece.len());
            let t = std::time::Instant::now();
            let _ = scan(code.as_bytes(), F);
            // A hang catcher only: a debug build on a loaded machine.
            assert!(t.elapsed().as_secs_f64() < 60.0, "{piece:?}: {:?}", t.elapsed());
        }
        let nested = format!("{}{}", "struct a { ".repeat(10_000), "} ".repeat(10_000));
        let t = std::time::Instant::now();
        assert_eq!(scan(nested.as_bytes(), F).len(), 1);
        assert!(t.elapsed().as_secs_f64() < 60.0, "{:?}", t.elapsed());
    }

    #[test]
    fn read_members() {
        let code = "struct S {\n  int32_t a;\n  const float b, c;\n  static constexpr int k = 3;\n  double* p;\n  int w[4];\n  \
                    unsigned f : 3;\n  __half h;\n  struct In { int z; } in;\n  __device__ float g() const { return 1; }\n  \
                    float m() const;\n  S() = default;\n private:\n  long long q = 2;\n};";
        let f = &found(code)[0];
        let mut parser = SignatureParser::new();
        let s = read(f, "S", &mut parser);
        assert!(s.problems.is_empty(), "{:?}", s.problems);
        let shown: Vec<String> = s
            .members
            .iter()
            .map(|m| {
                format!(
                    "{}:{}{}{}{}:{:?}:{}",
                    m.name,
                    if m.is_const { "const " } else { "" },
                    if m.is_static { "static " } else { "" },
                    m.ty,
                    if m.bitfield { ":bits" } else { "" },
                    m.indirection,
                    m.access
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                "a:int32_t:Value:public",
                "b:const float:Value:public",
                "c:const float:Value:public",
                "k:static int:Value:public",
                "p:double:Pointer:public",
                "w:int:Array:public",
                "f:unsigned:bits:Value:public",
                "h:__half:Value:public",
                "in:struct In:Value:public",
                "q:long long:Value:private",
            ]
        );
        assert_eq!(&code[s.name_span.start..s.name_span.end], "S");
    }

    #[test]
    fn read_reports_what_it_cannot_bind() {
        let mut parser = SignatureParser::new();
        let code = "struct U { union { int i; float f; }; \n#ifdef X\n int x;\n#endif\n float ok; };";
        let s = read(&found(code)[0], "U", &mut parser);
        let problems: Vec<StructProblem> = s.problems.iter().map(|p| p.1).collect();
        assert_eq!(problems, [StructProblem::Anonymous, StructProblem::Conditional]);
        let code = "typedef struct { float a; int ) b; } Bad;";
        let s = read(&found(code)[0], "Bad", &mut parser);
        assert!(s.problems.iter().any(|p| p.1 == StructProblem::Syntax), "{:?}", s.problems);
        assert_eq!(&code[s.name_span.start..s.name_span.end], "Bad");
    }
}
