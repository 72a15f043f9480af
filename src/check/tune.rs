//! begen.yaml's `tune:`: which kernels choose among compiled-in candidates
//! when a call is traced, keyed by which dimensions, with which default; and
//! the table shipped with the library. A kernel's candidates are the
//! instances of the `const.` values it is tuned over, so every one is
//! already compiled into the library and callable by name.

use super::source_id;
use crate::config::{Locator, TuneConfig, yaml_path};
use crate::diag::suggest::closest;
use crate::diag::{Diagnostic, messages as msg};
use crate::model::generated::fnv1a;
use crate::model::{ConstKind, Function, Module, ScalarKind, Tuned, Tuning, is_identifier};
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
pub(super) fn check_tune(
    req: &RunInput,
    functions: &[Function],
    modules: &[Module],
    namespaced: bool,
    diags: &mut Vec<Diagnostic>,
) -> Tuning {
    let mut tuning = Tuning::default();
    let loc = Locator { map: req.map, file: req.config_file };
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
                if let Some(span) = span {
                    diags.push(Diagnostic::error(span, msg::bad_tune_entry(key, &e.to_string())));
                }
                continue;
            }
        };
        if !entry.defines.is_empty() || entry.where_.is_some() {
            let part = if entry.defines.is_empty() { Part::Key("where") } else { Part::Key("defines") };
            if let Some(span) = at(part) {
                diags.push(Diagnostic::error(span, msg::TUNE_DEFINES_UNSUPPORTED).hint(msg::HINT_TUNE_DEFINES));
            }
            continue;
        }
        if entry.implementations.is_some() {
            if let Some(span) = at(Part::Key("implementations")) {
                diags.push(Diagnostic::error(span, msg::TUNE_IMPLEMENTATIONS_UNSUPPORTED));
            }
            continue;
        }
        let Some(index) = find_kernel(key, functions, modules, namespaced, span, diags) else { continue };
        if let Some(tuned) = check_kernel(req, key, &entry, index, &functions[index], at, diags) {
            tuning.kernels.push(tuned);
        }
    }
    tuning.kernels.sort_by_key(|t| t.function);
    tuning
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
        if let Some(span) = at(part) {
            let d = Diagnostic::error(span, message);
            diags.push(match hint {
                Some(h) => d.hint(h),
                None => d,
            });
        }
    };
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
    let dims: Vec<&str> = f.input_params().filter_map(|p| p.dim_names()).flatten().flatten().collect();
    for dim in &entry.key {
        if !dims.contains(&dim.as_str()) {
            let near = closest(dim, dims.iter().copied());
            report(Part::Word("key", dim), msg::tune_unknown_key(key, dim, near), Some(msg::HINT_TUNE_KEY));
        }
    }
    let mut seen = Vec::new();
    for dim in &entry.key {
        if seen.contains(&dim) {
            report(Part::Word("key", dim), msg::tune_repeated(key, dim), None);
        }
        seen.push(dim);
    }
    if let Some(inputs) = &entry.inputs {
        let ok = inputs.split_once(':').is_some_and(|(m, g)| m.split('.').all(is_identifier) && is_identifier(g));
        if !ok {
            report(Part::Value("inputs"), msg::tune_bad_inputs(key, inputs), None);
        }
    }
    if diags.len() > errors {
        return None;
    }
    Some(Tuned {
        function: index,
        consts,
        default,
        key: entry.key.clone(),
        inputs: entry.inputs.clone(),
        hash: candidates_hash(req, f, entry),
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
/// contract and candidates, and the tuning declaration.
fn candidates_hash(req: &RunInput, f: &Function, entry: &TuneConfig) -> String {
    let mut text = Vec::new();
    if let Some(id) = source_id(req, &f.file) {
        text.extend_from_slice(&req.map.get(id).bytes);
    }
    text.push(0);
    text.extend(f.spec_tokens().join(" ").bytes());
    text.push(0);
    text.extend(entry.consts.join(",").bytes());
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

/// Whether the file at `path` is a tuning table: the shape the generated
/// module reads (`begen_tune: 1`, entries with their fields).
pub(crate) fn read_table(path: &std::path::Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "there is no such file".to_string(),
        _ => e.to_string(),
    })?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > MAX_TABLE_BYTES {
        return Err(format!("{} bytes, over the {MAX_TABLE_BYTES} a table may have", meta.len()));
    }
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("invalid JSON ({e})"))?;
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
