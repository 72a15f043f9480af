//! Every symbol of the library, decided once, after tuning and before
//! they are checked distinct: each function's FFI target, handler and
//! trampoline, and those of its instances (one per combination of a
//! template kernel's consts, times each built combination of a tuned
//! source's defines: the candidates).

use std::collections::HashMap;

use super::names::function_span;
use crate::diag::{Diagnostic, messages as msg};
use crate::model::{Function, Instance, Tuning};
use crate::settings::RunInput;

/// A tuned source's defines (their names) and the built combinations of
/// their values.
type Defines<'a> = (&'a [String], &'a [Vec<String>]);

/// How a library names its functions: its name and prefix, whether
/// modules are namespaces, and whether begen.yaml sets the prefix.
pub(in crate::check) struct Naming<'a> {
    pub(in crate::check) library: &'a str,
    pub(in crate::check) prefix: &'a str,
    pub(in crate::check) namespaced: bool,
    pub(in crate::check) explicit_prefix: bool,
}

impl Naming<'_> {
    /// The target, handler and trampoline of function `name` of `module`.
    fn of(&self, name: &str, module: &str) -> (String, String, String) {
        let Naming { library, prefix, namespaced, explicit_prefix } = *self;
        let target = if namespaced && explicit_prefix {
            format!("{prefix}.{module}.{name}")
        } else {
            format!("{module}.{name}")
        };
        let (handler, trampoline) = if namespaced {
            (format!("begen_{library}_{module}_{name}"), format!("begen_call_{library}_{module}_{name}"))
        } else {
            (format!("begen_{library}_{name}"), format!("begen_call_{library}_{name}"))
        };
        (target, handler, trampoline)
    }
}

/// Decides every function's target and symbols and its instances (with
/// `tuning`'s candidates), then reports each symbol two functions share.
pub(in crate::check) fn decide(
    req: &RunInput,
    naming: &Naming,
    functions: &mut [Function],
    tuning: &Tuning,
    diags: &mut Vec<Diagnostic>,
) {
    // A source tuned over its defines: its kernels' candidates.
    let mut tuned: Vec<(&mut Function, Option<Defines>)> = functions.iter_mut().map(|f| (f, None)).collect();
    for t in tuning.kernels.iter().filter(|t| !t.defines.is_empty()) {
        tuned[t.function].1 = Some((&t.defines, &t.combos));
    }
    // On the worker threads: a large tree has thousands of functions.
    crate::par::for_each(
        &mut tuned,
        crate::par::threads(),
        || (),
        |_, (f, defines)| {
            (f.target, f.handler, f.trampoline) = naming.of(&f.name, &f.module);
            f.instances = instances(f, *defines);
        },
    );
    check_distinct(req, functions, diags);
}

/// A function's instances: one per combination of its consts' values
/// (`<target>[T=float32,N=4]`, `<symbol>__float32_4`), each once per
/// combination of a tuned source's defines where there are any
/// (`<target>[T=float32,BLOCK=1]`, `<symbol>__float32_1`); none for a
/// plain function that is no candidate.
fn instances(f: &Function, defines: Option<Defines>) -> Vec<Instance> {
    let mut consts: Vec<Vec<String>> = vec![Vec::new()];
    for k in &f.consts {
        consts = consts
            .into_iter()
            .flat_map(|prefix| {
                k.values.iter().map(move |v| {
                    let mut c = prefix.clone();
                    c.push(v.clone());
                    c
                })
            })
            .collect();
    }
    if f.consts.is_empty() && defines.is_none() {
        return Vec::new();
    }
    if consts.is_empty() && defines.is_some() {
        consts.push(Vec::new());
    }
    let no_defines = [Vec::new()];
    let (names, combos): Defines = defines.unwrap_or((&[], &no_defines));
    let mut out = Vec::with_capacity(consts.len() * combos.len());
    for values in &consts {
        for combo in combos {
            let defines: Vec<(String, String)> = names.iter().cloned().zip(combo.iter().cloned()).collect();
            out.push(instance(f, values.clone(), defines));
        }
    }
    out
}

/// The instance of `f` with these const values and defines.
fn instance(f: &Function, values: Vec<String>, defines: Vec<(String, String)>) -> Instance {
    let consts = f.consts.iter().map(|k| k.name.as_str()).zip(&values);
    let shown: Vec<String> =
        consts.chain(defines.iter().map(|(n, v)| (n.as_str(), v))).map(|(n, v)| format!("{n}={v}")).collect();
    let shown = shown.join(",");
    // Symbol-safe: `-3` becomes `m3`.
    let suffix: Vec<String> =
        values.iter().chain(defines.iter().map(|(_, v)| v)).map(|v| v.replace('-', "m")).collect();
    let suffix = suffix.join("_");
    Instance {
        key: format!("{}[{shown}]", f.name),
        target: format!("{}[{shown}]", f.target),
        handler: format!("{}__{suffix}", f.handler),
        trampoline: format!("{}__{suffix}", f.trampoline),
        values,
        defines,
    }
}

/// Every handler and trampoline symbol must be distinct: a symbol that is
/// another function's is an error at both.
fn check_distinct(req: &RunInput, functions: &[Function], diags: &mut Vec<Diagnostic>) {
    let mut owner: HashMap<&str, usize, crate::par::FxBuildHasher> = HashMap::default();
    let symbols: Vec<Vec<String>> = functions.iter().map(Function::symbols).collect();
    for (k, f) in functions.iter().enumerate() {
        for symbol in &symbols[k] {
            if let Some(&other) = owner.get(symbol.as_str()) {
                let o = &functions[other];
                let span = |f: &Function| function_span(req, f);
                let shown = |f: &Function| {
                    if req.config.modules.is_some() { format!("{}.{}", f.module, f.name) } else { f.name.clone() }
                };
                if let (Some(here), Some(there)) = (span(f), span(o)) {
                    diags.push(
                        Diagnostic::error(here, msg::symbol_collision(symbol, &shown(f), &shown(o)))
                            .with(there, msg::label_is_here(&shown(o)))
                            .hint(msg::HINT_SYMBOL_COLLISION),
                    );
                }
            } else {
                owner.insert(symbol.as_str(), k);
            }
        }
    }
}
