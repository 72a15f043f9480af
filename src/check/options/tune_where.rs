//! The `where:` expression of a `tune:` entry over a source's `defines:`: a
//! small, safe language over the define names, evaluated at build time for
//! each combination of the defines' values.
//!
//! ```text
//! expr   := or
//! or     := and ("or" and)*
//! and    := not ("and" not)*
//! not    := "not" not | cmp
//! cmp    := sum (("==" | "!=" | "<" | "<=" | ">" | ">=") sum)?
//! sum    := prod (("+" | "-") prod)*
//! prod   := unary (("*" | "/" | "%") unary)*
//! unary  := "-" unary | atom
//! atom   := integer | name | "true" | "false" | "(" expr ")"
//! ```
//! Values are 64-bit integers; a comparison, `and`, `or` and `not` give 1 or
//! 0, and a combination is allowed where the whole expression is not 0.
//! Overflow and division by zero are errors naming the combination, never
//! a panic.

/// A parsed expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Expr {
    Int(i64),
    /// A define, by its index in the names the expression was parsed over.
    Name(usize),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Binary(Op, Box<Expr>, Box<Expr>),
}

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

/// A mistake in an expression: what, and the byte range of the expression
/// text it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WhereError {
    pub(crate) message: String,
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// An unknown name: the define it is closest to.
    pub(crate) near: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Int(i64),
    Word(String),
    Sym(&'static str),
}

/// The expression's tokens with their byte ranges.
fn lex(text: &str) -> Result<Vec<(Tok, usize, usize)>, WhereError> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    const SYMS: [&str; 16] = ["==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "%", "(", ")", "&&", "||", "!"];
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if c.is_ascii_digit() {
            while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
                i += 1;
            }
            let word = &text[start..i];
            let value = word.parse::<i64>().map_err(|_| WhereError {
                message: format!("`{word}` is not an integer this expression can hold"),
                start,
                end: i,
                near: None,
            })?;
            out.push((Tok::Int(value), start, i));
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push((Tok::Word(text[start..i].to_string()), start, i));
            continue;
        }
        match SYMS.iter().find(|s| text[i..].starts_with(**s)) {
            Some(&s) => {
                i += s.len();
                let s = match s {
                    "&&" => "and",
                    "||" => "or",
                    other => other,
                };
                out.push((Tok::Sym(s), start, i));
            }
            None => {
                let ch = text[i..].chars().next().unwrap_or(' ');
                return Err(WhereError {
                    message: format!(
                        "`{ch}` is not part of a `where:` expression (integers, define names, + - * / %, \
                         comparisons, and, or, not, parentheses)"
                    ),
                    start,
                    end: i + ch.len_utf8(),
                    near: None,
                });
            }
        }
    }
    Ok(out)
}

