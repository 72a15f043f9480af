//! The scalar types of the arg_spec system and every fact begen knows about
//! each: one row per type ([`Scalar`]), read by every stage. Adding a type
//! is one variant, one row, and the support headers (`brainevent/tensor.h`,
//! `begen/abi.h`, `begen/trampoline.h`, `begen/ffi_support.h`); a match
//! elsewhere is over [`ScalarKind`], never over the types themselves.

use std::fmt;

use crate::model::{HalfRepr, Platform};

/// The 15 scalar attribute types of the arg_spec system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum AttrType {
    /// `bool`.
    Bool,
    /// `int8`: `int8_t`.
    Int8,
    /// `uint8`: `uint8_t`.
    UInt8,
    /// `int16`: `int16_t`.
    Int16,
    /// `uint16`: `uint16_t`.
    UInt16,
    /// `int32`: `int32_t`.
    Int32,
    /// `uint32`: `uint32_t`.
    UInt32,
    /// `int64`: `int64_t`.
    Int64,
    /// `uint64`: `uint64_t`.
    UInt64,
    /// `float32`: `float`.
    Float32,
    /// `float64`: `double`.
    Float64,
    /// `complex64`: `std::complex<float>`.
    Complex64,
    /// `complex128`: `std::complex<double>`.
    Complex128,
    /// `float16`: IEEE half, passed as its `uint16_t` bits.
    Float16,
    /// `bfloat16`: brain float, passed as its `uint16_t` bits.
    BFloat16,
}

/// What kind of number a type holds: what every stage's match is over, so
/// that a new type of a known kind needs no new arm anywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ScalarKind {
    /// `bool`: `true` or `false`.
    Bool,
    /// An integer.
    Int {
        /// Whether it has negative values.
        signed: bool,
    },
    /// A float C++ takes as itself (`float`, `double`).
    Float,
    /// A float a C++ attribute parameter takes as its bits, in the unsigned
    /// integer type [`Scalar::wire`] (float16, bfloat16): XLA's attributes
    /// and host C++ have no such type.
    FloatBits,
    /// A complex number: two floats of type [`Scalar::wire`].
    Complex,
}

/// CUDA's own C++ type for a float begen passes as bits (`__half`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CudaType {
    /// How a parameter declared with it is marked.
    pub(crate) repr: HalfRepr,
    /// Its spellings; the first is the one begen writes.
    pub(crate) spellings: &'static [&'static str],
    /// CUDA's raw struct a value is rebuilt from, field `x` the bits (`__half_raw`).
    pub(crate) raw: &'static str,
    /// The header that defines it (`<cuda_fp16.h>`).
    pub(crate) header: &'static str,
}

/// Every fact about one scalar type. One `const` row per type; the
/// methods of [`AttrType`] read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Scalar {
    /// The type this row describes.
    pub(crate) ty: AttrType,
    /// Its name in the arg_spec (`attr.x:float32`), which is also its numpy
    /// and JAX dtype name.
    pub(crate) name: &'static str,
    /// What kind of number it is.
    pub(crate) kind: ScalarKind,
    /// Bytes of one value (`sizeof`, a tensor element's width).
    pub(crate) size: u32,
    /// Its C alignment on LP64 Linux and CUDA (a complex number's is its part's).
    pub(crate) align: u32,
    /// The C++ type the kernel's attribute parameter receives (the 16-bit
    /// floats as their `uint16_t` bits, as the arg_spec system prescribes).
    pub(crate) cpp: &'static str,
    /// The standard header `cpp` needs beyond `<cstdint>` (`<complex>`).
    pub(crate) cpp_header: Option<&'static str>,
    /// The C++ element type of a tensor of this type in a CPU source;
    /// `None` where host C++ has none (the 16-bit floats).
    pub(crate) element_cpu: Option<&'static str>,
    /// The C++ element type of a tensor of this type in a CUDA source.
    pub(crate) element_cuda: &'static str,
    /// CUDA's own type for it, where a kernel may declare one.
    pub(crate) cuda: Option<CudaType>,
    /// The type a value travels to XLA as: itself, the unsigned integer
    /// holding a [`ScalarKind::FloatBits`] float's bits, or a complex
    /// number's part (sent as a pair).
    pub(crate) wire: AttrType,
    /// The type XLA decodes an array attribute of this type's elements as,
    /// and how many of them make one element (a bool as a byte, a complex
    /// number as two reals).
    pub(crate) array_wire: (AttrType, usize),
    /// XLA FFI's `DataType` enumerator (`xla::ffi::DataType::F32`).
    pub(crate) xla: &'static str,
    /// That enumerator's value (`begen::xla_type::kF32` in `begen/abi.h`).
    pub(crate) xla_code: i32,
    /// The `BE::DType` enumerator of `brainevent/tensor.h`.
    pub(crate) be_dtype: &'static str,
    /// cuTile's code in a mangled kernel name (`f32`), where it has the type.
    pub(crate) cutile: Option<&'static str>,
    /// The dtype in the generated Python module (`_np.float32`,
    /// `_ml_dtypes.bfloat16`).
    pub(crate) py_dtype: &'static str,
    /// Whether JAX holds it only with `jax_enable_x64` (64-bit types).
    pub(crate) x64: bool,
    /// The values of a bool or integer type; `None` for the others.
    pub(crate) range: Option<(i128, i128)>,
    /// The suffix of a C++ literal of this type (`LL`).
    pub(crate) literal_suffix: &'static str,
    /// The C++ spellings the arg_spec system's table infers it from, the
    /// first the canonical one. Exactly these; nothing else is inferred.
    pub(crate) spellings: &'static [&'static str],
    /// Further spellings that name it on LP64 Linux (`long`,
    /// `cuFloatComplex`): a pointer's element type, a template's value
    /// parameter; never inferred for an attribute.
    pub(crate) aliases: &'static [&'static str],
    /// Spellings only a template's value parameter is read with (`size_t`);
    /// a pointer to one is left to the compiler.
    pub(crate) value_aliases: &'static [&'static str],
}

