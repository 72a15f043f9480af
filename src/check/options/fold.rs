//! begen.yaml's `vmap: {fold: {input: dim}}` (a batch folded into a
//! dimension of the kernel's own), checked at build time so that the
//! generated batching rule only ever folds where the contract allows it:
//! each listed name is an input with a typed contract of fixed rank that
//! has the dimension once, every input is listed that has the dimension,
//! every output has it once (the batch unfolds from it), one dimension for
//! all, not an attribute's size, and a kernel the primitive path can bind
//! (no lists, in-place tensors, side effects, `vjp:` or groups). Each error
//! is at the entry it is about, with a did-you-mean where a name is close.

use std::collections::BTreeSet;

use crate::config::{FunctionConfig, yaml_path};
use crate::diag::suggest::closest;
use crate::diag::{Diagnostic, messages as msg};
use crate::model::{FoldPlan, Function, Token};
use crate::settings::RunInput;
use crate::source::Span;

/// Resolves the fold of every function that declares one; a function with
/// a problem keeps none (its vmap stays `vmap_method`'s).
pub(in crate::check) fn check_fold(req: &RunInput, functions: &mut [Function], diags: &mut Vec<Diagnostic>) {
    let mut reported = BTreeSet::new();
    for f in functions.iter_mut() {
        if f.options.fold.is_empty() {
            continue;
        }
        let has = |c: &FunctionConfig| c.vmap.as_ref().is_some_and(|v| !v.fold.is_empty());
        let key = [format!("{}.{}", f.module, f.name), f.name.clone()]
            .into_iter()
            .find(|key| req.config.functions.get(key).is_some_and(has))
            .unwrap_or_else(|| f.name.clone());
        let at_fold = || req.locate().key(&yaml_path!["functions", &key, "vmap", "fold"]);
        let at_input = |p: &str| req.locate().key(&yaml_path!["functions", &key, "vmap", "fold", p]);
        let at_dim = |p: &str| req.locate().value(&yaml_path!["functions", &key, "vmap", "fold", p]);
        match plan(f, &at_fold, &at_input, &at_dim) {
            Ok(plan) => f.options.fold_plan = Some(plan),
            Err((at, text)) => {
                if let Some(at) = at
                    && reported.insert(text.clone())
                {
                    diags.push(Diagnostic::error(at, text).hint(msg::HINT_FOLD));
                }
            }
        }
    }
}

type Problem = (Option<Span>, String);

/// The fold of `f`, or the first problem with it.
fn plan(
    f: &Function,
    at_fold: &dyn Fn() -> Option<Span>,
    at_input: &dyn Fn(&str) -> Option<Span>,
    at_dim: &dyn Fn(&str) -> Option<Span>,
) -> Result<FoldPlan, Problem> {
    let o = &f.options;
    let name = &f.name;
    let refuse = |what: &str| Err((at_fold(), msg::fold_not_plain(name, what)));
    if o.vjp.is_some() {
        return refuse("`vjp:` (a backward kernel)");
    }
    if o.python_vjp.is_some() {
        return refuse("`python_vjp:` (a backward pass in Python)");
    }
    if !o.groups.is_empty() {
        return refuse("inputs linear together (`linear: [[...]]`)");
    }
    if o.has_side_effect {
        return refuse("`has_side_effect: true`");
    }
    if o.is_sharded() {
        return refuse("`shard:` or `reduce:`");
    }
    if let Some(p) = f.params.iter().find(|p| f.in_place(p) || p.token.is_list()) {
        return refuse(&format!("a list or an in-place tensor ('{}')", p.name));
    }
    let inputs: Vec<_> = f.input_params().collect();
    let mut dim: Option<&str> = None;
    let mut folded = Vec::new();
    for (input, d) in &o.fold {
        let Some(k) = inputs.iter().position(|p| *p.name == **input) else {
            let near = closest(input, inputs.iter().map(|p| &*p.name));
            return Err((at_input(input), msg::fold_unknown_input(name, input, near)));
        };
        let p = inputs[k];
        let Some(dims) = p.dim_names() else {
            return Err((at_input(input), msg::fold_untyped(name, &p.name)));
        };
        let contract = p.token.contract().map(ToString::to_string).unwrap_or_default();
        let axes: Vec<usize> =
            dims.iter().enumerate().filter(|(_, n)| **n == Some(d.as_str())).map(|(i, _)| i).collect();
        match axes[..] {
            [] => {
                let near = closest(d, dims.iter().flatten().copied());
                return Err((at_dim(input), msg::fold_unknown_dim(name, &p.name, d, &contract, near)));
            }
            [axis] => folded.push((k, axis)),
            _ => return Err((at_dim(input), msg::fold_dim_twice(name, &p.name, d))),
        }
        match dim {
            Some(first) if first != d => return Err((at_dim(input), msg::fold_two_dims(name, first, d))),
            _ => dim = Some(d),
        }
    }
    let Some(dim) = dim else { return Err((at_fold(), msg::fold_not_plain(name, "an empty fold"))) };
    if f.params.iter().any(|p| matches!(&p.token, Token::Attr { name: a, .. } if **a == *dim)) {
        return Err((at_fold(), msg::fold_attribute_dim(name, dim)));
    }
    for (k, p) in inputs.iter().enumerate() {
        let has = p.dim_names().is_some_and(|d| d.contains(&Some(dim)));
        if has && !folded.iter().any(|&(j, _)| j == k) {
            return Err((at_fold(), msg::fold_input_unlisted(name, &p.name, dim)));
        }
    }
    let mut outputs = Vec::new();
    for p in f.output_params() {
        let axes: Vec<usize> = (p.dim_names().unwrap_or_default().iter().enumerate())
            .filter(|(_, n)| **n == Some(dim))
            .map(|(i, _)| i)
            .collect();
        match axes[..] {
            [axis] => outputs.push(axis),
            _ => return Err((at_fold(), msg::fold_output_without(name, &p.name, dim))),
        }
    }
    folded.sort_unstable();
    Ok(FoldPlan { dim: dim.to_string(), inputs: folded, outputs })
}
