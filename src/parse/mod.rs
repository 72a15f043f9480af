//! Stage 2, parse: from each annotation to the signature it annotates. The
//! second half of the annotated-source front end: it turns what `scan`
//! found into [`Declared`] functions for `check`.
//!
//! The annotated item is the next declaration or macro invocation after the
//! annotation. A declaration's text (up to its body) goes straight to the
//! signature parser; a macro invocation is expanded first (`expand`), only
//! as far as the head of the function of the wanted name. Macros come from
//! the file and the local headers it includes (`headers`).

mod expand;
mod headers;
mod item;
pub(crate) mod macros;
mod signature;
mod structs;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use crate::diag::{Diagnostic, messages as msg};
use crate::model::decl::{
    Callee, Creator, CreatorLookup, DeclParam, DeclStruct, Declared, Enclosing, Indirection, Limit, Listed,
    LocateError, Origin, Scanned, Signature, ToScan,
};
use crate::par;
use crate::source::{FileId, SourceFile, SourceMap, Span};
use expand::Expander;
use item::{Item, ScopeKind};
use macros::MacroTable;
use signature::{ParsedSig, SigError, SignatureParser, normalize_type};

pub(crate) use headers::Headers;

/// One scanned source on its way to declarations.
struct FileParse<'a> {
    scanned: Scanned,
    /// The functions begen.yaml's `sources:` names in it.
    listed: &'a [Listed],
    /// begen.yaml's `instantiate:` functions, by the name of the kernel
    /// they are given for.
    creators: &'a BTreeMap<String, Vec<String>>,
    /// Every quoted `#include` names a header of begen's or XLA's that is
    /// not a file of the tree: begen reads every declaration of the user's
    /// that the source can see.
    closed: bool,
    table: MacroTable,
    own: macros::Directives,
    /// The struct definitions of the local headers it includes.
    header_structs: Vec<Arc<Vec<structs::Found>>>,
    diags: Vec<Diagnostic>,
    declared: Vec<Declared>,
    /// Located already: its includes name no file.
    done: bool,
}

/// Reads and scans each of `sources` (each says what it found) and reads
/// the signature of every annotated function found, and of every function
/// begen.yaml's `sources:` names (`listed`, by file). Macros in local
/// headers are resolved through `headers`, which reads a header not yet in
/// `map` into it.
///
/// A file is read, scanned, parsed and freed in one go on a worker thread
/// unless it includes a local header: those are resolved in file order
/// after the scan (so the first file to read a header reports a problem
/// with it), then located. Only the files in flight hold a code view and a
/// macro table, so memory does not grow with the tree beyond its bytes and
/// results; unless `keep_texts`, a source parsed in one go lets go of its
/// bytes too (on its worker, which reuses the memory for the next file).
/// The declarations come back by file, in file order.
///
/// `creators` holds begen.yaml's `instantiate:` functions by the name of
/// the kernel they are given for: each declared kernel of such a name
/// learns what its source declares of them ([`Declared::creators`]).
pub(crate) fn declare<S: ToScan>(
    map: &mut SourceMap,
    sources: &mut [S],
    keep_texts: bool,
    listed: &BTreeMap<FileId, Vec<Listed>>,
    creators: &BTreeMap<String, Vec<String>>,
    headers: &mut Headers,
) -> (Vec<Vec<Declared>>, Vec<Diagnostic>) {
    let threads = par::threads();
    let search = headers.search();
    let mut slots = map.entries_mut();
    let mut files: Vec<(&mut S, &mut SourceFile, Option<FileParse>)> = sources
        .iter_mut()
        .filter_map(|s| {
            let slot = slots.get_mut(s.file().index())?.take()?;
            Some((s, slot, None))
        })
        .collect();
    par::for_each(&mut files, threads, Parser::default, |parser, (source, slot, out)| {
        let Some(scanned) = source.scan(slot) else { return };
        let mut f = FileParse {
            listed: listed.get(&scanned.file).map_or(&[], Vec::as_slice),
            scanned,
            creators,
            closed: false,
            table: MacroTable::default(),
            own: macros::Directives::default(),
            header_structs: Vec::new(),
            diags: Vec::new(),
            declared: Vec::new(),
            done: false,
        };
        f.directives(slot);
        let names_nothing = search.names_nothing(slot, &f.own);
        f.closed = names_nothing && f.own.includes.iter().all(|i| is_support_header(i));
        if names_nothing {
            headers::own_table(std::mem::take(&mut f.own), &mut f.table);
            f.locate(parser.get());
            f.done = true;
            if !keep_texts {
                slot.forget_text();
            }
        }
        *out = Some(f);
    });
    let mut files: Vec<FileParse> = files.into_iter().filter_map(|(_, _, f)| f).collect();
    // Includes are resolved in file order, so the first file to read a
    // header reports a problem with it.
    let mut rest: Vec<&mut FileParse> = files.iter_mut().filter(|f| !f.done).collect();
    for f in &mut rest {
        let own = std::mem::take(&mut f.own);
        headers.resolve(map, f.scanned.file, own, &mut f.table, &mut f.header_structs, &mut f.diags);
    }
    par::for_each(&mut rest, threads, Parser::default, |parser, f| f.locate(parser.get()));
    // The declarations stay in their files' lists (a large tree declares
    // thousands of functions: one more list of them all would be a copy).
    let mut diags = Vec::with_capacity(files.iter().map(|f| f.diags.len()).sum());
    let mut declared = Vec::with_capacity(files.len());
    for f in files {
        diags.extend(f.diags);
        declared.push(f.declared);
    }
    (declared, diags)
}

