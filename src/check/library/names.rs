//! The Python names of modules, functions and parameters, decided once
//! (clear of Python keywords and of the names the generated module defines
//! itself); the symbols are `symbols.rs`'s.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::modules::Modules;
use crate::diag::{Diagnostic, messages as msg};
use crate::model::{Function, Module, RecordMember, Token, is_py_keyword, is_py_reserved};
use crate::settings::RunInput;

/// Names each function's parameters and the Python names, and returns
/// the modules (sorted by name) with their functions' indices.
pub(in crate::check) fn name_all(
    req: &RunInput,
    prefix: &str,
    modules: &Modules,
    functions: &mut [Function],
    diags: &mut Vec<Diagnostic>,
) -> Vec<Module> {
    let mut by_module: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    if !modules.namespaced {
        by_module.insert(prefix.to_string(), Vec::new());
    }
    // Each function's parameters' names, on the worker threads (a large
    // tree has thousands of functions, and this is the check's serial end).
    crate::par::for_each(
        functions,
        crate::par::threads(),
        || (),
        |_, f| {
            name_params(f);
        },
    );
    for (k, f) in functions.iter().enumerate() {
        match by_module.get_mut(&f.module) {
            Some(indices) => indices.push(k),
            None => {
                by_module.insert(f.module.clone(), vec![k]);
            }
        }
    }
    name_structs(functions);
    for f in functions.iter() {
        // Names that are all their own Python names (the common case) have
        // no twins.
        let own = |name: &str, py: &str| py.is_empty() || py == name;
        if f.params.iter().all(|p| own(&p.name, &p.py_name)) && f.consts.iter().all(|k| own(&k.name, &k.py_name)) {
            continue;
        }
        let params: Vec<(&str, bool)> = f
            .params
            .iter()
            .map(|p| (&*p.name, !p.py_name.is_empty()))
            .chain(f.consts.iter().map(|k| (k.name.as_str(), true)))
            .collect();
        let named: Vec<&str> = params.iter().filter(|(_, py)| *py).map(|(n, _)| *n).collect();
        let (py, twins) = py_names(&named, &["out"]);
        for (renamed, owner) in twins {
            if let Some(here) = function_span(req, f) {
                diags.push(
                    Diagnostic::error(
                        here,
                        msg::py_name_twins("parameter", named[renamed], &py[renamed], named[owner], &f.name),
                    )
                    .hint(msg::HINT_PY_NAME_TWINS),
                );
            }
        }
    }
    let mut module_names = BTreeSet::new();
    by_module
        .into_iter()
        .map(|(name, indices)| {
            let names: Vec<&str> = indices.iter().map(|&k| functions[k].name.as_str()).collect();
            let (py, twins) = py_names(&names, &[]);
            for (renamed, owner) in twins {
                let (f, o) = (&functions[indices[renamed]], &functions[indices[owner]]);
                if let (Some(here), Some(there)) = (function_span(req, f), function_span(req, o)) {
                    diags.push(
                        Diagnostic::error(here, msg::py_name_twins("kernel", &f.name, &py[renamed], &o.name, &name))
                            .with(there, msg::label_is_here(&o.name))
                            .hint(msg::HINT_PY_NAME_TWINS),
                    );
                }
            }
            for (&k, py) in indices.iter().zip(py) {
                functions[k].py_name = py;
            }
            Module { py_name: py_name(&name, &mut module_names), name, functions: indices }
        })
        .collect()
}

/// Python names for `names`, in order: each keeps its own where Python can
/// use it, whatever the order; one that must change (a keyword, a name
/// the module uses, a dunder) gets `_` appended until it is free, so no two
/// are alike. Also returns, as (renamed, owner) indices, each renamed name
/// whose first choice is another's own name (kernels `len` and `len_`:
/// `len` would be `len_`), which a user cannot tell apart: an error.
fn py_names(names: &[&str], reserved: &[&str]) -> (Vec<String>, Vec<(usize, usize)>) {
    let first: Vec<String> = names.iter().map(|n| first_choice(n, reserved)).collect();
    let mut own: HashMap<&str, usize> = HashMap::with_capacity(names.len());
    for (i, (&n, f)) in names.iter().zip(&first).enumerate() {
        if f == n {
            own.entry(n).or_insert(i);
        }
    }
    // Most names are their own: the set of names taken is only made when
    // one is not.
    let mut taken: Option<BTreeSet<String>> = None;
    let mut twins = Vec::new();
    let py = names
        .iter()
        .zip(first)
        .enumerate()
        .map(|(i, (&n, first))| {
            if own.get(n) == Some(&i) {
                return first;
            }
            if let Some(&owner) = own.get(first.as_str())
                && owner != i
                && names[owner] != n
            {
                twins.push((i, owner));
            }
            let taken = taken.get_or_insert_with(|| reserved.iter().chain(own.keys()).map(|n| n.to_string()).collect());
            py_name(n, taken)
        })
        .collect();
    (py, twins)
}

