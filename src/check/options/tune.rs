//! begen.yaml's `tune:`: which kernels choose among compiled-in candidates
//! when a call is traced, keyed by which dimensions, with which default; and
//! the table shipped with the library. A kernel's candidates are the
//! instances of the `const.` values it is tuned over, so every one is
//! already compiled into the library and callable by name.

use crate::check::source_id;
use crate::config::{TuneConfig, TuneKey, yaml_path};
use crate::diag::suggest::closest;
use crate::diag::{Diagnostic, messages as msg};
use crate::model::generated::fnv1a;
use crate::model::{Algorithm, ConstKind, Function, Module, ScalarKind, Tuned, TunedAlgorithm, Tuning, is_identifier};
use crate::settings::RunInput;
use crate::source::Span;

/// A part of a `tune:` entry, for locating a diagnostic about it.
#[derive(Clone, Copy)]
enum Part<'a> {
    /// The entry's own key (the kernel's name).
    Entry,
    /// A key of the entry (`consts`, `default`).
    Key(&'a str),
    /// The value of a key of the entry.
    Value(&'a str),
    /// A word written inside the value of a key (`BLOCK` in `consts:`).
    Word(&'a str, &'a str),
}

/// The largest shipped table begen copies into OUT: tables hold a few
/// entries per kernel and shape.
pub(crate) const MAX_TABLE_BYTES: u64 = 16 << 20;

/// Checks `tune:` against the library's functions (after naming, so their
/// indices are final) and returns what it declares that is sound.
pub(in crate::check) fn check_tune(
    req: &RunInput,
    functions: &mut [Function],
    modules: &[Module],
    algorithms: &[Algorithm],
    namespaced: bool,
    diags: &mut Vec<Diagnostic>,
) -> Tuning {
    let mut tuning = Tuning::default();
    let mut sources: Vec<(String, Vec<usize>, Tuned, TuneKey)> = Vec::new();
    let loc = req.locate();
    for (key, value) in &req.config.tune {
        let span = loc.key(&yaml_path!["tune", key]);
        // Where a part of this entry is written: a key under it, or a word
        // inside the value of one.
        let at = |part: Part| match part {
            Part::Key(k) => loc.key(&yaml_path!["tune", key, k]),
            Part::Value(k) => loc.value(&yaml_path!["tune", key, k]),
            Part::Word(k, word) => loc.find(&yaml_path!["tune", key, k], word),
            Part::Entry => span,
        };
        if key == "table" {
            tuning.table = check_table(req, value, loc.value(&yaml_path!["tune", "table"]), diags);
            continue;
        }
        let entry: TuneConfig = match serde_yaml_ng::from_value(value.clone()) {
            Ok(entry) => entry,
            Err(e) => {
                let err = e.to_string();
                let near = crate::config::near_field(&err);
                let near = near.as_ref().map(|(k, n)| (*k, n.as_str()));
                // A mistyped key is shown where it is written, the rest at the entry.
                let unknown = near.and_then(|(k, _)| err[..k - 1].rsplit('`').next());
                let span = unknown.and_then(|word| loc.key(&yaml_path!["tune", key, word])).or(span);
                if let Some(span) = span {
                    diags.push(Diagnostic::error(span, msg::bad_tune_entry(key, &err, near)));
                }
                continue;
            }
        };
        if let Some(on) = entry.implementations
            && source_id(req, key).is_none()
        {
            if let Some(t) = check_algorithm(req, key, &entry, on, functions, algorithms, at, diags) {
                tuning.algorithms.push(t);
            }
            continue;
        }
        if !entry.defines.is_empty() || entry.where_.is_some() || source_id(req, key).is_some() {
            let where_at = loc.value(&yaml_path!["tune", key, "where"]);
            if let Some((source, kernels, tuned)) = check_source(req, key, &entry, functions, at, where_at, diags) {
                sources.push((source, kernels, tuned, entry.key.clone()));
            }
            continue;
        }
        let Some(index) = find_kernel(key, functions, modules, namespaced, span, diags) else { continue };
        if let Some(tuned) = check_kernel(req, key, &entry, index, &functions[index], at, diags) {
            tuning.kernels.push(tuned);
        }
    }
    // A source's candidates: each of its kernels, once per combination.
    for (key, indices, tuned, key_spec) in sources {
        for index in indices {
            let f = &mut functions[index];
            if tuning.kernels.iter().any(|t| t.function == index) {
                if let Some(span) = loc.key(&yaml_path!["tune", &key]) {
                    diags.push(Diagnostic::error(span, msg::tune_twice(&f.name, &key)));
                }
                continue;
            }
            // `begen tune` makes a call's inputs from its key, and a list's
            // from none; a kernel with a list of outputs chooses no candidate.
            if let Some(list) = f.params.iter().find(|p| p.token.is_list()) {
                let list = list.name.to_string();
                if let Some(span) = loc.key(&yaml_path!["tune", &key]) {
                    diags.push(
                        Diagnostic::error(span, msg::tune_list_kernel(&f.name, &list, &key)).hint(msg::HINT_TUNE_LIST),
                    );
                }
                continue;
            }
            let key_at = key_at(&key_spec, f);
            let dims = input_dims(f);
            let keyed = tuned
                .key
                .iter()
                .filter(|d| dims.contains(&d.as_str()) || key_at.iter().any(|(k, ..)| k == *d))
                .cloned()
                .collect();
            let hash = candidates_hash(req, f, &tuned.hash);
            tuning.kernels.push(Tuned { function: index, hash, key: keyed, key_at, ..tuned.clone() });
        }
    }
    tuning.kernels.sort_by_key(|t| t.function);
    tuning
}

/// `inputs: "module:generator"`: a dotted module path and a function
/// name, each part an identifier (the name is emitted into Python).
fn check_inputs(key: &str, entry: &TuneConfig, report: &mut dyn FnMut(Part, String, Option<&'static str>)) {
    if let Some(inputs) = &entry.inputs {
        let ok = inputs.split_once(':').is_some_and(|(m, g)| m.split('.').all(is_identifier) && is_identifier(g));
        if !ok {
            report(Part::Value("inputs"), msg::tune_bad_inputs(key, inputs), None);
        }
    }
}

/// Checks `key:` of `tune:` entry `key` over its kernels `fs`: each
/// dimension a typed-contract dimension of an input of one of them, or, in
/// the map form, `INPUT[AXIS]` naming an input of one; none twice.
fn check_key(
    key: &str,
    entry: &TuneConfig,
    fs: &[&Function],
    report: &mut dyn FnMut(Part, String, Option<&'static str>),
) {
    let dims: Vec<&str> = fs.iter().flat_map(|f| input_dims(f)).collect();
    let names = entry.key.names();
    for dim in &names {
        let Some(at) = entry.key.at(dim) else {
            if !dims.contains(&dim.as_str()) {
                let near = closest(dim, dims.iter().copied());
                report(Part::Word("key", dim), msg::tune_unknown_key(key, dim, near), Some(msg::HINT_TUNE_KEY));
            }
            continue;
        };
        match parse_at(at) {
            None => report(Part::Word("key", at), msg::tune_bad_key_at(key, dim, at), Some(msg::HINT_TUNE_KEY_AT)),
            Some((input, _)) => {
                if !fs.iter().any(|f| f.input_params().any(|p| &*p.name == input)) {
                    let inputs = fs.iter().flat_map(|f| f.input_params().map(|p| &*p.name));
                    let near = closest(input, inputs);
                    report(Part::Word("key", at), msg::tune_key_at_unknown(key, dim, input, near), None);
                }
            }
        }
    }
    let mut seen = Vec::new();
    for dim in &names {
        if seen.contains(&dim) {
            report(Part::Word("key", dim), msg::tune_repeated(key, dim), None);
        }
        seen.push(dim);
    }
}

/// `INPUT[AXIS]` (a map-form key's value): the input's name and the axis.
fn parse_at(at: &str) -> Option<(&str, usize)> {
    let (input, rest) = at.trim().split_once('[')?;
    let axis = rest.strip_suffix(']')?.trim().parse().ok()?;
    let input = input.trim();
    is_identifier(input).then_some((input, axis))
}

/// The key dimensions `f` reads from an input's extent: (the dimension,
/// the input's index among `f`'s inputs, the axis), for those of its
/// inputs a map-form key names.
fn key_at(spec: &TuneKey, f: &Function) -> Vec<(String, usize, usize)> {
    spec.names()
        .into_iter()
        .filter_map(|dim| {
            let (input, axis) = parse_at(spec.at(&dim)?)?;
            let index = f.input_params().position(|p| &*p.name == input)?;
            Some((dim, index, axis))
        })
        .collect()
}

/// The named dimensions of a kernel's inputs.
fn input_dims(f: &Function) -> Vec<&str> {
    f.input_params().filter_map(|p| p.dim_names()).flatten().flatten().collect()
}

/// The most combinations of a source's defines a library builds (each is a
/// compile of the source).
const MAX_COMBINATIONS: usize = 256;

/// How a `tune:` entry's checks report: an error at a part of the entry,
/// with a hint or none (nothing when begen.yaml does not show the part).
type Report<'r> = dyn Fn(&mut Vec<Diagnostic>, Part, String, Option<&'static str>) + 'r;

/// A `tune:` entry over a source's `defines:`: the define names and values,
/// `where:` parsed and evaluated for every combination, the default among
/// those it allows, the key dims of every kernel of the source. Returns the
/// source, its kernels and their tuning (its `hash` field holds the text
/// the declaration adds to each kernel's hash).
fn check_source(
    req: &RunInput,
    key: &str,
    entry: &TuneConfig,
    functions: &[Function],
    at: impl Fn(Part) -> Option<Span>,
    where_at: Option<Span>,
    diags: &mut Vec<Diagnostic>,
) -> Option<(String, Vec<usize>, Tuned)> {
    let report: &Report = &|diags, part, message, hint| {
        if let Some(span) = at(part) {
            let d = Diagnostic::error(span, message);
            diags.push(match hint {
                Some(h) => d.hint(h),
                None => d,
            });
        }
    };
    let defines = source_defines(req, key, entry, report, diags)?;
    let kept = allowed_combos(req, key, entry, &defines, where_at, report, diags)?;
    let default = source_default(key, entry, &defines, &kept, report, diags)?;
    let Defines { names, values } = defines;
    let errors = diags.len();
    let kernels: Vec<usize> = functions
        .iter()
        .enumerate()
        .filter(|(_, f)| f.file == key && f.variant.is_none() && f.binary.is_none())
        .map(|(k, _)| k)
        .collect();
    if kernels.is_empty() {
        report(diags, Part::Entry, msg::tune_source_no_kernels(key), None);
        return None;
    }
    // Each kernel keys on the key dims it has; a dim no kernel has is a slip.
    let fs: Vec<&Function> = kernels.iter().map(|&k| &functions[k]).collect();
    check_key(key, entry, &fs, &mut |part, message, hint| report(diags, part, message, hint));
    if let Some(inputs) = &entry.inputs {
        let ok = inputs.split_once(':').is_some_and(|(m, g)| m.split('.').all(is_identifier) && is_identifier(g));
        if !ok {
            report(diags, Part::Value("inputs"), msg::tune_bad_inputs(key, inputs), None);
        }
    }
    if diags.len() > errors {
        return None;
    }
    let text = |c: &[i64]| c.iter().map(i64::to_string).collect::<Vec<_>>();
    // What the declaration adds to each kernel's hash: the defines, their
    // values and `where:`.
    let declared = format!(
        "{}\0{}",
        names.iter().zip(&values).map(|(n, v)| format!("{n}={}", text(v).join(","))).collect::<Vec<_>>().join(";"),
        entry.where_.as_deref().unwrap_or("")
    );
    let tuned = Tuned {
        function: 0,
        consts: Vec::new(),
        default: Vec::new(),
        key: entry.key.names(),
        key_at: Vec::new(),
        inputs: entry.inputs.clone(),
        hash: declared,
        combos: kept.iter().map(|c| text(c)).collect(),
        define_default: text(&default),
        define_values: values.iter().map(|v| text(v)).collect(),
        defines: names,
    };
    Some((key.to_string(), kernels, tuned))
}

/// A source's `defines:`, sorted by name: each name and its values.
struct Defines {
    names: Vec<String>,
    values: Vec<Vec<i64>>,
}

/// The source a `tune:` entry names, and its `defines:` (sorted by name;
/// each a list of distinct integers), with no more combinations than a
/// library builds.
fn source_defines(
    req: &RunInput,
    key: &str,
    entry: &TuneConfig,
    report: &Report,
    diags: &mut Vec<Diagnostic>,
) -> Option<Defines> {
    let errors = diags.len();
    if source_id(req, key).is_none() {
        let names: Vec<&str> = req.sources.iter().map(|(id, _)| req.map.get(*id).name.as_str()).collect();
        let near = closest(key, names.iter().copied());
        report(diags, Part::Entry, msg::tune_not_a_source(key, near), None);
        return None;
    }
    if entry.defines.is_empty() {
        report(diags, Part::Entry, msg::tune_source_no_defines(key), Some(msg::HINT_TUNE_SOURCE));
        return None;
    }
    if !entry.consts.is_empty() {
        report(diags, Part::Key("consts"), msg::tune_source_no_defines(key), Some(msg::HINT_TUNE_SOURCE));
    }
    if entry.implementations.is_some() {
        report(diags, Part::Key("implementations"), msg::tune_source_implementations(key), None);
    }
    let mut names = Vec::new();
    let mut values: Vec<Vec<i64>> = Vec::new();
    for (name, list) in &entry.defines {
        let ints: Option<Vec<i64>> = match list {
            serde_yaml_ng::Value::Sequence(items) if !items.is_empty() => {
                items.iter().map(|v| if v.is_bool() { None } else { v.as_i64() }).collect()
            }
            _ => None,
        };
        let distinct = ints.as_ref().is_some_and(|v| v.iter().enumerate().all(|(i, x)| !v[..i].contains(x)));
        match ints {
            Some(ints) if distinct && is_identifier(name) => {
                names.push(name.clone());
                values.push(ints);
            }
            _ => report(diags, Part::Word("defines", name), msg::tune_bad_define(key, name), None),
        }
    }
    if diags.len() > errors {
        return None;
    }
    let count = values.iter().map(|v| v.len() as u128).product::<u128>();
    if count > MAX_COMBINATIONS as u128 * 64 {
        report(diags, Part::Key("defines"), msg::tune_too_many(key, count, MAX_COMBINATIONS), None);
        return None;
    }
    Some(Defines { names, values })
}

/// The combinations of the defines' values that `where:` allows (every
/// one without it), in order: at least one, at most [`MAX_COMBINATIONS`].
fn allowed_combos(
    req: &RunInput,
    key: &str,
    entry: &TuneConfig,
    defines: &Defines,
    where_at: Option<Span>,
    report: &Report,
    diags: &mut Vec<Diagnostic>,
) -> Option<Vec<Vec<i64>>> {
    let Defines { names, values } = defines;
    let rule = match &entry.where_ {
        None => None,
        Some(text) => match super::tune_where::parse(text, names) {
            Ok(e) => Some(e),
            Err(e) => {
                let span = where_span(req, where_at, text, e.start, e.end);
                if let Some(span) = span {
                    diags.push(Diagnostic::error(span, msg::tune_where(key, &e.message, e.near.as_deref())));
                }
                return None;
            }
        },
    };
    let allowed = |combo: &[i64]| -> Result<bool, String> {
        match &rule {
            None => Ok(true),
            Some(e) => super::tune_where::eval(e, combo).map(|v| v != 0),
        }
    };
    let mut combos: Vec<Vec<i64>> = vec![Vec::new()];
    for list in values {
        combos = combos
            .into_iter()
            .flat_map(|prefix| {
                list.iter().map(move |v| {
                    let mut c = prefix.clone();
                    c.push(*v);
                    c
                })
            })
            .collect();
    }
    let mut kept = Vec::new();
    for combo in combos {
        match allowed(&combo) {
            Ok(true) => kept.push(combo),
            Ok(false) => {}
            Err(why) => {
                if let Some(span) = where_at {
                    diags.push(Diagnostic::error(span, msg::tune_where_failed(key, &shown(names, &combo), &why)));
                }
                return None;
            }
        }
    }
    if kept.is_empty() {
        if let Some(span) = where_at {
            diags.push(Diagnostic::error(span, msg::tune_where_none(key)));
        }
        return None;
    }
    if kept.len() > MAX_COMBINATIONS {
        report(diags, Part::Key("defines"), msg::tune_too_many(key, kept.len() as u128, MAX_COMBINATIONS), None);
        return None;
    }
    Some(kept)
}

/// A combination of the defines' values as a message shows it
/// (`{BLOCK=64, WARPS=4}`).
fn shown(names: &[String], combo: &[i64]) -> String {
    let parts: Vec<String> = names.iter().zip(combo).map(|(n, v)| format!("{n}={v}")).collect();
    format!("{{{}}}", parts.join(", "))
}

/// The default combination: each define's given value (one it has), else
/// its first; one that `where:` allows.
fn source_default(
    key: &str,
    entry: &TuneConfig,
    defines: &Defines,
    kept: &[Vec<i64>],
    report: &Report,
    diags: &mut Vec<Diagnostic>,
) -> Option<Vec<i64>> {
    let Defines { names, values } = defines;
    let errors = diags.len();
    let mut default: Vec<i64> = values.iter().map(|v| v[0]).collect();
    for (name, v) in &entry.default {
        match names.iter().position(|n| n == name) {
            None => {
                let near = closest(name, names.iter().map(String::as_str));
                report(diags, Part::Word("default", name), msg::tune_define_default_unknown(key, name, near), None);
            }
            Some(k) => match v.as_i64().filter(|x| !v.is_bool() && values[k].contains(x)) {
                Some(x) => default[k] = x,
                None => {
                    let shown = yaml_text(v);
                    let built: Vec<String> = values[k].iter().map(i64::to_string).collect();
                    report(
                        diags,
                        Part::Word("default", &shown),
                        msg::tune_bad_default(key, name, &shown, &built),
                        None,
                    );
                }
            },
        }
    }
    if diags.len() > errors {
        return None;
    }
    if !kept.contains(&default) {
        let part = if entry.default.is_empty() { Part::Entry } else { Part::Key("default") };
        report(
            diags,
            part,
            msg::tune_define_default_excluded(key, &shown(names, &default)),
            Some(msg::HINT_TUNE_DEFAULT),
        );
        return None;
    }
    Some(default)
}

/// Where byte range `start..end` of the `where:` expression `text` is in
/// begen.yaml: inside the written value when it is written as it reads
/// (plain or quoted without escapes), else the whole value.
fn where_span(req: &RunInput, value: Option<Span>, text: &str, start: usize, end: usize) -> Option<Span> {
    let span = value?;
    let bytes = req.map.get(span.file).bytes.get(span.start..span.end)?;
    let raw = std::str::from_utf8(bytes).ok()?;
    let quoted = raw.len() >= 2 && (raw.starts_with('"') || raw.starts_with('\''));
    let (inner, skip) = if quoted { (&raw[1..raw.len() - 1], 1) } else { (raw, 0) };
    if inner != text {
        return Some(span);
    }
    let from = span.start + skip + start;
    Some(req.map.span(span.file, from, (span.start + skip + end).max(from)))
}

/// The function a `tune:` key names (`name`, or `module.name` in a library
/// of several modules); an error with the closest name otherwise.
fn find_kernel(
    key: &str,
    functions: &[Function],
    modules: &[Module],
    namespaced: bool,
    span: Option<Span>,
    diags: &mut Vec<Diagnostic>,
) -> Option<usize> {
    let matches: Vec<usize> = functions
        .iter()
        .enumerate()
        .filter(|(_, f)| f.name == key || format!("{}.{}", f.module, f.name) == key)
        .map(|(k, _)| k)
        .collect();
    let span = span?;
    match matches.as_slice() {
        [one] => Some(*one),
        [] => {
            let names: Vec<String> = functions
                .iter()
                .map(|f| if namespaced { format!("{}.{}", f.module, f.name) } else { f.name.clone() })
                .collect();
            let near = closest(key, names.iter().map(String::as_str));
            diags.push(Diagnostic::error(span, msg::tune_unknown_kernel(key, near)));
            None
        }
        several => {
            let named: Vec<String> =
                several.iter().map(|&k| format!("{}.{}", functions[k].module, functions[k].name)).collect();
            let _ = modules;
            diags.push(Diagnostic::error(span, msg::tune_ambiguous_kernel(key, &named)));
            None
        }
    }
}

fn check_kernel(
    req: &RunInput,
    key: &str,
    entry: &TuneConfig,
    index: usize,
    f: &Function,
    at: impl Fn(Part) -> Option<Span>,
    diags: &mut Vec<Diagnostic>,
) -> Option<Tuned> {
    let errors = diags.len();
    let mut report = |part: Part, message: String, hint: Option<&'static str>| {
        report_at(&at, diags, part, message, hint);
    };
    if let Some(list) = f.params.iter().find(|p| p.token.is_list()) {
        report(Part::Entry, msg::tune_list_kernel(&f.name, &list.name, key), Some(msg::HINT_TUNE_LIST));
    }
    if entry.consts.is_empty() {
        report(Part::Entry, msg::tune_no_consts(key), Some(msg::HINT_TUNE_CONSTS));
    }
    let mut consts = Vec::new();
    for name in &entry.consts {
        match f.consts.iter().position(|k| k.name == *name) {
            None => {
                let near = closest(name, f.consts.iter().map(|k| k.name.as_str()));
                report(
                    Part::Word("consts", name),
                    msg::tune_unknown_const(key, name, near),
                    Some(msg::HINT_TUNE_CONSTS),
                );
            }
            Some(k) => match f.consts[k].kind {
                ConstKind::Value(ty) if matches!(ty.kind(), ScalarKind::Int { .. } | ScalarKind::Bool) => {
                    if consts.contains(&k) {
                        report(Part::Word("consts", name), msg::tune_repeated(key, name), None);
                    } else {
                        consts.push(k);
                    }
                }
                _ => report(Part::Word("consts", name), msg::tune_const_not_value(key, name), None),
            },
        }
    }
    consts.sort_unstable();
    let mut default = Vec::new();
    for &k in &consts {
        let c = &f.consts[k];
        let value = match entry.default.get(&c.name) {
            None => c.values[0].clone(),
            Some(v) => match canonical(v, c) {
                Some(text) => text,
                None => {
                    let shown = yaml_text(v);
                    report(Part::Word("default", &shown), msg::tune_bad_default(key, &c.name, &shown, &c.values), None);
                    c.values[0].clone()
                }
            },
        };
        default.push(value);
    }
    for name in entry.default.keys() {
        if !entry.consts.contains(name) {
            report(Part::Word("default", name), msg::tune_default_not_tuned(key, name), None);
        }
    }
    check_key(key, entry, &[f], &mut report);
    check_inputs(key, entry, &mut report);
    if diags.len() > errors {
        return None;
    }
    Some(Tuned {
        function: index,
        consts,
        default,
        key: entry.key.names(),
        key_at: key_at(&entry.key, f),
        inputs: entry.inputs.clone(),
        hash: candidates_hash(req, f, &entry.consts.join(",")),
        defines: Vec::new(),
        combos: Vec::new(),
        define_default: Vec::new(),
        define_values: Vec::new(),
    })
}

/// A `tune:` entry over an algorithm's implementations
/// (`implementations: true`): the algorithm, its key dims over the
/// highest-priority implementation's inputs (whose signature the Python
/// function has), the inputs generator. The default is the priority order,
/// so `default:`, `consts:`, `defines:` and `where:` are errors. An
/// algorithm with at most one built implementation per platform has nothing
/// to choose: a warning, since whether it has depends on the platforms
/// built (`--platform cpu` drops the CUDA ones of a tree that has several).
#[allow(clippy::too_many_arguments)]
fn check_algorithm(
    req: &RunInput,
    key: &str,
    entry: &TuneConfig,
    on: bool,
    functions: &[Function],
    algorithms: &[Algorithm],
    at: impl Fn(Part) -> Option<Span>,
    diags: &mut Vec<Diagnostic>,
) -> Option<TunedAlgorithm> {
    let errors = diags.len();
    let mut report = |part: Part, message: String, hint: Option<&'static str>| {
        report_at(&at, diags, part, message, hint);
    };
    if !on {
        report(Part::Value("implementations"), msg::tune_implementations_not_true(key), None);
    }
    let extra = [
        ("consts", !entry.consts.is_empty()),
        ("default", !entry.default.is_empty()),
        ("defines", !entry.defines.is_empty()),
        ("where", entry.where_.is_some()),
    ];
    for (what, given) in extra {
        if given {
            report(Part::Key(what), msg::tune_algorithm_extra(key, what), None);
        }
    }
    let Some(index) = algorithms.iter().position(|a| a.name == key) else {
        // Declared but not built (its implementations all CUDA under
        // `--platform cpu`): its own warning says so already.
        if !req.config.algorithms.contains_key(key) {
            let near = closest(key, req.config.algorithms.keys().map(String::as_str));
            report(Part::Entry, msg::tune_not_an_algorithm(key, near), Some(msg::HINT_TUNE_ALGORITHM));
        }
        return None;
    };
    let a = &algorithms[index];
    let first = &functions[a.implementations[0].function];
    check_key(key, entry, &[first], &mut report);
    check_inputs(key, entry, &mut report);
    if diags.len() > errors {
        return None;
    }
    // Each platform's implementations: a platform with two or more has a
    // choice to make.
    let mut per_platform: Vec<(&str, usize)> = Vec::new();
    for i in &a.implementations {
        let p = functions[i.function].platform.as_str();
        match per_platform.iter_mut().find(|(q, _)| *q == p) {
            Some((_, n)) => *n += 1,
            None => per_platform.push((p, 1)),
        }
    }
    if per_platform.iter().all(|(_, n)| *n < 2) {
        if let Some(span) = at(Part::Key("implementations")) {
            let shown: Vec<&str> = per_platform.iter().map(|(p, _)| *p).collect();
            diags.push(Diagnostic::warning(span, msg::tune_nothing_to_choose(key, &shown.join(", "))));
        }
        return None;
    }
    // Every key dim as (dim, input, axis) of the first implementation's
    // inputs: a typed dim at its first place, a map-form one as written.
    let mut key_dims = Vec::new();
    for dim in entry.key.names() {
        if entry.key.at(&dim).is_some() {
            continue;
        }
        let found = first
            .input_params()
            .enumerate()
            .find_map(|(i, p)| p.dim_names()?.iter().position(|d| *d == Some(dim.as_str())).map(|axis| (i, axis)));
        if let Some((i, axis)) = found {
            key_dims.push((dim, i, axis));
        }
    }
    key_dims.extend(key_at(&entry.key, first));
    let declared: Vec<String> = a
        .implementations
        .iter()
        .map(|i| {
            let f = &functions[i.function];
            let own = candidates_hash(req, f, &format!("{}:{}", f.platform.as_str(), i.priority));
            format!("{}.{}={own}", f.module, f.name)
        })
        .collect();
    Some(TunedAlgorithm {
        algorithm: index,
        key: entry.key.names(),
        key_at: key_dims,
        inputs: entry.inputs.clone(),
        hash: format!("{:016x}", fnv1a(declared.join(";").as_bytes())),
    })
}

