//! The catalogue: every text a kernel author can see in a diagnostic
//! (message, label, note, hint) is built here, so its wording is reviewed in
//! one place. The arg_spec system's own texts are quoted verbatim
//! ([`no_output`]). One file per front end or stage:
//!
//! - [`source`]: reading the kernel directory, `// @BE` annotations and their
//!   tokens, finding the annotated signature (scan and parse);
//! - [`check`]: arg_specs, parameters, struct and array attributes, typed
//!   contracts and constants, the library's names, modules and symbols,
//!   algorithms and gradients;
//! - [`config`]: begen.yaml as a whole (syntax, options, links, defines);
//! - [`binary`]: precompiled kernels (begen.yaml's `structs:`/`binaries:`,
//!   and the typed errors of `src/binary`'s readers: ELF, fatbin, PTX, the
//!   cuTile demangler, C layout, launch expressions).
//!
//! The first three are one namespace (`messages::no_output`); the binary
//! texts keep theirs (`messages::binary::no_output`), as both have a "no
//! output" text.
//!
//! # The quoting rule
//!
//! Every piece of a text that comes from the user's input (a name, a token,
//! a type, a path, an expression, a symbol, a YAML value, a reader's
//! complaint that quotes the input) goes through [`q`], which escapes
//! control characters (and Unicode's bidirectional overrides): a source or
//! begen.yaml holding `\x1b[2K` shows it as `\u{1b}[2K` and can never move a
//! terminal's cursor or rewrite a line. The text around it puts it in
//! `'…'` when it is a C++ name read from a signature or annotation (a
//! function, parameter, attribute, struct or member: the arg_spec system's
//! `'my_func'`), and in `` `…` `` when it is anything else written in a
//! source or begen.yaml (a token, a type, a path, a module, an algorithm, a
//! binary kernel, a symbol, an expression). The renderer escapes the source
//! lines it shows the same way.

pub(crate) mod binary;
mod check;
mod config;
mod native;
mod source;

use std::fmt;

pub(crate) use check::*;
pub(crate) use config::*;
pub(crate) use native::*;
pub(crate) use source::*;

/// A user-supplied string as a diagnostic shows it: control characters
/// (C0, DEL, C1) and bidirectional overrides escaped as `\u{..}` (`\t`,
/// `\n`, `\r` as those), everything else as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Quoted<'a>(&'a str);

/// The one quoting helper of the catalogue: see [the rule](self#the-quoting-rule).
pub(crate) fn q(text: &str) -> Quoted<'_> {
    Quoted(text)
}

/// Whether `c` must not reach a terminal as it is.
pub(crate) fn is_unsafe(c: char) -> bool {
    c.is_control() || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(at) = rest.find(is_unsafe) {
            f.write_str(&rest[..at])?;
            let c = rest[at..].chars().next().unwrap_or_default();
            match c {
                '\t' => f.write_str("\\t")?,
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                c => write!(f, "\\u{{{:x}}}", u32::from(c))?,
            }
            rest = &rest[at + c.len_utf8()..];
        }
        f.write_str(rest)
    }
}

/// Each of `items` through [`q`], in `delim` (`'` or `` ` ``), joined by `sep`.
pub(crate) fn q_list(items: &[String], delim: &str, sep: &str) -> String {
    items.iter().map(|s| format!("{delim}{}{delim}", q(s))).collect::<Vec<_>>().join(sep)
}

/// ` (did you mean `x`?)` when a close name exists (see
/// [`crate::diag::suggest::closest`]), else nothing.
pub(crate) fn did_you_mean(near: Option<&str>) -> String {
    near.map(|n| format!(" (did you mean `{}`?)", q(n))).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_escapes_control_characters_only() {
        assert_eq!(q("my_func").to_string(), "my_func");
        assert_eq!(q("bad\x1b[2K\x1b[1Aname").to_string(), "bad\\u{1b}[2K\\u{1b}[1Aname");
        assert_eq!(q("a\tb\nc\rd\u{7f}\u{9b}").to_string(), "a\\tb\\nc\\rd\\u{7f}\\u{9b}");
        assert_eq!(q("é → 😀 'x' `y`").to_string(), "é → 😀 'x' `y`");
        assert_eq!(q("abc\u{202e}cba").to_string(), "abc\\u{202e}cba");
        // Escaping is idempotent: the escaped text has nothing left to escape.
        let once = q("\x1b\x07").to_string();
        assert_eq!(q(&once).to_string(), once);
    }

    #[test]
    fn catalogue_texts_quote_their_arguments() {
        let evil = "f\x1b[2K\x1b[1A";
        for text in [
            no_output(evil),
            unknown_token(evil, Some(evil)),
            invalid_function_name(evil),
            binary::bad_binary_path(evil),
            binary::symbol_missing(evil, evil),
            yaml_error(evil, None),
            yaml_error(evil, Some((0, evil))),
            bad_algorithm_name(evil),
        ] {
            assert!(!text.contains('\x1b'), "{text:?}");
            assert!(text.contains("f\\u{1b}[2K\\u{1b}[1A"), "{text:?}");
        }
        // The arg_spec system's first lines are verbatim for a plain name;
        // the explicit form is begen's.
        assert_eq!(
            no_output("my_func"),
            "No non-const Tensor output found in 'my_func'.\n\
             Mark input Tensors with 'const' to distinguish inputs from outputs,\n\
             or give the arg_spec explicitly: `// @BE my_func arg ret ...`, or in begen.yaml \
             `sources: {FILE: {my_func: [arg, ret, ...]}}`"
        );
    }
}
