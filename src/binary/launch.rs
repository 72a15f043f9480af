//! The launch dimensions of a precompiled kernel (begen.yaml's `grid:`,
//! `block:` and `shared:` under `binaries:`): expressions over integers and
//! the kernel's dimension and attribute names. This is their grammar only;
//! begen.yaml's shape is `config`'s, which names are known is `check`'s.

use std::fmt;

use crate::diag::messages::binary as bm;

pub(crate) use crate::model::binary::{Expr, Op};

/// Why an expression does not parse: the byte offset and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExprError {
    /// Byte offset in the text.
    pub(crate) offset: usize,
    /// What is wrong.
    pub(crate) kind: ExprErrorKind,
}

/// The kinds of [`ExprError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExprErrorKind {
    /// An operand is complete, but neither an operator nor the end follows.
    OperatorOrEnd,
    /// Parentheses nested past the parser's depth limit.
    TooDeep,
    /// A `(` without its `)`.
    Close,
    /// `cdiv(a` without `, b`.
    CdivComma,
    /// No operand where one must be.
    Operand,
    /// An integer literal of 2**63 or more.
    TooLarge,
    /// More operators than [`MAX_OPERATORS`] (a flat chain nests as deeply as it is long).
    TooLong,
}

/// The most operators one expression may hold: every later pass over the
/// tree (printing, evaluating, dropping it) recurses as deep as a chain is long.
pub(crate) const MAX_OPERATORS: usize = 256;

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = match self.kind {
            ExprErrorKind::OperatorOrEnd => bm::EXPR_OPERATOR_OR_END,
            ExprErrorKind::TooDeep => bm::EXPR_TOO_DEEP,
            ExprErrorKind::Close => bm::EXPR_CLOSE,
            ExprErrorKind::CdivComma => bm::EXPR_CDIV_COMMA,
            ExprErrorKind::Operand => bm::EXPR_ATOM,
            ExprErrorKind::TooLarge => bm::EXPR_TOO_LARGE,
            ExprErrorKind::TooLong => bm::EXPR_TOO_LONG,
        };
        f.write_str(&bm::expr_at(self.offset, why))
    }
}

/// Parses `+ - * / %`, parentheses, `cdiv(a, b)`, non-negative integer
/// literals and identifiers, with C precedence (left to right).
pub(crate) fn parse_expr(text: &str) -> Result<Expr, ExprError> {
    let mut p = ExprParser { s: text.as_bytes(), pos: 0, depth: 0, operators: 0 };
    let e = p.sum()?;
    p.skip_ws();
    if p.pos != p.s.len() {
        return Err(p.err(ExprErrorKind::OperatorOrEnd));
    }
    Ok(e)
}

struct ExprParser<'a> {
    s: &'a [u8],
    pos: usize,
    depth: usize,
    operators: usize,
}