/// A worker's signature parser, made on its first use (most files of a
/// large tree may need none).
#[derive(Default)]
struct Parser(Option<SignatureParser>);

impl Parser {
    fn get(&mut self) -> &mut SignatureParser {
        self.0.get_or_insert_with(SignatureParser::new)
    }
}

impl FileParse<'_> {
    /// Collects the file's directives and drops the code and annotations of
    /// `#if 0` groups.
    fn directives(&mut self, file: &SourceFile) {
        let s = &mut self.scanned;
        let own = macros::collect(&file.bytes, &s.code, &file.name);
        if !own.skipped.is_empty() {
            for &(from, to) in &own.skipped {
                for b in &mut s.code[from..to] {
                    if *b != b'\n' {
                        *b = b' ';
                    }
                }
            }
            let off = |at: usize| own.skipped.iter().any(|&(from, to)| from <= at && at < to);
            let diags = &mut self.diags;
            s.annotations.retain(|a| {
                if off(a.name_span.start) {
                    diags.push(Diagnostic::warning(a.name_span, msg::ANNOTATION_IN_IF0));
                }
                !off(a.name_span.start)
            });
        }
        self.own = own;
    }

    /// Locates every annotated function, then begen.yaml's, and frees what
    /// only this file needed (on the worker: a large tree has much to free).
    fn locate(&mut self, parser: &mut SignatureParser) {
        self.locate_all(parser);
        self.find_structs(parser);
        self.find_creators(parser);
        self.table = MacroTable::default();
        self.header_structs = Vec::new();
        self.scanned = Scanned { code: Vec::new(), annotations: Vec::new(), ..self.scanned };
    }

    fn locate_all(&mut self, parser: &mut SignatureParser) {
        let s = &self.scanned;
        let id = s.file;
        let mut x = Expander::new(&self.table);
        let offsets: Vec<usize> = s.annotations.iter().map(|a| a.name_span.start).collect();
        let scopes = item::scopes_at(&s.code, &offsets);
        let limits =
            item_limits(&s.code, &s.annotations.iter().map(|a| (a.name_span.start, a.end)).collect::<Vec<_>>());
        self.declared.reserve_exact(s.annotations.len() + self.listed.len());
        for ((a, scopes), (start, limit)) in s.annotations.iter().zip(scopes).zip(limits) {
            let tokens = (!a.tokens.is_empty()).then(|| a.tokens.clone());
            self.declared.push(Declared {
                name: a.name.clone(),
                name_span: a.name_span,
                tokens,
                signature: locate(parser, id, &s.code[..limit], start, &a.name, &mut x),
                platform: s.platform,
                callee: Callee::Source { file: id },
                enclosing: enclosing_scope(&scopes),
                structs: Vec::new(),
                stateful: false,
                creators: Vec::new(),
            });
        }
        for l in self.listed {
            let tokens = l.tokens.as_ref().map(|t| t.iter().map(|t| (t.clone(), l.span)).collect());
            let signature = if crate::model::is_identifier(&l.name) {
                find_definition(parser, id, &s.code, &l.name, &mut x)
            } else {
                Err(LocateError::NotFound)
            };
            self.declared.push(Declared {
                name: l.name.clone(),
                name_span: l.span,
                tokens,
                signature,
                platform: s.platform,
                callee: Callee::Source { file: id },
                enclosing: None,
                structs: Vec::new(),
                stateful: false,
                creators: Vec::new(),
            });
        }
    }
}

