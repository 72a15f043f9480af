//! Stage 1, scan: walk the kernel directory, read every source and header,
//! find the annotations, and drive `parse` and `check` for each. The result
//! ([`Scan`]) holds the checked functions and every diagnostic; one bad file
//! or function never stops the scan.

pub mod config;
pub mod lex;
mod par;
pub mod report;
pub mod source;
pub mod walk;

use std::collections::{hash_map, BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::check::{self, Candidate, Loc};
use crate::config::{Config, SourceSpec};
use crate::diag::{messages as msg, Diagnostic, Severity};
use crate::model::{self, FunctionOptions, Platform};
use crate::parse::annotation::{classify, Comment, Word};
use crate::parse::expand::{Expander, FxBuildHasher};
use crate::parse::macros::{self, Directives, MacroTable, Step};
use crate::parse::signature::SignatureParser;
use crate::parse::item::{self, ScopeKind};
use crate::parse::{self, LocateError, Span};
use crate::Error;
use config::ConfigText;
use source::SourceText;
use walk::{Entry, Kind};

/// Everything a scan found.
#[derive(Debug, Clone)]
pub struct Scan {
    pub root: PathBuf,
    pub config: Config,
    /// Checked functions without errors, sorted by (file, line).
    pub functions: Vec<model::Function>,
    /// Every source file under the root, sorted by `file`.
    pub sources: Vec<model::SourceFile>,
    pub diagnostics: Vec<Diagnostic>,
    /// Every file read (sources, headers, begen.yaml), for
    /// `cargo:rerun-if-changed`.
    pub files_read: Vec<PathBuf>,
}

impl Scan {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Scans the kernel directory `root`.
///
/// ```no_run
/// let scan = begen::scan::scan(std::path::Path::new("kernels")).unwrap();
/// for f in &scan.functions {
///     println!("{} {:?}", f.name, f.arg_spec());
/// }
/// ```
pub fn scan(root: &Path) -> Result<Scan, Error> {
    let (entries, mut diags) = walk::walk(root)?;
    let (config, config_text, config_diags) = config::load(root);
    let ct = config_text.as_ref();
    diags.extend(config_diags);
    let mut files_read = BTreeSet::new();
    if let Some(ct) = ct {
        files_read.insert(ct.path.clone());
    }
    let by_file = config_sources(&config, ct, &entries, &mut diags);
    // Files are independent but for the headers they share: read and lex
    // them in parallel, resolve includes in file order (so the first to read
    // a header reports it), then find and check the functions in parallel.
    // Each file keeps its diagnostics in the order one pass would make them.
    let mut files: Vec<FileScan> =
        entries.iter().map(|e| FileScan::new(e, by_file.get(e.file.as_str()).copied())).collect();
    let threads = par::threads();
    par::for_each(&mut files, threads, || (), |_, f| f.read());
    let mut headers = Headers {
        root,
        include_dirs: config.include_dirs.iter().map(|d| root.join(d)).collect(),
        cache: HashMap::new(),
        files_read: Vec::new(),
    };
    for f in &mut files {
        headers.resolve(f);
    }
    par::for_each(&mut files, threads, SignatureParser::new, |parser, f| f.check(parser, ct));
    // A name exported twice is an error at every repeat, and none of its
    // functions is kept. Found in order here; the diagnostics are made
    // (and what is not kept is freed) by each file's thread.
    let repeats = repeated_names(&files);
    for (f, (repeats, keep)) in files.iter_mut().zip(repeats) {
        f.repeats = repeats;
        f.keep = keep;
    }
    let keep_names = !config.functions.is_empty();
    par::for_each(&mut files, threads, || (), |_, f| f.finish(keep_names));
    let (mut functions, mut names, mut repeated) = (Vec::new(), Vec::new(), Vec::new());
    for f in files {
        files_read.insert(f.entry.path.clone());
        diags.extend(f.diags);
        repeated.extend(f.repeat_diags);
        functions.extend(f.functions);
        names.extend(f.names);
    }
    diags.extend(repeated);
    files_read.extend(headers.files_read);
    apply_options(&config, ct, &names, &mut functions, &mut diags);
    functions.sort_by(|a, b| (&a.file, a.line, &a.name).cmp(&(&b.file, b.line, &b.name)));
    diags.sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
    let sources = entries
        .iter()
        .filter_map(|e| match e.kind {
            Kind::Source(platform) => Some(model::SourceFile { file: e.file.clone(), path: e.path.clone(), platform }),
            Kind::Header => None,
        })
        .collect();
    Ok(Scan {
        root: root.to_path_buf(),
        config,
        functions,
        sources,
        diagnostics: diags,
        files_read: files_read.into_iter().collect(),
    })
}

/// One file on its way through the scan.
struct FileScan<'a> {
    entry: &'a Entry,
    /// Its begen.yaml `sources:` entry and that entry's line.
    spec: Option<(&'a SourceSpec, usize)>,
    diags: Vec<Diagnostic>,
    /// What `read` leaves for `check`: only sources with functions to find.
    work: Option<Work>,
    /// Every candidate's outcome, in file order.
    exported: Vec<Exported>,
    /// Which of `exported` repeat a name exported before (the index, and
    /// where the first is), and which to keep (whose name is exported once).
    repeats: Repeats,
    keep: Vec<bool>,
    /// Made by `finish`.
    repeat_diags: Vec<Diagnostic>,
    functions: Vec<model::Function>,
    names: Vec<String>,
}

/// What is left of a checked candidate: its name, where that was written,
/// and the function when it checked out.
struct Exported {
    name: String,
    name_loc: Loc,
    func: Option<model::Function>,
}

struct Work {
    src: SourceText,
    /// The lexer's code view of `src`.
    code: Vec<u8>,
    platform: Platform,
    /// Each annotation's name, tokens and the end of its comment.
    annotations: Vec<(Word, Vec<Word>, usize)>,
    /// The file's own directives, until `Headers::resolve` makes the table.
    own: Directives,
    table: MacroTable,
}

impl<'a> FileScan<'a> {
    fn new(entry: &'a Entry, spec: Option<(&'a SourceSpec, usize)>) -> Self {
        FileScan {
            entry,
            spec,
            diags: Vec::new(),
            work: None,
            exported: Vec::new(),
            repeats: Vec::new(),
            keep: Vec::new(),
            repeat_diags: Vec::new(),
            functions: Vec::new(),
            names: Vec::new(),
        }
    }

    /// Reads and lexes the file and finds its annotations.
    fn read(&mut self) {
        let entry = self.entry;
        let Some(src) = read_source(entry, &mut self.diags) else { return };
        let lexed = lex::lex(&src.bytes);
        let mut annotations = Vec::new();
        for c in &lexed.comments {
            match classify(&src.bytes, c) {
                Comment::Plain => {}
                Comment::LookAlike { word } => {
                    let span = Span::new(word.offset, word.offset + word.text.len());
                    self.diags.push(src.warning(span, msg::lookalike(&word.text)));
                }
                Comment::Annotation { at, name: None, .. } => {
                    self.diags.push(src.error(Span::new(at, at + 3), msg::ANNOTATION_WITHOUT_NAME));
                }
                Comment::Annotation { name: Some(name), tokens, .. } => annotations.push((name, tokens, c.end)),
            }
        }
        let platform = match entry.kind {
            Kind::Source(p) => p,
            Kind::Header => {
                for (name, _, _) in &annotations {
                    let span = Span::new(name.offset, name.offset + name.text.len());
                    self.diags.push(src.warning(span, msg::annotation_in_header(&name.text)).hint(msg::HINT_HEADER));
                }
                return;
            }
        };
        if annotations.is_empty() && self.spec.is_none() {
            return;
        }
        let own = macros::collect(&src.bytes, &lexed.code, &src.file);
        let mut code = lexed.code;
        if !own.skipped.is_empty() {
            for &(from, to) in &own.skipped {
                for b in &mut code[from..to] {
                    if *b != b'\n' {
                        *b = b' ';
                    }
                }
            }
            let off = |at: usize| own.skipped.iter().any(|&(from, to)| from <= at && at < to);
            annotations.retain(|(name, _, _)| {
                if off(name.offset) {
                    let span = Span::new(name.offset, name.offset + name.text.len());
                    self.diags.push(src.warning(span, msg::ANNOTATION_IN_IF0));
                }
                !off(name.offset)
            });
        }
        self.work = Some(Work { src, code, platform, annotations, own, table: MacroTable::default() });
    }

    /// Locates and checks the file's functions: annotated, then begen.yaml's.
    fn check(&mut self, parser: &mut SignatureParser, ct: Option<&ConfigText>) {
        let Some(w) = self.work.take() else { return };
        let src = &w.src;
        let mut x = Expander::new(&w.table);
        let offsets: Vec<usize> = w.annotations.iter().map(|(name, _, _)| name.offset).collect();
        let scopes = item::scopes_at(&w.code, &offsets);
        for ((name, tokens, end), scopes) in w.annotations.iter().zip(scopes) {
            let loc_of = |w: &Word| src.loc(Span::new(w.offset, w.offset + w.text.len()));
            let tokens = (!tokens.is_empty()).then(|| tokens.iter().map(|t| (t.text.clone(), loc_of(t))).collect());
            let signature = parse::locate(parser, &w.code, *end, &name.text, &mut x);
            let candidate = Candidate { name: name.text.clone(), name_loc: loc_of(name), tokens, signature, platform: w.platform };
            match enclosing_scope(&scopes) {
                None => self.check_candidate(candidate, src),
                Some(kind) => {
                    let text = match kind {
                        ScopeKind::Namespace(ns) => msg::in_namespace(&name.text, ns),
                        _ => msg::not_at_file_scope(&name.text),
                    };
                    self.diags.push(candidate.name_loc.error(text).hint(msg::HINT_GLOBAL_SCOPE));
                    self.exported.push(Exported { name: candidate.name, name_loc: candidate.name_loc, func: None });
                }
            }
        }
        if let (Some((spec, line)), Some(ct)) = (self.spec, ct) {
            let entries: Vec<(String, Option<Vec<String>>)> = match spec {
                SourceSpec::Dict(d) => d.iter().map(|(k, v)| (k.clone(), Some(v.clone()))).collect(),
                SourceSpec::List(l) => l.iter().map(|k| (k.clone(), None)).collect(),
            };
            for (name, tokens) in entries {
                let name_loc = ct.loc(&name, line);
                let tokens = tokens.map(|t| t.into_iter().map(|t| (t, name_loc.clone())).collect());
                let signature = if check::is_cpp_identifier(&name) {
                    parse::find_definition(parser, &w.code, &name, &mut x)
                } else {
                    Err(LocateError::NotFound)
                };
                self.check_candidate(Candidate { name, name_loc, tokens, signature, platform: w.platform }, src);
            }
        }
    }

    /// Reports the repeated names and keeps the functions to export (and
    /// every name, with `keep_names`).
    fn finish(&mut self, keep_names: bool) {
        for (k, first) in &self.repeats {
            let e = &self.exported[*k];
            let d = e.name_loc.error(msg::duplicate_function(&e.name, first)).hint(msg::HINT_DUPLICATE);
            self.repeat_diags.push(d);
        }
        for (e, keep) in self.exported.drain(..).zip(&self.keep) {
            if let Some(func) = e.func.filter(|_| *keep) {
                self.functions.push(func);
            }
            if keep_names {
                self.names.push(e.name);
            }
        }
    }

    fn check_candidate(&mut self, candidate: Candidate, src: &SourceText) {
        let (func, diags) = check::check_candidate(&candidate, src);
        self.diags.extend(diags);
        self.exported.push(Exported { name: candidate.name, name_loc: candidate.name_loc, func });
    }
}

/// Reads a file, reporting unreadable, binary, non-UTF-8 and empty ones.
fn read_source(entry: &Entry, diags: &mut Vec<Diagnostic>) -> Option<SourceText> {
    let bytes = match std::fs::read(&entry.path) {
        Ok(b) => b,
        Err(e) => {
            diags.push(Diagnostic::error(entry.file.clone(), entry.path.clone(), msg::unreadable(&e.to_string())));
            return None;
        }
    };
    let text = SourceText::new(entry.file.clone(), entry.path.clone(), bytes);
    if text.bytes.contains(&0) {
        diags.push(text.file_diag(Severity::Error, msg::BINARY));
        return None;
    }
    if let Err(e) = std::str::from_utf8(&text.bytes) {
        let at = e.valid_up_to();
        diags.push(text.warning(Span::new(at, at + 1), msg::NOT_UTF8));
    }
    if text.bytes.iter().all(u8::is_ascii_whitespace) && matches!(entry.kind, Kind::Source(_)) {
        diags.push(text.file_diag(Severity::Warning, msg::EMPTY));
    }
    Some(text)
}

/// Local headers, each read once per scan.
struct Headers<'r> {
    root: &'r Path,
    include_dirs: Vec<PathBuf>,
    /// By canonical path; `None`: unreadable.
    cache: HashMap<PathBuf, Option<Rc<Directives>>>,
    files_read: Vec<PathBuf>,
}

