//! A small lexer over a source file's bytes. It knows exactly as much C++ as
//! it takes to tell a real `//` comment from text that only looks like one
//! (inside a string literal, a raw string, a character literal or a block
//! comment), and it produces a "code view" of the file in which comments and
//! the insides of literals are blanked, byte for byte, so every later stage can
//! search code without tripping over them and still map offsets to lines.

/// One `//` line comment: the byte range of its text (after the `//`, without
/// the line break or a trailing `\r`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineComment {
    /// Offset of the first `/`.
    pub(crate) start: usize,
    /// Offset just after `//`.
    pub(crate) text_start: usize,
    /// End of the comment's text.
    pub(crate) end: usize,
}

/// The lexed file.
#[derive(Debug, Clone)]
pub(crate) struct Lexed {
    /// Same length as the input; comments and literal contents are spaces
    /// (line breaks kept), quotes and everything else unchanged.
    pub(crate) code: Vec<u8>,
    pub(crate) comments: Vec<LineComment>,
}

/// Lexes `src`. Never fails: unterminated comments and literals run to the
/// end of the line (literals) or file (block comments).
pub(crate) fn lex(src: &[u8]) -> Lexed {
    let mut lx = Lexer { src, code: src.to_vec(), comments: Vec::new(), i: 0 };
    lx.run();
    Lexed { code: lx.code, comments: lx.comments }
}

struct Lexer<'a> {
    src: &'a [u8],
    code: Vec<u8>,
    comments: Vec<LineComment>,
    i: usize,
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

