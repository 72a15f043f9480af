//! The macro expander: parameters substituted, `##` pasted, `#` stringized,
//! the result rescanned with the macro's own name hidden.
//!
//! Speed matters here: brainevent's macros hold whole kernels, and an
//! annotation only needs the head of one function in the expansion. So
//! tokens are small copyable values whose text is interned once per file
//! ([`Expander`]), each macro body is tokenised once on first use, and an
//! [`Expansion`] produces its text on demand, in order, so the caller stops
//! reading as soon as it has seen the head it wants.
//!
//! The output is exactly that of a depth-first expansion of the whole text:
//! the lazy form expands in the same order and spends the same token budget
//! up to the point where it stops.
//!
//! Most annotations name the first function a macro defines, so the search
//! first tries [`Expander::head_expansion`]: the invoked macro cut after
//! that function's head, so that the rest of its body is neither tokenised
//! nor substituted (a brainevent scan: 95 M instructions down to 75 M).
//! Up to the cut its text is the whole expansion's; the search falls back
//! to the whole expansion when the function is not there, or when the whole
//! replacement list might have run the budget out first.

use std::borrow::Cow;
use std::collections::HashMap;
use std::rc::Rc;

use super::macros::MacroTable;
use crate::model::decl::Limit;
use crate::par::FxBuildHasher;

/// Tokens that stop the expander from running away on crafted input.
const BUDGET: usize = 200_000;
const MAX_DEPTH: usize = 64;

/// An interned token text.
type Sym = u32;

/// Symbols interned by every [`Expander`] first, in this order.
const EMPTY: Sym = 0;
const LPAREN: Sym = 1;
const RPAREN: Sym = 2;
const COMMA: Sym = 3;
const HASH: Sym = 4;
const VA_ARGS: Sym = 5;
const VA_OPT: Sym = 6;
const FIXED: [&str; 7] = ["", "(", ")", ",", "#", "__VA_ARGS__", "__VA_OPT__"];

