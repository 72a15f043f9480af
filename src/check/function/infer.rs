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

/// The integer type a parameter receiving a dimension (`dim.n`) is declared
/// with, by any spelling of one on LP64 Linux: the table's, `long`,
/// `unsigned`, `long int`, `signed long`, the `<cstdint>`/`<cstddef>`
/// typedefs with or without `std::` (`std::int64_t`, `size_t`,
/// `std::ptrdiff_t`). Unlike an attribute's type, a dimension's is not
/// looked up in the arg_spec system's table: the handler passes the extent,
/// and the C++ compiler converts it to the declared type. `None` for a type
/// that is not an integer (`float`, `bool`, an unknown typedef).
pub(crate) fn dim_type(cpp: &str) -> Option<AttrType> {
    let name = cpp.strip_prefix("::").unwrap_or(cpp);
    let name = name.strip_prefix("std::").unwrap_or(name);
    match name {
        "int8_t" => return Some(AttrType::Int8),
        "uint8_t" => return Some(AttrType::UInt8),
        "int16_t" => return Some(AttrType::Int16),
        "uint16_t" => return Some(AttrType::UInt16),
        "int32_t" => return Some(AttrType::Int32),
        "uint32_t" => return Some(AttrType::UInt32),
        "int64_t" | "ptrdiff_t" | "ssize_t" | "intptr_t" | "intmax_t" => return Some(AttrType::Int64),
        "uint64_t" | "size_t" | "uintptr_t" | "uintmax_t" => return Some(AttrType::UInt64),
        _ => {}
    }
    // A builtin integer type: its words in any order (`long unsigned int`).
    let (mut sign, mut unsigned, mut short, mut longs, mut int, mut char) = (0, false, 0, 0, 0, 0);
    for word in cpp.split_whitespace() {
        match word {
            "signed" => sign += 1,
            "unsigned" => (sign, unsigned) = (sign + 1, true),
            "short" => short += 1,
            "long" => longs += 1,
            "int" => int += 1,
            "char" => char += 1,
            _ => return None,
        }
    }
    let sized = match (char, short, longs) {
        (0, 0, 0) if sign + int > 0 => 32,
        (1, 0, 0) => 8,
        (0, 1, 0) => 16,
        (0, 0, 1 | 2) => 64,
        _ => return None,
    };
    if sign > 1 || int > 1 || (char == 1 && int == 1) {
        return None;
    }
    // Plain `char` is signed on x86-64 Linux, as the table has it.
    Some(match (sized, unsigned) {
        (8, false) => AttrType::Int8,
        (8, true) => AttrType::UInt8,
        (16, false) => AttrType::Int16,
        (16, true) => AttrType::UInt16,
        (32, false) => AttrType::Int32,
        (32, true) => AttrType::UInt32,
        (_, false) => AttrType::Int64,
        (_, true) => AttrType::UInt64,
    })
}

/// Whether `ty` names brainevent's tensor view.
pub(crate) fn is_tensor_type(ty: &str) -> bool {
    matches!(ty, "BE::Tensor" | "::BE::Tensor" | "Tensor")
}

/// Whether `ty` names begen's list of tensors (a kernel's variadic inputs
/// or outputs).
pub(crate) fn is_tensor_list_type(ty: &str) -> bool {
    matches!(ty, "BE::Tensors" | "::BE::Tensors" | "Tensors")
}

/// What a parameter's C++ declaration alone makes it (its token, if any,
/// is checked against this).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CppKind {
    /// `BE::Tensor` by value or reference.
    Tensor { is_const: bool },
    /// `BE::Tensors` by value or reference: variadic inputs (`const`) or
    /// outputs.
    TensorList { is_const: bool },
    /// A tensor or list by pointer, array or rvalue reference: never
    /// bindable.
    TensorIndirect,
    /// `int64_t stream`.
    Stream,
    /// A scalar parameter; `ty` is its table type if it has one.
    Scalar { ty: Option<AttrType> },
    /// A scalar by pointer, reference, array or function pointer.
    ScalarIndirect,
}

/// Classifies one parameter.
pub(crate) fn cpp_kind(p: &DeclParam) -> CppKind {
    if is_tensor_list_type(&p.ty) {
        return match p.indirection {
            Indirection::Value | Indirection::Reference => CppKind::TensorList { is_const: p.is_const },
            Indirection::Pointer | Indirection::RvalueReference | Indirection::Array | Indirection::Function => {
                CppKind::TensorIndirect
            }
        };
    }
    if is_tensor_type(&p.ty) {
        return match p.indirection {
            Indirection::Value | Indirection::Reference => CppKind::Tensor { is_const: p.is_const },
            Indirection::Pointer | Indirection::RvalueReference | Indirection::Array | Indirection::Function => {
                CppKind::TensorIndirect
            }
        };
    }
    if p.indirection != Indirection::Value {
        return CppKind::ScalarIndirect;
    }
    if p.ty == "int64_t" && p.name.as_deref() == Some("stream") {
        return CppKind::Stream;
    }
    CppKind::Scalar { ty: scalar_type(&p.ty) }
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
    #[test]
    fn dimension_types_by_any_lp64_spelling() {
        use AttrType::*;
        for (cpp, want) in [
            ("int64_t", Int64),
            ("std::int64_t", Int64),
            ("::std::int64_t", Int64),
            ("long", Int64),
            ("long int", Int64),
            ("signed long", Int64),
            ("long long", Int64),
            ("long long int", Int64),
            ("unsigned long", UInt64),
            ("long unsigned int", UInt64),
            ("unsigned long long", UInt64),
            ("size_t", UInt64),
            ("std::size_t", UInt64),
            ("::size_t", UInt64),
            ("ptrdiff_t", Int64),
            ("std::ptrdiff_t", Int64),
            ("ssize_t", Int64),
            ("int", Int32),
            ("signed", Int32),
            ("unsigned", UInt32),
            ("std::uint32_t", UInt32),
            ("short", Int16),
            ("unsigned short int", UInt16),
            ("char", Int8),
            ("unsigned char", UInt8),
        ] {
            assert_eq!(dim_type(cpp), Some(want), "{cpp}");
        }
        for cpp in ["float", "double", "bool", "real_t", "long double", "unsigned signed", "char int", "short long", ""]
        {
            assert_eq!(dim_type(cpp), None, "{cpp}");
        }
    }
}

#[cfg(test)]
mod examples {
    #[test]
    fn scalar_type() {
        use crate::check::function::infer::scalar_type;
        use crate::model::AttrType;
        assert_eq!(scalar_type("unsigned long long"), Some(AttrType::UInt64));
        assert_eq!(scalar_type("__half"), None);
    }
}
