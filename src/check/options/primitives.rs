//! begen.yaml's `linear:`, `transpose:` and `jvp:` (kernels as JAX
//! primitives), checked at build time so that the generated rules never
//! meet a kernel of the wrong shape: the listed inputs are float tensors, a
//! transposed input is a linear one, a kernel with a tangent kernel has no
//! `linear`/`transpose` (JAX would never use them), and each tangent or
//! transpose kernel
//! takes and returns what its rule passes (counts, dtypes, typed shapes with
//! dimension names mapped, no fixed extent where the kernel names a
//! dimension, attributes by name, the same platform and constants). Each error names both kernels and the parameter.

use std::collections::BTreeSet;

use super::algorithms::{DimMap, consts_text, contract_text, contracts_agree, misnamed};
use crate::config::{FunctionConfig, yaml_path};
use crate::diag::suggest::closest;
use crate::diag::{Diagnostic, messages as msg};
use crate::model::{Function, Param, Token, TransposeBind, group_key};
use crate::settings::RunInput;
use crate::source::Span;

/// Checks the primitive options of every function; a function with a
/// problem keeps none of them (its Python function stays a plain call).
pub(in crate::check) fn check_primitives(req: &RunInput, functions: &mut [Function], diags: &mut Vec<Diagnostic>) {
    let mut reported = BTreeSet::new();
    for k in 0..functions.len() {
        let o = &functions[k].options;
        if !o.is_primitive() && o.transpose.is_empty() {
            continue;
        }
        let f = &functions[k];
        let has = |c: &FunctionConfig| c.linear.is_some() || c.jvp.is_some() || !c.transpose.is_empty();
        let key = [format!("{}.{}", f.module, f.name), f.name.clone()]
            .into_iter()
            .find(|key| req.config.functions.get(key).is_some_and(has))
            .unwrap_or_else(|| f.name.clone());
        let mut found = Vec::new();
        check_one(req, f, functions, &key, &mut found);
        let failed = !found.is_empty();
        diags.extend(found.into_iter().filter(|d| reported.insert(d.message.clone())));
        if failed {
            let o = &mut functions[k].options;
            o.linear.clear();
            o.groups.clear();
            o.transpose.clear();
            o.jvp = None;
        }
    }
}

