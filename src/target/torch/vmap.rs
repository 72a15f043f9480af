//! `torch.library.register_vmap` from the JAX side's batching rules: the
//! sequential rule (one call per element of the batch, stacked), and
//! `vmap: {fold: ...}` (one call with the batch folded into a contract
//! dimension, where only folded inputs are batched). The rules themselves
//! are `_begen_vmap` in the module's runtime (runtime.py).
//!
//! A kernel that updates a tensor in place has no rule: a batched call
//! would update slices of a copy, so torch.func.vmap refuses it (torch's
//! own error: the op has no batching rule).

use std::fmt::Write as _;

use super::{Op, pylit};
use crate::model::Token;

/// The registration of `op`'s batching rule, if it has one.
pub(super) fn py(op: &Op<'_>, out: &mut String) {
    if op.rets.is_empty() || op.inputs.iter().any(|p| matches!(p.token, Token::InOut(_))) {
        return;
    }
    let n = op.rets.len();
    let fold = match &op.f.options.fold_plan {
        Some(plan) if plan.outputs.len() == n => {
            let pairs: Vec<String> = plan.inputs.iter().map(|(k, a)| format!("({k}, {a})")).collect();
            let axes: Vec<String> = plan.outputs.iter().map(|a| a.to_string()).collect();
            format!(", fold=(({},), ({},))", pairs.join(", "), axes.join(", "))
        }
        _ => String::new(),
    };
    let _ = writeln!(out, "_begen_vmap({}, {n}{fold})", pylit(&op.name));
}
