//! Splits code (comments and literals already blanked by the lexer) into the
//! top-level items that can follow an annotation: a declaration up to its
//! body, or a macro invocation `NAME(...)`.

/// One item of code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Item {
    /// `code[start..end]` is a declaration without its body; `next` is the
    /// offset after the body (or the `;`).
    Decl { start: usize, end: usize, next: usize },
    /// `NAME(...)`: the name at `name..name_end`, the argument list from
    /// `open` (the `(`) to `close` (the `)`), `next` after an optional `;`.
    Call { name: usize, name_end: usize, open: usize, close: usize, next: usize },
    /// Nothing but whitespace and preprocessor lines up to the end.
    End,
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Skips whitespace and whole preprocessor lines (with continuations).
pub(crate) fn skip_trivia(code: &[u8], mut i: usize) -> usize {
    let mut line_start = i == 0 || code.get(i - 1) == Some(&b'\n');
    while i < code.len() {
        match code[i] {
            b'\n' => {
                line_start = true;
                i += 1;
            }
            b if b.is_ascii_whitespace() => i += 1,
            b'#' if line_start => i = directive_end(code, i),
            _ => break,
        }
    }
    i
}

/// The offset of the line break ending the directive that starts at `i`.
pub(crate) fn directive_end(code: &[u8], mut i: usize) -> usize {
    while let Some(k) = code.get(i..).and_then(|rest| memchr::memchr(b'\n', rest)) {
        let nl = i + k;
        let mut e = nl;
        if e > 0 && code[e - 1] == b'\r' {
            e -= 1;
        }
        if e > 0 && code[e - 1] == b'\\' {
            i = nl + 1;
            continue;
        }
        return nl;
    }
    i.max(code.len())
}

/// The item starting at or after `from`.
pub(crate) fn next_item(code: &[u8], from: usize) -> Item {
    let start = skip_trivia(code, from);
    if start >= code.len() {
        return Item::End;
    }
    if let Some(call) = macro_call(code, start) {
        return call;
    }
    let mut depth = 0usize;
    let mut i = start;
    while i < code.len() {
        match code[i] {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth = depth.saturating_sub(1),
            b'{' if depth == 0 => {
                let next = matching(code, i, b'{', b'}').map_or(code.len(), |c| c + 1);
                return Item::Decl { start, end: i, next };
            }
            b';' if depth == 0 => return Item::Decl { start, end: i, next: i + 1 },
            _ => {}
        }
        i += 1;
    }
    Item::Decl { start, end: code.len(), next: code.len() }
}

/// `IDENT (` as the first two tokens: a declaration always has a type
/// before its name, so this is a macro invocation.
fn macro_call(code: &[u8], start: usize) -> Option<Item> {
    if !(code[start].is_ascii_alphabetic() || code[start] == b'_') {
        return None;
    }
    let mut i = start;
    while i < code.len() && is_ident(code[i]) {
        i += 1;
    }
    let name_end = i;
    while i < code.len() && code[i].is_ascii_whitespace() {
        i += 1;
    }
    if code.get(i) != Some(&b'(') {
        return None;
    }
    let open = i;
    let close = matching(code, open, b'(', b')')?;
    let mut next = close + 1;
    let after = skip_spaces(code, next);
    if code.get(after) == Some(&b';') {
        next = after + 1;
    }
    Some(Item::Call { name: start, name_end, open, close, next })
}

