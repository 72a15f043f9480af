//! Reads `// @BE name [token ...]` out of a line comment.

use crate::source::lex::LineComment;

/// One whitespace-separated word of an annotation, with its offset in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    pub(crate) text: String,
    pub(crate) offset: usize,
}

/// What a line comment turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Comment {
    /// Not an annotation.
    Plain,
    /// `// @BEfoo`: looks like an annotation but is not one.
    LookAlike { word: Word },
    /// `// @BE name tokens...` (`name` is `None` for a bare `// @BE`).
    Annotation { at: usize, name: Option<Word>, tokens: Vec<Word> },
}

/// Classifies the comment `c` of `src`.
pub(crate) fn classify(src: &[u8], c: &LineComment) -> Comment {
    let text = &src[c.text_start..c.end];
    // `///` doc comments count too.
    let mut i = text.iter().take_while(|b| **b == b'/').count();
    i += text[i..].iter().take_while(|b| **b == b' ' || **b == b'\t').count();
    let rest = &text[i..];
    if !rest.starts_with(b"@BE") {
        return Comment::Plain;
    }
    let at = c.text_start + i;
    let after = rest.get(3).copied();
    if after.is_some_and(|b| !b.is_ascii_whitespace()) {
        let len = rest.iter().take_while(|b| !b.is_ascii_whitespace()).count();
        let word = Word { text: String::from_utf8_lossy(&rest[..len]).into_owned(), offset: at };
        return Comment::LookAlike { word };
    }
    let mut words = words(&rest[3..], at + 3).into_iter();
    Comment::Annotation { at, name: words.next(), tokens: words.collect() }
}

pub(crate) fn words(bytes: &[u8], base: usize) -> Vec<Word> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        // Whitespace inside `[...]` does not end a word: `arg:float32[n, k]`.
        // Only dimensions continue it: a word with `:`, `.` or `=` after the
        // whitespace is the next token (`arg:float32[n ret:...` is unclosed),
        // but for the dots of a rest (`[n, ...]`, `[n, rows...]`).
        let mut depth = 0usize;
        let next_is_token = |from: usize| {
            let rest = &bytes[from..];
            let start = rest.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(rest.len());
            let word = &rest[start..start + rest[start..].iter().take_while(|b| !b.is_ascii_whitespace()).count()];
            let mut k = 0;
            while k < word.len() {
                if word[k..].starts_with(b"...") {
                    k += 3;
                    continue;
                }
                if matches!(word[k], b':' | b'.' | b'=') {
                    return true;
                }
                k += 1;
            }
            false
        };
        while i < bytes.len() {
            match bytes[i] {
                b if b.is_ascii_whitespace() => {
                    if depth == 0 || next_is_token(i) {
                        break;
                    }
                    // The whole run at once: each byte of a long run asking
                    // again would make the split quadratic.
                    i += bytes[i..].iter().take_while(|b| b.is_ascii_whitespace()).count();
                    continue;
                }
                b'[' => depth += 1,
                b']' => depth = depth.saturating_sub(1),
                _ => {}
            }
            i += 1;
        }
        // An unclosed bracket keeps the rest: trailing whitespace is not part of it.
        while i > start && bytes[i - 1].is_ascii_whitespace() {
            i -= 1;
        }
        out.push(Word { text: String::from_utf8_lossy(&bytes[start..i]).into_owned(), offset: base + start });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotation_words() {
        let src = b"//@BE f arg ret";
        let c = crate::source::lex::lex(src).comments.remove(0);
        let Comment::Annotation { name, tokens, .. } = classify(src, &c) else { panic!("not an annotation") };
        assert_eq!(name.map(|w| w.text), Some("f".to_string()));
        assert_eq!(tokens.len(), 2);
        let src = b"// @BE f arg:float32[..., n] arg:float32[n, ...] ret:float32[rows..., n] dim.n";
        let c = crate::source::lex::lex(src).comments.remove(0);
        let Comment::Annotation { tokens, .. } = classify(src, &c) else { panic!("not an annotation") };
        let texts: Vec<String> = tokens.into_iter().map(|w| w.text).collect();
        assert_eq!(texts, ["arg:float32[..., n]", "arg:float32[n, ...]", "ret:float32[rows..., n]", "dim.n"]);
    }
}
