//! `#define`s and `#include`s, the table of macros a file can see, and
//! [`expand`]: enough of the preprocessor to see the functions that
//! token-pasting macros generate (the expander itself is in `expand`).

use std::collections::HashMap;
use std::sync::Arc;

#[cfg(test)]
use super::expand::Expander;
use super::item::directive_end;

/// One `#define`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Macro {
    pub(crate) name: String,
    /// `Some` for a function-like macro.
    pub(crate) params: Option<Vec<String>>,
    pub(crate) variadic: bool,
    pub(crate) body: String,
    /// Where it is defined, `file:line`, for messages.
    pub(crate) origin: String,
    /// Byte offset of its `#` in the file that defines it.
    pub(crate) at: usize,
}

/// A directive that changes the macro table, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// `defines[k]`.
    Define(usize),
    /// `#undef` of a name, at a byte offset.
    Undef(String, usize),
    /// `includes[k]`, whose `#` is at a byte offset.
    Include(usize, usize),
}

/// The directives of one file that the scanner cares about.
#[derive(Debug, Clone, Default)]
pub(crate) struct Directives {
    pub(crate) defines: Vec<Macro>,
    /// `#include "path"` (quoted includes only), in order.
    pub(crate) includes: Vec<String>,
    /// Defines, undefs and includes in file order.
    pub(crate) steps: Vec<Step>,
    /// Byte ranges in a group that `#if 0` (or the `#else` of `#if 1`)
    /// turns off: no directive in them counts, and no code.
    pub(crate) skipped: Vec<(usize, usize)>,
}

/// One open `#if` group.
struct Group {
    /// `#if 0`/`#if 1` (and `#elif 0`/`1` after them): which branch is on
    /// is known. Any other condition leaves every branch on.
    known: bool,
    /// A branch of a known group has been on already.
    taken: bool,
    on: bool,
}

/// A literal `0` or `1` condition.
fn literal(cond: &str) -> Option<bool> {
    match cond.trim() {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    }
}

/// Applies a conditional directive (`word` with its condition `rest`) to
/// the open groups; false when it is not one.
fn conditional(word: &str, rest: &str, groups: &mut Vec<Group>) -> bool {
    match word {
        "if" => {
            let g = match literal(rest) {
                Some(on) => Group { known: true, taken: on, on },
                None => Group { known: false, taken: false, on: true },
            };
            groups.push(g);
        }
        "ifdef" | "ifndef" => groups.push(Group { known: false, taken: false, on: true }),
        "elif" | "else" => {
            if let Some(g) = groups.last_mut().filter(|g| g.known) {
                let cond = if word == "else" { Some(true) } else { literal(rest) };
                match cond {
                    Some(c) => {
                        g.on = c && !g.taken;
                        g.taken |= c;
                    }
                    // `#if 0` ... `#elif X`: X decides from here on, unknown.
                    None if !g.taken => *g = Group { known: false, taken: false, on: true },
                    None => g.on = false,
                }
            }
        }
        "endif" => {
            groups.pop();
        }
        _ => return false,
    }
    true
}

/// Reads the directives of a file. `code` is the lexer's code view (comments
/// blanked), `src` the original bytes (for include paths, which the code view
/// blanks as string contents); `file` names it in `origin`.
pub(crate) fn collect(src: &[u8], code: &[u8], file: &str) -> Directives {
    let mut out = Directives::default();
    let mut groups: Vec<Group> = Vec::new();
    let mut skip_from = None;
    // Directives are found by their `#` (rare in code), not line by line: a
    // `#` starts one when only blanks come before it on its line. `line` is
    // the line of offset `counted`.
    let (mut line, mut counted) = (1, 0);
    let mut i = 0;
    while let Some(k) = memchr::memchr(b'#', &code[i..]) {
        let at = i + k;
        let line_start = memchr::memrchr(b'\n', &code[..at]).map_or(0, |n| n + 1);
        if !code[line_start..at].iter().all(|&b| b != b'\n' && b.is_ascii_whitespace()) {
            i = at + 1;
            continue;
        }
        line += memchr::memchr_iter(b'\n', &code[counted..at]).count();
        counted = at;
        let end = directive_end(code, at);
        if may_matter(&code[at + 1..end]) {
            let text = joined(&code[at + 1..end]);
            let trimmed = text.trim_start();
            let w = trimmed.find(|c: char| !c.is_ascii_alphanumeric()).unwrap_or(trimmed.len());
            let (word, rest) = trimmed.split_at(w);
            if conditional(word, rest, &mut groups) {
                let off = groups.iter().any(|g| !g.on);
                match (skip_from, off) {
                    (None, true) => skip_from = Some(end),
                    (Some(from), false) => {
                        out.skipped.push((from, at));
                        skip_from = None;
                    }
                    _ => {}
                }
            } else if skip_from.is_none() {
                directive(text, &src[at + 1..end], file, line, at, &mut out);
            }
        }
        if end >= code.len() {
            break;
        }
        i = end;
    }
    if let Some(from) = skip_from {
        out.skipped.push((from, code.len()));
    }
    out
}

