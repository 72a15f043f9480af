//! Reverse mode from `linear:` + `transpose:` (an input alone or a group
//! together) and from a `jvp:` tangent kernel that is itself linear with a
//! transpose: the backward pass calls the transpose kernels' ops on the
//! cotangents, as the JAX side's primitives transpose them.
//!
//! A kernel linear in an input is its own derivative there, so the input's
//! cotangent is the transpose kernel applied to the output cotangents with
//! the other inputs fixed; a group's transpose gives every member's at once,
//! which is also each member's alone (the kernel is affine in any subset of
//! the group with the rest fixed). A tangent kernel is linear in all its
//! tangents together, so transposing one item of it with the other tangents
//! zero gives those inputs' cotangents.

use std::fmt::Write as _;

use super::{Op, pylit};
use crate::model::{ElementType, ScalarKind, group_key};

/// What a transpose kernel's op is passed, from the forward's point of view.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Arg {
    /// The forward's tensor input at this position (saved).
    Input(usize),
    /// Zeros shaped like the forward's input at this position (another
    /// tangent of a tangent kernel).
    Zeros(usize),
    /// The cotangent of the forward's output at this position.
    Cotangent(usize),
}

/// One transpose call: the op (index among the ops), its arguments, and
/// the forward inputs its outputs are the cotangents of, in order.
#[derive(Debug, Clone)]
struct Term {
    op: usize,
    args: Vec<Arg>,
    covers: Vec<usize>,
}

/// A forward's reverse-mode rule from transposes.
#[derive(Debug, Clone)]
pub(super) struct Rule {
    terms: Vec<Term>,
    /// Where the rule comes from, for the error of an input it has no
    /// derivative in.
    how: &'static str,
}

/// The transposes of a kernel with `linear:` or a `jvp:` whose tangent
/// kernel has them, over the ops; None when it declares neither, Err with
/// the reason when a kernel it needs is left out.
pub(super) fn rule(fwd: &Op<'_>, ops: &[Op<'_>]) -> Option<Result<Rule, String>> {
    let f = fwd.f;
    let find = |name: &str, role: &str| super::locate(ops, f, name, role);
    if let Some(j) = &f.options.jvp {
        // The tangent kernel takes the inputs, then one tangent per float input.
        let t = match find(j, "tangent kernel") {
            Ok(t) => t,
            Err(e) => return Some(Err(e)),
        };
        let tangent = &ops[t];
        if tangent.f.options.transpose.is_empty() {
            return None;
        }
        let n = fwd.inputs.len();
        let floats: Vec<usize> = (0..n).filter(|&k| is_float(fwd, k)).collect();
        let at = |p: usize| if p < n { Arg::Input(p) } else { Arg::Zeros(floats.get(p - n).copied().unwrap_or(0)) };
        return Some(terms(tangent, &find, &at, true).map(|terms| Rule { terms, how: "its `jvp` tangent kernel's" }));
    }
    if f.options.linear.is_empty() && f.options.groups.is_empty() {
        return None;
    }
    Some(terms(fwd, &find, &Arg::Input, false).map(|terms| Rule { terms, how: "its" }))
}

/// The terms of `op`'s `transpose:` entries: `at` says what each of `op`'s
/// inputs is in the forward (the forward itself, or its tangent kernel).
fn terms(
    op: &Op<'_>,
    find: &dyn Fn(&str, &str) -> Result<usize, String>,
    at: &dyn Fn(usize) -> Arg,
    tangents_only: bool,
) -> Result<Vec<Term>, String> {
    let f = op.f;
    let index = |name: &str| op.inputs.iter().position(|p| *p.name == *name);
    let mut out = Vec::new();
    for (param, kernel) in &f.options.transpose {
        let names = group_key(param).unwrap_or_else(|| vec![param.clone()]);
        let inside: Vec<usize> = names.iter().filter_map(|p| index(p)).collect();
        let k = find(kernel, "transpose kernel")?;
        let named = f.options.transpose_bind.iter().find(|b| b.param == *param).and_then(|b| b.args.as_ref());
        // The other inputs in order, then the cotangents, as the JAX side
        // passes them; or the arguments begen.yaml names (checked).
        let args: Vec<Arg> = match named {
            Some(names) => names
                .iter()
                .filter_map(|n| match index(n) {
                    Some(j) => Some(at(j)),
                    None => n.strip_prefix("ct").map(|c| Arg::Cotangent(c.parse().unwrap_or(0))),
                })
                .collect(),
            None => (0..op.inputs.len())
                .filter(|j| !inside.contains(j))
                .map(at)
                .chain((0..op.rets.len()).map(Arg::Cotangent))
                .collect(),
        };
        // Each transposed input stands for a forward input (the input
        // itself, or the one whose tangent it is).
        let covers: Vec<usize> = inside
            .iter()
            .map(|&j| match at(j) {
                Arg::Input(i) | Arg::Zeros(i) | Arg::Cotangent(i) => i,
            })
            .collect();
        // A tangent kernel's transpose in a primal input is no cotangent.
        if tangents_only && inside.iter().any(|&j| matches!(at(j), Arg::Input(_))) {
            continue;
        }
        out.push(Term { op: k, args, covers });
    }
    Ok(out)
}

