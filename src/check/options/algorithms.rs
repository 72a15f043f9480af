//! begen.yaml's `algorithms:` and the gradient options of `functions:`
//! (`vjp`, `unsupported`), checked at build time so that the generated
//! Python module can dispatch and differentiate at trace time without
//! second-guessing: the implementations of an algorithm agree on inputs,
//! outputs, attributes, contracts and constants; a backward kernel takes the
//! forward's inputs and one cotangent per output and returns one cotangent
//! per input; unsupported attribute values fit the attribute's type.

use std::collections::{BTreeSet, HashMap};

use crate::config::{AlgorithmConfig, FunctionConfig, ImplementationConfig, Seg, yaml_path};
use crate::diag::{Diagnostic, messages as msg};
use crate::model::{
    Algorithm, AttrType, Extent, Function, Implementation, Module, Param, ScalarKind, TensorType, Token, VjpArg,
    is_identifier, is_py_keyword, is_py_reserved,
};
use crate::settings::RunInput;
use crate::source::Span;

/// An algorithm whose implementations were found, before the functions'
/// final order is known: each implementation by (module, name).
pub(in crate::check) struct Listed {
    name: String,
    fallback: bool,
    span: Option<Span>,
    implementations: Vec<(String, String, i64)>,
}

/// The name of a function of `module` closest to `name`, a kernel
/// begen.yaml names that is none of them (`vjp: bwd_nmae`).
pub(in crate::check) fn near_in_module<'a>(functions: &'a [Function], module: &str, name: &str) -> Option<&'a str> {
    let names = functions.iter().filter(|g| g.module == module).map(|g| g.name.as_str());
    crate::diag::suggest::closest(name, names)
}

/// Checks `algorithms:`: names, implementations that exist (once each, in
/// one module) and agree with each other. Returns the algorithms whose
/// implementations all resolved.
pub(in crate::check) fn check_algorithms(
    req: &RunInput,
    functions: &[Function],
    diags: &mut Vec<Diagnostic>,
) -> Vec<Listed> {
    if req.config.algorithms.is_empty() {
        return Vec::new();
    }
    let mut by_key: HashMap<String, Vec<usize>> = HashMap::new();
    for (k, f) in functions.iter().enumerate() {
        by_key.entry(f.name.clone()).or_default().push(k);
        by_key.entry(format!("{}.{}", f.module, f.name)).or_default().push(k);
    }
    let mut out = Vec::new();
    for (name, config) in &req.config.algorithms {
        let span = req.locate().key(&yaml_path!["algorithms", name]);
        let error = |diags: &mut Vec<Diagnostic>, message: String, hint: Option<&str>| {
            if let Some(span) = span {
                let d = Diagnostic::error(span, message);
                diags.push(match hint {
                    Some(h) => d.hint(h),
                    None => d,
                });
            }
        };
        let mut ok = true;
        if !is_identifier(name) || is_py_keyword(name) || is_py_reserved(name) {
            error(diags, msg::bad_algorithm_name(name), Some(msg::HINT_ALGORITHM_NAME));
            ok = false;
        }
        let listed = config.implementations();
        if listed.is_empty() {
            error(diags, msg::empty_algorithm(name), None);
            continue;
        }
        // (function index, priority, where begen.yaml names it)
        let mut found: Vec<(usize, i64, Option<Span>)> = Vec::new();
        let mut seen = BTreeSet::new();
        for (i, entry) in listed.iter().enumerate() {
            let key = entry.function();
            let mut path: Vec<Seg> = yaml_path!["algorithms", name].to_vec();
            if let AlgorithmConfig::Full(_) = config {
                path.push("implementations".into());
            }
            path.push(i.into());
            if let ImplementationConfig::Full(_) = entry {
                path.push("function".into());
            }
            let at = req.locate().value(&path);
            let push = |diags: &mut Vec<Diagnostic>, message: String| {
                if let Some(at) = at {
                    diags.push(Diagnostic::error(at, message));
                }
            };
            match by_key.get(key).map(Vec::as_slice) {
                None | Some([]) => {
                    // A declared function that failed its own checks is
                    // reported there; it is still not an implementation.
                    // In name order: a tie goes to the same name on every run.
                    let mut names: Vec<&str> = by_key.keys().map(String::as_str).collect();
                    names.sort_unstable();
                    let near = crate::diag::suggest::closest(key, names);
                    push(diags, msg::unknown_implementation(name, key, near));
                    ok = false;
                }
                Some([k]) => {
                    if !seen.insert(*k) {
                        push(diags, msg::implementation_twice(name, key));
                        ok = false;
                    } else {
                        found.push((*k, entry.priority(), at));
                    }
                }
                Some(many) => {
                    let modules: Vec<String> = many.iter().map(|&k| functions[k].module.clone()).collect();
                    push(diags, msg::ambiguous_implementation(name, key, &modules));
                    ok = false;
                }
            }
        }
        if let Some(&(first, _, first_at)) = found.first() {
            for &(k, _, at) in &found[1..] {
                let differences = compare_implementations(&functions[first], &functions[k]);
                if let (Some(at), Some((head, rest))) = (at, differences.split_first()) {
                    let (a, b) = (&functions[first].name, &functions[k].name);
                    let mut d = Diagnostic::error(at, msg::implementations_disagree(name, a, b, head));
                    if let Some(first_at) = first_at {
                        d = d.with(first_at, msg::LABEL_REFERENCE_IMPLEMENTATION);
                    }
                    for more in rest {
                        d = d.note(more.clone());
                    }
                    diags.push(d.hint(msg::HINT_IMPLEMENTATIONS));
                    ok = false;
                }
            }
        }
        if ok {
            let implementations = found
                .iter()
                .map(|&(k, priority, _)| (functions[k].module.clone(), functions[k].name.clone(), priority))
                .collect();
            out.push(Listed { name: name.clone(), fallback: config.fallback(), span, implementations });
        }
    }
    out
}