/// The index of the `)` closing the `(` at `open` in `body`, before `end`.
fn closing(body: &[Tok], open: usize, end: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, t) in body.iter().enumerate().take(end).skip(open) {
        match (t.sym, t.kind) {
            (LPAREN, Kind::Punct) => depth += 1,
            (RPAREN, Kind::Punct) => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tok {
    sym: Sym,
    kind: Kind,
    space_before: bool,
}

impl Tok {
    fn placemarker(space_before: bool) -> Tok {
        Tok { sym: EMPTY, kind: Kind::Placemarker, space_before }
    }
}

/// A macro with its body tokenised.
#[derive(Debug)]
struct Compiled {
    name: Sym,
    /// `Some` for a function-like macro.
    params: Option<Vec<Sym>>,
    variadic: bool,
    body: Vec<Tok>,
    /// The body cut into runs `(start, end, active)`: an active run takes
    /// substitution or `##`, the others are copied as they are. No `##`
    /// and no `#` with its operand straddles two runs.
    runs: Vec<(usize, usize, bool)>,
}

impl Compiled {
    fn new(name: Sym, params: Option<Vec<Sym>>, variadic: bool, body: Vec<Tok>) -> Self {
        let is_param = |s: Sym| params.as_ref().is_some_and(|ps| ps.contains(&s) || (variadic && s == VA_ARGS));
        let mut active: Vec<bool> = body.iter().map(|t| is_param(t.sym) || t.kind == Kind::Paste).collect();
        for k in 0..body.len() {
            let paste_near = |j: Option<usize>| j.and_then(|j| body.get(j)).is_some_and(|t| t.kind == Kind::Paste);
            let stringize =
                body[k].sym == HASH && body[k].kind == Kind::Punct && body.get(k + 1).is_some_and(|n| is_param(n.sym));
            if stringize || paste_near(k.checked_sub(1)) || paste_near(Some(k + 1)) {
                active[k] = true;
            }
            if stringize {
                active[k + 1] = true;
            }
        }
        // `__VA_OPT__( ... )` is substituted as a whole.
        if variadic {
            for k in 0..body.len() {
                if body[k].sym == VA_OPT
                    && body.get(k + 1).is_some_and(|t| t.sym == LPAREN)
                    && let Some(j) = closing(&body, k + 1, body.len())
                {
                    active[k..=j].iter_mut().for_each(|a| *a = true);
                }
            }
        }
        let mut runs: Vec<(usize, usize, bool)> = Vec::new();
        for (k, &a) in active.iter().enumerate() {
            match runs.last_mut() {
                Some(run) if run.2 == a => run.1 = k + 1,
                _ => runs.push((k, k + 1, a)),
            }
        }
        Compiled { name, params, variadic, body, runs }
    }
}

/// What a symbol is to the macro table, resolved on first sight.
#[derive(Debug, Clone)]
enum Slot {
    Unresolved,
    Plain,
    Macro(Rc<Compiled>),
}

/// Expands macros of one table: owns the interned texts and the tokenised
/// macros, so a file's macros are tokenised once however often they are used.
pub(crate) struct Expander<'t> {
    table: &'t MacroTable,
    texts: Vec<Rc<str>>,
    ids: HashMap<Rc<str>, Sym, FxBuildHasher>,
    /// The symbols of one-byte ASCII texts (most punctuation), by byte:
    /// found without hashing.
    bytes: [Option<Sym>; 128],
    slots: Vec<Slot>,
    /// Macros cut after the head of their first function, by symbol, for
    /// [`Expander::head_expansion`] (`None`: no such cut).
    heads: HashMap<Sym, Option<Cut>, FxBuildHasher>,
    /// The current expansion's use of a cut macro.
    head: Head,
    /// The offset whose macro definitions are expanded.
    pos: usize,
    /// The current expansion left a macro unexpanded at the depth limit.
    too_deep: bool,
}

/// A macro cut after its first head, and how long its whole body's text is.
#[derive(Debug, Clone)]
struct Cut {
    macro_: Rc<Compiled>,
    body_bytes: usize,
}

/// Whether an expansion may cut its outermost invocation after the head
/// (see [`Expander::head_expansion`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Head {
    /// A whole expansion.
    Off,
    /// The outermost invocation is yet to come.
    Wanted,
    /// It was cut: the whole replacement list would have held at most
    /// `bound` tokens.
    Cut { bound: usize },
}

impl<'t> Expander<'t> {
    pub(crate) fn new(table: &'t MacroTable) -> Self {
        let mut x = Expander {
            table,
            texts: Vec::new(),
            ids: HashMap::default(),
            bytes: [None; 128],
            slots: Vec::new(),
            heads: HashMap::default(),
            head: Head::Off,
            pos: usize::MAX,
            too_deep: false,
        };
        for t in FIXED {
            x.intern(t);
        }
        x
    }

