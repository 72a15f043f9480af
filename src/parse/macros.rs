//! `#define`s and `#include`s, the table of macros a file can see, and
//! [`expand`]: enough of the preprocessor to see the functions that
//! token-pasting macros generate (the expander itself is in `expand`).

use std::collections::HashMap;

use super::expand::Expander;
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
    // At the start of each turn, `i` is at the start of a line or at the
    // line break ending a directive.
    while i < code.len() {
        while i < code.len() && code[i] != b'\n' && code[i].is_ascii_whitespace() {
            i += 1;
        }
        match code.get(i) {
            None => break,
            Some(b'\n') => {
                line += 1;
                i += 1;
            }
            Some(b'#') => {
                let end = directive_end(code, i);
                if may_matter(&code[i + 1..end]) {
                    directive(joined(&code[i + 1..end]), &src[i + 1..end], file, line, &mut out);
                }
                line += memchr::memchr_iter(b'\n', &code[i..end]).count();
                i = end;
            }
            Some(_) => match memchr::memchr(b'\n', &code[i..]) {
                Some(k) => i += k,
                None => break,
            },
        }
    }
    out
}

/// Whether a directive (the text after `#`) can be a `define` or an
/// `include`: false only when its first letter says it is not.
fn may_matter(text: &[u8]) -> bool {
    let mut i = 0;
    loop {
        match text.get(i) {
            Some(b'\\') if text.get(i + 1) == Some(&b'\n') => i += 2,
            Some(b'\\') if text.get(i + 1..i + 3) == Some(b"\r\n") => i += 3,
            // `str::trim_start`'s ASCII whitespace (with the vertical tab).
            Some(b) if b.is_ascii_whitespace() || *b == 0x0b => i += 1,
            Some(b'd' | b'i') => return true,
            Some(b) => return !b.is_ascii(),
            None => return false,
        }
    }
}

/// The directive's text with line continuations removed.
fn joined(bytes: &[u8]) -> String {
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while let Some(k) = memchr::memchr(b'\\', rest) {
        out.extend_from_slice(&rest[..k]);
        let after = &rest[k + 1..];
        rest = if let Some(r) = after.strip_prefix(b"\r\n") {
            out.push(b' ');
            r
        } else if let Some(r) = after.strip_prefix(b"\n") {
            out.push(b' ');
            r
        } else {
            out.push(b'\\');
            after
        };
    }
    out.extend_from_slice(rest);
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn directive(text: String, raw: &[u8], file: &str, line: usize, out: &mut Directives) {
    let trimmed = text.trim_start();
    if let Some(rest) = trimmed.strip_prefix("define") {
        if rest.starts_with(|c: char| c.is_whitespace()) {
            let at = text.len() - rest.trim_start().len();
            if let Some(m) = parse_define(text, at, file, line) {
                out.defines.push(m);
            }
        }
    } else if trimmed.starts_with("include") {
        let raw = String::from_utf8_lossy(raw);
        let mut parts = raw.splitn(3, '"');
        if let (Some(_), Some(path), Some(_)) = (parts.next(), parts.next(), parts.next()) {
            out.includes.push(path.to_string());
        }
    }
}

/// The `#define` whose name starts at `text[at..]`; its body reuses `text`.
fn parse_define(mut text: String, at: usize, file: &str, line: usize) -> Option<Macro> {
    let rest = &text[at..];
    let name_len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
    if name_len == 0 {
        return None;
    }
    let name = rest[..name_len].to_string();
    let after = &rest[name_len..];
    let origin = format!("{file}:{line}");
    let (params, variadic, body_from) = match after.strip_prefix('(') {
        Some(list) => {
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
            (Some(params), variadic, text.len() - list[close + 1..].len())
        }
        None => (None, false, text.len() - after.len()),
    };
    // The body, trimmed, moved to the front of `text`.
    let tail = &text[body_from..];
    let start = body_from + (tail.len() - tail.trim_start().len());
    let end = start + tail.trim().len();
    text.truncate(end);
    text.drain(..start);
    Some(Macro { name, params, variadic, body: text, origin })
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
    Expander::new(table).expand(text)
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