/// The algorithms of the built library: implementations as indices into
/// the final function list, highest priority first. An algorithm all of
/// whose implementations are not built (CUDA ones under `--platform cpu`)
/// is left out with a warning; one whose name would hide a module or
/// function at the Python module's top level is an error.
pub(in crate::check) fn resolve(
    listed: Vec<Listed>,
    functions: &[Function],
    modules: &[Module],
    namespaced: bool,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Algorithm> {
    // Most libraries declare no algorithm: nothing to index.
    if listed.is_empty() {
        return Vec::new();
    }
    let index: HashMap<(&str, &str), usize> =
        functions.iter().enumerate().map(|(k, f)| ((f.module.as_str(), f.name.as_str()), k)).collect();
    let mut top: HashMap<&str, String> = HashMap::new();
    if namespaced {
        for m in modules {
            top.insert(m.py_name.as_str(), format!("module `{}`", m.name));
        }
    } else {
        for f in functions {
            top.insert(f.py_name.as_str(), format!("function '{}'", f.name));
        }
    }
    let mut out = Vec::new();
    for a in listed {
        if let Some(what) = top.get(a.name.as_str()) {
            if let Some(span) = a.span {
                diags.push(
                    Diagnostic::error(span, msg::algorithm_name_taken(&a.name, what)).hint(msg::HINT_ALGORITHM_NAME),
                );
            }
            continue;
        }
        let mut implementations: Vec<Implementation> = a
            .implementations
            .iter()
            .filter_map(|(module, name, priority)| {
                index
                    .get(&(module.as_str(), name.as_str()))
                    .map(|&function| Implementation { function, priority: *priority })
            })
            .collect();
        if implementations.is_empty() {
            if let Some(span) = a.span {
                diags.push(Diagnostic::warning(span, msg::algorithm_not_built(&a.name)));
            }
            continue;
        }
        implementations.sort_by_key(|i| std::cmp::Reverse(i.priority));
        out.push(Algorithm { name: a.name, fallback: a.fallback, implementations });
    }
    out
}

/// The values of `unsupported:` for `f` as Python literals, checked: each
/// names an attribute of `f`, and each value fits its type. Problems are
/// reported at `key`'s entry in begen.yaml.
pub(in crate::check) fn check_unsupported(
    req: &RunInput,
    key: &str,
    opts: &FunctionConfig,
    f: &Function,
    diags: &mut Vec<Diagnostic>,
) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for (attr, values) in &opts.unsupported {
        let Some((_, ty)) = f.attrs().find(|(p, _)| *p.name == **attr) else {
            let other = f.attributes().find(|(p, _)| *p.name == **attr);
            if let Some(span) = req.locate().key(&yaml_path!["functions", key, "unsupported", attr]) {
                let text = match other {
                    Some((_, ty)) => msg::unsupported_not_scalar(&f.name, attr, &ty),
                    None => {
                        let near = crate::diag::suggest::closest(attr, f.attributes().map(|(p, _)| &*p.name));
                        msg::unsupported_not_an_attribute(&f.name, attr, near)
                    }
                };
                diags.push(Diagnostic::error(span, text));
            }
            continue;
        };
        let mut literals = Vec::new();
        for v in values {
            match py_literal(v, ty) {
                Some(text) => literals.push(text),
                None => {
                    let shown = serde_yaml_ng::to_string(v).unwrap_or_default().trim().to_string();
                    if let Some(span) = req.locate().key(&yaml_path!["functions", key, "unsupported", attr]) {
                        diags.push(Diagnostic::error(span, msg::bad_unsupported_value(&f.name, attr, ty, &shown)));
                    }
                }
            }
        }
        out.push((attr.clone(), literals));
    }
    out
}

