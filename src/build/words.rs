//! A program with its arguments written as one value (`CXX="ccache g++"`,
//! `CXX="zig c++ -target x86_64-linux-gnu.2.28"`,
//! `BEGEN_COMPILER_LAUNCHER="env FOO=1 ccache"`), split into words the way a
//! POSIX shell splits a simple command, without evaluating anything: blanks
//! separate words, `'…'` keeps everything literally, `"…"` keeps everything
//! but `\"`, `\\`, `` \` `` and `\$`, and a backslash outside quotes keeps
//! the next character. What only a shell could give a meaning (an expansion,
//! a glob, a redirection, a second command) is refused with where it is
//! written, never passed on as a literal the user did not mean.

/// Why a value cannot be split: the message names the 1-based character
/// where the problem is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SplitError {
    /// 1-based, in characters.
    pub(crate) column: usize,
    pub(crate) what: String,
}

/// Characters a shell acts on outside quotes, and what each would do.
fn shell_meaning(c: char) -> Option<&'static str> {
    Some(match c {
        '$' => "`$` starts an expansion",
        '`' => "`` ` `` starts a command substitution",
        ';' | '&' | '|' => "it separates commands",
        '<' | '>' => "it starts a redirection",
        '(' | ')' => "it groups commands",
        '*' | '?' | '[' => "it is a file-name pattern",
        '#' => "it starts a comment",
        '~' => "it is a home directory",
        _ => return None,
    })
}

/// The words of `value`; none for a blank one.
pub(crate) fn split(value: &str) -> Result<Vec<String>, SplitError> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = value.chars().enumerate().peekable();
    let refuse = |column: usize, what: String| Err(SplitError { column: column + 1, what });
    while let Some((i, c)) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some((_, '\'')) => break,
                        Some((_, c)) => w.push(c),
                        None => return refuse(i, "this `'` is never closed".into()),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some((_, '"')) => break,
                        Some((_, '\\')) => match chars.next() {
                            Some((_, c @ ('"' | '\\' | '`' | '$'))) => w.push(c),
                            Some((_, '\n')) => {}
                            Some((_, c)) => {
                                w.push('\\');
                                w.push(c);
                            }
                            None => return refuse(i, "this `\"` is never closed".into()),
                        },
                        Some((j, c @ ('$' | '`'))) => {
                            return refuse(j, format!("{} inside double quotes", shell_meaning(c).unwrap_or("")));
                        }
                        Some((_, c)) => w.push(c),
                        None => return refuse(i, "this `\"` is never closed".into()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some((_, '\n')) => {}
                Some((_, c)) => word.get_or_insert_with(String::new).push(c),
                None => return refuse(i, "a `\\` ends the value".into()),
            },
            // `~` and `#` mean something only at a word's start.
            '~' | '#' if word.is_some() => word.get_or_insert_with(String::new).push(c),
            c => match shell_meaning(c) {
                Some(meaning) => {
                    let shown = if c == '`' { "`` ` ``".to_string() } else { format!("`{c}`") };
                    return refuse(i, format!("{shown} needs a shell: {meaning}; quote it to mean the character"));
                }
                None => word.get_or_insert_with(String::new).push(c),
            },
        }
    }
    words.extend(word);
    Ok(words)
}

/// Whether splitting `value` can give anything but its blank-separated
/// words: it has a quote or a backslash.
pub(crate) fn has_quoting(value: &str) -> bool {
    value.contains(['\'', '"', '\\'])
}

#[cfg(test)]
mod tests {
    use super::split;

    fn words(value: &str) -> Vec<String> {
        split(value).unwrap_or_else(|e| panic!("{value:?}: {e:?}"))
    }

