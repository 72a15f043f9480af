//! Shape contracts (the typed tokens' dtypes and dimensions): template constants resolved against the
//! template's parameters, element types and dimensions checked across a
//! function's tokens, and pointer parameters checked against their tensors'
//! element types.

use std::collections::BTreeSet;

use super::infer::scalar_type;
use super::tokens::SpecToken;
use crate::diag::{Diagnostic, messages as msg};
use crate::model::decl::{Declared, Signature, TemplateKind};
use crate::model::{AttrType, Const, ConstKind, ElementType, Extent, Platform};
use crate::source::Span;

/// The highest rank a contract may give (a `BE::Tensor` view's).
pub(crate) const MAX_RANK: usize = 8;

/// The most instantiations one function may have.
pub(crate) const MAX_INSTANCES: usize = 256;

/// Resolves the `const.` tokens of `c` against its template's parameters
/// (in the template's order). Reports every problem; returns the consts
/// when all are sound.
pub(in crate::check) fn resolve_consts(
    c: &Declared,
    sig: Option<&Signature>,
    consts: &[(String, Vec<String>, Span)],
    diags: &mut Vec<Diagnostic>,
) -> Option<Vec<Const>> {
    let before = diags.len();
    let func = c.name.as_str();
    let mut seen = BTreeSet::new();
    for (name, values, span) in consts {
        if !seen.insert(name.as_str()) {
            diags.push(Diagnostic::error(*span, msg::const_twice(func, name)));
        }
        if AttrType::parse(name).is_some() {
            diags.push(Diagnostic::error(*span, msg::const_name_is_dtype(name)));
        }
        let mut distinct = BTreeSet::new();
        for v in values {
            if !distinct.insert(v.as_str()) {
                diags.push(Diagnostic::error(*span, msg::const_duplicate(func, name, v)));
            }
        }
    }
    let template = match sig {
        None if !consts.is_empty() => {
            diags.push(Diagnostic::error(consts[0].2, msg::const_without_signature(func)));
            return None;
        }
        None => return Some(Vec::new()),
        Some(sig) => match &sig.template {
            Some(t) => t,
            None => {
                for (name, _, span) in consts {
                    diags.push(Diagnostic::error(*span, msg::const_not_template(func, name)));
                }
                return (diags.len() == before).then(Vec::new);
            }
        },
    };
    let names: Vec<String> = template.iter().map(|t| t.name.clone().unwrap_or_else(|| "<unnamed>".into())).collect();
    for (name, _, span) in consts {
        if !template.iter().any(|t| t.name.as_deref() == Some(name.as_str())) {
            diags.push(Diagnostic::error(*span, msg::const_unknown(func, name, &names)));
        }
    }
    let at = sig.map_or(c.name_span, |s| s.name_span);
    let mut out = Vec::new();
    for t in template {
        let Some(name) = t.name.as_deref() else {
            diags.push(Diagnostic::error(at, msg::const_unsupported(func, "<unnamed>")));
            continue;
        };
        let Some((_, values, span)) = consts.iter().find(|(n, _, _)| n == name) else {
            diags.push(Diagnostic::error(at, msg::const_missing(func, name)));
            continue;
        };
        let kind = match &t.kind {
            TemplateKind::Other => {
                diags.push(Diagnostic::error(at, msg::const_unsupported(func, name)));
                continue;
            }
            TemplateKind::Type => {
                for v in values {
                    if AttrType::parse(v).is_none() {
                        diags.push(Diagnostic::error(*span, msg::const_type_value(func, name, v)));
                    }
                }
                ConstKind::Type
            }
            TemplateKind::Value(cpp) => {
                let Some(ty) = integer_type(cpp) else {
                    diags.push(Diagnostic::error(at, msg::const_param_type(func, name, cpp)));
                    continue;
                };
                for v in values {
                    if !value_fits(v, ty) {
                        diags.push(Diagnostic::error(*span, msg::const_value_type(func, name, v, cpp)));
                    }
                }
                ConstKind::Value(ty)
            }
        };
        out.push(Const { name: name.to_string(), py_name: String::new(), kind, values: values.clone() });
    }
    let combinations = out.iter().fold(1usize, |n, k| n.saturating_mul(k.values.len()));
    if combinations > MAX_INSTANCES {
        diags.push(Diagnostic::error(consts[0].2, msg::too_many_instances(func, combinations)));
    }
    (diags.len() == before).then_some(out)
}