/// A YAML value as the Python literal of an attribute value of type `ty`;
/// `None` when it is not one.
pub(in crate::check) fn py_literal(v: &serde_yaml_ng::Value, ty: AttrType) -> Option<String> {
    use serde_yaml_ng::Value;
    match (ty.kind(), v) {
        (ScalarKind::Bool, Value::Bool(b)) => Some(if *b { "True" } else { "False" }.into()),
        (ScalarKind::Int { .. }, Value::Number(n)) => {
            let v = n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from))?;
            let (lo, hi) = ty.int_range()?;
            (lo..=hi).contains(&v).then(|| v.to_string())
        }
        (ScalarKind::Float | ScalarKind::FloatBits | ScalarKind::Complex, Value::Number(n)) => {
            let x = n.as_f64()?;
            // NaN is never equal to itself: the runtime compares it by isnan.
            Some(if x.is_nan() {
                "float('nan')".to_string()
            } else if x.is_finite() {
                format!("{x:?}")
            } else {
                format!("float('{x}')")
            })
        }
        (
            ScalarKind::Bool | ScalarKind::Int { .. } | ScalarKind::Float | ScalarKind::FloatBits | ScalarKind::Complex,
            _,
        ) => None,
    }
}

/// Resolves and checks each `vjp:`: the backward kernel is a function of
/// the forward's module that fits it. A backward that does not is an error
/// and the option is dropped. One that is declared (`declared`: every
/// declared name, also of kernels that failed their own checks) but failed
/// has its own error: the option is dropped without another.
pub(in crate::check) fn check_vjps(
    req: &RunInput,
    functions: &mut [Function],
    declared: &BTreeSet<String>,
    diags: &mut Vec<Diagnostic>,
) {
    let mut reported = BTreeSet::new();
    for k in 0..functions.len() {
        let residuals_failed = check_residuals(req, &mut functions[k], diags);
        if residuals_failed {
            // The rule would be handed outputs the Python function returns.
            functions[k].options.python_vjp = None;
        }
        let Some(raw) = functions[k].options.vjp.clone() else { continue };
        if residuals_failed {
            // Compared without the residuals, the backward kernel would not
            // fit for that reason alone: the residuals' error is the one.
            functions[k].options.vjp = None;
            continue;
        }
        let f = &functions[k];
        let key = [format!("{}.{}", f.module, f.name), f.name.clone()]
            .into_iter()
            .find(|key| req.config.functions.get(key).is_some_and(|o| o.vjp.as_deref() == Some(raw.as_str())))
            .unwrap_or_else(|| f.name.clone());
        let at = req.locate().value(&yaml_path!["functions", &key, "vjp"]);
        let mut report = |d: Diagnostic| {
            if reported.insert(d.message.clone()) {
                diags.push(d);
            }
        };
        let bwd = functions
            .iter()
            .position(|g| g.module == f.module && (g.name == raw || format!("{}.{}", g.module, g.name) == raw));
        let Some(b) = bwd else {
            let failed = declared.contains(&raw) || declared.contains(&format!("{}.{}", f.module, raw));
            if let Some(at) = at.filter(|_| !failed) {
                let near = near_in_module(functions, &f.module, &raw);
                report(Diagnostic::error(at, msg::unknown_vjp(&f.name, &raw, &f.module, near)).hint(msg::HINT_VJP));
            }
            functions[k].options.vjp = None;
            continue;
        };
        let bwd = &functions[b];
        let (mut bind, mut grads) = (Vec::new(), Vec::new());
        let (head, rest) = match compare_vjp(f, bwd, &mut bind, &mut grads) {
            Err(counts) => (counts, Vec::new()),
            Ok(problems) if problems.is_empty() => {
                functions[k].options.vjp = Some(bwd.name.clone());
                functions[k].options.vjp_bind = bind;
                functions[k].options.vjp_grads = grads;
                continue;
            }
            Ok(problems) => (msg::vjp_mismatch(&f.name, &bwd.name, &problems[0]), problems[1..].to_vec()),
        };
        if let Some(at) = at {
            let mut d = Diagnostic::error(at, head);
            for more in rest {
                d = d.note(more);
            }
            report(d.hint(msg::HINT_VJP));
        }
        functions[k].options.vjp = None;
    }
}

