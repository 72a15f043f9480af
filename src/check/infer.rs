//! Inference of one parameter's role from its C++ declaration, by the arg_spec system's
//! tables.

use crate::model::decl::{DeclParam, Indirection};
use crate::model::{AttrType, HalfRepr};

/// The arg_spec system's attribute type table: every C++ spelling that
/// infers a type. Exactly these spellings; anything else is not
/// auto-inferred.
const SCALAR_TYPES: &[(&str, AttrType)] = &[
    ("bool", AttrType::Bool),
    ("int8_t", AttrType::Int8),
    ("char", AttrType::Int8),
    ("uint8_t", AttrType::UInt8),
    ("unsigned char", AttrType::UInt8),
    ("int16_t", AttrType::Int16),
    ("short", AttrType::Int16),
    ("uint16_t", AttrType::UInt16),
    ("unsigned short", AttrType::UInt16),
    ("int32_t", AttrType::Int32),
    ("int", AttrType::Int32),
    ("uint32_t", AttrType::UInt32),
    ("unsigned int", AttrType::UInt32),
    ("int64_t", AttrType::Int64),
    ("long long", AttrType::Int64),
    ("uint64_t", AttrType::UInt64),
    ("unsigned long long", AttrType::UInt64),
    ("float", AttrType::Float32),
    ("double", AttrType::Float64),
    ("std::complex<float>", AttrType::Complex64),
    ("std::complex<double>", AttrType::Complex128),
];

/// CUDA's 16-bit float types, which hold float16/bfloat16 values (never
/// inferred for a scalar parameter, whose arg_spec type is the bits).
const HALF_TYPES: &[(&str, AttrType, HalfRepr)] = &[
    ("__half", AttrType::Float16, HalfRepr::CudaHalf),
    ("half", AttrType::Float16, HalfRepr::CudaHalf),
    ("__nv_bfloat16", AttrType::BFloat16, HalfRepr::CudaBFloat16),
    ("nv_bfloat16", AttrType::BFloat16, HalfRepr::CudaBFloat16),
];

/// The arg_spec system's attribute type table, leading `const` already
/// stripped. Exactly these spellings; anything else is not auto-inferred.
pub fn scalar_type(cpp: &str) -> Option<AttrType> {
    SCALAR_TYPES.iter().find(|(s, _)| *s == cpp).map(|(_, t)| *t)
}

/// A member or element type: one of the table's spellings or CUDA's
/// 16-bit floats, as a `'static` spelling (safe to write into generated
/// C++), with its type and, for a CUDA type, its representation.
pub fn element_type(cpp: &str) -> Option<(&'static str, AttrType, Option<HalfRepr>)> {
    SCALAR_TYPES
        .iter()
        .find(|(s, _)| *s == cpp)
        .map(|(s, t)| (*s, *t, None))
        .or_else(|| HALF_TYPES.iter().find(|(s, _, _)| *s == cpp).map(|(s, t, r)| (*s, *t, Some(*r))))
}

/// Whether `ty` names brainevent's tensor view.
pub fn is_tensor_type(ty: &str) -> bool {
    matches!(ty, "BE::Tensor" | "::BE::Tensor" | "Tensor")
}

/// What a parameter is, judged from its declaration alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
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
pub struct Contradiction;

/// Whether an explicit `attr.<name>:<ty>` fits a value parameter of C++
/// type `cpp`, and how a 16-bit float travels if it does.
pub fn explicit_fits(ty: AttrType, cpp: &str) -> Result<Option<HalfRepr>, Contradiction> {
    let inferred = scalar_type(cpp);
    match (ty, cpp) {
        (AttrType::Float16, "__half" | "half") => Ok(Some(HalfRepr::CudaHalf)),
        (AttrType::BFloat16, "__nv_bfloat16" | "nv_bfloat16") => Ok(Some(HalfRepr::CudaBFloat16)),
        // The bits go to a 16-bit unsigned integer or to CUDA's own types;
        // any other type (`_Float16`, a typedef of `__half`, a float) would
        // receive the bit pattern's integer value: wrong numbers, silently.
        (AttrType::Float16 | AttrType::BFloat16, _) if inferred == Some(AttrType::UInt16) => Ok(Some(HalfRepr::Bits)),
        (AttrType::Float16 | AttrType::BFloat16, _) => Err(Contradiction),
        (_, "__half" | "half" | "__nv_bfloat16" | "nv_bfloat16") => Err(Contradiction),
        _ if inferred.is_some() && inferred != Some(ty) => Err(Contradiction),
        // An unknown typedef (`real_t`, `size_t`): the explicit type is
        // the author's word; the C++ compiler checks the call.
        _ => Ok(None),
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