impl Headers<'_> {
    /// Makes a file's macro table: its own macros and those of the local
    /// headers it includes (recursively), each from where it is defined (a
    /// header's from its `#include`).
    fn resolve(&mut self, f: &mut FileScan) {
        let Some(w) = &mut f.work else { return };
        let own = std::mem::take(&mut w.own);
        let mut visited = BTreeSet::new();
        let dir = w.src.path.parent().map(Path::to_path_buf).unwrap_or_default();
        // `steps` names the defines in order: each is moved into the table.
        let mut defines = own.defines.into_iter();
        for step in &own.steps {
            match step {
                Step::Define(_) => {
                    if let Some(m) = defines.next() {
                        w.table.define(m.at, m);
                    }
                }
                Step::Undef(name, at) => w.table.undef(*at, name),
                Step::Include(k, at) => self.include(&dir, &own.includes[*k], *at, &mut w.table, &mut visited, &mut f.diags),
            }
        }
    }

    fn include(
        &mut self,
        dir: &Path,
        inc: &str,
        pos: usize,
        table: &mut MacroTable,
        visited: &mut BTreeSet<PathBuf>,
        diags: &mut Vec<Diagnostic>,
    ) {
        let candidates = std::iter::once(dir.join(inc))
            .chain(std::iter::once(self.root.join(inc)))
            .chain(self.include_dirs.iter().map(|d| d.join(inc)));
        let Some(path) = candidates.into_iter().find(|p| p.is_file()) else { return };
        let key = path.canonicalize().unwrap_or_else(|_| path.clone());
        if !visited.insert(key.clone()) {
            return;
        }
        let directives = match self.cache.get(&key) {
            Some(d) => d.clone(),
            None => {
                let d = self.read(&path, diags).map(Rc::new);
                self.cache.insert(key, d.clone());
                d
            }
        };
        let Some(directives) = directives else { return };
        let hdir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        for step in &directives.steps {
            match step {
                Step::Define(k) => table.define(pos, directives.defines[*k].clone()),
                Step::Undef(name, _) => table.undef(pos, name),
                Step::Include(k, _) => self.include(&hdir, &directives.includes[*k], pos, table, visited, diags),
            }
        }
    }

    fn read(&mut self, path: &Path, diags: &mut Vec<Diagnostic>) -> Option<Directives> {
        self.files_read.push(path.to_path_buf());
        let file = walk::relative(self.root, path);
        match std::fs::read(path) {
            Ok(bytes) => {
                let code = lex::lex(&bytes).code;
                Some(macros::collect(&bytes, &code, &file))
            }
            Err(e) => {
                diags.push(Diagnostic::warning(file, path, msg::unreadable(&e.to_string())));
                None
            }
        }
    }
}

