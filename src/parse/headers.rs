//! Local headers: `#include "..."` resolved next to the including file, then
//! at the root, then in begen.yaml's `include_dirs`; each header's directives
//! read once per run, from the source map (headers under the root were read
//! by `scan`; others are read into the map here).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::macros::{self, Directives, MacroTable, Step};
use crate::diag::{Diagnostic, Severity, messages as msg};
use crate::source::{FileId, SourceMap, lex};

/// Local headers, each read once per run.
pub(crate) struct Headers {
    root: PathBuf,
    include_dirs: Vec<PathBuf>,
    /// By canonical path; `None`: unreadable.
    cache: HashMap<PathBuf, Option<Rc<Directives>>>,
    /// Every header file read (for `cargo:rerun-if-changed`).
    pub read: Vec<PathBuf>,
}

impl Headers {
    pub fn new(root: &Path, include_dirs: Vec<PathBuf>) -> Headers {
        Headers { root: root.to_path_buf(), include_dirs, cache: HashMap::new(), read: Vec::new() }
    }

    /// Makes a file's macro table from its own directives (`own`) and those
    /// of the local headers it includes (recursively), each from where it is
    /// defined (a header's from its `#include`).
    pub fn resolve(
        &mut self,
        map: &mut SourceMap,
        file: FileId,
        own: Directives,
        table: &mut MacroTable,
        diags: &mut Vec<Diagnostic>,
    ) {
        let mut visited = BTreeSet::new();
        let dir = map.get(file).path.parent().map(Path::to_path_buf).unwrap_or_default();
        // `steps` names the defines in order: each is moved into the table.
        let mut defines = own.defines.into_iter();
        for step in &own.steps {
            match step {
                Step::Define(_) => {
                    if let Some(m) = defines.next() {
                        table.define(m.at, m);
                    }
                }
                Step::Undef(name, at) => table.undef(*at, name),
                Step::Include(k, at) => {
                    self.include(map, &dir, &own.includes[*k], *at, table, &mut visited, diags);
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn include(
        &mut self,
        map: &mut SourceMap,
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
                let d = self.read(map, &path, diags).map(Rc::new);
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
                Step::Include(k, _) => self.include(map, &hdir, &directives.includes[*k], pos, table, visited, diags),
            }
        }
    }

    /// A header's directives, from the map when `scan` read it, else read
    /// into the map now.
    fn read(&mut self, map: &mut SourceMap, path: &Path, diags: &mut Vec<Diagnostic>) -> Option<Directives> {
        self.read.push(path.to_path_buf());
        let id = match map.find(path) {
            Some(id) => id,
            None => match std::fs::read(path) {
                Ok(bytes) => map.add(crate::source::relative(&self.root, path), path, bytes),
                Err(e) => {
                    let id = map.add(crate::source::relative(&self.root, path), path, Vec::new());
                    diags.push(Diagnostic::file(Severity::Warning, id, msg::unreadable(&e.to_string())));
                    return None;
                }
            },
        };
        let f = map.get(id);
        let code = lex::lex(&f.bytes).code;
        Some(macros::collect(&f.bytes, &code, &f.name))
    }
}