pub(crate) fn skip_spaces(code: &[u8], mut i: usize) -> usize {
    while i < code.len() && code[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The offset of the bracket closing the one at `open`.
pub(crate) fn matching(code: &[u8], open: usize, o: u8, c: u8) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &b) in code.iter().enumerate().skip(open) {
        if b == o {
            depth += 1;
        } else if b == c {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declaration_then_body() {
        let code = b"\n#include <x>\nvoid f(int a, int b) { if (a) { } }\nint g;";
        let Item::Decl { start, end, next } = next_item(code, 0) else { panic!() };
        assert_eq!(&code[start..end], b"void f(int a, int b) ");
        assert_eq!(next_item(code, next), Item::Decl { start: next + 1, end: code.len() - 1, next: code.len() });
    }

    #[test]
    fn macro_invocation() {
        let code = b"FFI_X  (_f32, float);\nnext";
        let Item::Call { name, name_end, open, close, next } = next_item(code, 0) else { panic!() };
        assert_eq!((&code[name..name_end], open, close, next), (&b"FFI_X"[..], 7, 19, 21));
    }

    #[test]
    fn end_of_file() {
        assert_eq!(next_item(b"  \n#define X 1\n", 0), Item::End);
    }
}

/// What a `{ ... }` block at file level is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ScopeKind {
    /// `namespace name {` (empty name: anonymous).
    Namespace(String),
    /// `extern "C" {`: still the global scope.
    Linkage,
    /// A class, function body or anything else.
    Other,
}

/// A brace block: `start` is the `{`, `end` the matching `}` (or the end).
#[cfg(test)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scope {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) kind: ScopeKind,
}

/// Every brace block of `code` (the lexer's code view), outermost first.
#[cfg(test)]
pub(crate) fn scopes(code: &[u8]) -> Vec<Scope> {
    let mut out: Vec<Scope> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    for brace in memchr::memchr2_iter(b'{', b'}', code) {
        if code[brace] == b'{' {
            open.push(out.len());
            out.push(Scope { start: brace, end: code.len(), kind: scope_kind(&code[head_start(code, brace)..brace]) });
        } else if let Some(k) = open.pop() {
            out[k].end = brace;
        }
    }
    out
}

/// The kinds of the blocks around each of `offsets`, outermost first: the
/// blocks [`scopes`] lists with `start < offset < end`. Only those blocks
/// are classified, so this costs one pass over `code` however many blocks
/// it has.
pub(crate) fn scopes_at(code: &[u8], offsets: &[usize]) -> Vec<Vec<ScopeKind>> {
    let mut order: Vec<usize> = (0..offsets.len()).collect();
    order.sort_by_key(|&k| offsets[k]);
    let mut out = vec![Vec::new(); offsets.len()];
    // The `{` of each open block.
    let mut open: Vec<usize> = Vec::new();
    let mut next = 0;
    let mut record = |upto: usize, open: &[usize]| {
        while let Some(&k) = order.get(next).filter(|&&k| offsets[k] <= upto) {
            out[k] = open.iter().map(|&brace| scope_kind(&code[head_start(code, brace)..brace])).collect();
            next += 1;
        }
    };
    // A block contains the offsets after its `{` up to its `}`, both excluded.
    for brace in memchr::memchr2_iter(b'{', b'}', code) {
        if code[brace] == b'{' {
            record(brace, &open);
            open.push(brace);
        } else {
            if let Some(before) = brace.checked_sub(1) {
                record(before, &open);
            }
            open.pop();
        }
    }
    // Blocks left open end at the end of the code.
    if let Some(last) = code.len().checked_sub(1) {
        record(last, &open);
    }
    record(usize::MAX, &[]);
    out
}

/// For each of `offsets` (sorted), whether it stands at file scope: inside
/// no block but `extern "C" { }` and anonymous namespaces (whose members
/// the global scope sees). One pass over `code`, each block classified
/// once, however deep they nest.
pub(crate) fn at_file_scope(code: &[u8], offsets: &[usize]) -> Vec<bool> {
    let mut out = Vec::with_capacity(offsets.len());
    // Whether each open block hides its members, and how many do.
    let mut open: Vec<bool> = Vec::new();
    let mut hiding = 0usize;
    let mut next = 0;
    // Records the offsets up to `upto`; true once every offset is recorded.
    let mut record = |upto: usize, hiding: usize, out: &mut Vec<bool>| {
        while offsets.get(next).is_some_and(|&o| o <= upto) {
            out.push(hiding == 0);
            next += 1;
        }
        next == offsets.len()
    };
    for brace in memchr::memchr2_iter(b'{', b'}', code) {
        if code[brace] == b'{' {
            if record(brace, hiding, &mut out) {
                return out;
            }
            // Inside a hiding block, what a nested block is does not matter
            // (the outer one hides until after the nested one closes): only
            // blocks opened at file scope are classified.
            let hides = hiding == 0 && {
                let kind = scope_kind(&code[head_start(code, brace)..brace]);
                !(kind == ScopeKind::Linkage || kind == ScopeKind::Namespace(String::new()))
            };
            hiding += usize::from(hides);
            open.push(hides);
        } else {
            if let Some(before) = brace.checked_sub(1) {
                record(before, hiding, &mut out);
            }
            if open.pop() == Some(true) {
                hiding -= 1;
            }
        }
    }
    // Blocks left open end at the end of the code.
    if let Some(last) = code.len().checked_sub(1) {
        record(last, hiding, &mut out);
    }
    record(usize::MAX, 0, &mut out);
    out
}

