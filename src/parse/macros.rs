//! `#define`s and a token-level macro expander: enough of the preprocessor
//! to see the functions that token-pasting macros generate (parameters
//! substituted, `##` pasted, `#` stringized, the result rescanned).

use std::collections::HashMap;

use super::item::directive_end;

/// One `#define`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Macro {
    pub name: String,
    /// `Some` for a function-like macro.
    pub params: Option<Vec<String>>,
    pub variadic: bool,
    pub body: String,
    /// Where it is defined, `file:line`, for messages.
    pub origin: String,
}

/// The directives of one file that the scanner cares about.
#[derive(Debug, Clone, Default)]
pub struct Directives {
    pub defines: Vec<Macro>,
    /// `#include "path"` (quoted includes only), in order.
    pub includes: Vec<String>,
}

/// Reads the directives of a file. `code` is the lexer's code view (comments
/// blanked), `src` the original bytes (for include paths, which the code view
/// blanks as string contents); `file` names it in `origin`.
pub fn collect(src: &[u8], code: &[u8], file: &str) -> Directives {
    let mut out = Directives::default();
    let mut i = 0;
    let mut line = 1;
    let mut line_start = true;
    while i < code.len() {
        let b = code[i];
        if b == b'\n' {
            line += 1;
            line_start = true;
            i += 1;
        } else if b.is_ascii_whitespace() {
            i += 1;
        } else if b == b'#' && line_start {
            let end = directive_end(code, i);
            let text = joined(&code[i + 1..end]);
            directive(&text, &src[i + 1..end], file, line, &mut out);
            line += code[i..end].iter().filter(|b| **b == b'\n').count();
            i = end;
        } else {
            line_start = false;
            i += 1;
        }
    }
    out
}

/// The directive's text with line continuations removed.
fn joined(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    text.replace("\\\r\n", " ").replace("\\\n", " ")
}

fn directive(text: &str, raw: &[u8], file: &str, line: usize, out: &mut Directives) {
    let text = text.trim_start();
    if let Some(rest) = text.strip_prefix("define") {
        if rest.starts_with(|c: char| c.is_whitespace())
            && let Some(m) = parse_define(rest.trim_start(), file, line) {
                out.defines.push(m);
            }
    } else if text.starts_with("include") {
        let raw = String::from_utf8_lossy(raw);
        let mut parts = raw.splitn(3, '"');
        if let (Some(_), Some(path), Some(_)) = (parts.next(), parts.next(), parts.next()) {
            out.includes.push(path.to_string());
        }
    }
}

fn parse_define(rest: &str, file: &str, line: usize) -> Option<Macro> {
    let name_len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
    if name_len == 0 {
        return None;
    }
    let name = rest[..name_len].to_string();
    let after = &rest[name_len..];
    let origin = format!("{file}:{line}");
    if let Some(list) = after.strip_prefix('(') {
        let close = list.find(')')?;
        let mut params = Vec::new();
        let mut variadic = false;
        for p in list[..close].split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if p == "..." {
                variadic = true;
            } else {
                params.push(p.to_string());
            }
        }
        let body = list[close + 1..].trim().to_string();
        Some(Macro { name, params: Some(params), variadic, body, origin })
    } else {
        Some(Macro { name, params: None, variadic: false, body: after.trim().to_string(), origin })
    }
}

/// Macros by name; a later definition replaces an earlier one.
#[derive(Debug, Clone, Default)]
pub struct MacroTable {
    map: HashMap<String, Macro>,
}