impl FileParse<'_> {
    /// Gives each declared function the struct definitions its signature
    /// or tokens may name, found in the file (first) or its headers; each
    /// definition is read once.
    fn find_structs(&mut self, parser: &mut SignatureParser) {
        let wanted: Vec<Vec<String>> = self.declared.iter().map(struct_names).collect();
        if wanted.iter().all(Vec::is_empty) {
            return;
        }
        // Whether a struct of a wanted name is defined at all: if not, which
        // definitions are at file scope (the costly part) does not matter.
        let code = &self.scanned.code;
        let found = structs::candidates(code, self.scanned.file);
        let names: HashSet<&str, par::FxBuildHasher> = wanted.iter().flatten().map(String::as_str).collect();
        let is_wanted = |f: &structs::Found| f.names.iter().any(|(n, _)| names.contains(n.as_str()));
        if !found.iter().chain(self.header_structs.iter().flat_map(|h| h.iter())).any(is_wanted) {
            return;
        }
        let own = structs::at_file_scope(code, found);
        // By name, the file's own definitions first, then its headers' in
        // include order; the first of a name is the one.
        let mut by_name: HashMap<&str, &structs::Found> = HashMap::new();
        for f in own.iter().chain(self.header_structs.iter().flat_map(|h| h.iter())) {
            for (n, _) in &f.names {
                by_name.entry(n.as_str()).or_insert(f);
            }
        }
        let mut read: HashMap<String, Option<DeclStruct>> = HashMap::new();
        for (d, names) in self.declared.iter_mut().zip(wanted) {
            for name in names {
                let s = read.entry(name.clone()).or_insert_with(|| {
                    let mut s = structs::read(by_name.get(name.as_str())?, &name, parser);
                    for m in &mut s.members {
                        m.nested |= by_name.contains_key(m.ty.as_str());
                    }
                    Some(s)
                });
                if let Some(s) = s {
                    d.structs.push(s.clone());
                }
            }
        }
    }
}

impl FileParse<'_> {
    /// Gives each declared kernel that begen.yaml names `instantiate:`
    /// functions for what its source declares of them; each name is looked
    /// up once per file, and only in a file with such a kernel.
    fn find_creators(&mut self, parser: &mut SignatureParser) {
        if self.creators.is_empty() {
            return;
        }
        let mut looked: HashMap<&str, CreatorLookup> = HashMap::new();
        let mut functions: Option<Vec<String>> = None;
        let creators = self.creators;
        for k in 0..self.declared.len() {
            let Some(names) = creators.get(&self.declared[k].name) else { continue };
            for name in names {
                let found = match looked.get(name.as_str()) {
                    Some(found) => found.clone(),
                    None => {
                        let found = self.creator(parser, name, &mut functions);
                        looked.insert(name, found.clone());
                        found
                    }
                };
                self.declared[k].creators.push(Creator { name: name.clone(), found });
            }
        }
    }

    /// What the file declares of the function `name`. It is surely absent
    /// where begen reads all the source sees ([`FileParse::closed`]), the
    /// name is not written in the code and no macro pastes tokens into
    /// names (`##`); it is found where a top-level declaration (or a
    /// function-like macro's invocation) declares it. Anything else (a
    /// declaration in a namespace or class, a variable, a template) is left
    /// to the compiler.
    fn creator(&self, parser: &mut SignatureParser, name: &str, functions: &mut Option<Vec<String>>) -> CreatorLookup {
        let code = &self.scanned.code;
        let file = self.scanned.file;
        if !crate::model::is_identifier(name) {
            return CreatorLookup::Unknown;
        }
        if !contains_word(code, name.as_bytes()) {
            if self.closed && !code.windows(2).any(|w| w == b"##") {
                let declared = functions.get_or_insert_with(|| top_level_functions(parser, file, code));
                return CreatorLookup::Absent { declared: declared.clone() };
            }
            return CreatorLookup::Unknown;
        }
        let mut x = Expander::new(&self.table);
        let found = find_definitions(parser, file, code, name, &mut x);
        if found.is_empty() || found.iter().any(|(sig, _)| sig.template.is_some()) {
            return CreatorLookup::Unknown;
        }
        // Overloads: the one a call without arguments picks, if any. Two
        // such that differ are in branches of an `#if`: which one is
        // compiled is not known here.
        let callable = |(_, r): &&(Signature, Option<usize>)| r.is_none_or(|r| r == 0);
        let mut without = found.iter().filter(callable);
        if let Some((first, _)) = without.next()
            && without.any(|(sig, _)| sig.ret != first.ret)
        {
            return CreatorLookup::Unknown;
        }
        let (sig, required) = found.iter().find(callable).unwrap_or(&found[0]);
        let classes = if declares_alias(code) {
            Vec::new()
        } else {
            let types: Vec<&str> = (self.declared.iter().filter_map(|d| d.signature.as_ref().ok()))
                .flat_map(|s| s.params.iter().map(|p| p.ty.as_str()))
                .chain([sig.ret.as_str()])
                .collect();
            let mut classes: Vec<String> = structs::candidates(code, file)
                .into_iter()
                .flat_map(|f| f.names)
                .map(|(n, _)| n)
                .filter(|n| types.iter().any(|t| contains_word(t.as_bytes(), n.as_bytes())))
                .collect();
            classes.sort();
            classes.dedup();
            classes
        };
        CreatorLookup::Found { at: sig.name_span, ret: sig.ret.clone(), required: *required, classes }
    }
}

