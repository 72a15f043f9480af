//! Local headers: `#include "..."` resolved next to the including file, then
//! at the root, then in begen.yaml's `include_dirs`; each header's directives
//! read once per run, from the source map (headers under the root were read
//! by `scan`; others are read into the map here).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::{Arc, Mutex, PoisonError};

use super::macros::{self, Directives, MacroTable, Step};
use super::structs::{self, Found};
use crate::diag::{Diagnostic, Severity, messages as msg};
use crate::source::{FileId, SourceFile, SourceMap, lex};

/// What one header holds for the files that include it.
struct HeaderRead {
    directives: Directives,
    /// Its file-scope struct definitions.
    structs: Arc<Vec<Found>>,
}

/// Where a quoted `#include` is looked for: next to the including file,
/// then at the root, then in begen.yaml's `include_dirs`.
pub(crate) struct IncludeSearch {
    root: PathBuf,
    include_dirs: Vec<PathBuf>,
    /// Candidates found not to be files in this run: every file of a
    /// folder looks for the same missing headers (brainevent's 61 sources
    /// asked the file system 265 times for a handful of paths).
    missing: Mutex<HashSet<PathBuf>>,
}

impl IncludeSearch {
    /// The file `inc` names from `dir` (the including file's folder), with
    /// its metadata: the first candidate that exists and is not a directory
    /// (the compiler's choice too).
    pub(crate) fn find(&self, dir: &Path, inc: &str) -> Option<(PathBuf, std::fs::Metadata)> {
        let candidates = std::iter::once(dir.join(inc))
            .chain(std::iter::once(self.root.join(inc)))
            .chain(self.include_dirs.iter().map(|d| d.join(inc)));
        let missing = || self.missing.lock().unwrap_or_else(PoisonError::into_inner);
        candidates.into_iter().find_map(|p| {
            if missing().contains(&p) {
                return None;
            }
            match std::fs::metadata(&p) {
                Ok(m) if !m.is_dir() => Some((p, m)),
                _ => {
                    missing().insert(p);
                    None
                }
            }
        })
    }

    /// Whether none of `own`'s includes (written in `file`) names a file
    /// that exists: then resolving them reads nothing and reports nothing,
    /// and [`own_table`] makes the file's macro table.
    pub(crate) fn names_nothing(&self, file: &SourceFile, own: &Directives) -> bool {
        own.includes.is_empty() || {
            let dir = including_dir(file);
            own.includes.iter().all(|inc| self.find(&dir, inc).is_none())
        }
    }
}

/// Local headers, each read once per run.
pub(crate) struct Headers {
    search: IncludeSearch,
    /// By canonical path; `None`: unreadable.
    cache: HashMap<PathBuf, Option<Rc<HeaderRead>>>,
    /// Every header file read (for `cargo:rerun-if-changed`).
    pub(crate) read: Vec<PathBuf>,
}

impl Headers {
    pub(crate) fn new(root: &Path, include_dirs: Vec<PathBuf>) -> Headers {
        let search = IncludeSearch { root: root.to_path_buf(), include_dirs, missing: Mutex::default() };
        Headers { search, cache: HashMap::new(), read: Vec::new() }
    }

    /// Where includes are looked for (shareable across threads).
    pub(crate) fn search(&self) -> &IncludeSearch {
        &self.search
    }

    /// Makes a file's macro table from its own directives (`own`) and those
    /// of the local headers it includes (recursively), each from where it is
    /// defined (a header's from its `#include`), and collects the struct
    /// definitions of those headers into `structs`, in include order.
    pub(crate) fn resolve(
        &mut self,
        map: &mut SourceMap,
        file: FileId,
        own: Directives,
        table: &mut MacroTable,
        structs: &mut Vec<Arc<Vec<Found>>>,
        diags: &mut Vec<Diagnostic>,
    ) {
        let mut visited = BTreeSet::new();
        let dir = including_dir(map.get(file));
        apply(own, table, |table, inc, at| {
            let mut cx = Visit { file, table, structs: &mut *structs, visited: &mut visited, diags: &mut *diags };
            self.include(map, &dir, inc, at, &mut cx);
        });
    }

