//! C layout of kernel parameters: struct layouts (size, alignment, member
//! offsets) and the byte image of a kernel's argument list.
//!
//! A CUDA kernel's parameters live in one buffer (the `.param` space, the
//! constant bank the driver fills from `cuLaunchKernel`'s `kernelParams`):
//! each parameter at the next offset aligned to its type, a struct by value
//! as its bytes with C layout. [`ParamLayout`] computes those offsets, which
//! the generated handler uses to pack arguments, and [`pack`] fills a buffer
//! from values, the reference the golden tests pin byte for byte.
//!
//! ```
//! use begen::binary::layout::{CType, Member, StructDef, Structs, ParamLayout};
//! use begen::model::AttrType::{Float32, Float64, UInt16};
//! let mut structs = Structs::new();
//! let affine = structs
//!     .add(StructDef::new("Affine", [Member::new("tag", UInt16), Member::new("scale", Float64), Member::new("shift", Float32)]))
//!     .unwrap();
//! let l = structs.layout(affine);
//! assert_eq!((l.size, l.align, l.offsets.as_slice()), (24, 8, &[0, 8, 16][..]));
//! let params = ParamLayout::of(&[CType::Struct(affine), CType::Pointer, CType::Prim(Float32)], &structs);
//! assert_eq!((params.offsets.as_slice(), params.size), (&[0, 24, 32][..], 36));
//! ```

use std::fmt;

use crate::diag::messages::binary as bm;
use crate::model::{AttrType, HalfRepr, ScalarKind};

/// Identifies a struct in a [`Structs`] table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StructId(pub u32);

/// The C type of a kernel parameter or struct member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CType {
    /// A number or `bool` (float16/bfloat16 as their 16 bits).
    Prim(AttrType),
    /// A 64-bit device pointer (a typed tensor's data, a slice's start).
    Pointer,
    /// A struct by value.
    Struct(StructId),
}

/// One member of a struct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The member's name (the key of the Python dict).
    pub name: String,
    /// Its type.
    pub ty: CType,
}

impl Member {
    /// A member of a primitive type.
    pub fn new(name: &str, ty: AttrType) -> Member {
        Member { name: name.to_string(), ty: CType::Prim(ty) }
    }

    /// A member of any type.
    pub fn of(name: &str, ty: CType) -> Member {
        Member { name: name.to_string(), ty }
    }
}

/// A struct declaration (begen.yaml `structs:`, or read from C++).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructDef {
    /// Its name.
    pub name: String,
    /// Members in declaration order.
    pub members: Vec<Member>,
    /// An explicit alignment (`alignas(16)`, `#[repr(C, align(16))]`).
    pub align: Option<u32>,
}

impl StructDef {
    /// A struct with its natural alignment.
    pub fn new(name: &str, members: impl IntoIterator<Item = Member>) -> StructDef {
        StructDef { name: name.to_string(), members: members.into_iter().collect(), align: None }
    }

    /// The same struct with an explicit alignment.
    pub fn aligned(mut self, align: u32) -> StructDef {
        self.align = Some(align);
        self
    }
}

/// Where a struct's members lie.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructLayout {
    /// `sizeof`: a multiple of `align`.
    pub size: u32,
    /// `alignof`.
    pub align: u32,
    /// `offsetof` of each member, in declaration order.
    pub offsets: Vec<u32>,
}

/// Why a struct has no layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayoutError {
    /// Two structs of one name.
    DuplicateStruct(String),
    /// A struct without members (C has none; Rust-CUDA drops zero-sized types).
    Empty(String),
    /// Two members of one name.
    DuplicateMember {
        /// The struct.
        strukt: String,
        /// The member.
        member: String,
    },
    /// An alignment that is not a power of two, or below the natural one.
    BadAlign {
        /// The struct.
        strukt: String,
        /// The alignment asked for.
        align: u32,
        /// The natural alignment.
        natural: u32,
    },
    /// A member whose struct is not (yet) in the table.
    UnknownStruct {
        /// The struct.
        strukt: String,
        /// The member.
        member: String,
    },
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayoutError::DuplicateStruct(s) => f.write_str(&bm::struct_twice(s)),
            LayoutError::Empty(s) => f.write_str(&bm::struct_no_members(s)),
            LayoutError::DuplicateMember { strukt, member } => f.write_str(&bm::member_twice(strukt, member)),
            LayoutError::BadAlign { strukt, align, natural } => {
                f.write_str(&bm::struct_align(strukt, *align, *natural))
            }
            LayoutError::UnknownStruct { strukt, member } => f.write_str(&bm::member_struct_unknown(strukt, member)),
        }
    }
}