    #[test]
    fn splits_each_class_of_value_as_a_shell_does() {
        // one program; a wrapper and its compiler; a compiler with flags; a
        // driver and its own sub-command; blanks of every kind around words.
        assert_eq!(words("g++"), ["g++"]);
        assert_eq!(words("  ccache   g++ "), ["ccache", "g++"]);
        assert_eq!(words("g++ -DX -O1"), ["g++", "-DX", "-O1"]);
        assert_eq!(words("zig c++ -target x86_64-linux-gnu.2.28"), ["zig", "c++", "-target", "x86_64-linux-gnu.2.28"]);
        assert_eq!(words("env FOO=1\tccache"), ["env", "FOO=1", "ccache"]);
        assert_eq!(words(""), Vec::<String>::new());
        assert_eq!(words(" \t "), Vec::<String>::new());
        // quoting: one word with a blank, an empty word, a quote of the other
        // kind kept, escapes inside double quotes, a backslash outside.
        assert_eq!(words("g++ '-DMSG=a b'"), ["g++", "-DMSG=a b"]);
        assert_eq!(words(r#"g++ "-DMSG=\"a b\"""#), ["g++", r#"-DMSG="a b""#]);
        assert_eq!(words("g++ ''"), ["g++", ""]);
        assert_eq!(words(r#"g++ "it's""#), ["g++", "it's"]);
        assert_eq!(words(r#"g++ -D'A'"B"C"#), ["g++", "-DABC"]);
        assert_eq!(words(r"/opt/my\ tools/g++ -DX"), ["/opt/my tools/g++", "-DX"]);
        assert_eq!(words(r#"g++ "a\nb""#), ["g++", r"a\nb"]);
        assert_eq!(words("g++ -DA#B a~b"), ["g++", "-DA#B", "a~b"]);
        assert_eq!(words("g++ '$HOME' \"*\""), ["g++", "$HOME", "*"]);
    }

    #[test]
    fn refuses_what_needs_a_shell_with_its_column() {
        for (value, column, what) in [
            ("g++ 'unterminated", 5, "never closed"),
            ("g++ \"unterminated", 5, "never closed"),
            ("g++ \"a\\", 5, "never closed"),
            ("g++ -DX\\", 8, "ends the value"),
            ("g++ $CFLAGS", 5, "expansion"),
            ("g++ \"$CFLAGS\"", 6, "expansion"),
            ("g++ `cat f`", 5, "substitution"),
            ("g++; rm -rf x", 4, "separates commands"),
            ("g++ && x", 5, "separates commands"),
            ("g++ | x", 5, "separates commands"),
            ("g++ > log", 5, "redirection"),
            ("g++ $(x)", 5, "expansion"),
            ("(g++)", 1, "groups"),
            ("g++ -I*", 7, "pattern"),
            ("g++ -I?", 7, "pattern"),
            ("g++ # note", 5, "comment"),
            ("~/bin/g++", 1, "home directory"),
            ("é g++ $X", 7, "expansion"),
        ] {
            let e = split(value).expect_err(value);
            assert_eq!(e.column, column, "{value:?}: {e:?}");
            assert!(e.what.contains(what), "{value:?}: {e:?}");
        }
    }

    #[test]
    fn never_panics_and_agrees_with_blank_splitting_without_quotes() {
        // Every value of up to four characters from an alphabet of the
        // characters the splitter treats apart, and plain text.
        let alphabet = [' ', '\t', '\'', '"', '\\', '$', '`', ';', '~', '#', '*', 'a', '-', 'é', '\n'];
        let mut value = String::new();
        let mut tried = 0;
        for n in 0..=4u32 {
            for mut k in 0..alphabet.len().pow(n) {
                value.clear();
                for _ in 0..n {
                    value.push(alphabet[k % alphabet.len()]);
                    k /= alphabet.len();
                }
                tried += 1;
                if let Ok(w) = split(&value)
                    && !super::has_quoting(&value)
                {
                    let blank: Vec<&str> = value.split([' ', '\t', '\n']).filter(|s| !s.is_empty()).collect();
                    assert_eq!(w, blank, "{value:?}");
                }
            }
        }
        assert!(tried > 50_000, "{tried}");
    }
}
