//! begen.yaml's `shard:` and `reduce:` (a call split across devices),
//! checked at build time so that the generated plan never splits a kernel
//! wrongly: every name is a dimension of the kernel's typed contract, a
//! `shard` dimension is in an input and in every output (each device
//! computes its block of each output), a `reduce` dimension is in an input
//! and in no output (each device computes a partial sum of every output,
//! so every output is a number: not `bool`), no array has a split dimension
//! twice and no split dimension is an integer attribute's too. `sum:` names,
//! per output, `shard` dimensions that output is a sum over (a weight
//! gradient beside a batch-split cotangent): each an output of the kernel,
//! each dimension in `shard:` and not in that output, the output a number.
//! Each error is at the function's begen.yaml entry and names the kernel
//! and the dimension.

use std::collections::BTreeSet;

use crate::config::{FunctionConfig, yaml_path};
use crate::diag::{Diagnostic, messages as msg};
use crate::model::{AttrType, ElementType, Function, Param};
use crate::settings::RunInput;

/// Checks the sharding options of every function; a function with a
/// problem keeps none of them (its calls are gathered, as undeclared).
pub(in crate::check) fn check_sharding(req: &RunInput, functions: &mut [Function], diags: &mut Vec<Diagnostic>) {
    let mut reported = BTreeSet::new();
    for f in functions.iter_mut() {
        if !f.options.is_sharded() && f.options.sum.is_empty() {
            continue;
        }
        let has = |c: &FunctionConfig| c.shard.is_some() || c.reduce.is_some() || !c.sum.is_empty();
        let key = [format!("{}.{}", f.module, f.name), f.name.clone()]
            .into_iter()
            .find(|key| req.config.functions.get(key).is_some_and(has))
            .unwrap_or_else(|| f.name.clone());
        let problems = problems(f);
        let failed = !problems.is_empty();
        for (word, text, hint) in problems {
            let at = match word {
                Some((Place::Sum(output), dim)) => {
                    req.locate().find(&yaml_path!["functions", &key, "sum", output.as_str()], &dim)
                }
                Some((Place::Key(option), dim)) => req.locate().find(&yaml_path!["functions", &key, option], &dim),
                None => req.locate().key(&yaml_path!["functions", &key]),
            };
            if let Some(at) = at
                && reported.insert(text.clone())
            {
                let d = Diagnostic::error(at, text);
                diags.push(match hint {
                    Some(h) => d.hint(h),
                    None => d,
                });
            }
        }
        if failed {
            f.options.shard.clear();
            f.options.reduce.clear();
            f.options.sum.clear();
        }
    }
}