/// `residuals:` names outputs (`ret`) of a kernel with a `vjp:`, and
/// leaves at least one output to return. A wrong one is an error at its
/// entry, and the list is dropped; returns whether it was.
fn check_residuals(req: &RunInput, f: &mut Function, diags: &mut Vec<Diagnostic>) -> bool {
    if f.options.residuals.is_empty() {
        return false;
    }
    let key = [format!("{}.{}", f.module, f.name), f.name.clone()]
        .into_iter()
        .find(|key| req.config.functions.get(key).is_some_and(|o| o.residuals.is_some()))
        .unwrap_or_else(|| f.name.clone());
    let at = |i: Option<usize>| match i {
        Some(i) => req.locate().value(&yaml_path!["functions", &key, "residuals", i]),
        None => req.locate().value(&yaml_path!["functions", &key, "residuals"]),
    };
    let before = diags.len();
    let rets: Vec<&str> = f.params.iter().filter(|p| matches!(p.token, Token::Ret(_))).map(|p| &*p.name).collect();
    if f.options.vjp.is_none()
        && f.options.python_vjp.is_none()
        && let Some(span) = at(None)
    {
        diags.push(Diagnostic::error(span, msg::residuals_without_vjp(&f.name)));
    }
    for (i, name) in f.options.residuals.iter().enumerate() {
        if !rets.contains(&name.as_str())
            && let Some(span) = at(Some(i))
        {
            let near = crate::diag::suggest::closest(name, rets.iter().copied());
            diags.push(Diagnostic::error(span, msg::residual_not_output(&f.name, name, &rets, near)));
        }
    }
    if diags.len() == before
        && rets.iter().all(|r| f.options.residuals.iter().any(|n| n == r))
        && let Some(span) = at(None)
    {
        diags.push(Diagnostic::error(span, msg::residuals_all(&f.name)));
    }
    if diags.len() != before {
        f.options.residuals.clear();
        return true;
    }
    false
}

/// Dimension names are a function's own: two contracts agree when one
/// renaming maps the first function's names onto the second's.
#[derive(Default)]
pub(in crate::check) struct DimMap {
    there: HashMap<String, String>,
    back: HashMap<String, String>,
}

impl DimMap {
    fn pair(&mut self, a: &str, b: &str) -> bool {
        let there = self.there.entry(a.to_string()).or_insert_with(|| b.to_string()).clone();
        let back = self.back.entry(b.to_string()).or_insert_with(|| a.to_string()).clone();
        there == b && back == a
    }
}

/// Whether two contracts agree. `strict`: an untyped side agrees only with
/// an untyped side, and a fixed extent only with the same fixed extent (an
/// algorithm's implementations); otherwise what only one side says is not
/// compared (a backward kernel `b` may be less specific than `a`, never
/// more: a fixed extent where `a` names a dimension would fit one extent
/// of it only, and fail at run time for the others).
pub(in crate::check) fn contracts_agree(
    a: Option<&TensorType>,
    b: Option<&TensorType>,
    dims: &mut DimMap,
    strict: bool,
) -> bool {
    let (a, b) = match (a, b) {
        (Some(a), Some(b)) => (a, b),
        (None, None) => return true,
        _ => return !strict,
    };
    if a.dtype != b.dtype {
        return false;
    }
    match (&a.dims, &b.dims) {
        (Some(x), Some(y)) => {
            x.len() == y.len()
                && x.iter().zip(y).all(|(p, q)| match (p, q) {
                    (Extent::Fixed(m), Extent::Fixed(n)) => m == n,
                    (Extent::Named(m), Extent::Named(n)) => dims.pair(m, n),
                    // Rests pair like names, apart from them (`...n` is no dimension `n`).
                    (Extent::Rest(m), Extent::Rest(n)) => {
                        dims.pair(&Extent::rest_key(m.as_deref()), &Extent::rest_key(n.as_deref()))
                    }
                    (Extent::Rest(_), _) | (_, Extent::Rest(_)) => false,
                    (Extent::Named(_), Extent::Fixed(_)) => false,
                    (Extent::Fixed(_), Extent::Named(_)) => !strict,
                })
        }
        (None, None) => true,
        _ => !strict,
    }
}