    /// The table this expander reads.
    pub(crate) fn table(&self) -> &'t MacroTable {
        self.table
    }

    /// From now on, expands the macros in effect at offset `pos` of the
    /// file (at first: the last definition of each). Forgets only what it
    /// resolved for the names defined or undefined between the two offsets.
    pub(crate) fn at(&mut self, pos: usize) {
        if pos == self.pos {
            return;
        }
        for name in self.table.changed_between(self.pos, pos) {
            if let Some(&s) = self.ids.get(name) {
                if let Some(slot) = self.slots.get_mut(s as usize) {
                    *slot = Slot::Unresolved;
                }
                self.heads.remove(&s);
            }
        }
        self.pos = pos;
    }

    /// The offset set by [`Expander::at`].
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// Expands every macro of the table in `text`.
    pub(crate) fn expand(&mut self, text: &str) -> String {
        let mut e = self.expansion(text);
        let mut buf = Vec::new();
        e.fill(&mut buf, usize::MAX);
        // Token texts are whole UTF-8 strings, so their concatenation is one.
        String::from_utf8(buf).unwrap_or_default()
    }

    /// The expansion of `text`, produced on demand by [`Expansion::fill`].
    pub(crate) fn expansion(&mut self, text: &str) -> Expansion<'_, 't> {
        let mut toks = Vec::new();
        self.tokenize(text, &mut toks);
        self.too_deep = false;
        self.head = Head::Off;
        Expansion { x: self, stack: vec![Frame::new(vec![Seg::Own(toks)], 0, None)], hide: Vec::new(), budget: BUDGET }
    }

    /// Like [`Expander::expansion`] of a macro invocation `text`, but the
    /// invoked macro's body is cut after the head of its first function
    /// (its first `{` or `;` outside parentheses) when its arguments name no
    /// macro: brainevent's macros hold whole kernels, and an annotation
    /// wants one head. Up to the cut the text is the whole expansion's, so
    /// what is found there is what the whole expansion would show, if the
    /// budget would not have run out before ([`Expansion::cut_exact`]).
    pub(crate) fn head_expansion(&mut self, text: &str) -> Expansion<'_, 't> {
        let e = self.expansion(text);
        e.x.head = Head::Wanted;
        e
    }

    /// The head-cut form of macro `s` (see [`Expander::head_expansion`]),
    /// made from its definition's text without reading the rest of it.
    fn head_of(&mut self, s: Sym) -> Option<Cut> {
        if let Some(cut) = self.heads.get(&s) {
            return cut.clone();
        }
        let table = self.table;
        let cut = table.get_at(&self.texts[s as usize], self.pos).filter(|m| m.params.is_some()).and_then(|m| {
            let params = m.params.as_ref().map(|ps| ps.iter().map(|p| self.intern(p)).collect());
            let mut body = Vec::new();
            let cut = self.tokenize_head(&m.body, &mut body)?;
            // A `##` right after the cut would paste the `{` or `;` away.
            if m.body[cut..].trim_start().starts_with("##") {
                return None;
            }
            Some(Cut { macro_: Rc::new(Compiled::new(s, params, m.variadic, body)), body_bytes: m.body.len() })
        });
        self.heads.insert(s, cut.clone());
        cut
    }

    fn intern(&mut self, text: &str) -> Sym {
        let byte = match text.as_bytes() {
            &[b] if b.is_ascii() => Some(usize::from(b)),
            _ => None,
        };
        if let Some(s) = byte.and_then(|b| self.bytes[b]) {
            return s;
        }
        if let Some(&s) = self.ids.get(text) {
            return s;
        }
        let s = self.texts.len() as Sym;
        let rc: Rc<str> = Rc::from(text);
        self.texts.push(rc.clone());
        self.ids.insert(rc, s);
        if let Some(b) = byte {
            self.bytes[b] = Some(s);
        }
        s
    }

    fn text(&self, s: Sym) -> &str {
        &self.texts[s as usize]
    }

    /// The macro `s` names, if any.
    fn lookup(&mut self, s: Sym) -> Option<Rc<Compiled>> {
        let k = s as usize;
        if self.slots.len() <= k {
            self.slots.resize(self.texts.len().max(k + 1), Slot::Unresolved);
        }
        match &self.slots[k] {
            Slot::Plain => return None,
            Slot::Macro(m) => return Some(m.clone()),
            Slot::Unresolved => {}
        }
        let table = self.table;
        let slot = match table.get_at(&self.texts[k], self.pos) {
            None => Slot::Plain,
            Some(m) => {
                let params = m.params.as_ref().map(|ps| ps.iter().map(|p| self.intern(p)).collect());
                let mut body = Vec::new();
                self.tokenize(&m.body, &mut body);
                let name = self.intern(&m.name);
                Slot::Macro(Rc::new(Compiled::new(name, params, m.variadic, body)))
            }
        };
        self.slots[k] = slot.clone();
        match slot {
            Slot::Macro(m) => Some(m),
            _ => None,
        }
    }

    /// Splits text into preprocessing tokens, appended to `out`.
    fn tokenize(&mut self, s: &str, out: &mut Vec<Tok>) {
        self.tokens::<false>(s, out);
    }

    /// Like [`Expander::tokenize`], up to and with the first `{` or `;`
    /// outside parentheses; returns the offset after it, `None` when there
    /// is none (then `out` holds every token).
    fn tokenize_head(&mut self, s: &str, out: &mut Vec<Tok>) -> Option<usize> {
        self.tokens::<true>(s, out)
    }

    fn tokens<const HEAD: bool>(&mut self, s: &str, out: &mut Vec<Tok>) -> Option<usize> {
        let mut depth = 0usize;
        let b = s.as_bytes();
        let mut i = 0;
        let mut space = false;
        while i < b.len() {
            let c = b[i];
            if c.is_ascii_whitespace() {
                space = true;
                i += 1;
                // Macro bodies are padded to their line continuations with
                // runs of spaces: skip those eight at a time.
                while let Some(chunk) = b.get(i..i + 8)
                    && chunk == b"        "
                {
                    i += 8;
                }
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
            } else if b[i..].starts_with(b"##") {
                i += 2;
                Kind::Paste
            } else if b[i..].starts_with(b"::") || b[i..].starts_with(b"...") {
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
            let sym = self.intern(&s[start..i]);
            out.push(Tok { sym, kind, space_before: space });
            space = false;
            if HEAD && kind == Kind::Punct {
                match b[start] {
                    b'(' => depth += 1,
                    b')' => depth = depth.saturating_sub(1),
                    b'{' | b';' if depth == 0 && i == start + 1 => return Some(i),
                    _ => {}
                }
            }
        }
        None
    }

    fn render(&self, toks: &[Tok], out: &mut String) {
        for t in toks {
            if t.kind == Kind::Placemarker {
                continue;
            }
            if t.space_before && !out.is_empty() {
                out.push(' ');
            }
            out.push_str(self.text(t.sym));
        }
    }

    /// The next token of the expansion on `stack`, or `None` at its end.
    fn next_tok(&mut self, stack: &mut Vec<Frame>, hide: &mut Vec<Sym>, budget: &mut usize) -> Option<Tok> {
        loop {
            let f = stack.last_mut()?;
            let Some(t) = f.peek() else {
                if f.hides {
                    hide.pop();
                }
                stack.pop();
                continue;
            };
            if *budget == 0 || f.depth > MAX_DEPTH {
                if *budget > 0 && t.kind == Kind::Ident && !hide.contains(&t.sym) && self.lookup(t.sym).is_some() {
                    self.too_deep = true;
                }
                let f = stack.last_mut()?;
                f.advance();
                return Some(t);
            }
            let cut = if f.depth == 0 && self.head == Head::Wanted && t.kind == Kind::Ident && !hide.contains(&t.sym) {
                self.head_of(t.sym)
            } else {
                None
            };
            if let Some(cut) = cut
                && let Some((args, after)) = stack.last().and_then(Frame::gather_args)
                && args.iter().flatten().all(|a| a.kind != Kind::Ident || self.lookup(a.sym).is_none())
            {
                // Arguments naming no macro are substituted as they are,
                // spending nothing: the whole list, before rescanning, holds
                // at most a token per byte of the body, each parameter
                // replaced by its longest argument.
                let longest = args.iter().map(Vec::len).max().unwrap_or(0);
                self.head = Head::Cut { bound: cut.body_bytes.saturating_mul(longest + 1).saturating_add(1) };
                let f = stack.last_mut()?;
                f.seek(after);
                let segs = self.replace(&cut.macro_, Some(&args), hide, 0, budget);
                let len: usize = segs.iter().map(|s| s.toks().len()).sum();
                *budget = budget.saturating_sub(len);
                hide.push(cut.macro_.name);
                stack.push(Frame::new(segs, 1, Some(t.space_before)));
                continue;
            }
            let f = stack.last_mut()?;
            if f.depth == 0 && self.head == Head::Wanted {
                self.head = Head::Off;
            }
            let m = if t.kind == Kind::Ident && !hide.contains(&t.sym) { self.lookup(t.sym) } else { None };
            let Some(m) = m else {
                f.advance();
                return Some(t);
            };
            let depth = f.depth;
            let args = match &m.params {
                None => {
                    f.advance();
                    None
                }
                Some(_) => match f.gather_args() {
                    Some((args, after)) => {
                        f.seek(after);
                        Some(args)
                    }
                    None => {
                        f.advance();
                        return Some(t);
                    }
                },
            };
            let segs = self.replace(&m, args.as_deref(), hide, depth, budget);
            let len: usize = segs.iter().map(|s| s.toks().len()).sum();
            *budget = budget.saturating_sub(len);
            hide.push(m.name);
            stack.push(Frame::new(segs, depth + 1, Some(t.space_before)));
        }
    }

    /// An invocation's replacement list, before rescanning: the active runs
    /// of the body substituted and pasted now (in order, so argument
    /// expansion spends the budget as a whole-body pass would), the others
    /// left in the body to be read when the rescan gets there.
    fn replace(
        &mut self,
        m: &Rc<Compiled>,
        args: Option<&[Vec<Tok>]>,
        hide: &mut Vec<Sym>,
        depth: usize,
        budget: &mut usize,
    ) -> Vec<Seg> {
        let mut segs = Vec::with_capacity(m.runs.len());
        for &(a, b, active) in &m.runs {
            if !active {
                segs.push(Seg::Body(m.clone(), a, b));
                continue;
            }
            let toks = match (args, &m.params) {
                (Some(args), Some(params)) => self.substitute(m, params, args, a..b, hide, depth, budget),
                _ => m.body[a..b].to_vec(),
            };
            segs.push(Seg::Own(self.paste(toks)));
        }
        segs
    }

    /// Expands `toks` completely (a macro argument before substitution).
    fn expand_all(&mut self, toks: &[Tok], hide: &mut Vec<Sym>, depth: usize, budget: &mut usize) -> Vec<Tok> {
        // Most arguments name no macro: they expand to themselves, spending
        // nothing (what the rescan below would find, token by token).
        if toks.iter().all(|t| t.kind != Kind::Ident || hide.contains(&t.sym) || self.lookup(t.sym).is_none()) {
            return toks.to_vec();
        }
        let mut out = Vec::with_capacity(toks.len());
        let mut stack = vec![Frame::new(vec![Seg::Own(toks.to_vec())], depth, None)];
        while let Some(t) = self.next_tok(&mut stack, hide, budget) {
            out.push(t);
        }
        out
    }

    /// Substitutes the arguments into `m.body[range]`.
    #[allow(clippy::too_many_arguments)]
    fn substitute(
        &mut self,
        m: &Compiled,
        params: &[Sym],
        args: &[Vec<Tok>],
        range: std::ops::Range<usize>,
        hide: &mut Vec<Sym>,
        depth: usize,
        budget: &mut usize,
    ) -> Vec<Tok> {
        let arg_of = |s: Sym| -> Option<Cow<[Tok]>> {
            if let Some(k) = params.iter().position(|p| *p == s) {
                return Some(Cow::Borrowed(args.get(k).map_or(&[], Vec::as_slice)));
            }
            if m.variadic && s == VA_ARGS {
                let rest = args.get(params.len()..).unwrap_or_default();
                let mut joined = Vec::new();
                for (k, a) in rest.iter().enumerate() {
                    if k > 0 {
                        joined.push(Tok { sym: COMMA, kind: Kind::Punct, space_before: false });
                    }
                    joined.extend_from_slice(a);
                }
                return Some(Cow::Owned(joined));
            }
            None
        };
        let body = &m.body;
        let mut out = Vec::with_capacity(range.len());
        let mut k = range.start;
        while k < range.end {
            let t = body[k];
            // C++20's `__VA_OPT__(x)`: `x` when the variadic arguments hold
            // any token, else nothing.
            if m.variadic
                && t.sym == VA_OPT
                && body.get(k + 1).is_some_and(|n| n.sym == LPAREN)
                && let Some(j) = closing(body, k + 1, range.end)
            {
                let any = args.get(params.len()..).unwrap_or_default().iter().any(|a| !a.is_empty());
                if any {
                    out.extend(self.substitute(m, params, args, k + 2..j, hide, depth, budget));
                }
                k = j + 1;
                continue;
            }
            if t.sym == HASH
                && t.kind == Kind::Punct
                && let Some(arg) = body.get(k + 1).and_then(|n| arg_of(n.sym))
            {
                let mut text = String::new();
                self.render(&arg, &mut text);
                let sym = self.intern(&stringized(&text));
                out.push(Tok { sym, kind: Kind::Punct, space_before: t.space_before });
                k += 2;
                continue;
            }
            match arg_of(t.sym).filter(|_| t.kind == Kind::Ident) {
                Some(arg) => {
                    let near_paste = body.get(k + 1).is_some_and(|n| n.kind == Kind::Paste)
                        || (k > 0 && body[k - 1].kind == Kind::Paste);
                    let mut toks =
                        if near_paste { arg.into_owned() } else { self.expand_all(&arg, hide, depth + 1, budget) };
                    if toks.is_empty() && near_paste {
                        toks.push(Tok::placemarker(false));
                    }
                    if let Some(first) = toks.first_mut() {
                        first.space_before = t.space_before;
                    }
                    out.extend(toks);
                }
                None => out.push(t),
            }
            k += 1;
        }
        out
    }

    /// Applies the body's `##` operators.
    fn paste(&mut self, toks: Vec<Tok>) -> Vec<Tok> {
        if !toks.iter().any(|t| t.kind == Kind::Paste) {
            return toks;
        }
        let mut out: Vec<Tok> = Vec::with_capacity(toks.len());
        let mut iter = toks.into_iter();
        let mut text = String::new();
        let mut pasted = Vec::new();
        while let Some(t) = iter.next() {
            if t.kind != Kind::Paste {
                out.push(t);
                continue;
            }
            let left = out.pop();
            let right = iter.next();
            text.clear();
            for side in [left, right].into_iter().flatten() {
                text.push_str(&self.texts[side.sym as usize]);
            }
            let space = left.is_some_and(|l| l.space_before);
            pasted.clear();
            self.tokenize(&text, &mut pasted);
            for p in &mut pasted {
                if p.kind == Kind::Paste {
                    p.kind = Kind::Punct;
                }
                p.space_before = false;
            }
            match pasted.first_mut() {
                Some(first) => first.space_before = space,
                None => pasted.push(Tok::placemarker(space)),
            }
            out.append(&mut pasted);
        }
        out
    }
}