impl MacroTable {
    pub fn insert(&mut self, m: Macro) {
        self.map.insert(m.name.clone(), m);
    }
    pub fn get(&self, name: &str) -> Option<&Macro> {
        self.map.get(name)
    }
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ident,
    Punct,
    /// A `##` written in a macro body (not one that came from an argument).
    Paste,
    /// The empty result of an empty argument next to `##`.
    Placemarker,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Tok {
    text: String,
    kind: Kind,
    space_before: bool,
}

/// Tokens that stop the expander from running away on crafted input.
const BUDGET: usize = 200_000;
const MAX_DEPTH: usize = 64;

/// Splits text into preprocessing tokens.
fn tokenize(s: &str) -> Vec<Tok> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut space = false;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            space = true;
            i += 1;
            continue;
        }
        let start = i;
        let kind = if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
                i += 1;
            }
            Kind::Ident
        } else if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
            Kind::Punct
        } else if s[i..].starts_with("##") {
            i += 2;
            Kind::Paste
        } else if s[i..].starts_with("::") || s[i..].starts_with("...") {
            i += if c == b':' { 2 } else { 3 };
            Kind::Punct
        } else {
            i += s[i..].chars().next().map_or(1, char::len_utf8);
            Kind::Punct
        };
        // Never split a UTF-8 character: `i` only stops on ASCII bytes or the end.
        while !s.is_char_boundary(i) {
            i += 1;
        }
        out.push(Tok { text: s[start..i].to_string(), kind, space_before: space });
        space = false;
    }
    out
}

fn render(toks: &[Tok]) -> String {
    let mut out = String::new();
    for t in toks {
        if t.kind == Kind::Placemarker {
            continue;
        }
        if t.space_before && !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&t.text);
    }
    out
}

/// Expands every macro of `table` in `text`.
///
/// ```
/// use begen::parse::macros::{collect, expand, MacroTable};
/// let src = b"#define F(S, T) void f##S(T x)\n";
/// let mut table = MacroTable::default();
/// for m in collect(src, src, "a.cu").defines { table.insert(m); }
/// assert_eq!(expand("F(_f32, float)", &table), "void f_f32(float x)");
/// ```
pub fn expand(text: &str, table: &MacroTable) -> String {
    let mut budget = BUDGET;
    let toks = expand_toks(tokenize(text), table, &mut Vec::new(), 0, &mut budget);
    render(&toks)
}

fn expand_toks(toks: Vec<Tok>, table: &MacroTable, hide: &mut Vec<String>, depth: usize, budget: &mut usize) -> Vec<Tok> {
    let mut out = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        if *budget == 0 || depth > MAX_DEPTH {
            out.extend_from_slice(&toks[i..]);
            break;
        }
        let t = &toks[i];
        let m = (t.kind == Kind::Ident && !hide.contains(&t.text)).then(|| table.get(&t.text)).flatten();
        let Some(m) = m else {
            out.push(t.clone());
            i += 1;
            continue;
        };
        let (body, next) = match &m.params {
            None => (tokenize(&m.body), i + 1),
            Some(params) => match gather_args(&toks, i + 1) {
                Some((args, next)) => (substitute(m, params, &args, table, hide, depth, budget), next),
                None => {
                    out.push(t.clone());
                    i += 1;
                    continue;
                }
            },
        };
        let mut body = paste(body);
        if let Some(first) = body.first_mut() {
            first.space_before = t.space_before;
        }
        *budget = budget.saturating_sub(body.len());
        hide.push(m.name.clone());
        out.extend(expand_toks(body, table, hide, depth + 1, budget));
        hide.pop();
        i = next;
    }
    out
}

/// The arguments of an invocation whose `(` should be at `toks[from]`.
fn gather_args(toks: &[Tok], from: usize) -> Option<(Vec<Vec<Tok>>, usize)> {
    if toks.get(from).map(|t| t.text.as_str()) != Some("(") {
        return None;
    }
    let mut args = vec![Vec::new()];
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate().skip(from + 1) {
        match t.text.as_str() {
            "(" => depth += 1,
            ")" if depth == 0 => return Some((args, k + 1)),
            ")" => depth -= 1,
            "," if depth == 0 => {
                args.push(Vec::new());
                continue;
            }
            _ => {}
        }
        if let Some(last) = args.last_mut() {
            last.push(t.clone());
        }
    }
    None
}