impl std::error::Error for LayoutError {}

/// Structs and their layouts. A struct may contain only structs added
/// before it, so nesting can never be cyclic.
#[derive(Debug, Clone, Default)]
pub struct Structs {
    defs: Vec<StructDef>,
    layouts: Vec<StructLayout>,
}

impl Structs {
    /// An empty table.
    pub fn new() -> Structs {
        Structs::default()
    }

    /// Adds a struct and computes its layout.
    pub fn add(&mut self, def: StructDef) -> Result<StructId, LayoutError> {
        if self.find(&def.name).is_some() {
            return Err(LayoutError::DuplicateStruct(def.name));
        }
        if def.members.is_empty() {
            return Err(LayoutError::Empty(def.name));
        }
        let mut offsets = Vec::with_capacity(def.members.len());
        let (mut end, mut natural) = (0u32, 1u32);
        for (i, m) in def.members.iter().enumerate() {
            if def.members[..i].iter().any(|o| o.name == m.name) {
                return Err(LayoutError::DuplicateMember { strukt: def.name.clone(), member: m.name.clone() });
            }
            if let CType::Struct(id) = m.ty
                && id.0 as usize >= self.defs.len()
            {
                return Err(LayoutError::UnknownStruct { strukt: def.name.clone(), member: m.name.clone() });
            }
            let (size, align) = self.size_align(m.ty);
            let offset = end.next_multiple_of(align);
            offsets.push(offset);
            end = offset + size;
            natural = natural.max(align);
        }
        let align = match def.align {
            Some(a) if !a.is_power_of_two() || a < natural => {
                return Err(LayoutError::BadAlign { strukt: def.name, align: a, natural });
            }
            Some(a) => a,
            None => natural,
        };
        self.layouts.push(StructLayout { size: end.next_multiple_of(align), align, offsets });
        self.defs.push(def);
        Ok(StructId(self.defs.len() as u32 - 1))
    }

    /// The struct of a name.
    pub fn find(&self, name: &str) -> Option<StructId> {
        self.defs.iter().position(|d| d.name == name).map(|i| StructId(i as u32))
    }

    /// A struct's declaration.
    pub fn def(&self, id: StructId) -> &StructDef {
        &self.defs[id.0 as usize]
    }

    /// A struct's layout.
    pub fn layout(&self, id: StructId) -> &StructLayout {
        &self.layouts[id.0 as usize]
    }

    /// `sizeof` and `alignof` of a type.
    ///
    /// ```
    /// use begen::binary::layout::{CType, Structs};
    /// use begen::model::AttrType;
    /// let s = Structs::new();
    /// assert_eq!(s.size_align(CType::Prim(AttrType::Complex64)), (8, 4));
    /// assert_eq!(s.size_align(CType::Pointer), (8, 8));
    /// ```
    pub fn size_align(&self, ty: CType) -> (u32, u32) {
        match ty {
            CType::Prim(t) => prim_size_align(t),
            CType::Pointer => (8, 8),
            CType::Struct(id) => {
                let l = self.layout(id);
                (l.size, l.align)
            }
        }
    }
}

fn prim_size_align(t: AttrType) -> (u32, u32) {
    (t.facts().size, t.facts().align)
}

/// Offsets of a kernel's parameters in its parameter buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamLayout {
    /// Each parameter's offset, aligned to its type.
    pub offsets: Vec<u32>,
    /// Each parameter's size.
    pub sizes: Vec<u32>,
    /// Where the last parameter ends (the `.param` bank's size).
    pub size: u32,
    /// The largest alignment (the buffer's).
    pub align: u32,
}

impl ParamLayout {
    /// Lays out parameters one after another, each at its alignment.
    pub fn of(params: &[CType], structs: &Structs) -> ParamLayout {
        let (mut offsets, mut sizes) = (Vec::with_capacity(params.len()), Vec::with_capacity(params.len()));
        let (mut end, mut max_align) = (0u32, 1u32);
        for &p in params {
            let (size, align) = structs.size_align(p);
            let offset = end.next_multiple_of(align);
            offsets.push(offset);
            sizes.push(size);
            end = offset + size;
            max_align = max_align.max(align);
        }
        ParamLayout { offsets, sizes, size: end, align: max_align }
    }
}