/// `text` as a string literal (the `#` operator): in quotes, with each `\`
/// and `"` escaped.
fn stringized(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if c == '\\' || c == '"' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// A piece of a replacement list.
enum Seg {
    /// Tokens of a macro body, copied as they are.
    Body(Rc<Compiled>, usize, usize),
    Own(Vec<Tok>),
}

impl Seg {
    fn toks(&self) -> &[Tok] {
        match self {
            Seg::Body(m, a, b) => &m.body[*a..*b],
            Seg::Own(v) => v,
        }
    }
}

/// A position in a frame: a piece and an index in it.
type Pos = (usize, usize);

/// A token list being rescanned, read from its pieces in order.
struct Frame {
    segs: Vec<Seg>,
    /// The position of the next token.
    at: Pos,
    depth: usize,
    /// Whether finishing the frame un-hides a macro name.
    hides: bool,
    /// The spacing of the invocation, for the list's first token.
    first_space: Option<bool>,
}

impl Frame {
    fn new(segs: Vec<Seg>, depth: usize, first_space: Option<bool>) -> Self {
        Frame { segs, at: (0, 0), depth, hides: first_space.is_some(), first_space }
    }

    /// The next token, if any.
    fn peek(&mut self) -> Option<Tok> {
        let (s, i) = next_pos(&self.segs, self.at)?;
        self.at = (s, i);
        let mut t = self.segs[s].toks()[i];
        if let Some(space) = self.first_space {
            t.space_before = space;
        }
        Some(t)
    }

    /// Moves past the token `peek` returned.
    fn advance(&mut self) {
        self.at.1 += 1;
        self.first_space = None;
    }

    fn seek(&mut self, at: Pos) {
        self.at = at;
        self.first_space = None;
    }

    /// The arguments of the invocation whose name `peek` returned (its `(`
    /// must come next), and the position after its `)`.
    fn gather_args(&self) -> Option<(Vec<Vec<Tok>>, Pos)> {
        let mut at = (self.at.0, self.at.1 + 1);
        let mut tok = || {
            let (s, i) = next_pos(&self.segs, at)?;
            at = (s, i + 1);
            Some((self.segs[s].toks()[i], at))
        };
        if tok()?.0.sym != LPAREN {
            return None;
        }
        let mut args = vec![Vec::new()];
        let mut depth = 0usize;
        while let Some((t, after)) = tok() {
            match t.sym {
                LPAREN => depth += 1,
                RPAREN if depth == 0 => return Some((args, after)),
                RPAREN => depth -= 1,
                COMMA if depth == 0 => {
                    args.push(Vec::new());
                    continue;
                }
                _ => {}
            }
            if let Some(last) = args.last_mut() {
                last.push(t);
            }
        }
        None
    }
}

/// The first token position at or after `at`, skipping exhausted pieces.
fn next_pos(segs: &[Seg], (mut s, mut i): Pos) -> Option<Pos> {
    while i >= segs.get(s)?.toks().len() {
        s += 1;
        i = 0;
    }
    Some((s, i))
}

/// The text of one expansion, produced in order on demand.
pub(crate) struct Expansion<'x, 't> {
    x: &'x mut Expander<'t>,
    stack: Vec<Frame>,
    hide: Vec<Sym>,
    budget: usize,
}

impl Expansion<'_, '_> {
    /// Appends the expansion's next tokens to `buf` until it holds at least
    /// `len` bytes or the expansion ends. `buf` must hold exactly what
    /// earlier calls appended.
    pub(crate) fn fill(&mut self, buf: &mut Vec<u8>, len: usize) {
        while buf.len() < len {
            let Some(t) = self.x.next_tok(&mut self.stack, &mut self.hide, &mut self.budget) else { return };
            if t.kind == Kind::Placemarker {
                continue;
            }
            if t.space_before && !buf.is_empty() {
                buf.push(b' ');
            }
            buf.extend_from_slice(self.x.text(t.sym).as_bytes());
        }
    }

    /// Whether the whole expansion has been produced.
    pub(crate) fn is_done(&self) -> bool {
        self.stack.is_empty()
    }

    /// Whether the token budget ran out: the rest was copied unexpanded, so
    /// the text is not what the preprocessor would make.
    pub(crate) fn exhausted(&self) -> bool {
        self.budget == 0
    }

    /// Whether a macro was left unexpanded because the nesting reached
    /// the depth limit.
    pub(crate) fn too_deep(&self) -> bool {
        self.x.too_deep
    }

    /// Whether the outermost invocation was cut after its head
    /// ([`Expander::head_expansion`]).
    pub(crate) fn is_cut(&self) -> bool {
        matches!(self.x.head, Head::Cut { .. })
    }

    /// Whether the text produced so far is the whole expansion's: nothing
    /// was cut, or no limit was met and the whole replacement list would
    /// have left the budget what the text produced needed.
    pub(crate) fn cut_exact(&self) -> bool {
        match self.x.head {
            Head::Cut { bound } => self.limit().is_none() && (BUDGET - self.budget).saturating_add(bound) < BUDGET,
            Head::Off | Head::Wanted => true,
        }
    }
}

impl Expansion<'_, '_> {
    /// The limit this expansion hit, if any.
    pub(crate) fn limit(&self) -> Option<Limit> {
        if self.exhausted() {
            Some(Limit::Tokens(BUDGET))
        } else if self.too_deep() {
            Some(Limit::Depth(MAX_DEPTH))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod head_tests {
    use crate::parse::expand::{BUDGET, Expander};
    use crate::parse::macros::table_of as table;

    fn text(mut e: super::Expansion) -> (String, bool, bool) {
        let mut buf = Vec::new();
        e.fill(&mut buf, usize::MAX);
        (String::from_utf8(buf).unwrap(), e.is_cut(), e.cut_exact())
    }

    #[test]
    fn a_head_expansion_is_the_whole_ones_start() {
        let t = table(
            "#define N(x) x\n#define F(S, T) void f##S(T (*g)(int), N(T) x) { T y[2] = {0}; g(y); } void h##S(T z);\n",
        );
        let mut x = Expander::new(&t);
        let whole = x.expand("F(_a, float)");
        let (head, cut, exact) = text(x.head_expansion("F(_a, float)"));
        assert_eq!(head, "void f_a(float (*g)(int), float x) {");
        assert!(whole.starts_with(&head) && whole.len() > head.len());
        assert!(cut && exact);
    }

    #[test]
    fn what_a_cut_cannot_show_is_expanded_whole() {
        let t = table(
            "#define M float\n#define F(S, T) void f##S(T x) { } void g##S();\n#define P(S) void p##S() { ## }\n",
        );
        let mut x = Expander::new(&t);
        // An argument naming a macro: its expansion spends the budget.
        let (_, cut, exact) = text(x.head_expansion("F(_a, M)"));
        assert!(!cut && exact);
        // A `##` after the cut.
        let (_, cut, _) = text(x.head_expansion("P(_a)"));
        assert!(!cut);
        // Not an invocation.
        let (whole, cut, _) = text(x.head_expansion("void q(int);"));
        assert!(!cut && whole == "void q(int);");
    }

    #[test]
    fn a_cut_whose_whole_list_could_spend_the_budget_is_not_exact() {
        let t = table(&format!("#define F(S, T) void f##S(T x) {{ {} }}\n", "T ".repeat(500)));
        let mut x = Expander::new(&t);
        let (_, cut, exact) = text(x.head_expansion("F(_a, int)"));
        assert!(cut && exact);
        let long = "int ".repeat(BUDGET / 1000);
        let (_, cut, exact) = text(x.head_expansion(&format!("F(_a, {long})")));
        assert!(cut && !exact);
    }
}

#[cfg(test)]
mod examples {
    #[test]
    fn expander() {
        use crate::parse::expand::Expander;
        use crate::parse::macros::{MacroTable, collect};
        let src = b"#define F(S, T) void f##S(T x) { T y; }\n";
        let mut table = MacroTable::default();
        for m in collect(src, src, "a.cu").defines {
            table.insert(m);
        }
        let mut x = Expander::new(&table);
        assert_eq!(x.expand("F(_f32, float)"), "void f_f32(float x) { float y; }");
        // Lazily: only as much text as asked for (whole tokens, so maybe more).
        let mut e = x.expansion("F(_f32, float)");
        let mut buf = Vec::new();
        e.fill(&mut buf, 4);
        assert!(buf.starts_with(b"void") && !e.is_done());
    }
}