/// One error: where, its message, its notes, its hint.
type Problem = (Option<Span>, String, Vec<String>, Option<&'static str>);

/// `key`: the entry of `functions:` that sets `f`'s primitive options.
fn check_one(req: &RunInput, f: &Function, functions: &[Function], key: &str, out: &mut Vec<Diagnostic>) {
    let option = |option: &str| req.locate().key(&yaml_path!["functions", key, option]);
    let o = &f.options;
    let mut errors: Vec<Problem> = Vec::new();
    // `vjp` beside `linear` is a primitive whose other inputs go through
    // the backward kernel; beside `jvp` JAX would use only one of them.
    if o.vjp.is_some() && o.jvp.is_some() {
        errors.push((option("vjp"), msg::primitive_and_vjp(&f.name, "jvp"), Vec::new(), Some(msg::HINT_PRIMITIVE_VJP)));
    }
    if o.vjp.is_some() && !o.residuals.is_empty() && o.jvp.is_none() {
        errors.push((option("residuals"), msg::primitive_residuals(&f.name), Vec::new(), None));
    }
    let linear = !o.linear.is_empty() || !o.groups.is_empty();
    if o.jvp.is_some() && (linear || !o.transpose.is_empty()) {
        let key = if linear { "linear" } else { "transpose" };
        errors.push((option("jvp"), msg::jvp_and_linear(&f.name, key), Vec::new(), Some(msg::HINT_JVP_LINEAR)));
    }
    if o.has_side_effect {
        errors.push((option("has_side_effect"), msg::primitive_side_effect(&f.name), Vec::new(), None));
    }
    if let Some(p) = f.params.iter().find(|p| f.in_place(p) || p.token.is_list()) {
        errors.push((
            req.locate().key(&yaml_path!["functions", key]),
            msg::primitive_not_plain(&f.name, &p.name),
            Vec::new(),
            None,
        ));
    }
    if let Some(p) = f.input_params().find(|p| p.token.contract().is_none()) {
        errors.push((
            req.locate().key(&yaml_path!["functions", key]),
            msg::primitive_untyped(&f.name, &p.name),
            Vec::new(),
            None,
        ));
    }
    let linear_at = |name: &str| req.locate().find(&yaml_path!["functions", key, "linear"], name);
    let params = || f.params.iter().map(|p| &*p.name);
    let mut listed = BTreeSet::new();
    let members =
        o.linear.iter().map(|n| (n, None)).chain(o.groups.iter().flat_map(|g| g.iter().map(move |n| (n, Some(g)))));
    for (name, group) in members {
        let text = match f.params.iter().find(|p| *p.name == **name) {
            None => {
                // The closest input, else the closest parameter.
                let inputs = f.params.iter().filter(|p| matches!(p.token, Token::Arg(_))).map(|p| &*p.name);
                let near = closest(name, inputs).or_else(|| closest(name, params()));
                Some(match group {
                    None => msg::linear_unknown(&f.name, name, near),
                    Some(g) => msg::linear_group_unknown(&f.name, name, &g.join(", "), near),
                })
            }
            Some(p) if !matches!(p.token, Token::Arg(_)) => Some(msg::linear_not_input(&f.name, name)),
            Some(p) if p.token.contract().is_some() && !f.float_inputs().any(|q| *q.name == **name) => {
                Some(msg::linear_not_float(&f.name, name, &contract_text(p.token.contract())))
            }
            Some(_) if !listed.insert(name.as_str()) => Some(msg::linear_twice(&f.name, name)),
            Some(_) => None,
        };
        if let Some(text) = text {
            errors.push((linear_at(name), text, Vec::new(), None));
        }
    }
    for g in o.groups.iter().filter(|g| g.len() < 2) {
        let at = g.first().map_or_else(|| option("linear"), |n| linear_at(n));
        errors.push((at, msg::linear_group_small(&f.name, &g.join(", ")), Vec::new(), None));
    }
    let group_texts: Vec<String> = o.groups.iter().map(|g| g.join(", ")).collect();
    for (param, _) in &o.transpose {
        let at = req.locate().key(&yaml_path!["functions", key, "transpose", param]);
        match group_key(param) {
            Some(names) if !o.groups.contains(&names) => {
                let near = closest(&names.join(", "), group_texts.iter().map(String::as_str));
                errors.push((at, msg::transpose_not_group(&f.name, param, near), Vec::new(), None));
            }
            Some(_) => {}
            None if !o.linear.contains(param) => {
                let near = closest(param, o.linear.iter().map(String::as_str));
                errors.push((at, msg::transpose_not_linear(&f.name, param, near), Vec::new(), None));
            }
            None => {}
        }
    }
    // The kernels it names are checked where its own parameters can be
    // compared with theirs: typed and plain, and for a transpose, a float
    // input it is linear in.
    let not_plain = |p: &Param| p.token.is_list() || f.in_place(p);
    if !f.input_params().any(|p| p.token.contract().is_none()) && !f.params.iter().any(not_plain) {
        if let Some(jvp) = &o.jvp {
            let at = req.locate().value(&yaml_path!["functions", key, "jvp"]);
            related(f, functions, jvp, None, None, at, &mut errors);
        }
        for (param, kernel) in &o.transpose {
            let names = match group_key(param) {
                Some(names) if names.len() > 1 && o.groups.contains(&names) => names,
                Some(_) => continue,
                None if o.linear.contains(param) => vec![param.clone()],
                None => continue,
            };
            // Each a float input listed once (else reported above).
            if names.iter().all(|n| listed.contains(n.as_str())) {
                let at = req.locate().value(&yaml_path!["functions", key, "transpose", param]);
                let bind = o.transpose_bind.iter().find(|b| b.param == *param);
                related(f, functions, kernel, Some(&names), bind, at, &mut errors);
            }
        }
    }
    for (span, text, notes, hint) in errors {
        if let Some(span) = span {
            let d = notes.into_iter().fold(Diagnostic::error(span, text), Diagnostic::note);
            out.push(match hint {
                Some(h) => d.hint(h),
                None => d,
            });
        }
    }
}

/// One argument of a transpose kernel named in `args:`: an input of the
/// kernel (not one of those transposed), or `ct` (the cotangent of the one
/// output) / `ct<k>` (of output k); else why not.
fn bound_arg<'a>(
    arg: &str,
    inputs: &[&'a Param],
    outputs: &[&'a Param],
    transposed: &[String],
) -> Result<(String, &'a Param), String> {
    if let Some((k, p)) = inputs.iter().enumerate().find(|(_, p)| *p.name == *arg) {
        if transposed.iter().any(|n| n == arg) {
            return Err(msg::transpose_arg_transposed(arg));
        }
        return Ok((msg::vjp_input(k), *p));
    }
    let k = match arg.strip_prefix("ct") {
        Some("") if outputs.len() == 1 => Some(0),
        Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => n.parse::<usize>().ok(),
        _ => None,
    };
    if let Some(p) = k.and_then(|k| outputs.get(k)) {
        return Ok((msg::vjp_cotangent("output", k.unwrap_or(0)), *p));
    }
    let mut names: Vec<String> =
        inputs.iter().filter(|p| !transposed.iter().any(|n| **n == *p.name)).map(|p| p.name.to_string()).collect();
    names.extend(if outputs.len() == 1 {
        vec!["ct".to_string()]
    } else {
        (0..outputs.len()).map(|k| format!("ct{k}")).collect()
    });
    let near = closest(arg, names.iter().map(String::as_str));
    Err(msg::transpose_arg_unknown(&names.join(", "), near))
}

/// Checks kernel `name`, the tangent kernel of `f` (`transpose_of` None)
/// or the transpose kernel for its input `transpose_of` (one name) or its
/// group of inputs linear together (two or more).
fn related(
    f: &Function,
    functions: &[Function],
    name: &str,
    transpose_of: Option<&[String]>,
    bind: Option<&TransposeBind>,
    at: Option<Span>,
    errors: &mut Vec<Problem>,
) {
    let hint = Some(match transpose_of {
        None => msg::HINT_JVP,
        Some(names) if names.len() > 1 => msg::HINT_TRANSPOSE_GROUP,
        Some(_) => msg::HINT_TRANSPOSE,
    });
    let shown = transpose_of.map(|names| names.join(", "));
    let transposed = shown.as_deref();
    let found = functions
        .iter()
        .find(|g| g.module == f.module && (g.name == name || format!("{}.{}", g.module, g.name) == name));
    let Some(g) = found else {
        let subject = msg::related_kernel(&f.name, name, transposed);
        let near = super::algorithms::near_in_module(functions, &f.module, name);
        errors.push((at, msg::unknown_related(&subject, &f.module, near), Vec::new(), hint));
        return;
    };
    let subject = msg::related_kernel(&f.name, &g.name, transposed);
    // What `g` must take and return: (what the parameter is, `f`'s parameter
    // whose contract it has).
    let inputs: Vec<&Param> = f.input_params().collect();
    let outputs: Vec<&Param> = f.output_params().collect();
    let mut want_in: Vec<(String, &Param)> = Vec::new();
    let mut want_out: Vec<(String, &Param)> = Vec::new();
    match transpose_of {
        None => {
            want_in.extend(inputs.iter().enumerate().map(|(k, p)| (msg::vjp_input(k), *p)));
            let floats: Vec<&Param> = f.float_inputs().collect();
            want_in.extend(
                inputs
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| floats.iter().any(|q| q.name == p.name))
                    .map(|(k, p)| (msg::tangent_of_input(k), *p)),
            );
            want_out.extend(outputs.iter().enumerate().map(|(k, p)| (msg::tangent_of_output(k), *p)));
        }
        Some(names) => {
            let inside = |p: &Param| names.iter().any(|n| **n == *p.name);
            match bind.and_then(|b| b.args.as_ref()) {
                // The arguments named: inputs of `f` (not the transposed
                // ones) and cotangents, in `g`'s order.
                Some(args) => {
                    for arg in args {
                        match bound_arg(arg, &inputs, &outputs, names) {
                            Ok(want) => want_in.push(want),
                            Err(text) => {
                                errors.push((at, msg::transpose_arg(&subject, arg, &text), Vec::new(), hint));
                                return;
                            }
                        }
                    }
                }
                None => {
                    want_in.extend(
                        inputs.iter().enumerate().filter(|(_, p)| !inside(p)).map(|(k, p)| (msg::vjp_input(k), *p)),
                    );
                    want_in.extend(outputs.iter().enumerate().map(|(k, p)| (msg::vjp_cotangent("output", k), *p)));
                }
            }
            for n in names {
                let (k, p) = inputs.iter().enumerate().find(|(_, p)| *p.name == **n).expect("a linear input");
                want_out.push((msg::vjp_cotangent("input", k), *p));
            }
        }
    }
    let mut problems = Vec::new();
    if f.platform != g.platform {
        problems.push(msg::vjp_platform(&f.name, f.platform.as_str(), &g.name, g.platform.as_str()));
    }
    if let Some(p) = g.params.iter().find(|p| g.in_place(p) || p.token.is_list()) {
        errors.push((at, msg::primitive_not_plain(&g.name, &p.name), Vec::new(), hint));
        return;
    }
    let (gi, go): (Vec<&Param>, Vec<&Param>) = (g.input_params().collect(), g.output_params().collect());
    if let Some(args) = bind.and_then(|b| b.args.as_ref())
        && args.len() != gi.len()
    {
        errors.push((at, msg::transpose_args_count(&subject, args.len(), &g.name, gi.len()), Vec::new(), hint));
        return;
    }
    if gi.len() != want_in.len() || go.len() != want_out.len() {
        let (got, want) = ((gi.len(), go.len()), (want_in.len(), want_out.len()));
        let text = msg::related_counts(&subject, &f.name, transpose_of.is_none(), got, want);
        errors.push((at, text, Vec::new(), hint));
        return;
    }
    // Bound as begen.yaml says: the names need not match.
    if bind.is_none() {
        let found = misnamed(f, g, (&want_in, &gi), (&want_out, &go));
        if transpose_of.is_some() && !found.is_empty() {
            problems.extend(found);
            problems.push(msg::TRANSPOSE_BIND_NOTE.to_string());
        } else {
            problems.extend(found);
        }
    }
    let mut dims = DimMap::default();
    for ((label, p), q) in want_in.iter().chain(&want_out).zip(gi.iter().chain(&go)) {
        let (a, b) = (p.token.contract(), q.token.contract());
        // The kernel's own side must say at least as much as `f`'s: a typed
        // input gets a typed tangent.
        if b.is_none() || !contracts_agree(a, b, &mut dims, false) {
            let (this, that) = (contract_text(a), contract_text(b));
            problems.push(msg::vjp_contract(label, (&this, &p.name, &f.name), (&that, &q.name, &g.name)));
        }
    }
    for (q, ty) in g.attributes() {
        match f.attributes().find(|(p, _)| p.name == q.name) {
            None => problems.push(msg::vjp_attr_missing(&q.name, &f.name)),
            Some((_, t)) if t != ty => problems.push(msg::vjp_attr_type(&q.name, &t, &f.name, &ty, &g.name)),
            Some(_) => {}
        }
    }
    if f.consts != g.consts {
        problems.push(msg::vjp_consts(&f.name, &consts_text(f), &g.name, &consts_text(g)));
    }
    if let Some((first, rest)) = problems.split_first() {
        errors.push((at, msg::related_mismatch(&subject, first), rest.to_vec(), hint));
    }
}