struct Parser<'a> {
    toks: Vec<(Tok, usize, usize)>,
    at: usize,
    names: &'a [String],
    len: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at).map(|t| &t.0)
    }

    fn is(&self, sym: &str) -> bool {
        match self.peek() {
            Some(Tok::Sym(s)) => *s == sym,
            Some(Tok::Word(w)) => w == sym && matches!(sym, "and" | "or" | "not"),
            _ => false,
        }
    }

    fn here(&self) -> (usize, usize) {
        self.toks.get(self.at).map_or((self.len, self.len), |t| (t.1, t.2))
    }

    fn error(&self, message: String) -> WhereError {
        let (start, end) = self.here();
        WhereError { message, start, end, near: None }
    }

    fn binary(
        &mut self,
        ops: &[(&str, Op)],
        next: fn(&mut Self) -> Result<Expr, WhereError>,
        once: bool,
    ) -> Result<Expr, WhereError> {
        let mut left = next(self)?;
        while let Some(&(_, op)) = ops.iter().find(|(s, _)| self.is(s)) {
            self.at += 1;
            let right = next(self)?;
            left = Expr::Binary(op, Box::new(left), Box::new(right));
            if once {
                break;
            }
        }
        Ok(left)
    }

    fn or(&mut self) -> Result<Expr, WhereError> {
        self.binary(&[("or", Op::Or)], Self::and, false)
    }

    fn and(&mut self) -> Result<Expr, WhereError> {
        self.binary(&[("and", Op::And)], Self::not, false)
    }

    fn not(&mut self) -> Result<Expr, WhereError> {
        if self.is("not") || self.is("!") {
            self.at += 1;
            return Ok(Expr::Not(Box::new(self.not()?)));
        }
        self.cmp()
    }

    fn cmp(&mut self) -> Result<Expr, WhereError> {
        let ops = [("==", Op::Eq), ("!=", Op::Ne), ("<=", Op::Le), (">=", Op::Ge), ("<", Op::Lt), (">", Op::Gt)];
        let e = self.binary(&ops, Self::sum, true)?;
        if ops.iter().any(|(s, _)| self.is(s)) {
            return Err(self.error("comparisons do not chain: write `a < b and b < c`".into()));
        }
        Ok(e)
    }

    fn sum(&mut self) -> Result<Expr, WhereError> {
        self.binary(&[("+", Op::Add), ("-", Op::Sub)], Self::prod, false)
    }

    fn prod(&mut self) -> Result<Expr, WhereError> {
        self.binary(&[("*", Op::Mul), ("/", Op::Div), ("%", Op::Rem)], Self::unary, false)
    }

    fn unary(&mut self) -> Result<Expr, WhereError> {
        if self.is("-") {
            self.at += 1;
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Expr, WhereError> {
        let Some((tok, start, end)) = self.toks.get(self.at).cloned() else {
            return Err(self.error("the expression ends too soon: a value is missing".into()));
        };
        self.at += 1;
        match tok {
            Tok::Int(v) => Ok(Expr::Int(v)),
            Tok::Word(w) if w == "true" => Ok(Expr::Int(1)),
            Tok::Word(w) if w == "false" => Ok(Expr::Int(0)),
            Tok::Word(w) => match self.names.iter().position(|n| *n == w) {
                Some(k) => Ok(Expr::Name(k)),
                None => {
                    let near = crate::diag::suggest::closest(&w, self.names.iter().map(String::as_str));
                    Err(WhereError {
                        message: format!("`{w}` is not one of the tuned defines"),
                        start,
                        end,
                        near: near.map(str::to_string),
                    })
                }
            },
            Tok::Sym("(") => {
                let e = self.or()?;
                if !self.is(")") {
                    return Err(self.error("a `(` is not closed: `)` expected here".into()));
                }
                self.at += 1;
                Ok(e)
            }
            Tok::Sym(s) => {
                self.at -= 1;
                Err(self.error(format!("`{s}` where a value was expected")))
            }
        }
    }
}

/// Parses `text` over the define `names`.
pub(crate) fn parse(text: &str, names: &[String]) -> Result<Expr, WhereError> {
    let toks = lex(text)?;
    let mut p = Parser { toks, at: 0, names, len: text.len() };
    let e = p.or()?;
    if p.at < p.toks.len() {
        return Err(p.error("an operator is expected here (the expression goes on after a complete value)".into()));
    }
    Ok(e)
}

/// The value of `e` for one combination (`values[k]`: the value of define
/// `k`); an error on overflow or a division by zero.
pub(crate) fn eval(e: &Expr, values: &[i64]) -> Result<i64, String> {
    Ok(match e {
        Expr::Int(v) => *v,
        Expr::Name(k) => values[*k],
        Expr::Neg(x) => eval(x, values)?.checked_neg().ok_or("an integer overflows")?,
        Expr::Not(x) => i64::from(eval(x, values)? == 0),
        Expr::Binary(Op::And, a, b) => i64::from(eval(a, values)? != 0 && eval(b, values)? != 0),
        Expr::Binary(Op::Or, a, b) => i64::from(eval(a, values)? != 0 || eval(b, values)? != 0),
        Expr::Binary(op, a, b) => {
            let (a, b) = (eval(a, values)?, eval(b, values)?);
            let overflow = || "an integer overflows".to_string();
            match op {
                Op::Add => a.checked_add(b).ok_or_else(overflow)?,
                Op::Sub => a.checked_sub(b).ok_or_else(overflow)?,
                Op::Mul => a.checked_mul(b).ok_or_else(overflow)?,
                Op::Div | Op::Rem if b == 0 => return Err("a division by zero".into()),
                Op::Div => a.checked_div(b).ok_or_else(overflow)?,
                Op::Rem => a.checked_rem(b).ok_or_else(overflow)?,
                Op::Eq => i64::from(a == b),
                Op::Ne => i64::from(a != b),
                Op::Lt => i64::from(a < b),
                Op::Le => i64::from(a <= b),
                Op::Gt => i64::from(a > b),
                Op::Ge => i64::from(a >= b),
                Op::And | Op::Or => unreachable!("handled above"),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        vec!["BLOCK".into(), "TASK".into()]
    }

    fn run(text: &str, values: &[i64]) -> i64 {
        eval(&parse(text, &names()).unwrap(), values).unwrap()
    }

    #[test]
    fn evaluates_arithmetic_comparisons_and_logic() {
        assert_eq!(run("TASK >= 8 * BLOCK", &[256, 4096]), 1);
        assert_eq!(run("TASK >= 8 * BLOCK", &[1024, 4096]), 0);
        assert_eq!(run("(BLOCK + 2) * 3 - 1", &[1, 0]), 8);
        assert_eq!(run("-BLOCK % 3 == -1 and not TASK", &[4, 0]), 1);
        assert_eq!(run("BLOCK / 2 == 64 or TASK != 0", &[128, 0]), 1);
        assert_eq!(run("true && !false || BLOCK < 0", &[0, 0]), 1);
        assert_eq!(run("1 + 2 * 3", &[0, 0]), 7);
    }

    #[test]
    fn locates_mistakes() {
        let e = parse("TASK >= 8 * BLOK", &names()).unwrap_err();
        assert_eq!((e.start, e.end, e.near.as_deref()), (12, 16, Some("BLOCK")));
        let e = parse("(BLOCK + 1", &names()).unwrap_err();
        assert_eq!(e.start, 10);
        assert!(e.message.contains("not closed"), "{e:?}");
        let e = parse("BLOCK $ 2", &names()).unwrap_err();
        assert_eq!((e.start, e.end), (6, 7));
        let e = parse("BLOCK 2", &names()).unwrap_err();
        assert_eq!(e.start, 6);
        let e = parse("1 < BLOCK < 3", &names()).unwrap_err();
        assert!(e.message.contains("chain"), "{e:?}");
        let e = parse("99999999999999999999", &names()).unwrap_err();
        assert_eq!(e.end, 20);
        assert!(parse("", &names()).is_err());
    }

    #[test]
    fn overflow_and_division_by_zero_are_errors() {
        let e = parse("BLOCK / TASK", &names()).unwrap();
        assert!(eval(&e, &[1, 0]).is_err());
        let e = parse("BLOCK * BLOCK", &names()).unwrap();
        assert!(eval(&e, &[i64::MAX, 0]).is_err());
    }
}