impl Lexer<'_> {
    fn at(&self, i: usize) -> u8 {
        self.src.get(i).copied().unwrap_or(0)
    }

    /// Blanks `code[from..to]`, keeping line breaks.
    fn blank(&mut self, from: usize, to: usize) {
        let span = &mut self.code[from..to];
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', &self.src[from..to]) {
            span[start..nl].fill(b' ');
            start = nl + 1;
        }
        span[start..].fill(b' ');
    }

    /// Jumps from one `/`, `"` or `'` to the next: the bytes between them
    /// hold only identifiers, numbers and punctuation, which leave the code
    /// view as it is. What they do decide is read from the byte before the
    /// jump's target; where it could matter (a raw-string prefix before `"`,
    /// a digit separator `'`), the stretch is lexed token by token instead.
    fn run(&mut self) {
        let src = self.src;
        while let Some(k) = memchr::memchr3(b'/', b'"', b'\'', &src[self.i..]) {
            let p = self.i + k;
            let prev = if k > 0 { src[p - 1] } else { b' ' };
            let ambiguous = match src[p] {
                b'"' => prev == b'R',
                b'\'' => is_ident_byte(prev) || matches!(prev, b'.' | b'+' | b'-'),
                _ => false,
            };
            if !ambiguous {
                self.i = p;
            }
            while self.i <= p {
                self.token();
            }
        }
        self.i = src.len();
    }

    /// Lexes the token at `i`.
    fn token(&mut self) {
        match self.src[self.i] {
            b'/' if self.at(self.i + 1) == b'/' => self.line_comment(),
            b'/' if self.at(self.i + 1) == b'*' => self.block_comment(),
            b'"' => self.string(self.i),
            b'\'' => self.char_literal(),
            b'0'..=b'9' => self.number(),
            b'.' if self.at(self.i + 1).is_ascii_digit() => self.number(),
            b if is_ident_byte(b) => self.identifier(),
            _ => self.i += 1,
        }
    }

    fn line_comment(&mut self) {
        let start = self.i;
        let mut j = start + 2;
        // A backslash before the line break continues the comment.
        loop {
            j = memchr::memchr(b'\n', &self.src[j..]).map_or(self.src.len(), |k| j + k);
            let mut k = j;
            if k > start + 2 && self.src[k - 1] == b'\r' {
                k -= 1;
            }
            if j < self.src.len() && k > start + 2 && self.src[k - 1] == b'\\' {
                j += 1;
                continue;
            }
            break;
        }
        let mut end = j;
        if end > start + 2 && self.src[end - 1] == b'\r' {
            end -= 1;
        }
        self.comments.push(LineComment { start, text_start: start + 2, end });
        self.blank(start, j);
        self.i = j;
    }

    fn block_comment(&mut self) {
        let start = self.i;
        let j = memchr::memmem::find(&self.src[start + 2..], b"*/").map_or(self.src.len(), |k| start + 2 + k);
        let end = (j + 2).min(self.src.len());
        self.blank(start, end);
        self.i = end;
    }

    /// An ordinary string literal starting at the quote `q`.
    fn string(&mut self, q: usize) {
        let mut j = q + 1;
        // Up to the closing quote or the line break, skipping escapes.
        while let Some(rest) = self.src.get(j..) {
            match memchr::memchr3(b'\\', b'"', b'\n', rest) {
                Some(k) if rest[k] == b'\\' => j += k + 2,
                Some(k) => {
                    j += k;
                    break;
                }
                None => {
                    j = self.src.len();
                    break;
                }
            }
        }
        let j = j.min(self.src.len());
        self.blank(q + 1, j);
        self.i = if self.at(j) == b'"' { j + 1 } else { j };
    }

    fn char_literal(&mut self) {
        let q = self.i;
        let mut j = q + 1;
        while j < self.src.len() {
            match self.src[j] {
                b'\\' => j += 2,
                b'\'' | b'\n' => break,
                _ => j += 1,
            }
        }
        let j = j.min(self.src.len());
        self.blank(q + 1, j);
        self.i = if self.at(j) == b'\'' { j + 1 } else { j };
    }

    /// A pp-number: digits, letters, `.`, digit separators `'` and exponent
    /// signs, so `1'000` is not mistaken for a character literal.
    fn number(&mut self) {
        let mut j = self.i + 1;
        while j < self.src.len() {
            let b = self.src[j];
            let prev = self.src[j - 1];
            if is_ident_byte(b) || b == b'.' {
                j += 1;
            } else if b == b'\'' && is_ident_byte(self.at(j + 1)) {
                j += 2;
            } else if (b == b'+' || b == b'-') && matches!(prev, b'e' | b'E' | b'p' | b'P') {
                j += 1;
            } else {
                break;
            }
        }
        self.i = j;
    }

    /// An identifier; when it is a raw-string prefix (`R`, `u8R`, `LR`, ...)
    /// directly followed by `"`, the raw string is consumed too.
    fn identifier(&mut self) {
        let (src, start) = (self.src, self.i);
        let mut j = start;
        while j < src.len() && is_ident_byte(src[j]) {
            j += 1;
        }
        self.i = j;
        let word = &self.src[start..j];
        if self.at(j) == b'"' && matches!(word, b"R" | b"u8R" | b"uR" | b"UR" | b"LR") {
            self.raw_string(j);
        }
    }

    /// `R"delim( ... )delim"`; the delimiter is at most 16 characters.
    fn raw_string(&mut self, q: usize) {
        let mut j = q + 1;
        while j < self.src.len() && j - q <= 17 && self.src[j] != b'(' {
            if matches!(self.src[j], b' ' | b')' | b'\\' | b'\n' | b'"') {
                // Not a valid raw string: treat it as an ordinary one.
                return self.string(q);
            }
            j += 1;
        }
        if self.at(j) != b'(' {
            return self.string(q);
        }
        let delim = &self.src[q + 1..j];
        let mut closing = Vec::with_capacity(delim.len() + 2);
        closing.push(b')');
        closing.extend_from_slice(delim);
        closing.push(b'"');
        let body = j + 1;
        let end = find(&self.src[body..], &closing).map(|k| body + k).unwrap_or(self.src.len());
        self.blank(q + 1, end.min(self.src.len()));
        self.i = (end + closing.len()).min(self.src.len());
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comments(src: &str) -> Vec<String> {
        let l = lex(src.as_bytes());
        l.comments.iter().map(|c| src[c.text_start..c.end].to_string()).collect()
    }

    #[test]
    fn finds_only_real_line_comments() {
        let src = "a = \"// @BE no\"; /* // @BE no */ b = R\"x(// @BE no)x\"; // @BE yes\r\nc = '/'; // two\n";
        assert_eq!(comments(src), vec![" @BE yes", " two"]);
    }

    #[test]
    fn digit_separators_are_not_char_literals() {
        assert_eq!(comments("int x = 1'000; // c\nchar y = 'a';"), vec![" c"]);
    }

    #[test]
    fn code_view_blanks_comments_and_literals() {
        let l = lex(b"f(/* x */ \"{\", '{') // {\n{");
        assert_eq!(String::from_utf8(l.code).unwrap(), "f(        \" \", ' ')     \n{");
    }
}