/// Indices of a file's candidates whose name an earlier one has, with
/// where that one is (`file:line`).
type Repeats = Vec<(usize, String)>;

/// For each file, the exported names that an earlier candidate (in file
/// order) already has, with where that one is; and which candidates have a
/// name no other has.
fn repeated_names(files: &[FileScan]) -> Vec<(Repeats, Vec<bool>)> {
    let mut first: HashMap<&str, &Loc, FxBuildHasher> = HashMap::default();
    let mut repeated: HashSet<&str, FxBuildHasher> = HashSet::default();
    let mut repeats = Vec::with_capacity(files.len());
    for f in files {
        let mut here = Vec::new();
        for (k, e) in f.exported.iter().enumerate() {
            match first.entry(&e.name) {
                hash_map::Entry::Occupied(o) => {
                    here.push((k, format!("{}:{}", o.get().file, o.get().line)));
                    repeated.insert(&e.name);
                }
                hash_map::Entry::Vacant(v) => {
                    v.insert(&e.name_loc);
                }
            }
        }
        repeats.push(here);
    }
    let keep = files.iter().map(|f| f.exported.iter().map(|e| !repeated.contains(e.name.as_str())).collect());
    repeats.into_iter().zip(keep).collect()
}

/// The innermost of the blocks around an annotation (outermost first) from
/// which the generated wrapper could not call a function by its plain name.
/// `extern "C" { ... }` is the global scope, and an anonymous namespace's
/// members are visible there (the wrapper's translation unit includes the
/// source).
fn enclosing_scope(scopes: &[ScopeKind]) -> Option<&ScopeKind> {
    let transparent = |k: &ScopeKind| matches!(k, ScopeKind::Linkage) || *k == ScopeKind::Namespace(String::new());
    scopes.iter().rfind(|k| !transparent(k))
}