/// The empty row the rows below start from: no header, no CUDA type, no
/// range, no further spellings.
const BLANK: Scalar = Scalar {
    ty: AttrType::Bool,
    name: "",
    kind: ScalarKind::Bool,
    size: 0,
    align: 0,
    cpp: "",
    cpp_header: None,
    element_cpu: None,
    element_cuda: "",
    cuda: None,
    wire: AttrType::Bool,
    array_wire: (AttrType::Bool, 1),
    xla: "",
    xla_code: 0,
    be_dtype: "",
    cutile: None,
    py_dtype: "",
    x64: false,
    range: None,
    literal_suffix: "",
    spellings: &[],
    aliases: &[],
    value_aliases: &[],
};

const BOOL: Scalar = Scalar {
    ty: AttrType::Bool,
    name: "bool",
    kind: ScalarKind::Bool,
    size: 1,
    align: 1,
    cpp: "bool",
    element_cpu: Some("bool"),
    element_cuda: "bool",
    wire: AttrType::Bool,
    array_wire: (AttrType::UInt8, 1),
    xla: "PRED",
    xla_code: 1,
    be_dtype: "Bool",
    cutile: Some("b8"),
    py_dtype: "_np.bool_",
    range: Some((0, 1)),
    spellings: &["bool"],
    ..BLANK
};

const INT8: Scalar = Scalar {
    ty: AttrType::Int8,
    name: "int8",
    kind: ScalarKind::Int { signed: true },
    size: 1,
    align: 1,
    cpp: "int8_t",
    element_cpu: Some("int8_t"),
    element_cuda: "int8_t",
    wire: AttrType::Int8,
    array_wire: (AttrType::Int8, 1),
    xla: "S8",
    xla_code: 2,
    be_dtype: "Int8",
    cutile: Some("i8"),
    py_dtype: "_np.int8",
    range: Some((i8::MIN as i128, i8::MAX as i128)),
    spellings: &["int8_t", "char"],
    aliases: &["signed char"],
    ..BLANK
};

const UINT8: Scalar = Scalar {
    ty: AttrType::UInt8,
    name: "uint8",
    kind: ScalarKind::Int { signed: false },
    size: 1,
    align: 1,
    cpp: "uint8_t",
    element_cpu: Some("uint8_t"),
    element_cuda: "uint8_t",
    wire: AttrType::UInt8,
    array_wire: (AttrType::UInt8, 1),
    xla: "U8",
    xla_code: 6,
    be_dtype: "UInt8",
    cutile: Some("u8"),
    py_dtype: "_np.uint8",
    range: Some((0, u8::MAX as i128)),
    spellings: &["uint8_t", "unsigned char"],
    ..BLANK
};

const INT16: Scalar = Scalar {
    ty: AttrType::Int16,
    name: "int16",
    kind: ScalarKind::Int { signed: true },
    size: 2,
    align: 2,
    cpp: "int16_t",
    element_cpu: Some("int16_t"),
    element_cuda: "int16_t",
    wire: AttrType::Int16,
    array_wire: (AttrType::Int16, 1),
    xla: "S16",
    xla_code: 3,
    be_dtype: "Int16",
    cutile: Some("i16"),
    py_dtype: "_np.int16",
    range: Some((i16::MIN as i128, i16::MAX as i128)),
    spellings: &["int16_t", "short"],
    ..BLANK
};