/// A const's value as begen.yaml writes it, as the const's canonical text,
/// when it is one of the values the kernel is instantiated with.
fn canonical(v: &serde_yaml_ng::Value, c: &crate::model::Const) -> Option<String> {
    let text = match v {
        serde_yaml_ng::Value::Bool(b) => b.to_string(),
        serde_yaml_ng::Value::Number(n) => {
            n.as_i64().map(|n| n.to_string()).or_else(|| n.as_u64().map(|n| n.to_string()))?
        }
        serde_yaml_ng::Value::String(s) => s.clone(),
        _ => return None,
    };
    c.values.contains(&text).then_some(text)
}

/// A YAML value as a short text for a message.
fn yaml_text(v: &serde_yaml_ng::Value) -> String {
    serde_yaml_ng::to_string(v).map(|s| s.trim_end().to_string()).unwrap_or_default()
}

/// What a table entry for this kernel is valid for: its source file, its
/// contract and candidates, and the tuning declaration (`declared`: the
/// tuned consts, or a source's defines and `where:`).
fn candidates_hash(req: &RunInput, f: &Function, declared: &str) -> String {
    let mut text = Vec::new();
    if let Some(id) = source_id(req, &f.file) {
        text.extend_from_slice(&req.map.get(id).bytes);
    }
    text.push(0);
    text.extend(f.spec_tokens().join(" ").bytes());
    text.push(0);
    text.extend(declared.bytes());
    format!("{:016x}", fnv1a(&text))
}