/// Whether an `#include "path"` names one of begen's support headers or
/// XLA FFI's API headers: none declares a function of the user's.
fn is_support_header(path: &str) -> bool {
    crate::build::support::HEADERS.iter().any(|(h, _)| *h == path) || path.starts_with("xla/ffi/api/")
}

/// Whether `code` declares a type alias (`typedef`, `using A = ...`).
fn declares_alias(code: &[u8]) -> bool {
    if contains_word(code, b"typedef") {
        return true;
    }
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut from = 0;
    while let Some(k) = memchr::memmem::find(&code[from..], b"using") {
        let at = from + k;
        from = at + 5;
        if at > 0 && is_ident(code[at - 1]) || code.get(from).is_some_and(|b| is_ident(*b)) {
            continue;
        }
        let name = item::skip_spaces(code, from);
        let end = name + code[name..].iter().take_while(|b| is_ident(**b)).count();
        if end > name && &code[name..end] != b"namespace" && code.get(item::skip_spaces(code, end)) == Some(&b'=') {
            return true;
        }
    }
    false
}

/// Every top-level declaration of `wanted` in `code`, directly or through
/// a function-like macro's invocation, with how many arguments a call must
/// pass (`None` through a macro: its parameters' default values are not
/// read).
fn find_definitions(
    parser: &mut SignatureParser,
    file: FileId,
    code: &[u8],
    wanted: &str,
    x: &mut Expander,
) -> Vec<(Signature, Option<usize>)> {
    let macros = x.table();
    let mut out = Vec::new();
    let mut from = 0;
    loop {
        match item::next_item(code, from) {
            Item::End => return out,
            Item::Decl { start, end, next } => {
                if contains_word(&code[start..end], wanted.as_bytes())
                    && let Ok(sig) = parse_decl(parser, file, &code[start..end], start, wanted)
                    && sig.name == wanted
                {
                    let required = sig
                        .params
                        .iter()
                        .filter(|p| !(p.ty == "void" && p.name.is_none() && p.indirection == Indirection::Value))
                        .filter(|p| !code[p.span.start..p.span.end].contains(&b'='))
                        .count();
                    out.push((sig, Some(required)));
                }
                from = next.max(from + 1);
            }
            Item::Call { name, name_end, close, next, .. } => {
                let macro_name = String::from_utf8_lossy(&code[name..name_end]).into_owned();
                if let Some(m) = macros.get_at(&macro_name, name).filter(|m| m.params.is_some()) {
                    x.at(name);
                    let call = String::from_utf8_lossy(&code[name..=close]);
                    if let Ok(sig) = find_in(parser, file, x, &call, wanted, None) {
                        let origin = Origin::Macro { name: macro_name, defined_at: m.origin.clone() };
                        out.push((relocate(sig, Span::new(file, name, close + 1), origin), None));
                    }
                }
                from = next.max(from + 1);
            }
        }
    }
}

/// The names of the functions `code` declares at its top level (for a
/// suggestion), each once, in file order.
fn top_level_functions(parser: &mut SignatureParser, file: FileId, code: &[u8]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut from = 0;
    loop {
        match item::next_item(code, from) {
            Item::End => return out,
            Item::Decl { start, end, next } => {
                if code[start..end].contains(&b'(')
                    && let Ok(sig) = parse_decl(parser, file, &code[start..end], start, "")
                    && !out.contains(&sig.name)
                {
                    out.push(sig.name);
                }
                from = next.max(from + 1);
            }
            Item::Call { next, .. } => from = next.max(from + 1),
        }
    }
}