pub(in crate::check) fn contract_text(c: Option<&TensorType>) -> String {
    msg::contract_text(c.map(|c| c.to_string()).as_deref())
}

fn inputs(f: &Function) -> Vec<&Param> {
    f.input_params().collect()
}

fn outputs(f: &Function) -> Vec<&Param> {
    f.output_params().collect()
}

fn role(t: &Token) -> &'static str {
    msg::role(t)
}

/// `b`'s contract with `a`'s element type: implementations that serve
/// other dtypes are compared by shape.
fn with_dtype_of(a: Option<&TensorType>, b: Option<&TensorType>) -> Option<TensorType> {
    b.map(|b| TensorType { dtype: a.map_or_else(|| b.dtype.clone(), |a| a.dtype.clone()), dims: b.dims.clone() })
}

/// Every way `b` differs from `a` as an implementation of one algorithm.
/// Implementations whose inputs take other element types serve other
/// dtypes (the algorithm's function chooses by the inputs' dtypes), so
/// their tensors are compared by shape; with the same input dtypes on one
/// platform, every element type must agree.
fn compare_implementations(a: &Function, b: &Function) -> Vec<String> {
    let mut out = Vec::new();
    let by_dtype = a.input_dtypes() != b.input_dtypes();
    let agree = |p: &Param, q: &Param, dims: &mut DimMap| {
        let (x, y) = (p.token.contract(), q.token.contract());
        if by_dtype {
            contracts_agree(x, with_dtype_of(x, y).as_ref(), dims, true)
        } else {
            contracts_agree(x, y, dims, true)
        }
    };
    let (ai, bi, ao, bo) = (inputs(a), inputs(b), outputs(a), outputs(b));
    if ai.len() != bi.len() {
        out.push(msg::impl_inputs(&a.name, ai.len(), &b.name, bi.len()));
    }
    if ao.len() != bo.len() {
        out.push(msg::impl_outputs(&a.name, ao.len(), &b.name, bo.len()));
    }
    // `input 0 is <this> in `a` ('x') but <that> in `b` ('y')`.
    let differs = |what: &str, k: usize, p: &Param, this: String, q: &Param, that: String| {
        msg::impl_param_differs(what, k, (&this, &a.name, &p.name), (&that, &b.name, &q.name))
    };
    let contracts = |p: &Param| contract_text(p.token.contract());
    let mut dims = DimMap::default();
    for (k, (p, q)) in ai.iter().zip(&bi).enumerate() {
        if role(&p.token) != role(&q.token) {
            out.push(differs("input", k, p, role(&p.token).to_string(), q, role(&q.token).to_string()));
        } else if !agree(p, q, &mut dims) {
            out.push(differs("input", k, p, contracts(p), q, contracts(q)));
        }
    }
    for (k, (p, q)) in ao.iter().zip(&bo).enumerate() {
        if matches!(p.token, Token::InOut(_)) || matches!(q.token, Token::InOut(_)) {
            continue; // compared as inputs
        }
        if !agree(p, q, &mut dims) {
            out.push(differs("output", k, p, contracts(p), q, contracts(q)));
        }
    }
    for (p, ty) in a.attributes() {
        match b.attributes().find(|(q, _)| q.name == p.name) {
            None => out.push(msg::impl_attr_missing(&p.name, &a.name, &b.name)),
            Some((_, other)) if other != ty => {
                out.push(msg::impl_attr_type(&p.name, &ty.to_string(), &a.name, &other.to_string(), &b.name))
            }
            // The algorithm's function has the first one's signature.
            Some((q, _)) if q.default != p.default => {
                let shown = |d: &Option<Box<str>>| d.as_deref().unwrap_or("none").to_string();
                out.push(msg::impl_attr_default(&p.name, &shown(&p.default), &a.name, &shown(&q.default), &b.name))
            }
            Some(_) => {}
        }
    }
    for (q, _) in b.attributes() {
        if !a.attributes().any(|(p, _)| p.name == q.name) {
            out.push(msg::impl_attr_missing(&q.name, &b.name, &a.name));
        }
    }
    if a.consts != b.consts {
        out.push(msg::impl_consts(&a.name, &consts_text(a), &b.name, &consts_text(b)));
    }
    for (key, ours, theirs) in
        [("shard", &a.options.shard, &b.options.shard), ("reduce", &a.options.reduce, &b.options.reduce)]
    {
        // `a`'s names in `b`'s words, where its contracts renamed them.
        let mapped: BTreeSet<&str> =
            ours.iter().map(|d| dims.there.get(d).map_or(d.as_str(), String::as_str)).collect();
        if mapped != theirs.iter().map(String::as_str).collect() {
            out.push(msg::impl_sharding(key, &a.name, &ours.join(", "), &b.name, &theirs.join(", ")));
        }
    }
    match (&a.options.vjp, &b.options.vjp) {
        (Some(v), None) => out.push(msg::impl_gradient(&a.name, v, &b.name)),
        (None, Some(v)) => out.push(msg::impl_gradient(&b.name, v, &a.name)),
        _ => {}
    }
    out
}