/// A value to pack.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// For `bool`.
    Bool(bool),
    /// For integer types (range-checked).
    Int(i128),
    /// For float types (rounded to nearest even for float16/bfloat16/float32).
    Float(f64),
    /// For complex types: real and imaginary parts.
    Complex(f64, f64),
    /// For pointers.
    Pointer(u64),
    /// For a struct: its members' values in declaration order.
    Struct(Vec<Value>),
}

/// Why a value cannot be packed as a type.
#[derive(Debug, Clone, PartialEq)]
pub struct PackError {
    /// The parameter, then member indices down to the bad value.
    pub path: Vec<usize>,
    /// What is wrong.
    pub kind: PackErrorKind,
}

/// The kinds of [`PackError`].
#[derive(Debug, Clone, PartialEq)]
pub enum PackErrorKind {
    /// Not one value per parameter.
    Count {
        /// Values given.
        values: usize,
        /// Parameters.
        params: usize,
    },
    /// An integer outside its type's range.
    Range(i128, AttrType),
    /// A struct value with another number of members.
    Members {
        /// The struct.
        strukt: String,
        /// Its members.
        members: usize,
        /// Values given.
        values: usize,
    },
    /// A value of another kind than its type.
    Kind(Value, CType),
    /// A float type of this size with no encoding here.
    Encoding(u32, AttrType),
}

impl fmt::Display for PackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = match &self.kind {
            PackErrorKind::Count { values, params } => bm::pack_count(*values, *params),
            PackErrorKind::Range(n, t) => bm::pack_range(&n.to_string(), t.as_str()),
            PackErrorKind::Members { strukt, members, values } => bm::pack_members(strukt, *members, *values),
            PackErrorKind::Kind(v, ty) => bm::pack_kind(&format!("{v:?}"), &format!("{ty:?}")),
            PackErrorKind::Encoding(size, t) => bm::pack_encoding(*size, t.as_str()),
        };
        f.write_str(&bm::pack_at(&self.path, &why))
    }
}

impl std::error::Error for PackError {}

/// Packs values into a kernel's parameter buffer (padding is zero).
///
/// ```
/// use begen::binary::layout::{pack, CType, Structs, Value};
/// use begen::model::AttrType::{Float16, Int32};
/// let bytes = pack(&[CType::Prim(Float16), CType::Prim(Int32)], &[Value::Float(1.0), Value::Int(-2)], &Structs::new()).unwrap();
/// assert_eq!(bytes, [0x00, 0x3c, 0, 0, 0xfe, 0xff, 0xff, 0xff]);
/// ```
pub fn pack(params: &[CType], values: &[Value], structs: &Structs) -> Result<Vec<u8>, PackError> {
    if params.len() != values.len() {
        return Err(PackError {
            path: vec![],
            kind: PackErrorKind::Count { values: values.len(), params: params.len() },
        });
    }
    let layout = ParamLayout::of(params, structs);
    let mut buf = vec![0u8; layout.size as usize];
    for (i, (&ty, v)) in params.iter().zip(values).enumerate() {
        let mut path = vec![i];
        write_value(&mut buf, layout.offsets[i] as usize, ty, v, structs, &mut path)?;
    }
    Ok(buf)
}

fn write_value(
    buf: &mut [u8],
    at: usize,
    ty: CType,
    v: &Value,
    structs: &Structs,
    path: &mut Vec<usize>,
) -> Result<(), PackError> {
    let fail = |path: &Vec<usize>, kind: PackErrorKind| Err(PackError { path: path.clone(), kind });
    let mut put = |bytes: &[u8]| buf[at..at + bytes.len()].copy_from_slice(bytes);
    match (ty, v) {
        (CType::Pointer, Value::Pointer(p)) => put(&p.to_le_bytes()),
        (CType::Prim(t), v) => match prim_bytes(t, v) {
            Ok(bytes) => put(&bytes),
            Err(kind) => return fail(path, kind),
        },
        (CType::Struct(id), Value::Struct(members)) => {
            let (def, layout) = (structs.def(id), structs.layout(id));
            if members.len() != def.members.len() {
                let (strukt, members, values) = (def.name.clone(), def.members.len(), members.len());
                return fail(path, PackErrorKind::Members { strukt, members, values });
            }
            for (j, (m, mv)) in def.members.iter().zip(members).enumerate() {
                path.push(j);
                write_value(buf, at + layout.offsets[j] as usize, m.ty, mv, structs, path)?;
                path.pop();
            }
        }
        (ty, v) => return fail(path, PackErrorKind::Kind(v.clone(), ty)),
    }
    Ok(())
}