/// The integer (or bool) type a template value parameter is declared with.
fn integer_type(cpp: &str) -> Option<AttrType> {
    let ty = AttrType::from_value_alias(cpp).or_else(|| scalar_type(cpp)).or_else(|| AttrType::from_alias(cpp))?;
    ty.int_range().is_some().then_some(ty)
}

/// Whether the literal `v` is a value of the integer (or bool) type `ty`.
fn value_fits(v: &str, ty: AttrType) -> bool {
    if ty == AttrType::Bool {
        return v == "true" || v == "false";
    }
    let Some((lo, hi)) = ty.int_range() else { return false };
    v.parse::<i128>().is_ok_and(|n| lo <= n && n <= hi)
}

/// Checks across a function's tokens: every `dim.` names a dimension some
/// tensor has, and every element type that is a name is a type const.
pub(in crate::check) fn check_contracts(
    c: &Declared,
    tokens: &[(SpecToken, Span)],
    consts: &[Const],
    diags: &mut Vec<Diagnostic>,
) {
    let func = c.name.as_str();
    // Named dimensions, and the names of named rests (`rows...`): a `dim.`
    // token may take either.
    let mut dims = BTreeSet::new();
    let mut rests = BTreeSet::new();
    for (t, _) in tokens {
        if let SpecToken::Arg(Some(ct)) | SpecToken::Ret(Some(ct)) | SpecToken::InOut(Some(ct)) = t {
            for d in ct.dims.iter().flatten() {
                match d {
                    Extent::Named(n) => {
                        dims.insert(n.as_str());
                    }
                    Extent::Rest(Some(n)) => {
                        rests.insert(n.as_str());
                    }
                    Extent::Rest(None) | Extent::Fixed(_) => {}
                }
            }
        }
    }
    let mut clashed = BTreeSet::new();
    for (i, (t, span)) in tokens.iter().filter(|(t, _)| t.is_param()).enumerate() {
        match t {
            SpecToken::Dim { name, .. } if !dims.contains(name.as_str()) && !rests.contains(name.as_str()) => {
                let near = crate::diag::suggest::closest(name, dims.iter().copied());
                diags.push(Diagnostic::error(*span, msg::unknown_dim(func, name, near)).hint(msg::HINT_UNKNOWN_DIM));
            }
            SpecToken::Arg(Some(ct)) | SpecToken::Ret(Some(ct)) | SpecToken::InOut(Some(ct)) => {
                let fixed = ct.dims.iter().flatten().filter(|d| !matches!(d, Extent::Rest(_))).count();
                if fixed > MAX_RANK {
                    diags.push(Diagnostic::error(*span, msg::rank_too_high(func, &param_label(c, i))));
                }
                match ct.rest() {
                    // `...` beside named rests: which leading dimensions it means is not said.
                    Some(None) if !rests.is_empty() => {
                        let named = rests.first().copied().unwrap_or_default();
                        diags.push(
                            Diagnostic::error(*span, msg::rest_ambiguous(func, &param_label(c, i), named))
                                .hint(msg::HINT_REST_AMBIGUOUS),
                        );
                    }
                    Some(Some(name)) if dims.contains(name) && clashed.insert(name) => {
                        diags.push(
                            Diagnostic::error(*span, msg::rest_named_like_dim(func, name))
                                .hint(msg::HINT_REST_NAMED_LIKE_DIM),
                        );
                    }
                    _ => {}
                }
                if let ElementType::Param(name) = &ct.dtype
                    && !consts.iter().any(|k| k.name == *name && k.kind == ConstKind::Type)
                {
                    let param = param_label(c, i);
                    diags.push(
                        Diagnostic::error(*span, msg::unknown_dtype_param(func, &param, name))
                            .hint(msg::hint_dtypes_for(name)),
                    );
                }
            }
            _ => {}
        }
    }
}