fn substitute(
    m: &Macro,
    params: &[String],
    args: &[Vec<Tok>],
    table: &MacroTable,
    hide: &mut Vec<String>,
    depth: usize,
    budget: &mut usize,
) -> Vec<Tok> {
    let arg_of = |name: &str| -> Option<Vec<Tok>> {
        if let Some(k) = params.iter().position(|p| p == name) {
            return Some(args.get(k).cloned().unwrap_or_default());
        }
        if m.variadic && name == "__VA_ARGS__" {
            let rest = args.get(params.len()..).unwrap_or_default();
            let mut joined = Vec::new();
            for (k, a) in rest.iter().enumerate() {
                if k > 0 {
                    joined.push(Tok { text: ",".into(), kind: Kind::Punct, space_before: false });
                }
                joined.extend(a.iter().cloned());
            }
            return Some(joined);
        }
        None
    };
    let body = tokenize(&m.body);
    let mut out = Vec::new();
    let mut k = 0;
    while k < body.len() {
        let t = &body[k];
        if t.text == "#" && t.kind == Kind::Punct
            && let Some(arg) = body.get(k + 1).and_then(|n| arg_of(&n.text)) {
                let text = render(&arg).replace('\\', "\\\\").replace('"', "\\\"");
                out.push(Tok { text: format!("\"{text}\""), kind: Kind::Punct, space_before: t.space_before });
                k += 2;
                continue;
            }
        match arg_of(&t.text).filter(|_| t.kind == Kind::Ident) {
            Some(arg) => {
                let near_paste = body.get(k + 1).is_some_and(|n| n.kind == Kind::Paste)
                    || (k > 0 && body[k - 1].kind == Kind::Paste);
                let mut toks = if near_paste {
                    arg
                } else {
                    expand_toks(arg, table, hide, depth + 1, budget)
                };
                if toks.is_empty() && near_paste {
                    toks.push(Tok { text: String::new(), kind: Kind::Placemarker, space_before: false });
                }
                if let Some(first) = toks.first_mut() {
                    first.space_before = t.space_before;
                }
                out.extend(toks);
            }
            None => out.push(t.clone()),
        }
        k += 1;
    }
    out
}

/// Applies the body's `##` operators.
fn paste(toks: Vec<Tok>) -> Vec<Tok> {
    let mut out: Vec<Tok> = Vec::with_capacity(toks.len());
    let mut iter = toks.into_iter().peekable();
    while let Some(t) = iter.next() {
        if t.kind != Kind::Paste {
            out.push(t);
            continue;
        }
        let left = out.pop();
        let right = iter.next();
        let text = format!(
            "{}{}",
            left.as_ref().map_or("", |l| l.text.as_str()),
            right.as_ref().map_or("", |r| r.text.as_str())
        );
        let space = left.as_ref().is_some_and(|l| l.space_before);
        let mut pasted = tokenize(&text);
        for p in &mut pasted {
            if p.kind == Kind::Paste {
                p.kind = Kind::Punct;
            }
            p.space_before = false;
        }
        match pasted.first_mut() {
            Some(first) => first.space_before = space,
            None => pasted.push(Tok { text: String::new(), kind: Kind::Placemarker, space_before: space }),
        }
        out.extend(pasted);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(src: &str) -> MacroTable {
        let mut t = MacroTable::default();
        for m in collect(src.as_bytes(), src.as_bytes(), "t.cu").defines {
            t.insert(m);
        }
        t
    }

    #[test]
    fn pastes_and_substitutes_types() {
        let t = table("#define FFI(NAME, SFX, T)   \\\nvoid NAME##SFX(const BE::Tensor x, \\\n  BE::Tensor y, T alpha) { body; }\n");
        assert_eq!(
            expand("FFI(scale, _f32, float)", &t),
            "void scale_f32(const BE::Tensor x, BE::Tensor y, float alpha) { body; }"
        );
    }

    #[test]
    fn nested_and_object_like() {
        let t = table("#define REAL double\n#define INNER(S) void k##S(REAL a)\n#define OUTER(S) INNER(S)\n");
        assert_eq!(expand("OUTER(_x)", &t), "void k_x(double a)");
    }

    #[test]
    fn empty_argument_and_recursion() {
        let t = table("#define F(S) void f##S()\n#define R R + 1\n");
        assert_eq!(expand("F()", &t), "void f()");
        assert_eq!(expand("R", &t), "R + 1");
    }

    #[test]
    fn collects_includes() {
        let d = collect(b"#include \"a.cuh\"\n#include <b.h>\n", b"#include \"     \"\n#include <b.h>\n", "t.cu");
        assert_eq!(d.includes, vec!["a.cuh".to_string()]);
    }
}
