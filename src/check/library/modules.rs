//! Which module each source file's functions belong to (begen.yaml's
//! `modules:`), and everything wrong with that mapping.
//!
//! Without `modules:` the library is one module named after its prefix.
//! With it: a `names:` entry (a file, or a directory holding it; the
//! longest wins) names a file's module; else `per-file: true` names it from
//! its path (extension dropped, leading underscores of each component
//! dropped, components joined by `_`); else the file is in the module named
//! after the prefix.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::config::yaml_path;
use crate::diag::{Diagnostic, messages as msg};
use crate::model::is_identifier;
use crate::settings::RunInput;
use crate::source::FileId;

/// The module of every source file.
pub(in crate::check) struct Modules {
    of: HashMap<FileId, String>,
    default: String,
    /// begen.yaml has `modules:`.
    pub(crate) namespaced: bool,
}

impl Modules {
    /// The module of a source file's functions.
    pub(crate) fn of(&self, file: FileId) -> &str {
        self.of.get(&file).map_or(self.default.as_str(), String::as_str)
    }

    /// The module of functions no file's module holds (binary kernels).
    pub(crate) fn default_module(&self) -> &str {
        &self.default
    }
}

/// The module `per-file` gives a file: `_jit_uniform/csr.cu` ->
/// `jit_uniform_csr`.
pub(in crate::check) fn per_file_name(file: &str) -> String {
    let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
    stem.split('/').map(|c| c.trim_start_matches('_')).filter(|c| !c.is_empty()).collect::<Vec<_>>().join("_")
}

/// Assigns every source file a module.
pub(in crate::check) fn assign(req: &RunInput, prefix: &str, diags: &mut Vec<Diagnostic>) -> Modules {
    let mut modules = Modules { of: HashMap::new(), default: prefix.to_string(), namespaced: false };
    let Some(config) = &req.config.modules else { return modules };
    modules.namespaced = true;
    // `names:` keys, normalised (`./a/`, `a/` -> `a`).
    let names: Vec<(&str, &str, &str)> = config
        .names
        .iter()
        .map(|(key, module)| (key.trim_start_matches("./").trim_end_matches('/'), key.as_str(), module.as_str()))
        .collect();
    for (_, key, module) in &names {
        if !is_identifier(module)
            && let Some(span) = req.locate().value(&yaml_path!["modules", "names", *key])
        {
            diags.push(Diagnostic::error(span, msg::bad_module_name(module)).hint(msg::HINT_MODULE_NAME));
        }
    }
    let mut used = vec![false; names.len()];
    // Derived names, with the file that took each first.
    let mut derived: BTreeMap<String, &str> = BTreeMap::new();
    let per_file_span = || req.locate().key(&yaml_path!["modules", "per-file"]);
    for &(id, _) in req.sources {
        let file = req.map.get(id).name.as_str();
        let entry = names
            .iter()
            .enumerate()
            .filter(|(_, (key, _, _))| file == *key || file.strip_prefix(key).is_some_and(|r| r.starts_with('/')))
            .max_by_key(|(_, (key, _, _))| key.len());
        let module = match entry {
            Some((k, (_, _, module))) => {
                used[k] = true;
                module.to_string()
            }
            None if config.per_file => {
                let module = per_file_name(file);
                if !is_identifier(&module) {
                    if let Some(span) = per_file_span() {
                        diags.push(
                            Diagnostic::error(span, msg::bad_derived_module_name(&module, file))
                                .hint(msg::HINT_MODULE_NAME),
                        );
                    }
                } else if let Some(other) = derived
                    .get(&module)
                    .copied()
                    .or_else(|| names.iter().find(|(_, _, m)| *m == module).map(|(_, key, _)| *key))
                {
                    if let Some(span) = per_file_span() {
                        diags.push(
                            Diagnostic::error(span, msg::module_collision(&module, file, other))
                                .hint(msg::HINT_MODULE_COLLISION),
                        );
                    }
                } else {
                    derived.insert(module.clone(), file);
                }
                module
            }
            None => continue,
        };
        modules.of.insert(id, module);
    }
    for ((_, key, _), used) in names.iter().zip(used) {
        if !used && let Some(span) = req.locate().key(&yaml_path!["modules", "names", *key]) {
            // The closest source file or directory holding one.
            let files = req.sources.iter().map(|(id, _)| req.map.get(*id).name.as_str());
            let dirs: BTreeSet<&str> =
                files.clone().flat_map(|f| f.match_indices('/').map(move |(k, _)| &f[..k])).collect();
            let near = crate::diag::suggest::closest(key, files.chain(dirs));
            diags.push(Diagnostic::error(span, msg::modules_entry_missing(key, near)));
        }
    }
    modules
}

#[cfg(test)]
mod tests {
    use super::per_file_name;

    #[test]
    fn per_file_names() {
        assert_eq!(per_file_name("_jit_uniform/csr.cu"), "jit_uniform_csr");
        assert_eq!(per_file_name("_tcsr/sddmm/sddmm_binary.cu"), "tcsr_sddmm_sddmm_binary");
        assert_eq!(per_file_name("ops.cpp"), "ops");
        assert_eq!(per_file_name("__x/_y.z.cu"), "x_y.z");
    }
}
