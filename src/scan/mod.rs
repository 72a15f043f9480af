//! Stage 1, scan: walk the kernel directory, read every source and header,
//! find the annotations, and drive `parse` and `check` for each. The result
//! ([`Scan`]) holds the checked functions and every diagnostic; one bad file
//! or function never stops the scan.

pub mod config;
pub mod lex;
pub mod report;
pub mod source;
pub mod walk;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::check::{self, Candidate, Loc};
use crate::config::{Config, SourceSpec};
use crate::diag::{messages as msg, Diagnostic, Severity};
use crate::model::{self, FunctionOptions, Platform};
use crate::parse::annotation::{classify, Comment};
use crate::parse::expand::Expander;
use crate::parse::macros::{self, Directives, MacroTable};
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
    let (entries, walk_diags) = walk::walk(root)?;
    let (config, config_text, config_diags) = config::load(root);
    let mut s = Scanner {
        root: root.to_path_buf(),
        parser: SignatureParser::new(),
        directives: HashMap::new(),
        files_read: BTreeSet::new(),
        diags: walk_diags,
        candidates: Vec::new(),
        include_dirs: config.include_dirs.iter().map(|d| root.join(d)).collect(),
    };
    s.diags.extend(config_diags);
    if let Some(ct) = &config_text {
        s.files_read.insert(ct.path.clone());
    }
    let by_file = config_sources(&config, config_text.as_ref(), &entries, &mut s.diags);
    for entry in &entries {
        let spec = by_file.get(entry.file.as_str()).copied();
        s.scan_entry(entry, spec, config_text.as_ref());
    }
    let mut functions = s.finish_candidates();
    apply_options(&config, config_text.as_ref(), &s.candidates, &mut functions, &mut s.diags);
    functions.sort_by(|a, b| (&a.file, a.line, &a.name).cmp(&(&b.file, b.line, &b.name)));
    s.diags.sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
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
        diagnostics: s.diags,
        files_read: s.files_read.into_iter().collect(),
    })
}

struct Scanner {
    root: PathBuf,
    parser: SignatureParser,
    /// Directives of headers read so far (None: unreadable).
    directives: HashMap<PathBuf, Option<Directives>>,
    files_read: BTreeSet<PathBuf>,
    diags: Vec<Diagnostic>,
    /// Every candidate with its outcome, in scan order.
    candidates: Vec<(Candidate, Option<model::Function>)>,
    include_dirs: Vec<PathBuf>,
}

impl Scanner {
    /// Reads a file, reporting unreadable, binary, non-UTF-8 and empty ones.
    fn read(&mut self, entry: &Entry) -> Option<SourceText> {
        self.files_read.insert(entry.path.clone());
        let bytes = match std::fs::read(&entry.path) {
            Ok(b) => b,
            Err(e) => {
                let d = Diagnostic::error(entry.file.clone(), entry.path.clone(), msg::unreadable(&e.to_string()));
                self.diags.push(d);
                return None;
            }
        };
        let text = SourceText::new(entry.file.clone(), entry.path.clone(), bytes);
        if text.bytes.contains(&0) {
            self.diags.push(text.file_diag(Severity::Error, msg::BINARY));
            return None;
        }
        if let Err(e) = std::str::from_utf8(&text.bytes) {
            let at = e.valid_up_to();
            self.diags.push(text.warning(Span::new(at, at + 1), msg::NOT_UTF8));
        }
        if text.bytes.iter().all(u8::is_ascii_whitespace) && matches!(entry.kind, Kind::Source(_)) {
            self.diags.push(text.file_diag(Severity::Warning, msg::EMPTY));
        }
        Some(text)
    }

    fn scan_entry(&mut self, entry: &Entry, spec: Option<(&SourceSpec, usize)>, ct: Option<&ConfigText>) {
        let Some(src) = self.read(entry) else { return };
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
        if annotations.is_empty() && spec.is_none() {
            return;
        }
        let table = self.macro_table(&src, &lexed.code);
        let mut x = Expander::new(&table);
        let offsets: Vec<usize> = annotations.iter().map(|(name, _, _)| name.offset).collect();
        let scopes = item::scopes_at(&lexed.code, &offsets);
        for ((name, tokens, end), scopes) in annotations.into_iter().zip(scopes) {
            let loc_of = |w: &parse::annotation::Word| {
                Loc::of(&src.error(Span::new(w.offset, w.offset + w.text.len()), ""))
            };
            let tokens = (!tokens.is_empty()).then(|| tokens.iter().map(|t| (t.text.clone(), loc_of(t))).collect());
            let signature = parse::locate(&mut self.parser, &lexed.code, end, &name.text, &mut x);
            let candidate = Candidate { name: name.text.clone(), name_loc: loc_of(&name), tokens, signature, platform };
            match enclosing_scope(&scopes) {
                None => self.check(candidate, &src),
                Some(kind) => {
                    let text = match kind {
                        ScopeKind::Namespace(ns) => msg::in_namespace(&name.text, ns),
                        _ => msg::not_at_file_scope(&name.text),
                    };
                    self.diags.push(candidate.name_loc.error(text).hint(msg::HINT_GLOBAL_SCOPE));
                    self.candidates.push((candidate, None));
                }
            }
        }
        if let (Some((spec, line)), Some(ct)) = (spec, ct) {
            self.config_candidates(spec, line, ct, &src, &lexed.code, &mut x, platform);
        }
    }