/// Where a problem's word is: under `shard`/`reduce`/`sum` (an output's
/// name), or under one output's list of `sum:`.
enum Place {
    Key(&'static str),
    Sum(String),
}

/// One problem: where begen.yaml writes it (a word at a [`Place`], else
/// the function's entry), the message, a hint.
type Problem = (Option<(Place, String)>, String, Option<&'static str>);

fn problems(f: &Function) -> Vec<Problem> {
    let o = &f.options;
    let mut out = Vec::new();
    let key = if !o.shard.is_empty() {
        "shard"
    } else if !o.reduce.is_empty() {
        "reduce"
    } else {
        "sum"
    };
    if let Some(p) = f.input_params().chain(f.output_params()).find(|p| p.token.is_list()) {
        out.push((None, msg::shard_not_plain(&f.name, key, &p.name), None));
        return out;
    }
    if let Some(p) = f.input_params().chain(f.output_params()).find(|p| p.split_names().is_none()) {
        out.push((None, msg::shard_untyped(&f.name, key, &p.name), None));
        return out;
    }
    // A named rest (`rows` of `[rows..., d]`) is split like a dimension:
    // along its leading extents, which every array that writes it shares.
    let inputs: Vec<(&Param, Vec<Option<&str>>)> =
        f.input_params().map(|p| (p, p.split_names().unwrap_or_default())).collect();
    let outputs: Vec<(&Param, Vec<Option<&str>>)> =
        f.output_params().map(|p| (p, p.split_names().unwrap_or_default())).collect();
    let mut known: Vec<String> = Vec::new();
    for (_, ds) in inputs.iter().chain(&outputs) {
        for d in ds.iter().flatten() {
            if !known.iter().any(|k| k == d) {
                known.push(d.to_string());
            }
        }
    }
    if let Some(d) = o.reduce.first()
        && let Some((p, dtype)) = outputs.iter().find_map(|(p, _)| Some((*p, not_numeric(f, p)?)))
    {
        out.push((
            Some((Place::Key("reduce"), d.clone())),
            msg::reduce_not_numeric(&f.name, &p.name, &dtype),
            Some(msg::HINT_REDUCE_NUMERIC),
        ));
        return out;
    }
    let size_attrs: Vec<&str> = f.attrs().filter(|(_, ty)| ty.is_integer()).map(|(p, _)| &*p.name).collect();
    let has = |ds: &[Option<&str>], d: &str| ds.contains(&Some(d));
    let sums = |output: &str, d: &str| o.sum.iter().any(|(p, ds)| p == output && ds.iter().any(|x| x == d));
    let output_names: Vec<&str> = outputs.iter().map(|(p, _)| &*p.name).collect();
    for (name, dims) in &o.sum {
        let Some((p, ds)) = outputs.iter().find(|(p, _)| *p.name == **name) else {
            out.push((
                Some((Place::Key("sum"), name.clone())),
                msg::sum_unknown_output(&f.name, name, &output_names),
                None,
            ));
            continue;
        };
        if let Some(dtype) = not_numeric(f, p) {
            out.push((
                Some((Place::Key("sum"), name.clone())),
                msg::sum_not_numeric(&f.name, name, &dtype),
                Some(msg::HINT_REDUCE_NUMERIC),
            ));
            continue;
        }
        for d in dims {
            let at = Some((Place::Sum(name.clone()), d.clone()));
            if !known.contains(d) {
                out.push((at, msg::shard_unknown_dim(&f.name, "sum", d, &known), None));
            } else if has(ds, d) {
                out.push((at, msg::sum_in_output(&f.name, d, name), None));
            } else if !o.shard.contains(d) {
                out.push((at, msg::sum_not_shard(&f.name, d, name), Some(msg::HINT_SUM_SHARD)));
            }
        }
    }
    for (key, names) in [("shard", &o.shard), ("reduce", &o.reduce)] {
        for d in names {
            if !known.contains(d) {
                out.push((Some((Place::Key(key), d.clone())), msg::shard_unknown_dim(&f.name, key, d, &known), None));
                continue;
            }
            if let Some((p, _)) =
                inputs.iter().chain(&outputs).find(|(_, ds)| ds.iter().filter(|x| **x == Some(d)).count() > 1)
            {
                out.push((Some((Place::Key(key), d.clone())), msg::shard_repeated(&f.name, key, d, &p.name), None));
                continue;
            }
            let in_input = inputs.iter().any(|(_, ds)| has(ds, d));
            if key == "shard" {
                if !in_input {
                    out.push((
                        Some((Place::Key(key), d.clone())),
                        msg::shard_not_in_input(&f.name, d),
                        Some(msg::HINT_SHARD_RAGGED),
                    ));
                } else if size_attrs.contains(&d.as_str()) {
                    out.push((
                        Some((Place::Key(key), d.clone())),
                        msg::shard_sized_by_attr(&f.name, key, d),
                        Some(msg::HINT_SHARD_SIZED),
                    ));
                } else if let Some((p, _)) = outputs.iter().find(|(p, ds)| !has(ds, d) && !sums(&p.name, d)) {
                    out.push((
                        Some((Place::Key(key), d.clone())),
                        msg::shard_not_in_output(&f.name, d, &p.name),
                        Some(msg::HINT_SHARD_OUTPUT),
                    ));
                }
            } else {
                if o.shard.contains(d) {
                    out.push((Some((Place::Key(key), d.clone())), msg::shard_and_reduce(&f.name, d), None));
                } else if let Some((p, _)) = outputs.iter().find(|(_, ds)| has(ds, d)) {
                    out.push((Some((Place::Key(key), d.clone())), msg::reduce_in_output(&f.name, d, &p.name), None));
                } else if size_attrs.contains(&d.as_str()) {
                    out.push((
                        Some((Place::Key(key), d.clone())),
                        msg::shard_sized_by_attr(&f.name, key, d),
                        Some(msg::HINT_SHARD_SIZED),
                    ));
                }
            }
        }
    }
    out
}

/// The element type of output `p` when it (or one of the types a template
/// parameter is instantiated with) cannot be summed: `bool`.
fn not_numeric(f: &Function, p: &Param) -> Option<String> {
    let c = p.token.contract()?;
    match &c.dtype {
        ElementType::Dtype(AttrType::Bool) => Some("bool".to_string()),
        ElementType::Dtype(_) => None,
        ElementType::Param(name) => {
            let k = f.consts.iter().find(|k| k.name == *name)?;
            k.values.iter().any(|v| v == "bool").then(|| format!("{name} (bool among its values)"))
        }
    }
}
