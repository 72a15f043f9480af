//! Struct and array attributes of annotated kernels, in the resolved model.
//!
//! A struct attribute (`attr.p:Affine`) is a struct defined at file scope
//! in the kernel's source or a local header it includes: XLA decodes a
//! dictionary attribute into begen's copy of it in the glue TU
//! (`XLA_FFI_REGISTER_STRUCT_ATTR_DECODING`), and the trampoline rebuilds
//! the kernel's own struct from the members, by aggregate initialisation.
//! An array attribute (`attr.w:float32[]`) is a 1-D array XLA passes as
//! `Span<const T>`; the kernel takes it as XLA's `Span`, begen's
//! `BE::Span` or a `std::vector`. Both are made by `check`.

use std::fmt;

use crate::model::{AttrType, HalfRepr};

/// A struct attribute's type: the kernel's struct, as begen read it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct RecordType {
    /// The struct's C++ name (a checked identifier), at file scope.
    pub(crate) name: String,
    /// Its non-static data members, in declaration order: the order of
    /// its aggregate initialisation.
    pub(crate) members: Vec<RecordMember>,
    /// Where it is defined, relative to the root (`/`-separated), for
    /// comments in the generated code.
    pub(crate) file: String,
    /// 1-based line of its name there.
    pub(crate) line: usize,
    /// The name of begen's copy of it in the library's glue TU (what XLA
    /// decodes the dictionary into): `begen_struct_<name>`, with a number
    /// appended where two different structs of one name meet in one library.
    pub(crate) mirror: String,
}

impl RecordType {}

impl fmt::Display for RecordType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// One data member of a [`RecordType`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct RecordMember {
    /// Its name (a checked identifier): the key of the Python dict and of
    /// XLA's dictionary attribute.
    pub(crate) name: String,
    /// Its type.
    pub(crate) ty: AttrType,
    /// For a float16/bfloat16 member: how it is declared (the raw bits in
    /// a `uint16_t` are never inferred as a half: a member so declared is
    /// a `uint16`).
    pub(crate) half_repr: Option<HalfRepr>,
}

/// How the kernel takes an array attribute.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ArrayBinding {
    /// The container type.
    pub(crate) container: Container,
    /// The element type as the kernel declares it, one of a fixed table of
    /// spellings (`float`, `long long`, `std::complex<float>`, `__half`).
    pub(crate) element: String,
}

impl ArrayBinding {
    /// The C++ type the trampoline builds for the kernel.
    pub(crate) fn cpp_type(&self) -> String {
        let e = &self.element;
        match self.container {
            Container::XlaSpan => format!("xla::ffi::Span<const {e}>"),
            Container::BeSpan => format!("BE::Span<const {e}>"),
            Container::Vector => format!("std::vector<{e}>"),
        }
    }
}

/// The container an array attribute reaches the kernel in. Spans view the
/// attribute's elements where XLA keeps them (host memory, valid during
/// the call); a vector copies them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Container {
    /// `xla::ffi::Span<const T>` (also written `ffi::Span<const T>`): the
    /// source includes XLA's `xla/ffi/api/ffi.h`.
    XlaSpan,
    /// `BE::Span<const T>`, from begen's `brainevent/common.h`.
    BeSpan,
    /// `std::vector<T>`, by value or const reference.
    Vector,
}

#[cfg(test)]
mod doc_examples {
    //! The examples of this module's crate-private items, run as unit tests
    //! (an example in a doc comment must compile outside the crate).

    #[test]
    fn record_type() {
        use crate::model::{AttrType, RecordMember, RecordType};
        let affine = RecordType {
            name: "Affine".into(),
            members: vec![
                RecordMember { name: "scale".into(), ty: AttrType::Float32, half_repr: None },
                RecordMember { name: "shift".into(), ty: AttrType::Float32, half_repr: None },
            ],
            file: "affine.h".into(),
            line: 3,
            mirror: "begen_struct_Affine".into(),
        };
        assert_eq!(affine.to_string(), "Affine");
    }

    #[test]
    fn array_binding() {
        use crate::model::{ArrayBinding, Container};
        let w = ArrayBinding { container: Container::BeSpan, element: "float".into() };
        assert_eq!(w.cpp_type(), "BE::Span<const float>");
    }

    #[test]
    fn array_binding_cpp_type() {
        use crate::model::{ArrayBinding, Container};
        let v = ArrayBinding { container: Container::Vector, element: "int64_t".into() };
        assert_eq!(v.cpp_type(), "std::vector<int64_t>");
    }
}