/// The bytes of `v` as a value of `t`, by its kind: a bool as a byte, an
/// integer in its range, a float (or a float passed as bits) in its own
/// encoding, a complex number as two floats of its part type.
fn prim_bytes(t: AttrType, v: &Value) -> Result<Vec<u8>, PackErrorKind> {
    let s = t.facts();
    Ok(match (s.kind, v) {
        (ScalarKind::Bool, Value::Bool(b)) => vec![u8::from(*b)],
        (ScalarKind::Int { .. }, Value::Int(n)) => {
            let (lo, hi) = s.range.unwrap_or((0, -1));
            if *n < lo || *n > hi {
                return Err(PackErrorKind::Range(*n, t));
            }
            n.to_le_bytes()[..s.size as usize].to_vec()
        }
        (ScalarKind::Float | ScalarKind::FloatBits, Value::Float(x)) => float_bytes(t, *x)?,
        (ScalarKind::Complex, Value::Complex(re, im)) => {
            [float_bytes(s.wire, *re)?, float_bytes(s.wire, *im)?].concat()
        }
        (_, v) => return Err(PackErrorKind::Kind(v.clone(), CType::Prim(t))),
    })
}

/// A float's bytes as type `t`: a float passed as bits by CUDA's type
/// for it, else `float` or `double` by its size.
fn float_bytes(t: AttrType, x: f64) -> Result<Vec<u8>, PackErrorKind> {
    let s = t.facts();
    Ok(match (s.cuda.map(|c| c.repr), s.size) {
        (Some(HalfRepr::CudaHalf), _) => f32_to_f16_bits(x as f32).to_le_bytes().to_vec(),
        (Some(HalfRepr::CudaBFloat16), _) => f32_to_bf16_bits(x as f32).to_le_bytes().to_vec(),
        (None, 4) => (x as f32).to_le_bytes().to_vec(),
        (None, 8) => x.to_le_bytes().to_vec(),
        (Some(HalfRepr::Bits) | None, size) => return Err(PackErrorKind::Encoding(size, t)),
    })
}