/// The names a function may use as struct types: identifier parameter
/// types and the types of `attr.<name>:<type>` tokens, each once.
fn struct_names(d: &Declared) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: HashSet<&str, par::FxBuildHasher> = HashSet::default();
    // `struct S p` (C's elaborated form) names `S` too.
    let params =
        d.signature.iter().flat_map(|s| s.params.iter().map(|p| p.ty.strip_prefix("struct ").unwrap_or(&p.ty)));
    let tokens = d.tokens.iter().flatten().filter_map(|(t, _)| {
        let attr = t.strip_prefix("attr.").or_else(|| t.strip_prefix("attrs."))?;
        attr.split_once(':').map(|(_, ty)| ty)
    });
    for ty in params.chain(tokens) {
        if crate::model::is_identifier(ty) && seen.insert(ty) {
            out.push(ty.to_string());
        }
    }
    out
}

/// Where each annotation's item starts, and how far it may reach: up to the
/// next annotation that stands after the item's start (stacked annotations
/// over one macro invocation share the item). Without these, a file of
/// annotations over unclosed declarations (or of bare annotations) makes
/// every search run to the end of the file: quadratic time. `annotations`
/// holds each annotation's start and the end of its comment, in file order.
fn item_limits(code: &[u8], annotations: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let n = annotations.len();
    // Where each annotation's item starts: the first code after its
    // comment, found between it and the next annotation, else the next
    // annotation's item start (computed from the last one back).
    let mut starts = vec![code.len(); n];
    for k in (0..n).rev() {
        let next_at = annotations.get(k + 1).map_or(code.len(), |a| a.0);
        let here = item::skip_trivia(&code[..next_at.max(annotations[k].1)], annotations[k].1);
        starts[k] = if here < next_at || k + 1 == n { here } else { starts[k + 1] };
    }
    starts
        .iter()
        .map(|&start| {
            let later = annotations.partition_point(|a| a.0 <= start);
            (start, annotations.get(later).map_or(code.len(), |a| a.0))
        })
        .collect()
}

/// The innermost of the blocks around an annotation (outermost first) from
/// which the generated wrapper could not call a function by its plain name.
/// `extern "C" { ... }` is the global scope, and an anonymous namespace's
/// members are visible there (the wrapper's translation unit includes the
/// source).
fn enclosing_scope(scopes: &[ScopeKind]) -> Option<Enclosing> {
    let transparent = |k: &ScopeKind| matches!(k, ScopeKind::Linkage) || *k == ScopeKind::Namespace(String::new());
    scopes.iter().rfind(|k| !transparent(k)).map(|k| match k {
        ScopeKind::Namespace(ns) => Enclosing::Namespace(ns.clone()),
        ScopeKind::Linkage | ScopeKind::Other => Enclosing::Other,
    })
}

/// The signature of `wanted`, the item after offset `from` in `code` (the
/// lexer's code view).
fn locate(
    parser: &mut SignatureParser,
    file: FileId,
    code: &[u8],
    from: usize,
    wanted: &str,
    x: &mut Expander,
) -> Result<Signature, LocateError> {
    let macros = x.table();
    match item::next_item(code, from) {
        Item::End => Err(LocateError::NothingFollows),
        Item::Decl { start, end, .. } => {
            x.at(start);
            let direct = match parse_decl(parser, file, &code[start..end], start, wanted) {
                Ok(sig) if sig.name == wanted => return Ok(with_type_macros(sig, x)),
                other => other,
            };
            // The head may name the function through a macro (`#define
            // KNAME scale2` then `void KNAME(...)`, or `void NAMED(scale)(...)`):
            // read it as the preprocessor would.
            let text = String::from_utf8_lossy(&code[start..end]);
            let mut expansion = x.expansion(&text);
            let mut expanded = Vec::new();
            expansion.fill(&mut expanded, usize::MAX);
            let whole = !expansion.exhausted();
            if whole
                && expanded != text.as_bytes()
                && let Ok(sig) = parse_decl(parser, file, &expanded, 0, wanted)
                && sig.name == wanted
            {
                return Ok(relocate(sig, Span::new(file, start, end), Origin::Direct));
            }
            // An object-like macro that defines several functions (`#define
            // TWO void h1(...) {} void h2(...) {}` under stacked
            // annotations): each annotation finds its own, as in a
            // function-like macro's invocation.
            if whole
                && expanded != text.as_bytes()
                && let Ok(sig) = find_in(parser, file, x, &text, wanted, None)
            {
                return Ok(relocate(sig, Span::new(file, start, end), Origin::Direct));
            }
            let sig = direct?;
            Err(LocateError::NameMismatch { found: sig.name, at: sig.name_span })
        }
        Item::Call { name, name_end, open: _, close, next: _ } => {
            let macro_name = String::from_utf8_lossy(&code[name..name_end]).into_owned();
            let at = Span::new(file, name, close + 1);
            x.at(name);
            let Some(m) = macros.get_at(&macro_name, name).filter(|m| m.params.is_some()) else {
                return Err(LocateError::UnknownMacro { name: macro_name, at });
            };
            let origin = m.origin.clone();
            let call = String::from_utf8_lossy(&code[name..=close]);
            let limit = match find_in(parser, file, x, &call, wanted, None) {
                Ok(sig) => return Ok(relocate(sig, at, Origin::Macro { name: macro_name, defined_at: origin })),
                Err(limit) => limit,
            };
            if let Some(limit) = limit {
                return Err(LocateError::MacroLimit { name: macro_name, limit, at });
            }
            let mut found = Vec::new();
            let _ = find_in(parser, file, x, &call, wanted, Some(&mut found));
            Err(LocateError::MacroMismatch { name: macro_name, defined_at: origin, found, at })
        }
    }
}