const UINT16: Scalar = Scalar {
    ty: AttrType::UInt16,
    name: "uint16",
    kind: ScalarKind::Int { signed: false },
    size: 2,
    align: 2,
    cpp: "uint16_t",
    element_cpu: Some("uint16_t"),
    element_cuda: "uint16_t",
    wire: AttrType::UInt16,
    array_wire: (AttrType::UInt16, 1),
    xla: "U16",
    xla_code: 7,
    be_dtype: "UInt16",
    cutile: Some("u16"),
    py_dtype: "_np.uint16",
    range: Some((0, u16::MAX as i128)),
    spellings: &["uint16_t", "unsigned short"],
    ..BLANK
};

const INT32: Scalar = Scalar {
    ty: AttrType::Int32,
    name: "int32",
    kind: ScalarKind::Int { signed: true },
    size: 4,
    align: 4,
    cpp: "int32_t",
    element_cpu: Some("int32_t"),
    element_cuda: "int32_t",
    wire: AttrType::Int32,
    array_wire: (AttrType::Int32, 1),
    xla: "S32",
    xla_code: 4,
    be_dtype: "Int32",
    cutile: Some("i32"),
    py_dtype: "_np.int32",
    range: Some((i32::MIN as i128, i32::MAX as i128)),
    spellings: &["int32_t", "int"],
    ..BLANK
};

const UINT32: Scalar = Scalar {
    ty: AttrType::UInt32,
    name: "uint32",
    kind: ScalarKind::Int { signed: false },
    size: 4,
    align: 4,
    cpp: "uint32_t",
    element_cpu: Some("uint32_t"),
    element_cuda: "uint32_t",
    wire: AttrType::UInt32,
    array_wire: (AttrType::UInt32, 1),
    xla: "U32",
    xla_code: 8,
    be_dtype: "UInt32",
    cutile: Some("u32"),
    py_dtype: "_np.uint32",
    range: Some((0, u32::MAX as i128)),
    literal_suffix: "U",
    spellings: &["uint32_t", "unsigned int"],
    value_aliases: &["unsigned"],
    ..BLANK
};

const INT64: Scalar = Scalar {
    ty: AttrType::Int64,
    name: "int64",
    kind: ScalarKind::Int { signed: true },
    size: 8,
    align: 8,
    cpp: "int64_t",
    element_cpu: Some("int64_t"),
    element_cuda: "int64_t",
    wire: AttrType::Int64,
    array_wire: (AttrType::Int64, 1),
    xla: "S64",
    xla_code: 5,
    be_dtype: "Int64",
    cutile: Some("i64"),
    py_dtype: "_np.int64",
    x64: true,
    range: Some((i64::MIN as i128, i64::MAX as i128)),
    literal_suffix: "LL",
    spellings: &["int64_t", "long long"],
    aliases: &["long", "long int"],
    value_aliases: &["ptrdiff_t", "ssize_t"],
    ..BLANK
};

const UINT64: Scalar = Scalar {
    ty: AttrType::UInt64,
    name: "uint64",
    kind: ScalarKind::Int { signed: false },
    size: 8,
    align: 8,
    cpp: "uint64_t",
    element_cpu: Some("uint64_t"),
    element_cuda: "uint64_t",
    wire: AttrType::UInt64,
    array_wire: (AttrType::UInt64, 1),
    xla: "U64",
    xla_code: 9,
    be_dtype: "UInt64",
    cutile: Some("u64"),
    py_dtype: "_np.uint64",
    x64: true,
    range: Some((0, u64::MAX as i128)),
    literal_suffix: "ULL",
    spellings: &["uint64_t", "unsigned long long"],
    aliases: &["unsigned long", "unsigned long int"],
    value_aliases: &["size_t"],
    ..BLANK
};

const FLOAT32: Scalar = Scalar {
    ty: AttrType::Float32,
    name: "float32",
    kind: ScalarKind::Float,
    size: 4,
    align: 4,
    cpp: "float",
    element_cpu: Some("float"),
    element_cuda: "float",
    wire: AttrType::Float32,
    array_wire: (AttrType::Float32, 1),
    xla: "F32",
    xla_code: 11,
    be_dtype: "Float32",
    cutile: Some("f32"),
    py_dtype: "_np.float32",
    spellings: &["float"],
    ..BLANK
};