/// Whether the forward's tensor input `k` has floating elements.
fn is_float(op: &Op<'_>, k: usize) -> bool {
    op.inputs[k].token.contract().is_some_and(|c| match &c.dtype {
        ElementType::Dtype(t) => matches!(t.kind(), ScalarKind::Float | ScalarKind::FloatBits | ScalarKind::Complex),
        ElementType::Param(_) => true,
    })
}

/// The autograd registration of `fwd` from its rule: the inputs saved, and
/// per term a transpose op called only when one of the inputs it gives a
/// cotangent for needs one. A float input no term covers raises when its
/// gradient is asked for (never a silent zero); integer inputs get `None`.
pub(super) fn py(ns: &str, fwd: &Op<'_>, rule: &Rule, ops: &[Op<'_>], out: &mut String) {
    let n = fwd.inputs.len();
    let name = &fwd.name;
    let _ = writeln!(out, "def _setup_{name}(ctx, inputs, output, keyword_only_inputs=None):");
    let _ = writeln!(out, "    ctx.save_for_backward(*inputs[:{n}])");
    for name in fwd.attrs.iter().map(|p| p.py_name.to_string()).chain(fwd.value_consts().map(|k| k.py_name.clone())) {
        let _ = writeln!(out, "    ctx.{0} = keyword_only_inputs[{1}]", name, pylit(&name));
    }
    super::save_defines(fwd, out);
    let _ = writeln!(out, "\n");
    let _ = writeln!(out, "def _backward_{name}(ctx, *grads):");
    let _ = writeln!(out, "    _begen_i = ctx.saved_tensors");
    let _ = writeln!(out, "    _begen_need = ctx.needs_input_grad");
    let _ = writeln!(out, "    _begen_r = [None] * {n}");
    let mut covered = Vec::new();
    for term in &rule.terms {
        let t = &ops[term.op];
        let need: Vec<String> = term.covers.iter().map(|k| format!("_begen_need[{k}]")).collect();
        let mut args: Vec<String> = term
            .args
            .iter()
            .map(|a| match a {
                Arg::Input(k) => format!("_begen_i[{k}]"),
                Arg::Zeros(k) => format!("_torch.zeros_like(_begen_i[{k}])"),
                Arg::Cotangent(k) => format!("grads[{k}].contiguous()"),
            })
            .collect();
        for p in &t.attrs {
            let attr = p.token.attr_name().unwrap_or_default();
            if let Some(own) = fwd.attrs.iter().find(|q| q.token.attr_name() == Some(attr)) {
                args.push(format!("{}=ctx.{}", p.py_name, own.py_name));
            }
        }
        args.extend(super::shared_consts(fwd, t));
        let _ = writeln!(out, "    if {}:", need.join(" or "));
        let _ = writeln!(out, "        _begen_g = _torch.ops.{ns}.{}({})", t.name, args.join(", "));
        let _ = writeln!(out, "        _begen_g = _begen_g if isinstance(_begen_g, tuple) else (_begen_g,)");
        for (slot, &k) in term.covers.iter().enumerate() {
            if !covered.contains(&k) && is_float(fwd, k) {
                let _ = writeln!(out, "        _begen_r[{k}] = _begen_g[{slot}]");
                covered.push(k);
            }
        }
    }
    // The float inputs no transpose gives a cotangent for: asked for, an
    // error in the JAX side's words.
    for k in (0..n).filter(|&k| is_float(fwd, k) && !covered.contains(&k)) {
        let message = format!(
            "{}: no derivative in '{}': begen.yaml declares it neither `linear` (alone or in a group) with a \
             `transpose` in {} declarations nor gives the kernel a `vjp`",
            fwd.f.name, fwd.inputs[k].py_name, rule.how
        );
        let _ = writeln!(out, "    if _begen_need[{k}]:\n        raise TypeError({})", pylit(&message));
    }
    let _ = writeln!(out, "    return tuple(_begen_r)\n\n");
    let _ = writeln!(
        out,
        "_torch.library.register_autograd({}, _backward_{name}, setup_context=_setup_{name})\n\n",
        pylit(&format!("{ns}::{name}"))
    );
}