    fn include(&mut self, map: &mut SourceMap, dir: &Path, inc: &str, pos: usize, cx: &mut Visit) {
        // One that is not a regular file would block the compile.
        let Some((path, meta)) = self.search.find(dir, inc) else { return };
        if !meta.is_file() {
            let message = msg::include_not_regular(inc, &path.display().to_string());
            cx.diags.push(Diagnostic::error(map.span(cx.file, pos, pos), message));
            return;
        }
        let key = path.canonicalize().unwrap_or_else(|_| path.clone());
        if !cx.visited.insert(key.clone()) {
            return;
        }
        let header = match self.cache.get(&key) {
            Some(d) => d.clone(),
            None => {
                let d = self.read(map, &path, cx.diags).map(Rc::new);
                self.cache.insert(key, d.clone());
                d
            }
        };
        let Some(header) = header else { return };
        if !header.structs.is_empty() {
            cx.structs.push(header.structs.clone());
        }
        let directives = &header.directives;
        let hdir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        for step in &directives.steps {
            match step {
                Step::Define(k) => cx.table.define(pos, directives.defines[*k].clone()),
                Step::Undef(name, _) => cx.table.undef(pos, name),
                Step::Include(k, _) => self.include(map, &hdir, &directives.includes[*k], pos, cx),
            }
        }
    }

    /// A header's directives and struct definitions, from the map when
    /// `scan` read it, else read into the map now.
    fn read(&mut self, map: &mut SourceMap, path: &Path, diags: &mut Vec<Diagnostic>) -> Option<HeaderRead> {
        self.read.push(path.to_path_buf());
        let id = match map.find(path) {
            Some(id) => id,
            None => match std::fs::read(path) {
                Ok(bytes) => map.add(crate::source::relative(&self.search.root, path), path, bytes),
                Err(e) => {
                    let id = map.add(crate::source::relative(&self.search.root, path), path, Vec::new());
                    diags.push(Diagnostic::file(Severity::Warning, id, msg::unreadable(&e.to_string())));
                    return None;
                }
            },
        };
        let f = map.get(id);
        let code = lex::lex(&f.bytes).code;
        Some(HeaderRead {
            directives: macros::collect(&f.bytes, &code, &f.name),
            structs: Arc::new(structs::scan(&code, id)),
        })
    }
}

/// The folder a file's includes are looked for in first.
fn including_dir(file: &SourceFile) -> PathBuf {
    file.path.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// Applies a file's own directives to `table` in order: its defines (moved
/// in) and undefs; each include goes to `include` with its offset.
fn apply(own: Directives, table: &mut MacroTable, mut include: impl FnMut(&mut MacroTable, &str, usize)) {
    let Directives { defines, includes, steps, .. } = own;
    // `steps` names the defines in order: each is moved into the table.
    let mut defines = defines.into_iter();
    for step in &steps {
        match step {
            Step::Define(_) => {
                if let Some(m) = defines.next() {
                    table.define(m.at, m);
                }
            }
            Step::Undef(name, at) => table.undef(*at, name),
            Step::Include(k, at) => include(table, &includes[*k], *at),
        }
    }
}

/// The macro table of a file whose includes name nothing
/// ([`IncludeSearch::names_nothing`]): its own directives alone, as
/// [`Headers::resolve`] would make it.
pub(crate) fn own_table(own: Directives, table: &mut MacroTable) {
    apply(own, table, |_, _, _| {});
}

/// What one walk of a file's includes fills in.
struct Visit<'a> {
    /// The file whose includes these are (`pos` is in it).
    file: FileId,
    table: &'a mut MacroTable,
    structs: &'a mut Vec<Arc<Vec<Found>>>,
    visited: &'a mut BTreeSet<PathBuf>,
    diags: &'a mut Vec<Diagnostic>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_header_is_looked_for_once_per_run() {
        let root = std::env::temp_dir().join(format!("begen-include-search-{}", std::process::id()));
        let sub = root.join("sub");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(root.join("there.h"), "#define THERE 1\n").unwrap();
        let search = IncludeSearch { root: root.clone(), include_dirs: Vec::new(), missing: Mutex::default() };
        // Next to the including file, then at the root: the second is found.
        assert_eq!(search.find(&sub, "there.h").map(|(p, _)| p), Some(root.join("there.h")));
        assert!(search.find(&sub, "gone.h").is_none());
        // Both places were found missing once and are not asked again in
        // this run, even if the header appears meanwhile; a header found is
        // asked for each time (its metadata is the caller's).
        let missing = search.missing.lock().unwrap().clone();
        assert_eq!(missing, HashSet::from([sub.join("there.h"), sub.join("gone.h"), root.join("gone.h")]));
        std::fs::write(root.join("gone.h"), "").unwrap();
        assert!(search.find(&sub, "gone.h").is_none());
        std::fs::remove_file(root.join("there.h")).unwrap();
        assert!(search.find(&sub, "there.h").is_none());
        // A new run looks again.
        let again = IncludeSearch { root: root.clone(), include_dirs: Vec::new(), missing: Mutex::default() };
        assert!(again.find(&sub, "gone.h").is_some());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