/// `table:`: a file under the root holding a tuning table.
fn check_table(
    req: &RunInput,
    value: &serde_yaml_ng::Value,
    at: Option<Span>,
    diags: &mut Vec<Diagnostic>,
) -> Option<String> {
    let Some(rel) = value.as_str() else {
        if let Some(span) = at {
            diags.push(Diagnostic::error(span, msg::TUNE_TABLE_NOT_A_PATH));
        }
        return None;
    };
    let span = at?;
    let path = req.root.join(rel);
    match read_table(&path) {
        Ok(text) => Some(text),
        Err(why) => {
            diags.push(Diagnostic::error(span, msg::tune_bad_table(rel, &why)));
            None
        }
    }
}

/// How deep lists and objects may nest in a tuning table: an entry's
/// fields are an object in a list in the top-level object. The generated
/// module's reader (`_BEGEN_TUNE_MAX_DEPTH`) has the same bound.
pub(crate) const MAX_TABLE_DEPTH: usize = 16;

/// How deep lists and objects nest in `v` (a scalar: 0), without recursion.
fn depth(v: &serde_json::Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(v, 1)];
    while let Some((v, d)) = stack.pop() {
        match v {
            serde_json::Value::Array(items) => stack.extend(items.iter().map(|x| (x, d + 1))),
            serde_json::Value::Object(m) => stack.extend(m.values().map(|x| (x, d + 1))),
            _ => continue,
        }
        deepest = deepest.max(d);
    }
    deepest
}