impl ExprParser<'_> {
    fn err(&self, kind: ExprErrorKind) -> ExprError {
        ExprError { offset: self.pos, kind }
    }

    /// Counts one more operator at the current position, refusing past [`MAX_OPERATORS`].
    fn operator(&mut self) -> Result<(), ExprError> {
        self.operators += 1;
        if self.operators > MAX_OPERATORS {
            return Err(self.err(ExprErrorKind::TooLong));
        }
        self.pos += 1;
        Ok(())
    }

    fn skip_ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.pos).copied()
    }

    fn sum(&mut self) -> Result<Expr, ExprError> {
        let mut e = self.product()?;
        while let Some(c @ (b'+' | b'-')) = self.peek() {
            self.operator()?;
            let rhs = self.product()?;
            e = Expr::Bin(if c == b'+' { Op::Add } else { Op::Sub }, Box::new(e), Box::new(rhs));
        }
        Ok(e)
    }

    fn product(&mut self) -> Result<Expr, ExprError> {
        let mut e = self.atom()?;
        while let Some(c @ (b'*' | b'/' | b'%')) = self.peek() {
            self.operator()?;
            let op = match c {
                b'*' => Op::Mul,
                b'/' => Op::Div,
                _ => Op::Rem,
            };
            let rhs = self.atom()?;
            e = Expr::Bin(op, Box::new(e), Box::new(rhs));
        }
        Ok(e)
    }

    fn atom(&mut self) -> Result<Expr, ExprError> {
        // Bounds what a hostile begen.yaml can make the parser recurse.
        if self.depth > 64 {
            return Err(self.err(ExprErrorKind::TooDeep));
        }
        match self.peek() {
            Some(b'(') => {
                self.pos += 1;
                self.depth += 1;
                let e = self.sum()?;
                self.depth -= 1;
                if self.peek() != Some(b')') {
                    return Err(self.err(ExprErrorKind::Close));
                }
                self.pos += 1;
                Ok(e)
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.pos;
                while self.pos < self.s.len() && self.s[self.pos].is_ascii_digit() {
                    self.pos += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("");
                text.parse().map(Expr::Int).map_err(|_| ExprError { offset: start, kind: ExprErrorKind::TooLarge })
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let start = self.pos;
                while self.pos < self.s.len() && (self.s[self.pos].is_ascii_alphanumeric() || self.s[self.pos] == b'_')
                {
                    self.pos += 1;
                }
                let name = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("").to_string();
                if name == "cdiv" && self.peek() == Some(b'(') {
                    self.operator()?;
                    self.depth += 1;
                    let a = self.sum()?;
                    if self.peek() != Some(b',') {
                        return Err(self.err(ExprErrorKind::CdivComma));
                    }
                    self.pos += 1;
                    let b = self.sum()?;
                    self.depth -= 1;
                    if self.peek() != Some(b')') {
                        return Err(self.err(ExprErrorKind::Close));
                    }
                    self.pos += 1;
                    return Ok(Expr::Bin(Op::Cdiv, Box::new(a), Box::new(b)));
                }
                Ok(Expr::Name(name))
            }
            _ => Err(self.err(ExprErrorKind::Operand)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_and_errors() {
        assert_eq!(parse_expr("(n + 15) / 16").unwrap().to_string(), "((n + 15) / 16)");
        assert_eq!(parse_expr("a + b * c % 4").unwrap().to_string(), "(a + ((b * c) % 4))");
        assert_eq!(parse_expr(" cdiv( m*2 , 128 ) ").unwrap().names(), ["m"]);
        assert_eq!(parse_expr("7").unwrap(), Expr::Int(7));
        for (bad, at) in [("", 0), ("n +", 3), ("(n", 2), ("cdiv(n)", 6), ("n $", 2), ("99999999999999999999", 0)] {
            assert_eq!(parse_expr(bad).unwrap_err().offset, at, "{bad}");
        }
        let deep = format!("{}1{}", "(".repeat(100), ")".repeat(100));
        assert!(parse_expr(&deep).is_err());
    }

    #[test]
    fn long_chains_are_refused_not_recursed() {
        let chain = |n: usize| format!("1{}", "+1".repeat(n));
        assert!(parse_expr(&chain(MAX_OPERATORS)).is_ok());
        let e = parse_expr(&chain(MAX_OPERATORS + 1)).unwrap_err();
        assert_eq!((e.kind, e.offset), (ExprErrorKind::TooLong, 2 * MAX_OPERATORS + 1));
        assert_eq!(parse_expr(&chain(100_000)).unwrap_err().kind, ExprErrorKind::TooLong);
        let product = format!("n{}", "*2".repeat(100_000));
        assert_eq!(parse_expr(&product).unwrap_err().kind, ExprErrorKind::TooLong);
        assert!(parse_expr(&chain(100_000)).unwrap_err().to_string().contains("at most 256 operators"));
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples of this module's crate-private items, run as unit tests
    //! (an example in a doc comment must compile outside the crate).

    #[test]
    fn module() {
        use crate::binary::launch::parse_expr;
        let e = parse_expr("cdiv(n, 16) * 2").unwrap();
        assert_eq!(e.to_string(), "(cdiv(n, 16) * 2)");
        assert!(parse_expr("n +").is_err());
    }
}