/// Finds the definition of `wanted` anywhere at the top level of `code`,
/// looking into macro invocations too (for `begen.yaml`'s explicit forms,
/// which name functions without annotating them).
fn find_definition(
    parser: &mut SignatureParser,
    file: FileId,
    code: &[u8],
    wanted: &str,
    x: &mut Expander,
) -> Result<Signature, LocateError> {
    let macros = x.table();
    let mut from = 0;
    loop {
        match item::next_item(code, from) {
            Item::End => return Err(LocateError::NotFound),
            Item::Decl { start, end, next } => {
                if contains_word(&code[start..end], wanted.as_bytes())
                    && let Ok(sig) = parse_decl(parser, file, &code[start..end], start, wanted)
                    && sig.name == wanted
                {
                    x.at(start);
                    return Ok(with_type_macros(sig, x));
                }
                from = next.max(from + 1);
            }
            Item::Call { name, name_end, close, next, .. } => {
                let macro_name = String::from_utf8_lossy(&code[name..name_end]).into_owned();
                if let Some(m) = macros.get_at(&macro_name, name).filter(|m| m.params.is_some()) {
                    x.at(name);
                    let call = String::from_utf8_lossy(&code[name..=close]);
                    if let Ok(sig) = find_in(parser, file, x, &call, wanted, None) {
                        let origin = Origin::Macro { name: macro_name, defined_at: m.origin.clone() };
                        return Ok(relocate(sig, Span::new(file, name, close + 1), origin));
                    }
                }
                from = next.max(from + 1);
            }
        }
    }
}

fn contains_word(hay: &[u8], word: &[u8]) -> bool {
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    !word.is_empty()
        && hay.windows(word.len()).enumerate().any(|(i, w)| {
            w == word && (i == 0 || !is_ident(hay[i - 1])) && hay.get(i + word.len()).is_none_or(|b| !is_ident(*b))
        })
}

/// Searches the items of the expansion of `call` for the function `wanted`:
/// first with the invoked macro cut after its first head
/// ([`Expander::head_expansion`]), then, when that cannot tell, whole.
///
/// The expansion is produced only as far as it takes: up to the `{` or `;`
/// ending the wanted function's head. An item is looked at once the text
/// read so far settles it: more text could not change where it ends. Only
/// declarations that mention `wanted` go to tree-sitter; with `names`, every
/// declaration does, and the names of those that are not `wanted` are
/// collected (for the error when none is).
fn find_in(
    parser: &mut SignatureParser,
    file: FileId,
    x: &mut Expander,
    call: &str,
    wanted: &str,
    names: Option<&mut Vec<String>>,
) -> Result<Signature, Option<Limit>> {
    if names.is_none() && !whole_only() {
        // The invoked macro cut after its first head: enough when the
        // function is the first the macro defines (brainevent's FFI macros).
        let mut exp = x.head_expansion(call);
        let found = search(&mut exp, parser, file, wanted, None);
        if !exp.is_cut() || (found.is_ok() && exp.cut_exact()) {
            return found;
        }
    }
    let mut exp = x.expansion(call);
    search(&mut exp, parser, file, wanted, names)
}