/// Whether the file at `path` is a tuning table: the shape the generated
/// module reads (`begen_tune: 1`, entries with their fields).
pub(crate) fn read_table(path: &std::path::Path) -> Result<String, String> {
    let kind = crate::source::not_regular(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "there is no such file".to_string(),
        _ => e.to_string(),
    })?;
    if let Some(kind) = kind {
        return Err(format!("{kind}, not a regular file"));
    }
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if meta.len() > MAX_TABLE_BYTES {
        return Err(format!("{} bytes, over the {MAX_TABLE_BYTES} a table may have", meta.len()));
    }
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let text = String::from_utf8(bytes).map_err(|e| format!("invalid JSON ({e})"))?;
    let deep = || format!("nested more than {MAX_TABLE_DEPTH} levels deep");
    let doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| match e.to_string() {
        // serde_json's own bound (128) is deeper than a table's.
        m if m.starts_with("recursion limit exceeded") => deep(),
        m => format!("invalid JSON ({m})"),
    })?;
    if depth(&doc) > MAX_TABLE_DEPTH {
        return Err(deep());
    }
    if doc.get("begen_tune").and_then(|v| v.as_i64()) != Some(1) {
        return Err("the top level must be an object with \"begen_tune\": 1".into());
    }
    let entries = doc.get("entries").and_then(|e| e.as_array()).ok_or("\"entries\" must be a list")?;
    for (i, e) in entries.iter().enumerate() {
        let text = |k: &str| e.get(k).is_some_and(|v| v.is_string());
        let texts = |k: &str| e.get(k).and_then(|v| v.as_array()).is_some_and(|a| a.iter().all(|t| t.is_string()));
        let map = |k: &str, ok: fn(&serde_json::Value) -> bool| {
            e.get(k).and_then(|v| v.as_object()).is_some_and(|m| m.values().all(ok))
        };
        let fine = text("kernel")
            && text("hash")
            && text("device")
            && texts("dtypes")
            && map("key", |v| v.is_i64() || v.is_u64())
            && map("config", |v| v.is_string());
        if !fine {
            return Err(format!(
                "entry {i} must have \"kernel\", \"hash\", \"device\" (strings), \"dtypes\" (strings), \"key\" (dim \
                 -> integer) and \"config\" (parameter -> text)"
            ));
        }
    }
    Ok(text)
}

/// An error at `part`'s place in begen.yaml, with its hint; nothing where
/// `at` finds no place for it.
fn report_at(
    at: &impl Fn(Part) -> Option<Span>,
    diags: &mut Vec<Diagnostic>,
    part: Part,
    message: String,
    hint: Option<&'static str>,
) {
    if let Some(span) = at(part) {
        let d = Diagnostic::error(span, message);
        diags.push(match hint {
            Some(h) => d.hint(h),
            None => d,
        });
    }
}