pub(in crate::check) fn consts_text(f: &Function) -> String {
    let consts: Vec<(&str, &[String])> = f.consts.iter().map(|k| (k.name.as_str(), k.values.as_slice())).collect();
    msg::consts_text(&consts)
}

/// Whether input `p` of `f` takes no cotangent: its dtype is a fixed
/// integer (or bool) one, whose cotangent jax drops.
fn integer_input(p: &Param) -> bool {
    p.token.contract().is_some_and(|c| {
        matches!(c.dtype, crate::model::ElementType::Dtype(t)
            if !matches!(t.kind(), ScalarKind::Float | ScalarKind::FloatBits | ScalarKind::Complex))
    })
}

/// Every way `bwd` fails to be the backward kernel of `fwd`; `Err` with
/// the whole message when it does not even take and return the right
/// number of tensors. `grads_out`: the inputs `bwd` returns cotangents
/// for, where it leaves out the integer inputs' (else left empty).
fn compare_vjp(
    fwd: &Function,
    bwd: &Function,
    bind_out: &mut Vec<VjpArg>,
    grads_out: &mut Vec<usize>,
) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mismatch = |what: String| what;
    let (fi, fo, bi, bo) = (inputs(fwd), outputs(fwd), inputs(bwd), outputs(bwd));
    // One cotangent per input, or one per input that is not an integer.
    let needed: Vec<usize> = (0..fi.len()).filter(|&k| !integer_input(fi[k])).collect();
    let grads: Vec<usize> =
        if needed.len() < fi.len() && bo.len() == needed.len() { needed.clone() } else { (0..fi.len()).collect() };
    if grads.len() < fi.len() {
        *grads_out = grads.clone();
    }
    if fwd.platform != bwd.platform {
        out.push(mismatch(msg::vjp_platform(&fwd.name, fwd.platform.as_str(), &bwd.name, bwd.platform.as_str())));
    }
    if let Some(p) = bwd.params.iter().find(|p| bwd.in_place(p)) {
        out.push(mismatch(msg::vjp_inout(&p.name)));
    }
    // A list's cotangent would be a list: not bound yet.
    for g in [fwd, bwd] {
        if let Some(p) = g.params.iter().find(|p| p.token.is_list()) {
            out.push(mismatch(msg::vjp_list(&g.name, &p.name)));
            return Ok(out);
        }
    }
    // The outputs the Python function returns: each gets a cotangent.
    let public: Vec<&Param> =
        fo.iter().copied().filter(|p| !fwd.options.residuals.iter().any(|r| *r == *p.name)).collect();
    // By position as always (the inputs, then one cotangent per output)
    // unless the counts say it takes residuals, or the forward keeps some.
    let by_position = fwd.options.residuals.is_empty() && bi.len() == fi.len() + fo.len();
    if !by_position && bo.len() == grads.len() {
        return compare_by_name(fwd, bwd, &public, &grads, out).map(|(bind, out)| {
            *bind_out = bind;
            out
        });
    }
    if bi.len() != fi.len() + fo.len() || bo.len() != grads.len() {
        if out.is_empty() {
            let integers: Vec<&str> = (0..fi.len()).filter(|k| !needed.contains(k)).map(|k| &*fi[k].name).collect();
            return Err(msg::vjp_counts(
                &fwd.name,
                &bwd.name,
                (bi.len(), bo.len()),
                (fi.len() + fo.len(), fi.len()),
                &integers,
            ));
        }
        return Ok(out);
    }
    // By name first: a parameter named like another tensor of the forward
    // (a residual-first backward whose counts line up) would read it at
    // the wrong size.
    let want_in: Vec<(String, &Param)> = fi
        .iter()
        .enumerate()
        .map(|(k, p)| (msg::vjp_input(k), *p))
        .chain(fo.iter().enumerate().map(|(k, p)| (msg::vjp_cotangent("output", k), *p)))
        .collect();
    let want_out: Vec<(String, &Param)> = grads.iter().map(|&k| (msg::vjp_cotangent("input", k), fi[k])).collect();
    out.extend(misnamed(fwd, bwd, (&want_in, &bi), (&want_out, &bo)));
    let mut dims = DimMap::default();
    let mut agree = |what: String, a: &Param, b: &Param, out: &mut Vec<String>| {
        if !contracts_agree(a.token.contract(), b.token.contract(), &mut dims, false) {
            let (this, that) = (contract_text(a.token.contract()), contract_text(b.token.contract()));
            out.push(mismatch(msg::vjp_contract(&what, (&this, &a.name, &fwd.name), (&that, &b.name, &bwd.name))));
        }
    };
    for (k, p) in fi.iter().enumerate() {
        agree(msg::vjp_input(k), p, bi[k], &mut out);
    }
    for (k, p) in fo.iter().enumerate() {
        agree(msg::vjp_cotangent("output", k), p, bi[fi.len() + k], &mut out);
    }
    for (j, &k) in grads.iter().enumerate() {
        agree(msg::vjp_cotangent("input", k), fi[k], bo[j], &mut out);
    }
    attrs_and_consts(fwd, bwd, &mut out);
    Ok(out)
}