/// Whether [`find_in`] expands macros whole only: a test's way to compare
/// the two searches.
fn whole_only() -> bool {
    #[cfg(test)]
    return tests::WHOLE_ONLY.load(std::sync::atomic::Ordering::SeqCst);
    #[cfg(not(test))]
    false
}

/// [`find_in`]'s search of one expansion.
fn search(
    exp: &mut expand::Expansion,
    parser: &mut SignatureParser,
    file: FileId,
    wanted: &str,
    mut names: Option<&mut Vec<String>>,
) -> Result<Signature, Option<Limit>> {
    let mut text = Vec::new();
    let mut from = 0;
    let mut tried = None;
    loop {
        let (len, done) = (text.len(), exp.is_done());
        match item::next_item(&text, from) {
            Item::End if done => return Err(exp.limit()),
            Item::Decl { start, end, next } if end < len || done => {
                if tried != Some(start) && (names.is_some() || contains_word(&text[start..end], wanted.as_bytes())) {
                    tried = Some(start);
                    if let Ok(sig) = parse_decl(parser, file, &text[start..end], start, wanted) {
                        if sig.name == wanted {
                            return Ok(sig);
                        }
                        if let Some(names) = names.as_deref_mut() {
                            names.push(sig.name);
                        }
                    }
                }
                if next < len || done {
                    from = next.max(from + 1);
                    continue;
                }
            }
            Item::Call { close, next, .. } if item::skip_spaces(&text, close + 1) < len || done => {
                from = next.max(from + 1);
                continue;
            }
            _ => {}
        }
        exp.fill(&mut text, (2 * len).max(256));
    }
}

/// CUDA execution-space keywords tree-sitter does not know; blanked before
/// parsing (same length, so offsets hold).
const CUDA_WORDS: &[&str] = &["__global__", "__device__", "__host__", "__forceinline__", "__inline__", "__noinline__"];

/// Blanks each of [`CUDA_WORDS`] standing alone in `text`; returns those seen.
fn blank_cuda_words(text: &mut std::borrow::Cow<[u8]>) -> Vec<&'static str> {
    let mut seen = Vec::new();
    // All of them start with `_`.
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while let Some(k) = memchr::memchr(b'_', &text[i..]) {
        let at = i + k;
        let end = at + text[at..].iter().take_while(|b| is_word(**b)).count();
        if (at == 0 || !is_word(text[at - 1]))
            && let Some(word) = CUDA_WORDS.iter().find(|w| w.as_bytes() == &text[at..end])
        {
            seen.push(*word);
            text.to_mut()[at..end].fill(b' ');
        }
        i = end;
    }
    seen
}

/// Parses a declaration's text, expected to declare `wanted`; offsets in
/// the result are `base` + offsets in `text`.
fn parse_decl(
    parser: &mut SignatureParser,
    file: FileId,
    text: &[u8],
    base: usize,
    wanted: &str,
) -> Result<Signature, LocateError> {
    let mut text = std::borrow::Cow::Borrowed(text);
    let seen = blank_cuda_words(&mut text);
    let device_only = if seen.contains(&"__global__") {
        Some("__global__")
    } else if seen.contains(&"__device__") && !seen.contains(&"__host__") {
        Some("__device__")
    } else {
        None
    };
    let shift = |s: usize, e: usize| Span::new(file, base + s, base + e);
    let parsed: ParsedSig = parser.parse_named(&text, wanted).map_err(|e| match e {
        SigError::NotAFunction => LocateError::NotAFunction { at: shift(0, text.len().min(80)) },
        SigError::Syntax { start, end } => LocateError::Syntax { at: shift(start, end.min(text.len())) },
    })?;
    let params = parsed
        .params
        .into_iter()
        .map(|raw| DeclParam {
            span: shift(raw.start, raw.end.min(text.len())),
            name: raw.name,
            ty: raw.ty,
            is_const: raw.is_const,
            indirection: raw.indirection,
        })
        .collect();
    Ok(Signature {
        name: parsed.name,
        name_span: shift(parsed.name_start, parsed.name_end),
        params,
        origin: Origin::Direct,
        template: parsed.template,
        variadic: parsed.variadic,
        ret: parsed.ret,
        device_only,
    })
}

/// Points every span of a signature read from a macro expansion at the invocation.
fn relocate(mut sig: Signature, at: Span, origin: Origin) -> Signature {
    sig.name_span = Span::new(at.file, at.start, at.start + (at.end - at.start).min(sig.name.len().max(1)));
    for p in &mut sig.params {
        p.span = at;
    }
    sig.origin = origin;
    sig
}