/// Whether a directive (the text after `#`) can be a `define`, `undef`,
/// `include` or conditional: false only when its first letter says it is not.
fn may_matter(text: &[u8]) -> bool {
    let mut i = 0;
    loop {
        match text.get(i) {
            Some(b'\\') if text.get(i + 1) == Some(&b'\n') => i += 2,
            Some(b'\\') if text.get(i + 1..i + 3) == Some(b"\r\n") => i += 3,
            // `str::trim_start`'s ASCII whitespace (with the vertical tab).
            Some(b) if b.is_ascii_whitespace() || *b == 0x0b => i += 1,
            Some(b'd' | b'i' | b'e' | b'u') => return true,
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

/// A directive outside skipped groups; `hash` is the offset of its `#`.
fn directive(text: String, raw: &[u8], file: &str, line: usize, hash: usize, out: &mut Directives) {
    let trimmed = text.trim_start();
    if let Some(rest) = trimmed.strip_prefix("define") {
        if rest.starts_with(|c: char| c.is_whitespace()) {
            let at = text.len() - rest.trim_start().len();
            if let Some(m) = parse_define(text, at, file, line, hash) {
                out.steps.push(Step::Define(out.defines.len()));
                out.defines.push(m);
            }
        }
    } else if let Some(rest) = trimmed.strip_prefix("undef") {
        let rest = rest.trim_start();
        let n = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
        if n > 0 {
            out.steps.push(Step::Undef(rest[..n].to_string(), hash));
        }
    } else if trimmed.starts_with("include") {
        let raw = String::from_utf8_lossy(raw);
        let mut parts = raw.splitn(3, '"');
        if let (Some(_), Some(path), Some(_)) = (parts.next(), parts.next(), parts.next()) {
            out.steps.push(Step::Include(out.includes.len(), hash));
            out.includes.push(path.to_string());
        }
    }
}

/// The `#define` whose name starts at `text[at..]`; its body reuses `text`.
fn parse_define(mut text: String, at: usize, file: &str, line: usize, hash: usize) -> Option<Macro> {
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
    Some(Macro { name, params, variadic, body: text, origin, at: hash })
}

/// One name's definitions and undefs, by position (`None`: an undef).
type History = Vec<(usize, Option<Macro>)>;

/// Macros by name, each with its definitions (and `#undef`s) by position:
/// the one in effect at an offset is the last one at or before it.
/// Macros of an included header take the position of the `#include`.
#[derive(Debug, Clone, Default)]
pub(crate) struct MacroTable {
    map: HashMap<Arc<str>, History, crate::par::FxBuildHasher>,
    /// Every definition's and undef's position and name, by position.
    changes: Vec<(usize, Arc<str>)>,
}

impl MacroTable {
    #[cfg(test)]
    /// Defines `m` from the start of the file (a later one replaces it).
    pub(crate) fn insert(&mut self, m: Macro) {
        self.define(0, m);
    }

    /// Defines `m` from offset `pos` on.
    pub(crate) fn define(&mut self, pos: usize, m: Macro) {
        let name = Arc::from(m.name.as_str());
        self.record(pos, name, Some(m));
    }

    /// Removes `name` from offset `pos` on.
    pub(crate) fn undef(&mut self, pos: usize, name: &str) {
        self.record(pos, Arc::from(name), None);
    }

    fn record(&mut self, pos: usize, name: Arc<str>, m: Option<Macro>) {
        // Usually in order: an append.
        let at = self.changes.partition_point(|(p, _)| *p <= pos);
        self.changes.insert(at, (pos, name.clone()));
        let defs = self.map.entry(name).or_default();
        let at = defs.partition_point(|(p, _)| *p <= pos);
        defs.insert(at, (pos, m));
    }

    /// The definition of `name` in effect at offset `pos`.
    pub(crate) fn get_at(&self, name: &str, pos: usize) -> Option<&Macro> {
        let defs = self.map.get(name)?;
        let k = defs.partition_point(|(p, _)| *p <= pos);
        defs.get(k.checked_sub(1)?)?.1.as_ref()
    }

    /// The names whose definition at `a` may differ from the one at `b`.
    pub(crate) fn changed_between(&self, a: usize, b: usize) -> impl Iterator<Item = &str> {
        let (lo, hi) = (a.min(b), a.max(b));
        let from = self.changes.partition_point(|(p, _)| *p <= lo);
        let to = self.changes.partition_point(|(p, _)| *p <= hi);
        self.changes[from..to].iter().map(|(_, n)| &**n)
    }
}

#[cfg(test)]
/// Expands every macro of `table` in `text`.
///
/// ```
/// use begen::parse::macros::{collect, expand, MacroTable};
/// let src = b"#define F(S, T) void f##S(T x)\n";
/// let mut table = MacroTable::default();
/// for m in collect(src, src, "a.cu").defines { table.insert(m); }
/// assert_eq!(expand("F(_f32, float)", &table), "void f_f32(float x)");
/// ```
pub(crate) fn expand(text: &str, table: &MacroTable) -> String {
    Expander::new(table).expand(text)
}

/// The table of the macros `src` defines (for tests).
#[cfg(test)]
pub(crate) fn table_of(src: &str) -> MacroTable {
    let mut t = MacroTable::default();
    for m in collect(src.as_bytes(), src.as_bytes(), "t.cu").defines {
        t.insert(m);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(src: &str) -> MacroTable {
        table_of(src)
    }

    #[test]
    fn pastes_and_substitutes_types() {
        let t = table(
            "#define FFI(NAME, SFX, T)   \\\nvoid NAME##SFX(const BE::Tensor x, \\\n  BE::Tensor y, T alpha) { body; }\n",
        );
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
    fn definition_in_effect_by_position() {
        let src = "#define D 1\nD\n#undef D\nD\n#define D 2\nD\n";
        let mut t = MacroTable::default();
        let d = collect(src.as_bytes(), src.as_bytes(), "t.cu");
        for step in &d.steps {
            match step {
                Step::Define(k) => t.define(d.defines[*k].at, d.defines[*k].clone()),
                Step::Undef(name, at) => t.undef(*at, name),
                Step::Include(..) => {}
            }
        }
        let lines: Vec<usize> = std::iter::once(0).chain(src.match_indices('\n').map(|(i, _)| i + 1)).collect();
        let at = |k: usize| lines[2 * k + 1];
        assert_eq!(t.get_at("D", at(0)).map(|m| m.body.as_str()), Some("1"));
        assert_eq!(t.get_at("D", at(1)), None);
        assert_eq!(t.get_at("D", at(2)).map(|m| m.body.as_str()), Some("2"));
        assert_eq!(t.get_at("D", 0).map(|m| m.body.as_str()), Some("1"));
        let mut x = Expander::new(&t);
        x.at(at(0));
        assert_eq!(x.expand("D"), "1");
        x.at(at(1));
        assert_eq!(x.expand("D"), "D");
        x.at(at(2));
        assert_eq!(x.expand("D"), "2");
        x.at(at(0));
        assert_eq!(x.expand("D"), "1");
    }

    #[test]
    fn literal_conditionals_skip_groups() {
        let src = "#if 0\n#define A 1\n#else\n#define B 1\n#endif\n#if 1 /**/\n#define C 1\n#elif 1\n#define D 1\n#endif\n#ifdef X\n#define E 1\n#else\n#define F 1\n#endif\n#if 0\n#if 1\n#define G 1\n#endif\n#elif 1\n#define H 1\n#endif\n";
        let code = src.replace("/**/", "    ");
        let d = collect(src.as_bytes(), code.as_bytes(), "t.cu");
        let names: Vec<&str> = d.defines.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["B", "C", "E", "F", "H"]);
        let (from, to) = d.skipped[0];
        assert_eq!(&src[from..to], "\n#define A 1\n");
        let unterminated = collect(b"#if 0\n#define A 1\n", b"#if 0\n#define A 1\n", "t.cu");
        assert!(unterminated.defines.is_empty());
        assert_eq!(unterminated.skipped, vec![(5, 18)]);
    }

    #[test]
    fn collects_includes() {
        let d = collect(b"#include \"a.cuh\"\n#include <b.h>\n", b"#include \"     \"\n#include <b.h>\n", "t.cu");
        assert_eq!(d.includes, vec!["a.cuh".to_string()]);
    }
}