/// The backward's attributes are the forward's (by name and type), and
/// their template constants equal.
fn attrs_and_consts(fwd: &Function, bwd: &Function, out: &mut Vec<String>) {
    for (q, ty) in bwd.attributes() {
        match fwd.attributes().find(|(p, _)| p.name == q.name) {
            None => out.push(msg::vjp_attr_missing(&q.name, &fwd.name)),
            Some((_, t)) if t != ty => {
                out.push(msg::vjp_attr_type(&q.name, &t.to_string(), &fwd.name, &ty.to_string(), &bwd.name))
            }
            Some(_) => {}
        }
    }
    if fwd.consts != bwd.consts {
        out.push(msg::vjp_consts(&fwd.name, &consts_text(fwd), &bwd.name, &consts_text(bwd)));
    }
}

/// A backward kernel that takes residuals, bound by name: an input named
/// like an input of the forward receives it, one named like an output of
/// the forward receives that output (a residual), and the others are the
/// cotangents of the returned outputs, in order. Its outputs are one
/// cotangent per forward input at the positions `grads`, in order. Returns
/// the binding and every problem; `Err` when the cotangents do not count
/// up.
fn compare_by_name(
    fwd: &Function,
    bwd: &Function,
    public: &[&Param],
    grads: &[usize],
    mut out: Vec<String>,
) -> Result<(Vec<VjpArg>, Vec<String>), String> {
    let (fi, fo, bi, bo) = (inputs(fwd), outputs(fwd), inputs(bwd), outputs(bwd));
    let mut bind = Vec::new();
    let mut cotangents = 0;
    for q in &bi {
        if let Some(k) = fi.iter().position(|p| p.name == q.name) {
            bind.push(VjpArg::Input(k));
        } else if let Some(k) = fo.iter().position(|p| p.name == q.name) {
            bind.push(VjpArg::Output(k));
        } else {
            bind.push(VjpArg::Cotangent(cotangents));
            cotangents += 1;
        }
    }
    if cotangents != public.len() {
        let residuals: Vec<&str> =
            bi.iter().filter(|q| fo.iter().any(|p| p.name == q.name)).map(|q| &*q.name).collect();
        return Err(msg::vjp_cotangent_count(&fwd.name, &bwd.name, cotangents, public.len(), &residuals));
    }
    let mut dims = DimMap::default();
    let mut agree = |what: String, a: &Param, b: &Param, out: &mut Vec<String>| {
        if !contracts_agree(a.token.contract(), b.token.contract(), &mut dims, false) {
            let (this, that) = (contract_text(a.token.contract()), contract_text(b.token.contract()));
            out.push(msg::vjp_contract(&what, (&this, &a.name, &fwd.name), (&that, &b.name, &bwd.name)));
        }
    };
    for (arg, q) in bind.iter().zip(&bi) {
        match *arg {
            VjpArg::Input(k) => agree(msg::vjp_input(k), fi[k], q, &mut out),
            VjpArg::Output(k) => agree(msg::related_output(k), fo[k], q, &mut out),
            VjpArg::Cotangent(k) => agree(msg::vjp_cotangent("output", k), public[k], q, &mut out),
        }
    }
    for (j, &k) in grads.iter().enumerate() {
        agree(msg::vjp_cotangent("input", k), fi[k], bo[j], &mut out);
    }
    attrs_and_consts(fwd, bwd, &mut out);
    Ok((bind, out))
}

