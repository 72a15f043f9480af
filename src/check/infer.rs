//! Inference of one parameter's role from its C++ declaration, by the arg_spec system's
//! tables.

use crate::model::decl::{DeclParam, Indirection};
use crate::model::{AttrType, HalfRepr, ScalarKind};

/// The arg_spec system's attribute type table, leading `const` already
/// stripped: each type's [`spellings`](crate::model::Scalar::spellings).
/// Exactly these spellings; anything else is not auto-inferred.
pub(crate) fn scalar_type(cpp: &str) -> Option<AttrType> {
    AttrType::from_spelling(cpp).map(|(_, t)| t)
}

/// A member or element type: one of the table's spellings or CUDA's
/// 16-bit floats, as a `'static` spelling (safe to write into generated
/// C++), with its type and, for a CUDA type, its representation.
pub(crate) fn element_type(cpp: &str) -> Option<(&'static str, AttrType, Option<HalfRepr>)> {
    AttrType::from_spelling(cpp)
        .map(|(s, t)| (s, t, None))
        .or_else(|| AttrType::from_cuda(cpp).map(|(s, t, r)| (s, t, Some(r))))
}

/// Whether `ty` names brainevent's tensor view.
pub(crate) fn is_tensor_type(ty: &str) -> bool {
    matches!(ty, "BE::Tensor" | "::BE::Tensor" | "Tensor")
}

/// What a parameter is, judged from its declaration alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Role {
    /// `BE::Tensor` by value or reference.
    Tensor { is_const: bool },
    /// A tensor by pointer, array or rvalue reference: never bindable.
    TensorIndirect,
    /// `int64_t stream`.
    Stream,
    /// A scalar parameter; `ty` is its table type if it has one.
    Scalar { ty: Option<AttrType> },
    /// A scalar by pointer, reference, array or function pointer.
    ScalarIndirect,
}

/// Classifies one parameter.
pub(crate) fn role(p: &DeclParam) -> Role {
    if is_tensor_type(&p.ty) {
        return match p.indirection {
            Indirection::Value | Indirection::Reference => Role::Tensor { is_const: p.is_const },
            Indirection::Pointer | Indirection::RvalueReference | Indirection::Array | Indirection::Function => {
                Role::TensorIndirect
            }
        };
    }
    if p.indirection != Indirection::Value {
        return Role::ScalarIndirect;
    }
    if p.ty == "int64_t" && p.name.as_deref() == Some("stream") {
        return Role::Stream;
    }
    Role::Scalar { ty: scalar_type(&p.ty) }
}

/// An explicit attr type that the C++ parameter's type contradicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Contradiction;

/// Whether an explicit `attr.<name>:<ty>` fits a value parameter of C++
/// type `cpp`, and how a 16-bit float travels if it does.
pub(crate) fn explicit_fits(ty: AttrType, cpp: &str) -> Result<Option<HalfRepr>, Contradiction> {
    let inferred = scalar_type(cpp);
    match (ty.kind(), AttrType::from_cuda(cpp)) {
        // CUDA's own type (`__half`) of this float, or of another type.
        (_, Some((_, t, repr))) => {
            if t == ty {
                Ok(Some(repr))
            } else {
                Err(Contradiction)
            }
        }
        // The bits go to the unsigned integer of their size or to CUDA's
        // own types; any other type (`_Float16`, a typedef of `__half`, a
        // float) would receive the bit pattern's integer value: wrong
        // numbers, silently.
        (ScalarKind::FloatBits, None) if inferred == Some(ty.facts().wire) => Ok(Some(HalfRepr::Bits)),
        (ScalarKind::FloatBits, None) => Err(Contradiction),
        (ScalarKind::Bool | ScalarKind::Int { .. } | ScalarKind::Float | ScalarKind::Complex, None) => {
            match inferred {
                Some(t) if t != ty => Err(Contradiction),
                // An unknown typedef (`real_t`, `size_t`): the explicit type
                // is the author's word; the C++ compiler checks the call.
                _ => Ok(None),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_types() {
        assert_eq!(explicit_fits(AttrType::Float16, "uint16_t"), Ok(Some(HalfRepr::Bits)));
        assert_eq!(explicit_fits(AttrType::Float16, "unsigned short"), Ok(Some(HalfRepr::Bits)));
        assert_eq!(explicit_fits(AttrType::Float16, "__half"), Ok(Some(HalfRepr::CudaHalf)));
        assert_eq!(explicit_fits(AttrType::BFloat16, "__nv_bfloat16"), Ok(Some(HalfRepr::CudaBFloat16)));
        assert_eq!(explicit_fits(AttrType::BFloat16, "__half"), Err(Contradiction));
        assert_eq!(explicit_fits(AttrType::Float32, "double"), Err(Contradiction));
        assert_eq!(explicit_fits(AttrType::Float32, "float"), Ok(None));
        assert_eq!(explicit_fits(AttrType::Int64, "size_t"), Ok(None));
        assert_eq!(explicit_fits(AttrType::BFloat16, "nv_bfloat16"), Ok(Some(HalfRepr::CudaBFloat16)));
        for alias in ["_Float16", "fp16", "float", "int16_t"] {
            assert_eq!(explicit_fits(AttrType::Float16, alias), Err(Contradiction), "{alias}");
        }
    }
}

#[cfg(test)]
mod examples {
    #[test]
    fn scalar_type() {
        use crate::check::infer::scalar_type;
        use crate::model::AttrType;
        assert_eq!(scalar_type("unsigned long long"), Some(AttrType::UInt64));
        assert_eq!(scalar_type("__half"), None);
    }
}