    /// Candidates for begen.yaml's explicit forms of one source file.
    #[allow(clippy::too_many_arguments)]
    fn config_candidates(
        &mut self,
        spec: &SourceSpec,
        line: usize,
        ct: &ConfigText,
        src: &SourceText,
        code: &[u8],
        x: &mut Expander,
        platform: Platform,
    ) {
        let entries: Vec<(String, Option<Vec<String>>)> = match spec {
            SourceSpec::Dict(d) => d.iter().map(|(k, v)| (k.clone(), Some(v.clone()))).collect(),
            SourceSpec::List(l) => l.iter().map(|k| (k.clone(), None)).collect(),
        };
        for (name, tokens) in entries {
            let name_loc = ct.loc(&name, line);
            let tokens = tokens.map(|t| t.into_iter().map(|t| (t, name_loc.clone())).collect());
            let signature = if check::is_cpp_identifier(&name) {
                parse::find_definition(&mut self.parser, code, &name, x)
            } else {
                Err(LocateError::NotFound)
            };
            self.check(Candidate { name, name_loc, tokens, signature, platform }, src);
        }
    }

    fn check(&mut self, candidate: Candidate, src: &SourceText) {
        let (func, diags) = check::check_candidate(&candidate, src);
        self.diags.extend(diags);
        self.candidates.push((candidate, func));
    }

    /// The macros visible in a file: those of the local headers it includes
    /// (recursively), then its own.
    fn macro_table(&mut self, src: &SourceText, code: &[u8]) -> MacroTable {
        let own = macros::collect(&src.bytes, code, &src.file);
        let mut table = MacroTable::default();
        let mut visited = BTreeSet::new();
        let dir = src.path.parent().map(Path::to_path_buf).unwrap_or_default();
        for inc in &own.includes {
            self.include(&dir, inc, &mut table, &mut visited);
        }
        for m in own.defines {
            table.insert(m);
        }
        table
    }

    fn include(&mut self, dir: &Path, inc: &str, table: &mut MacroTable, visited: &mut BTreeSet<PathBuf>) {
        let candidates = std::iter::once(dir.join(inc))
            .chain(std::iter::once(self.root.join(inc)))
            .chain(self.include_dirs.iter().map(|d| d.join(inc)));
        let Some(path) = candidates.into_iter().find(|p| p.is_file()) else { return };
        let key = path.canonicalize().unwrap_or_else(|_| path.clone());
        if !visited.insert(key.clone()) {
            return;
        }
        let directives = match self.directives.get(&key) {
            Some(d) => d.clone(),
            None => {
                let d = self.read_header(&path);
                self.directives.insert(key, d.clone());
                d
            }
        };
        let Some(directives) = directives else { return };
        let hdir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        for inc in &directives.includes {
            self.include(&hdir, inc, table, visited);
        }
        for m in directives.defines {
            table.insert(m);
        }
    }

    fn read_header(&mut self, path: &Path) -> Option<Directives> {
        self.files_read.insert(path.to_path_buf());
        let file = walk::relative(&self.root, path);
        match std::fs::read(path) {
            Ok(bytes) => {
                let code = lex::lex(&bytes).code;
                Some(macros::collect(&bytes, &code, &file))
            }
            Err(e) => {
                self.diags.push(Diagnostic::warning(file, path, msg::unreadable(&e.to_string())));
                None
            }
        }
    }

    /// Reports names exported more than once and drops them all.
    fn finish_candidates(&mut self) -> Vec<model::Function> {
        let mut first: HashMap<&str, &Loc> = HashMap::new();
        let mut dups = BTreeSet::new();
        for (c, _) in &self.candidates {
            match first.get(c.name.as_str()) {
                Some(loc) => {
                    let where_ = format!("{}:{}", loc.file, loc.line);
                    let d = c.name_loc.error(msg::duplicate_function(&c.name, &where_)).hint(msg::HINT_DUPLICATE);
                    self.diags.push(d);
                    dups.insert(c.name.clone());
                }
                None => {
                    first.insert(&c.name, &c.name_loc);
                }
            }
        }
        self.candidates
            .iter()
            .filter_map(|(c, f)| f.clone().filter(|_| !dups.contains(&c.name)))
            .collect()
    }
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
    candidates: &[(Candidate, Option<model::Function>)],
    functions: &mut [model::Function],
    diags: &mut Vec<Diagnostic>,
) {
    let Some(ct) = ct else { return };
    for (name, opts) in &config.functions {
        if !candidates.iter().any(|(c, _)| c.name == *name) {
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