const FLOAT64: Scalar = Scalar {
    ty: AttrType::Float64,
    name: "float64",
    kind: ScalarKind::Float,
    size: 8,
    align: 8,
    cpp: "double",
    element_cpu: Some("double"),
    element_cuda: "double",
    wire: AttrType::Float64,
    array_wire: (AttrType::Float64, 1),
    xla: "F64",
    xla_code: 12,
    be_dtype: "Float64",
    cutile: Some("f64"),
    py_dtype: "_np.float64",
    x64: true,
    spellings: &["double"],
    ..BLANK
};

const COMPLEX64: Scalar = Scalar {
    ty: AttrType::Complex64,
    name: "complex64",
    kind: ScalarKind::Complex,
    size: 8,
    align: 4,
    cpp: "std::complex<float>",
    cpp_header: Some("<complex>"),
    element_cpu: Some("std::complex<float>"),
    element_cuda: "std::complex<float>",
    wire: AttrType::Float32,
    array_wire: (AttrType::Float32, 2),
    xla: "C64",
    xla_code: 15,
    be_dtype: "Complex64",
    py_dtype: "_np.complex64",
    spellings: &["std::complex<float>"],
    aliases: &["cuFloatComplex", "cuComplex"],
    ..BLANK
};

const COMPLEX128: Scalar = Scalar {
    ty: AttrType::Complex128,
    name: "complex128",
    kind: ScalarKind::Complex,
    size: 16,
    align: 8,
    cpp: "std::complex<double>",
    cpp_header: Some("<complex>"),
    element_cpu: Some("std::complex<double>"),
    element_cuda: "std::complex<double>",
    wire: AttrType::Float64,
    array_wire: (AttrType::Float64, 2),
    xla: "C128",
    xla_code: 18,
    be_dtype: "Complex128",
    py_dtype: "_np.complex128",
    x64: true,
    spellings: &["std::complex<double>"],
    aliases: &["cuDoubleComplex"],
    ..BLANK
};

const FLOAT16: Scalar = Scalar {
    ty: AttrType::Float16,
    name: "float16",
    kind: ScalarKind::FloatBits,
    size: 2,
    align: 2,
    cpp: "uint16_t",
    element_cpu: Some("BE::half"),
    element_cuda: "__half",
    cuda: Some(CudaType {
        repr: HalfRepr::CudaHalf,
        spellings: &["__half", "half"],
        raw: "__half_raw",
        header: "<cuda_fp16.h>",
    }),
    wire: AttrType::UInt16,
    array_wire: (AttrType::UInt16, 1),
    xla: "F16",
    xla_code: 10,
    be_dtype: "Float16",
    cutile: Some("f16"),
    py_dtype: "_np.float16",
    ..BLANK
};

const BFLOAT16: Scalar = Scalar {
    ty: AttrType::BFloat16,
    name: "bfloat16",
    kind: ScalarKind::FloatBits,
    size: 2,
    align: 2,
    cpp: "uint16_t",
    element_cpu: Some("BE::bfloat16"),
    element_cuda: "__nv_bfloat16",
    cuda: Some(CudaType {
        repr: HalfRepr::CudaBFloat16,
        spellings: &["__nv_bfloat16", "nv_bfloat16"],
        raw: "__nv_bfloat16_raw",
        header: "<cuda_bf16.h>",
    }),
    wire: AttrType::UInt16,
    array_wire: (AttrType::UInt16, 1),
    xla: "BF16",
    xla_code: 16,
    be_dtype: "BFloat16",
    cutile: Some("bf16"),
    py_dtype: "_ml_dtypes.bfloat16",
    ..BLANK
};

impl AttrType {
    /// Every type, in the order of the arg_spec system's table (and of the
    /// enum's variants).
    pub(crate) const ALL: [AttrType; 15] = [
        AttrType::Bool,
        AttrType::Int8,
        AttrType::UInt8,
        AttrType::Int16,
        AttrType::UInt16,
        AttrType::Int32,
        AttrType::UInt32,
        AttrType::Int64,
        AttrType::UInt64,
        AttrType::Float32,
        AttrType::Float64,
        AttrType::Complex64,
        AttrType::Complex128,
        AttrType::Float16,
        AttrType::BFloat16,
    ];