/// The name [`py_name`] gives `name` when nothing but `reserved` (and
/// Python's and the module's own names) is taken.
fn first_choice(name: &str, reserved: &[&str]) -> String {
    let mut py = base_name(name);
    while is_py_keyword(&py) || is_py_reserved(&py) || reserved.contains(&py.as_str()) {
        py.push('_');
    }
    py
}

/// Where a function is named: its declaration, or begen.yaml's entry of a
/// binary kernel.
pub(in crate::check) fn function_span(req: &RunInput, f: &Function) -> Option<crate::source::Span> {
    let config = req.config_file.as_ref().filter(|_| f.binary.is_some()).map(|c| c.id);
    config.or_else(|| crate::check::source_id(req, &f.file)).map(|id| {
        let start = req.map.get(id).line_range(f.line).start + f.column - 1;
        req.map.span(id, start, start + f.name.len())
    })
}

/// A Python name for `name`: itself, with `_` appended while it is a
/// Python keyword, one of the generated module's own names, or taken. A
/// dunder name (`__all__`, which Python would treat as special) and a name
/// in the generated module's own `_begen` space lose their leading
/// underscores first.
pub(crate) fn py_name(name: &str, taken: &mut BTreeSet<String>) -> String {
    let mut py = base_name(name);
    while is_py_keyword(&py) || is_py_reserved(&py) || taken.contains(&py) {
        py.push('_');
    }
    taken.insert(py.clone());
    py
}

/// `name` with what Python gives a meaning taken off: a dunder's
/// underscores, begen's own `_begen` prefix's leading `_`.
fn base_name(name: &str) -> String {
    let dunder = name.len() > 4 && name.starts_with("__") && name.ends_with("__");
    if dunder {
        format!("{}_", name.trim_matches('_'))
    } else if name.starts_with("_begen") {
        name.trim_start_matches('_').to_string()
    } else {
        name.to_string()
    }
}

/// Names begen's copy of each struct of a struct attribute in the glue:
/// `begen_struct_<name>`, numbered from `_2` where structs of one name
/// but different members meet in one library (in function order).
fn name_structs(functions: &mut [Function]) {
    // By (name, members): the same struct everywhere gets one copy.
    let mut named: HashMap<(String, Vec<RecordMember>), String> = HashMap::new();
    let mut taken: BTreeSet<String> = BTreeSet::new();
    for f in functions.iter_mut().filter(|f| f.binary.is_none()) {
        for p in &mut f.params {
            let Token::Record { ty, .. } = &mut p.token else { continue };
            let key = (ty.name.clone(), ty.members.clone());
            if let Some(mirror) = named.get(&key) {
                ty.mirror = mirror.clone();
                continue;
            }
            let base = format!("begen_struct_{}", ty.name);
            let mut mirror = base.clone();
            let mut k = 1;
            while taken.contains(&mirror) {
                k += 1;
                mirror = format!("{base}_{k}");
            }
            taken.insert(mirror.clone());
            ty.mirror = mirror.clone();
            named.insert(key, mirror);
        }
    }
}

/// The Python parameter names of a function's inputs, attributes and
/// constants: like [`py_name`], and never `out` (the output structs' keyword).
fn name_params(f: &mut Function) {
    let mut taken = BTreeSet::from(["out".to_string()]);
    for p in &mut f.params {
        p.py_name = if p.token.role().is_passed() { py_name(&p.name, &mut taken).into() } else { Box::default() };
    }
    for k in &mut f.consts {
        k.py_name = py_name(&k.name, &mut taken);
    }
}

#[cfg(test)]
mod tests {
    use super::py_name;
    use std::collections::BTreeSet;

    #[test]
    fn python_names_avoid_keywords_reserved_and_taken_names() {
        let mut taken = BTreeSet::new();
        assert_eq!(py_name("register", &mut taken), "register_");
        assert_eq!(py_name("register_", &mut taken), "register__");
        assert_eq!(py_name("def", &mut taken), "def_");
        assert_eq!(py_name("_lock", &mut taken), "_lock_");
        assert_eq!(py_name("int", &mut taken), "int_");
        assert_eq!(py_name("__all__", &mut taken), "all_");
        assert_eq!(py_name("_begen_x", &mut taken), "begen_x");
        assert_eq!(py_name("scale", &mut taken), "scale");
    }
}