/// Where a kernel `g` related to `f` (its backward, tangent or transpose
/// kernel) names a parameter like a tensor of `f` other than the one it
/// receives: an input named like any other input or output of `f`, an
/// output named like another input of `f` (outputs are often all `out`).
/// `inputs` and `outputs`: per position, (what it is, `f`'s parameter whose
/// value, cotangent or tangent it receives), and `g`'s parameter there.
pub(in crate::check) fn misnamed(
    f: &Function,
    g: &Function,
    inputs: (&[(String, &Param)], &[&Param]),
    outputs: (&[(String, &Param)], &[&Param]),
) -> Vec<String> {
    let mut out = Vec::new();
    let fi: Vec<&Param> = f.input_params().collect();
    let fo: Vec<&Param> = f.output_params().filter(|p| !matches!(p.token, Token::InOut(_))).collect();
    for (is_output, (want, got)) in [(false, inputs), (true, outputs)] {
        for ((what, p), q) in want.iter().zip(got) {
            if q.name == p.name {
                continue;
            }
            let named =
                fi.iter().enumerate().find(|(_, r)| r.name == q.name).map(|(k, _)| msg::vjp_input(k)).or_else(|| {
                    let k = fo.iter().position(|r| r.name == q.name).filter(|_| !is_output)?;
                    Some(msg::related_output(k))
                });
            if let Some(named) = named {
                out.push(msg::related_misnamed(what, &p.name, &f.name, &q.name, &g.name, &named));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{DimMap, py_literal};
    use crate::model::AttrType;

    fn yaml(text: &str) -> serde_yaml_ng::Value {
        serde_yaml_ng::from_str(text).unwrap()
    }

    #[test]
    fn unsupported_values_become_python_literals_of_their_type() {
        assert_eq!(py_literal(&yaml("true"), AttrType::Bool).as_deref(), Some("True"));
        assert_eq!(py_literal(&yaml("1"), AttrType::Bool), None);
        assert_eq!(py_literal(&yaml("-128"), AttrType::Int8).as_deref(), Some("-128"));
        assert_eq!(py_literal(&yaml("128"), AttrType::Int8), None);
        assert_eq!(py_literal(&yaml("1.5"), AttrType::Int32), None);
        assert_eq!(
            py_literal(&yaml("18446744073709551615"), AttrType::UInt64).as_deref(),
            Some("18446744073709551615")
        );
        assert_eq!(py_literal(&yaml("2"), AttrType::Float32).as_deref(), Some("2.0"));
        assert_eq!(py_literal(&yaml("1.0e-5"), AttrType::Float64).as_deref(), Some("1e-5"));
        assert_eq!(py_literal(&yaml(".inf"), AttrType::Float16).as_deref(), Some("float('inf')"));
        assert_eq!(py_literal(&yaml(".nan"), AttrType::Float32).as_deref(), Some("float('nan')"));
        assert_eq!(py_literal(&yaml(".NaN"), AttrType::Complex64).as_deref(), Some("float('nan')"));
        assert_eq!(py_literal(&yaml("x"), AttrType::Float32), None);
    }

    #[test]
    fn dimension_names_map_one_to_one() {
        let mut dims = DimMap::default();
        assert!(dims.pair("n", "m") && dims.pair("k", "j") && dims.pair("n", "m"));
        assert!(!dims.pair("n", "j"), "j is k's already");
        assert!(!dims.pair("q", "m"), "m is n's already");
    }
}