/// IEEE binary16 bits of a float, rounded to nearest even.
///
/// ```
/// use begen::binary::layout::f32_to_f16_bits;
/// assert_eq!(f32_to_f16_bits(1.0), 0x3c00);
/// assert_eq!(f32_to_f16_bits(65520.0), 0x7c00); // rounds up to infinity
/// assert_eq!(f32_to_f16_bits(-2.0f32.powi(-24)), 0x8001); // smallest subnormal
/// ```
pub fn f32_to_f16_bits(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let man = bits & 0x7f_ffff;
    if exp == 0xff {
        // Infinity stays infinity; a NaN stays a (quiet) NaN.
        return sign | 0x7c00 | if man != 0 { 0x200 | (man >> 13) as u16 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    // The significand with its implicit bit, and how far to shift it right.
    let (sig, shift) = if e <= 0 {
        if e < -10 {
            return sign;
        }
        (man | 0x80_0000, (14 - e) as u32)
    } else {
        (man, 13)
    };
    let half = 1u32 << (shift - 1);
    let rest = sig & ((1 << shift) - 1);
    let mut out = sig >> shift;
    if rest > half || (rest == half && out & 1 == 1) {
        out += 1;
    }
    if e > 0 {
        // A carry out of the significand bumps the exponent, up to infinity.
        sign | (((e as u32) << 10) + out) as u16
    } else {
        sign | out as u16
    }
}

/// bfloat16 bits of a float, rounded to nearest even.
///
/// ```
/// assert_eq!(begen::binary::layout::f32_to_bf16_bits(1.0), 0x3f80);
/// ```
pub fn f32_to_bf16_bits(x: f32) -> u16 {
    let bits = x.to_bits();
    if x.is_nan() {
        return ((bits >> 16) as u16) | 0x40;
    }
    let round = 0x7fff + ((bits >> 16) & 1);
    ((bits + round) >> 16) as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    use AttrType::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn seed_003_foo_is_32_bytes_aligned_16() {
        // Rust-CUDA's `struct Foo { a: u16, b: u64, c: u128 }`: u128 is 16-byte
        // aligned, declared here as two u64 in a 16-aligned struct.
        let mut s = Structs::new();
        let foo = s
            .add(
                StructDef::new(
                    "Foo",
                    [
                        Member::new("a", UInt16),
                        Member::new("b", UInt64),
                        Member::new("c_lo", UInt64),
                        Member::new("c_hi", UInt64),
                    ],
                )
                .aligned(16),
            )
            .unwrap();
        let l = s.layout(foo);
        assert_eq!((l.size, l.align, l.offsets.clone()), (32, 16, vec![0, 8, 16, 24]));
    }

    #[test]
    fn nested_and_padded() {
        let mut s = Structs::new();
        let inner = s.add(StructDef::new("Inner", [Member::new("flag", Bool), Member::new("x", Float64)])).unwrap();
        let outer = s
            .add(StructDef::new(
                "Outer",
                [Member::new("tag", Int8), Member::of("inner", CType::Struct(inner)), Member::new("h", Float16)],
            ))
            .unwrap();
        assert_eq!(s.layout(inner).size, 16);
        let l = s.layout(outer);
        assert_eq!((l.size, l.align, l.offsets.clone()), (32, 8, vec![0, 8, 24]));
        let v = Value::Struct(vec![
            Value::Int(-1),
            Value::Struct(vec![Value::Bool(true), Value::Float(2.0)]),
            Value::Float(-0.5),
        ]);
        let bytes = pack(&[CType::Prim(UInt8), CType::Struct(outer)], &[Value::Int(7), v], &s).unwrap();
        let golden = [
            "07 00 00 00 00 00 00 00", // uint8 7, padding to the struct's alignment
            "ff 00 00 00 00 00 00 00", // Outer.tag = -1, padding
            "01 00 00 00 00 00 00 00", // Outer.inner.flag, padding
            "00 00 00 00 00 00 00 40", // Outer.inner.x = 2.0
            "00 b8 00 00 00 00 00 00", // Outer.h = -0.5 (f16 0xb800), tail padding
        ];
        assert_eq!(hex(&bytes), golden.join(" "));
    }

    #[test]
    fn errors() {
        let mut s = Structs::new();
        assert_eq!(s.add(StructDef::new("E", [])), Err(LayoutError::Empty("E".into())));
        assert!(matches!(
            s.add(StructDef::new("A", [Member::new("x", Float64)]).aligned(4)),
            Err(LayoutError::BadAlign { align: 4, natural: 8, .. })
        ));
        assert!(matches!(
            s.add(StructDef::new("A", [Member::new("x", Float64)]).aligned(24)),
            Err(LayoutError::BadAlign { align: 24, .. })
        ));
        assert!(matches!(
            s.add(StructDef::new("A", [Member::new("x", Int8), Member::new("x", Int8)])),
            Err(LayoutError::DuplicateMember { .. })
        ));
        assert!(matches!(
            s.add(StructDef::new("A", [Member::of("x", CType::Struct(StructId(0)))])),
            Err(LayoutError::UnknownStruct { .. })
        ));
        s.add(StructDef::new("A", [Member::new("x", Int8)])).unwrap();
        assert_eq!(s.add(StructDef::new("A", [Member::new("y", Int8)])), Err(LayoutError::DuplicateStruct("A".into())));
        let e = pack(&[CType::Prim(UInt8)], &[Value::Int(256)], &s).unwrap_err();
        assert_eq!(e.to_string(), "argument 0: 256 does not fit uint8");
        let e = pack(&[CType::Struct(StructId(0))], &[Value::Struct(vec![Value::Float(1.0)])], &s).unwrap_err();
        assert_eq!(e.path, vec![0, 0]);
    }

    #[test]
    fn half_rounding_matches_exhaustive_f16_decode() {
        // Every f16 value converts back to itself, and midpoints round to even.
        for h in 0u16..=0xffff {
            let exp = (h >> 10) & 0x1f;
            let man = (h & 0x3ff) as f32;
            let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
            let x = match exp {
                0 => sign * man * 2f32.powi(-24),
                0x1f => continue,
                e => sign * (1.0 + man / 1024.0) * 2f32.powi(e as i32 - 15),
            };
            assert_eq!(f32_to_f16_bits(x), h, "{x}");
        }
        assert_eq!(f32_to_f16_bits(1.0 + 2f32.powi(-11)), 0x3c00); // tie to even (down)
        assert_eq!(f32_to_f16_bits(1.0 + 3.0 * 2f32.powi(-11)), 0x3c02); // tie to even (up)
        assert_eq!(f32_to_f16_bits(f32::INFINITY), 0x7c00);
        assert_eq!(f32_to_f16_bits(f32::NAN) & 0x7e00, 0x7e00);
        assert_eq!(f32_to_bf16_bits(1.0 + 2f32.powi(-8)), 0x3f80);
        assert_eq!(f32_to_bf16_bits(-3.0), 0xc040);
    }
}