/// Replaces parameter types that are object-like macros (`#define real_t
/// float`) by their expansion, so inference sees the real type.
fn with_type_macros(mut sig: Signature, x: &mut Expander) -> Signature {
    let macros = x.table();
    for p in &mut sig.params {
        let is_ident = !p.ty.is_empty() && p.ty.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !is_ident || macros.get_at(&p.ty, x.pos()).is_none_or(|m| m.params.is_some()) {
            continue;
        }
        let mut ty = normalize_type(&x.expand(&p.ty));
        if let Some(rest) = ty.strip_prefix("const ") {
            ty = rest.to_string();
            p.is_const = true;
        }
        p.ty = ty;
    }
    sig
}

#[cfg(test)]
mod tests {
    use super::*;
    use macros::MacroTable;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Set while a test compares whole expansions with cut ones; the two
    /// give the same results, so other tests running meanwhile see no
    /// difference.
    pub(super) static WHOLE_ONLY: AtomicBool = AtomicBool::new(false);

    /// Every fixture, example and end-to-end tree (and brainevent's corpus
    /// when the cache holds it) scans alike with macros cut after the
    /// wanted head and expanded whole.
    #[test]
    fn cut_expansions_find_what_whole_ones_do() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut trees: Vec<std::path::PathBuf> = Vec::new();
        for (dir, sub) in [("fixtures", "input"), ("examples", ""), ("tests/e2e", "")] {
            for e in std::fs::read_dir(root.join(dir)).unwrap() {
                let tree = e.unwrap().path().join(sub);
                if tree.is_dir() {
                    trees.push(tree);
                }
            }
        }
        let corpus = root.join(".cache/brainevent-0.3.0/corpus");
        if corpus.is_dir() {
            trees.push(corpus);
        }
        assert!(trees.len() > 60, "{} trees", trees.len());
        let scan = |tree: &std::path::Path| {
            let run = crate::driver::run(&crate::driver::Settings::new(tree)).unwrap();
            (run.to_json(), run.diagnostics.len())
        };
        for tree in &trees {
            let cut = scan(tree);
            WHOLE_ONLY.store(true, Ordering::SeqCst);
            let whole = scan(tree);
            WHOLE_ONLY.store(false, Ordering::SeqCst);
            assert_eq!(cut, whole, "{}", tree.display());
        }
    }

    const F: FileId = FileId::TEST;

    use macros::table_of as table;

    #[test]
    fn direct_and_mismatch() {
        let mut p = SignatureParser::new();
        let code = b"\nvoid f(const BE::Tensor x, BE::Tensor y) { }";
        let t = MacroTable::default();
        let mut x = Expander::new(&t);
        let sig = locate(&mut p, F, code, 0, "f", &mut x).unwrap();
        assert_eq!(sig.params.len(), 2);
        assert!(matches!(locate(&mut p, F, code, 0, "g", &mut x), Err(LocateError::NameMismatch { .. })));
    }

    #[test]
    fn macro_generated_picks_the_named_function() {
        let src = "#define K(S, T) __global__ void kern##S(T* p) {} void entry##S(const BE::Tensor x, BE::Tensor y, T a) { kern##S<<<1,1>>>(0); }\nK(_f, float)\n";
        let t = table(src);
        let mut p = SignatureParser::new();
        let from = src.find('\n').unwrap();
        let mut x = Expander::new(&t);
        let sig = locate(&mut p, F, src.as_bytes(), from, "entry_f", &mut x).unwrap();
        assert_eq!(sig.params[2].ty, "float");
        assert!(matches!(sig.origin, Origin::Macro { .. }));
        let err = locate(&mut p, F, src.as_bytes(), from, "nope", &mut x).unwrap_err();
        let LocateError::MacroMismatch { found, .. } = err else { panic!() };
        assert_eq!(found, vec!["kern_f".to_string(), "entry_f".to_string()]);
    }

    #[test]
    fn definition_anywhere() {
        let src = b"int x;\nnamespace { }\nvoid a(int) {}\nvoid b(BE::Tensor y) {}\n";
        let mut p = SignatureParser::new();
        let t = MacroTable::default();
        let mut x = Expander::new(&t);
        assert_eq!(find_definition(&mut p, F, src, "b", &mut x).unwrap().name, "b");
        assert_eq!(find_definition(&mut p, F, src, "c", &mut x), Err(LocateError::NotFound));
    }
}