    /// Its row of facts.
    pub(crate) const fn facts(self) -> &'static Scalar {
        match self {
            AttrType::Bool => &BOOL,
            AttrType::Int8 => &INT8,
            AttrType::UInt8 => &UINT8,
            AttrType::Int16 => &INT16,
            AttrType::UInt16 => &UINT16,
            AttrType::Int32 => &INT32,
            AttrType::UInt32 => &UINT32,
            AttrType::Int64 => &INT64,
            AttrType::UInt64 => &UINT64,
            AttrType::Float32 => &FLOAT32,
            AttrType::Float64 => &FLOAT64,
            AttrType::Complex64 => &COMPLEX64,
            AttrType::Complex128 => &COMPLEX128,
            AttrType::Float16 => &FLOAT16,
            AttrType::BFloat16 => &BFLOAT16,
        }
    }

    /// The type string of `attr.<name>:<type>`.
    pub(crate) fn as_str(self) -> &'static str {
        self.facts().name
    }

    /// What kind of number it holds.
    pub(crate) fn kind(self) -> ScalarKind {
        self.facts().kind
    }

    /// Whether it is one of the eight integer types (not `bool`).
    pub(crate) fn is_integer(self) -> bool {
        matches!(self.kind(), ScalarKind::Int { .. })
    }

    /// Whether it is a complex type.
    pub(crate) fn is_complex(self) -> bool {
        self.kind() == ScalarKind::Complex
    }

    /// Whether a C++ attribute parameter takes it as its bits (float16,
    /// bfloat16).
    pub(crate) fn is_float_bits(self) -> bool {
        self.kind() == ScalarKind::FloatBits
    }

    /// The range of an integer type (`bool`: 0..=1); `None` for the others.
    pub(crate) fn int_range(self) -> Option<(i128, i128)> {
        self.facts().range
    }

    /// Bytes per element of a tensor of this type.
    pub(crate) fn byte_width(self) -> usize {
        self.facts().size as usize
    }

    /// The C++ element type of a tensor of this type, as a template
    /// argument: `float`; a 16-bit float is `BE::half`/`BE::bfloat16` in a
    /// CPU source (brainevent/float16.h), `__half`/`__nv_bfloat16` in CUDA.
    pub(crate) fn element_cpp(self, platform: Platform) -> Option<&'static str> {
        match platform {
            Platform::Cpu => self.facts().element_cpu,
            Platform::Cuda => Some(self.facts().element_cuda),
        }
    }

    /// The XLA FFI `DataType` enumerator of a buffer of this type.
    pub(crate) fn xla_type(self) -> &'static str {
        self.facts().xla
    }

    /// Parses a type string; `None` for anything outside the 15.
    pub(crate) fn parse(s: &str) -> Option<AttrType> {
        AttrType::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// The C++ type the kernel's parameter receives.
    pub(crate) fn cpp_type(self) -> &'static str {
        self.facts().cpp
    }

    /// The numpy dtype name the Python wrapper converts a value to before it
    /// reaches XLA (float16/bfloat16 travel as their uint16 bits, complex as
    /// a 2-element array of the component type).
    ///
    /// ```
    /// use begen::model::AttrType;
    /// assert_eq!(AttrType::Int8.numpy_dtype(), "int8");
    /// assert_eq!(AttrType::Float16.numpy_dtype(), "uint16");
    /// assert_eq!(AttrType::Complex128.numpy_dtype(), "float64");
    /// ```
    #[cfg(test)]
    pub(crate) fn numpy_dtype(self) -> &'static str {
        self.facts().wire.as_str()
    }

    /// The type the arg_spec system's table infers from a C++ spelling
    /// (leading `const` already stripped), with the spelling as a `'static`
    /// string (safe to write into generated C++). Exactly the table's spellings.
    pub(crate) fn from_spelling(cpp: &str) -> Option<(&'static str, AttrType)> {
        AttrType::find(cpp, |s| s.spellings)
    }

    /// The type a further LP64 spelling names (`long`, `cuComplex`).
    pub(crate) fn from_alias(cpp: &str) -> Option<AttrType> {
        AttrType::find(cpp, |s| s.aliases).map(|(_, t)| t)
    }

    /// The type a spelling only a template's value parameter is read with
    /// names (`size_t`).
    pub(crate) fn from_value_alias(cpp: &str) -> Option<AttrType> {
        AttrType::find(cpp, |s| s.value_aliases).map(|(_, t)| t)
    }

    /// The type a spelling of CUDA's own types names (`__half`), with the
    /// spelling as a `'static` string and how a parameter so declared is marked.
    pub(crate) fn from_cuda(cpp: &str) -> Option<(&'static str, AttrType, HalfRepr)> {
        AttrType::ALL.into_iter().find_map(|t| {
            let cuda = t.facts().cuda?;
            cuda.spellings.iter().find(|s| **s == cpp).map(|s| (*s, t, cuda.repr))
        })
    }

    fn find(cpp: &str, list: fn(&'static Scalar) -> &'static [&'static str]) -> Option<(&'static str, AttrType)> {
        AttrType::ALL.into_iter().find_map(|t| list(t.facts()).iter().find(|s| **s == cpp).map(|s| (*s, t)))
    }
}

impl fmt::Display for AttrType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ScalarKind {
    /// The Python type a user passes for an attribute of this kind, for the
    /// stub.
    pub(crate) fn py_type(self) -> &'static str {
        match self {
            ScalarKind::Bool => "bool",
            ScalarKind::Int { .. } => "int",
            ScalarKind::Float | ScalarKind::FloatBits => "float",
            ScalarKind::Complex => "complex",
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// Every value of `field` over the rows is distinct.
    fn distinct<T: Ord + fmt::Debug>(what: &str, field: impl Fn(&Scalar) -> T) {
        let mut seen = BTreeSet::new();
        for t in AttrType::ALL {
            let v = field(t.facts());
            assert!(seen.insert(format!("{v:?}")), "{what} {v:?} of {t} is another type's too");
        }
    }

    #[test]
    fn every_variant_has_its_row_in_order() {
        for (i, t) in AttrType::ALL.into_iter().enumerate() {
            assert_eq!(t as usize, i, "ALL lists the variants in their order");
            assert_eq!(t.facts().ty, t, "the row of {t} describes {t}");
            assert_eq!(AttrType::parse(t.as_str()), Some(t));
        }
        // The last variant is the last listed: a variant added after it
        // without its place in ALL fails here.
        let last = AttrType::ALL[AttrType::ALL.len() - 1];
        assert!(AttrType::ALL.iter().all(|t| *t <= last));
        assert_eq!(last as usize, AttrType::ALL.len() - 1);
    }

    #[test]
    fn names_codes_and_spellings_are_unique() {
        distinct("name", |s| s.name);
        distinct("xla", |s| s.xla);
        distinct("xla code", |s| s.xla_code);
        distinct("BE::DType", |s| s.be_dtype);
        distinct("py dtype", |s| s.py_dtype);
        let cutile: Vec<&str> = AttrType::ALL.iter().filter_map(|t| t.facts().cutile).collect();
        assert_eq!(cutile.len(), cutile.iter().collect::<BTreeSet<_>>().len(), "{cutile:?}");
        let mut spellings = BTreeSet::new();
        for t in AttrType::ALL {
            let s = t.facts();
            let cuda = s.cuda.map_or(&[][..], |c| c.spellings);
            for sp in s.spellings.iter().chain(s.aliases).chain(s.value_aliases).chain(cuda) {
                assert!(spellings.insert(*sp), "{sp} names two types");
            }
        }
    }

    #[test]
    fn facts_agree_with_each_other() {
        for t in AttrType::ALL {
            let s = t.facts();
            let wire = s.wire.facts();
            match s.kind {
                ScalarKind::Bool => {
                    assert_eq!((s.size, s.range, s.wire), (1, Some((0, 1)), t));
                }
                ScalarKind::Int { signed } => {
                    let bits = 8 * s.size;
                    let (lo, hi) = s.range.expect("an integer has a range");
                    let want = if signed {
                        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
                    } else {
                        (0, (1i128 << bits) - 1)
                    };
                    assert_eq!((lo, hi), want, "{t}");
                    assert_eq!(s.wire, t);
                    assert!(s.name.starts_with(if signed { "int" } else { "uint" }), "{t}");
                }
                ScalarKind::Float => assert_eq!((s.wire, s.range), (t, None), "{t}"),
                ScalarKind::FloatBits => {
                    // The bits travel in the unsigned integer of its size.
                    assert_eq!(wire.kind, ScalarKind::Int { signed: false }, "{t}");
                    assert_eq!((wire.size, s.cpp, s.array_wire), (s.size, wire.cpp, (s.wire, 1)), "{t}");
                    // begen's own 16-bit types on the CPU (brainevent/float16.h).
                    assert!(s.cuda.is_some() && s.element_cpu.is_some_and(|c| c.starts_with("BE::")), "{t}");
                }
                ScalarKind::Complex => {
                    assert_eq!(wire.kind, ScalarKind::Float, "{t}");
                    assert_eq!((s.size, s.align, s.array_wire), (2 * wire.size, wire.align, (s.wire, 2)), "{t}");
                    assert_eq!(s.cpp, format!("std::complex<{}>", wire.cpp));
                }
            }
            // An array attribute's elements travel as plain numbers filling the element.
            let (array, per) = s.array_wire;
            assert!(matches!(array.kind(), ScalarKind::Int { .. } | ScalarKind::Float), "{t}");
            assert_eq!(array.facts().size * per as u32, s.size, "{t}");
            // 64-bit numbers, or pairs of them.
            assert_eq!(s.x64, wire.size == 8, "{t}");
            assert!(s.align <= s.size && s.size % s.align == 0, "{t}");
            if let Some(cpu) = s.element_cpu.filter(|_| s.kind != ScalarKind::FloatBits) {
                assert_eq!((cpu, s.element_cuda), (s.cpp, s.cpp), "{t}");
            }
            if let Some(c) = s.cuda {
                assert_eq!(c.spellings[0], s.element_cuda, "{t}");
            }
            assert_eq!(s.spellings.first().copied().unwrap_or(s.cpp), s.cpp, "{t}: the canonical spelling comes first");
            assert_eq!(t.numpy_dtype(), wire.name);
        }
    }

    #[allow(clippy::disallowed_methods)] // a test picks its compiler; nothing is built for cargo
    fn cxx() -> String {
        std::env::var("CXX").unwrap_or_else(|_| "g++".into())
    }

    /// The table against the C++ it describes: each spelling's size and
    /// alignment, the support headers' `BE::DType` (size, name) and XLA
    /// codes, compiled with the support headers and run.
    #[test]
    #[ignore = "needs a C++17 compiler (CXX, default g++)"]
    fn table_matches_the_support_headers() {
        let mut src = String::from(
            "#include <complex>\n#include <cstdint>\n#include <cstdio>\n#include <cstring>\n#include <type_traits>\n\
             #include \"begen/trampoline.h\"\n#include \"brainevent/common.h\"\nint main() {\n  int bad = 0;\n",
        );
        for t in AttrType::ALL {
            let s = t.facts();
            let (size, align) = (s.size, s.align);
            let mut types = vec![s.cpp];
            types.extend(s.spellings.iter().chain(s.aliases.iter().filter(|a| !a.starts_with("cu"))));
            types.extend(s.value_aliases);
            for cpp in types {
                src += &format!("  static_assert(sizeof({cpp}) == {size}, \"{t}: sizeof({cpp})\");\n");
                src += &format!("  static_assert(alignof({cpp}) == {align}, \"{t}: alignof({cpp})\");\n");
            }
            if let ScalarKind::Int { signed } = s.kind {
                src += &format!("  static_assert(std::is_signed<{}>::value == {signed}, \"{t}\");\n", s.cpp);
            }
            let be = format!("BE::DType::{}", s.be_dtype);
            src += &format!("  static_assert(BE::dtype_size({be}) == {size}, \"{t}: BE::dtype_size\");\n");
            src += &format!(
                "  static_assert(begen::xla_type::k{} == {}, \"{t}: xla code\");\n",
                xla_const(s.xla),
                s.xla_code
            );
            src += &format!(
                "  if (std::strcmp(BE::dtype_name({be}), \"{0}\") != 0) {{ std::puts(\"{0}: BE::dtype_name\"); bad = 1; }}\n",
                s.name
            );
            src += &format!(
                "  if (begen::dtype_of({}) != {be}) {{ std::puts(\"{t}: begen::dtype_of\"); bad = 1; }}\n",
                s.xla_code
            );
        }
        src += "  if (!bad) std::puts(\"table ok\");\n  return bad;\n}\n";
        let dir = std::env::temp_dir().join(format!("begen-scalar-table-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (cpp, exe) = (dir.join("table.cpp"), dir.join("table"));
        std::fs::write(&cpp, &src).unwrap();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let out = std::process::Command::new(cxx())
            .args(["-std=c++17", "-Wall", "-Wextra", "-Werror", "-I"])
            .arg(root.join("build-support/include"))
            .arg(&cpp)
            .arg("-o")
            .arg(&exe)
            .output()
            .expect("a C++ compiler");
        assert!(out.status.success(), "{}\n{src}", String::from_utf8_lossy(&out.stderr));
        let run = std::process::Command::new(&exe).output().unwrap();
        let text = String::from_utf8_lossy(&run.stdout);
        assert!(run.status.success() && text.contains("table ok"), "{text}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// `PRED` -> `Pred`, `BF16` -> `BF16`: the spelling of `begen/abi.h`'s constants.
    fn xla_const(xla: &str) -> String {
        if xla == "PRED" { "Pred".into() } else { xla.into() }
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples of this module's crate-private items, run as unit tests
    //! (an example in a doc comment must compile outside the crate).

    #[test]
    fn attr_type() {
        use crate::model::AttrType;
        assert_eq!(AttrType::parse("float32"), Some(AttrType::Float32));
        assert_eq!(AttrType::Float16.cpp_type(), "uint16_t");
    }

    #[test]
    fn scalar_kind() {
        use crate::model::{AttrType, ScalarKind};
        assert_eq!(AttrType::BFloat16.kind(), ScalarKind::FloatBits);
        assert_eq!(AttrType::UInt8.kind(), ScalarKind::Int { signed: false });
    }

    #[test]
    fn scalar() {
        let f32 = crate::model::AttrType::Float32.facts();
        assert_eq!((f32.name, f32.cpp, f32.size, f32.xla), ("float32", "float", 4, "F32"));
    }

    #[test]
    fn attr_type_all() {
        use crate::model::AttrType;
        assert_eq!(AttrType::ALL.len(), 15);
        assert_eq!(AttrType::ALL[0], AttrType::Bool);
    }

    #[test]
    fn attr_type_facts() {
        use crate::model::AttrType;
        assert_eq!(AttrType::Complex64.facts().wire, AttrType::Float32);
    }

    #[test]
    fn attr_type_as_str() {
        assert_eq!(crate::model::AttrType::BFloat16.as_str(), "bfloat16");
    }

    #[test]
    fn attr_type_kind() {
        use crate::model::{AttrType, ScalarKind};
        assert_eq!(AttrType::Complex128.kind(), ScalarKind::Complex);
    }

    #[test]
    fn attr_type_is_integer() {
        use crate::model::AttrType;
        assert!(AttrType::UInt8.is_integer() && !AttrType::Bool.is_integer());
    }

    #[test]
    fn attr_type_is_complex() {
        use crate::model::AttrType;
        assert!(AttrType::Complex64.is_complex() && !AttrType::Float64.is_complex());
    }

    #[test]
    fn attr_type_is_float_bits() {
        use crate::model::AttrType;
        assert!(AttrType::Float16.is_float_bits() && !AttrType::Float32.is_float_bits());
    }

    #[test]
    fn attr_type_int_range() {
        use crate::model::AttrType;
        assert_eq!(AttrType::Int8.int_range(), Some((-128, 127)));
    }

    #[test]
    fn attr_type_byte_width() {
        assert_eq!(crate::model::AttrType::Complex64.byte_width(), 8);
    }

    #[test]
    fn attr_type_element_cpp() {
        use crate::model::{AttrType, Platform};
        assert_eq!(AttrType::Float16.element_cpp(Platform::Cuda), Some("__half"));
        assert_eq!(AttrType::Float16.element_cpp(Platform::Cpu), Some("BE::half"));
        assert_eq!(AttrType::BFloat16.element_cpp(Platform::Cpu), Some("BE::bfloat16"));
    }

    #[test]
    fn attr_type_xla_type() {
        assert_eq!(crate::model::AttrType::BFloat16.xla_type(), "BF16");
    }

    #[test]
    fn attr_type_parse() {
        use crate::model::AttrType;
        assert_eq!(AttrType::parse("complex64"), Some(AttrType::Complex64));
        assert_eq!(AttrType::parse("float"), None);
    }

    #[test]
    fn attr_type_cpp_type() {
        use crate::model::AttrType;
        assert_eq!(AttrType::Float64.cpp_type(), "double");
        assert_eq!(AttrType::BFloat16.cpp_type(), "uint16_t");
    }

    #[test]
    fn attr_type_from_spelling() {
        use crate::model::AttrType;
        assert_eq!(AttrType::from_spelling("unsigned long long"), Some(("unsigned long long", AttrType::UInt64)));
        assert_eq!(AttrType::from_spelling("long"), None);
    }

    #[test]
    fn attr_type_from_alias() {
        use crate::model::AttrType;
        assert_eq!(AttrType::from_alias("long"), Some(AttrType::Int64));
    }

    #[test]
    fn attr_type_from_value_alias() {
        use crate::model::AttrType;
        assert_eq!(AttrType::from_value_alias("size_t"), Some(AttrType::UInt64));
    }

    #[test]
    fn attr_type_from_cuda() {
        use crate::model::{AttrType, HalfRepr};
        assert_eq!(AttrType::from_cuda("half"), Some(("half", AttrType::Float16, HalfRepr::CudaHalf)));
    }

    #[test]
    fn scalar_kind_py_type() {
        assert_eq!(crate::model::ScalarKind::FloatBits.py_type(), "float");
    }
}