/// The name of parameter `i` for a message: from the signature when there is one.
fn param_label(c: &Declared, i: usize) -> String {
    match &c.signature {
        Ok(sig) => sig.params.get(i).and_then(|p| p.name.clone()).unwrap_or_else(|| format!("param{i}")),
        Err(_) => format!("parameter {}", i + 1),
    }
}

/// Whether a pointer to `pointee` (as declared, qualifiers removed) can
/// address the elements of a tensor of element type `dtype` on `platform`.
/// An unknown typedef is accepted: the generated trampoline asserts its
/// size at compile time.
pub(in crate::check) fn pointee_fits(dtype: &ElementType, pointee: &str, platform: Platform) -> bool {
    let dtype = match dtype {
        // The template parameter itself, or `void`.
        ElementType::Param(name) => return pointee == name || pointee == "void",
        ElementType::Dtype(t) => *t,
    };
    if pointee == "void" || scalar_type(pointee) == Some(dtype) {
        return true;
    }
    let cuda = AttrType::from_cuda(pointee).map(|(_, t, _)| t);
    if let Some(t) = AttrType::from_alias(pointee).or(cuda.filter(|_| platform == Platform::Cuda)) {
        return t == dtype;
    }
    // begen's 16-bit floats (brainevent/float16.h), on either platform.
    let own = [("BE::half", AttrType::Float16), ("BE::bfloat16", AttrType::BFloat16)];
    if let Some((_, t)) = own.iter().find(|(name, _)| *name == pointee) {
        return *t == dtype;
    }
    // A float passed as bits, through the unsigned integer of its size.
    if dtype.is_float_bits() && scalar_type(pointee) == Some(dtype.facts().wire) {
        return true;
    }
    let known = scalar_type(pointee).is_some() || cuda.is_some() || pointee == "wchar_t" || pointee.contains('<');
    !known
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointees() {
        let f32 = ElementType::Dtype(AttrType::Float32);
        assert!(pointee_fits(&f32, "float", Platform::Cpu));
        assert!(pointee_fits(&f32, "void", Platform::Cpu));
        assert!(pointee_fits(&f32, "real_t", Platform::Cpu));
        assert!(!pointee_fits(&f32, "double", Platform::Cpu));
        assert!(!pointee_fits(&f32, "int", Platform::Cpu));
        assert!(!pointee_fits(&f32, "__half", Platform::Cuda));
        let f16 = ElementType::Dtype(AttrType::Float16);
        assert!(pointee_fits(&f16, "__half", Platform::Cuda));
        assert!(pointee_fits(&f16, "uint16_t", Platform::Cpu));
        assert!(!pointee_fits(&f16, "__nv_bfloat16", Platform::Cuda));
        assert!(pointee_fits(&f16, "BE::half", Platform::Cpu));
        assert!(!pointee_fits(&f16, "BE::bfloat16", Platform::Cpu));
        let bf16 = ElementType::Dtype(AttrType::BFloat16);
        assert!(pointee_fits(&bf16, "BE::bfloat16", Platform::Cpu));
        assert!(pointee_fits(&bf16, "BE::bfloat16", Platform::Cuda));
        assert!(!pointee_fits(&f32, "BE::half", Platform::Cpu));
        let t = ElementType::Param("T".into());
        assert!(pointee_fits(&t, "T", Platform::Cpu));
        assert!(!pointee_fits(&t, "float", Platform::Cpu));
        assert!(pointee_fits(&ElementType::Dtype(AttrType::Int64), "long", Platform::Cpu));
    }

    #[test]
    fn const_values() {
        assert!(value_fits("127", AttrType::Int8));
        assert!(!value_fits("128", AttrType::Int8));
        assert!(!value_fits("-1", AttrType::UInt32));
        assert!(value_fits("true", AttrType::Bool));
        assert!(!value_fits("1", AttrType::Bool));
        assert!(!value_fits("float32", AttrType::Int32));
    }
}