/// Where the head of the block opened at `brace` starts: after the last
/// `{`, `}` or `;` before it and after any preprocessor lines that follow.
fn head_start(code: &[u8], brace: usize) -> usize {
    let base = memchr::memrchr3(b'{', b'}', b';', &code[..brace]).map_or(0, |k| k + 1);
    let mut start = base;
    for nl in memchr::memchr_iter(b'\n', &code[base..brace]).map(|k| base + k) {
        if code[start..nl].iter().find(|c| !c.is_ascii_whitespace()) == Some(&b'#') {
            start = nl + 1;
        }
    }
    start
}

/// What the block opened after `head` is.
fn scope_kind(head: &[u8]) -> ScopeKind {
    let head = String::from_utf8_lossy(head);
    let words: Vec<&str> = head
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '"' || c == ':'))
        .filter(|w| !w.is_empty())
        .collect();
    match words.iter().rposition(|w| *w == "namespace") {
        Some(k) => ScopeKind::Namespace(words[k + 1..].concat()),
        None if words.first() == Some(&"extern") && !head.contains('(') => ScopeKind::Linkage,
        None => ScopeKind::Other,
    }
}

#[cfg(test)]
mod scope_tests {
    use super::*;

    #[test]
    fn kinds() {
        let code = b"namespace a { namespace b { void f() {} } }\nextern \" \" { }\nstruct S { };";
        let kinds: Vec<ScopeKind> = scopes(code).into_iter().map(|s| s.kind).collect();
        assert_eq!(
            kinds,
            vec![
                ScopeKind::Namespace("a".into()),
                ScopeKind::Namespace("b".into()),
                ScopeKind::Other,
                ScopeKind::Linkage,
                ScopeKind::Other
            ]
        );
    }

    #[test]
    fn file_scope_is_what_the_scopes_say() {
        let codes: [&[u8]; 5] = [
            b"namespace a { x; namespace { void f() { } y } } }\nextern \" \" { z }\nnamespace { w }\n{",
            b"}}{ namespace {{\n#define X {\n}",
            b"struct S { int a; }; struct T { };",
            b"",
            // Transparent blocks inside hiding ones, and the other way round.
            b"void f() { namespace { extern \"C\" { a } b } c } d extern \"C\" { struct T { namespace { e } } g } }} h",
        ];
        for code in codes {
            let offsets: Vec<usize> = (0..=code.len()).collect();
            let want: Vec<bool> = scopes_at(code, &offsets)
                .iter()
                .map(|kinds| {
                    kinds.iter().all(|k| *k == ScopeKind::Linkage || *k == ScopeKind::Namespace(String::new()))
                })
                .collect();
            assert_eq!(at_file_scope(code, &offsets), want, "{}", String::from_utf8_lossy(code));
        }
    }

    #[test]
    fn scopes_at_offsets_match_scopes() {
        let codes: [&[u8]; 4] = [
            b"namespace a { x; namespace b { void f() { } y } } }\nextern \" \" { z }\n{",
            b"}}{ namespace {{\n#define X {\n}",
            b"{}",
            b"",
        ];
        for code in codes {
            let all = scopes(code);
            let offsets: Vec<usize> = (0..=code.len()).rev().collect();
            for (k, open) in scopes_at(code, &offsets).into_iter().enumerate() {
                let o = offsets[k];
                let want: Vec<ScopeKind> =
                    all.iter().filter(|s| s.start < o && o < s.end).map(|s| s.kind.clone()).collect();
                assert_eq!(open, want, "at {o}");
            }
        }
    }
}