/// Maps begen.yaml's `sources:` to the files it names, reporting names that
/// are not sources under the root. The value carries the key's line.
fn config_sources<'c>(
    config: &'c Config,
    ct: Option<&ConfigText>,
    entries: &[Entry],
    diags: &mut Vec<Diagnostic>,
) -> BTreeMap<&'c str, (&'c SourceSpec, usize)> {
    let mut out = BTreeMap::new();
    let Some(ct) = ct else { return out };
    for (file, spec) in &config.sources {
        let loc = ct.loc(file, 1);
        let known = entries.iter().any(|e| e.file == *file && matches!(e.kind, Kind::Source(_)));
        if known {
            out.insert(file.as_str(), (spec, loc.line));
        } else {
            diags.push(loc.error(msg::config_source_missing(file)));
        }
    }
    out
}

/// Fills `Function::options` from begen.yaml's `functions:`; names that
/// are not exported are errors.
fn apply_options(
    config: &Config,
    ct: Option<&ConfigText>,
    names: &[String],
    functions: &mut [model::Function],
    diags: &mut Vec<Diagnostic>,
) {
    let Some(ct) = ct else { return };
    for (name, opts) in &config.functions {
        if !names.iter().any(|n| n == name) {
            diags.push(ct.loc(name, 1).error(msg::unknown_config_function(name)));
            continue;
        }
        for f in functions.iter_mut().filter(|f| f.name == *name) {
            f.options = FunctionOptions {
                command_buffer: opts.command_buffer.unwrap_or(false),
                vmap_method: opts.vmap().unwrap_or_default(),
            };
        }
    }
}
