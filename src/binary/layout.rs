//! C layout of kernel parameters: struct layouts (size, alignment, member
//! offsets) and the byte image of a kernel's argument list.
//!
//! A CUDA kernel's parameters live in one buffer (the `.param` space, the
//! constant bank the driver fills from `cuLaunchKernel`'s `kernelParams`):
//! each parameter at the next offset aligned to its type, a struct by value
//! as its bytes with C layout. [`ParamLayout`] computes those offsets, which
//! the generated handler uses to pack arguments, and [`pack`] fills a buffer
//! from values, the reference the golden tests pin byte for byte.

use std::fmt;

use crate::diag::messages::binary as bm;
use crate::model::AttrType;

/// Identifies a struct in a [`Structs`] table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct StructId(pub(crate) u32);

/// The C type of a kernel parameter or struct member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum CType {
    /// A number or `bool` (float16/bfloat16 as their 16 bits).
    Prim(AttrType),
    /// A 64-bit device pointer (a typed tensor's data, a slice's start).
    Pointer,
    /// A struct by value.
    Struct(StructId),
}

/// One member of a struct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Member {
    /// The member's name (the key of the Python dict).
    pub(crate) name: String,
    /// Its type.
    pub(crate) ty: CType,
}

impl Member {
    /// A member of a primitive type.
    pub(crate) fn new(name: &str, ty: AttrType) -> Member {
        Member { name: name.to_string(), ty: CType::Prim(ty) }
    }

    /// A member of any type.
    pub(crate) fn of(name: &str, ty: CType) -> Member {
        Member { name: name.to_string(), ty }
    }
}

/// A struct declaration (begen.yaml `structs:`, or read from C++).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StructDef {
    /// Its name.
    pub(crate) name: String,
    /// Members in declaration order.
    pub(crate) members: Vec<Member>,
    /// An explicit alignment (`alignas(16)`, `#[repr(C, align(16))]`).
    pub(crate) align: Option<u32>,
}

impl StructDef {
    /// A struct with its natural alignment.
    pub(crate) fn new(name: &str, members: impl IntoIterator<Item = Member>) -> StructDef {
        StructDef { name: name.to_string(), members: members.into_iter().collect(), align: None }
    }

    /// The same struct with an explicit alignment.
    #[cfg(test)]
    pub(crate) fn aligned(mut self, align: u32) -> StructDef {
        self.align = Some(align);
        self
    }
}

/// Where a struct's members lie.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StructLayout {
    /// `sizeof`: a multiple of `align`.
    pub(crate) size: u32,
    /// `alignof`.
    pub(crate) align: u32,
    /// `offsetof` of each member, in declaration order.
    pub(crate) offsets: Vec<u32>,
}

/// Why a struct has no layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LayoutError {
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
    /// A struct larger than a kernel's parameters can hold.
    TooLarge {
        /// The struct.
        strukt: String,
        /// Its size, or the size where the layout stopped (above the limit).
        size: u64,
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
            LayoutError::TooLarge { strukt, size } => f.write_str(&bm::struct_too_large(strukt, *size, MAX_SIZE)),
            LayoutError::UnknownStruct { strukt, member } => f.write_str(&bm::member_struct_unknown(strukt, member)),
        }
    }
}

impl std::error::Error for LayoutError {}

/// The largest struct: CUDA passes a kernel's parameters in a 4 KB bank
/// (`cuLaunchKernel`'s limit before CUDA 12.1, and the ABI's `.param`
/// space), so no parameter can be larger. It also bounds what a struct
/// flattens to (at most this many scalar leaves).
pub(crate) const MAX_SIZE: u64 = 4096;

/// Structs and their layouts. A struct may contain only structs added
/// before it, so nesting can never be cyclic.
#[derive(Debug, Clone, Default)]
pub(crate) struct Structs {
    defs: Vec<StructDef>,
    layouts: Vec<StructLayout>,
    by_name: std::collections::HashMap<String, StructId>,
}

impl Structs {
    /// An empty table.
    pub(crate) fn new() -> Structs {
        Structs::default()
    }

    /// Adds a struct and computes its layout, in time linear in its
    /// members; one larger than [`MAX_SIZE`] is an error.
    pub(crate) fn add(&mut self, def: StructDef) -> Result<StructId, LayoutError> {
        if self.find(&def.name).is_some() {
            return Err(LayoutError::DuplicateStruct(def.name));
        }
        if def.members.is_empty() {
            return Err(LayoutError::Empty(def.name));
        }
        let mut offsets = Vec::with_capacity(def.members.len());
        let (mut end, mut natural) = (0u64, 1u32);
        let mut names = std::collections::HashSet::with_capacity(def.members.len());
        for m in &def.members {
            if !names.insert(m.name.as_str()) {
                return Err(LayoutError::DuplicateMember { strukt: def.name.clone(), member: m.name.clone() });
            }
            if let CType::Struct(id) = m.ty
                && id.0 as usize >= self.defs.len()
            {
                return Err(LayoutError::UnknownStruct { strukt: def.name.clone(), member: m.name.clone() });
            }
            let (size, align) = self.size_align(m.ty);
            let offset = end.next_multiple_of(u64::from(align));
            end = offset + u64::from(size);
            if end > MAX_SIZE {
                return Err(LayoutError::TooLarge { strukt: def.name.clone(), size: end });
            }
            offsets.push(offset as u32);
            natural = natural.max(align);
        }
        let align = match def.align {
            Some(a) if !a.is_power_of_two() || a < natural => {
                return Err(LayoutError::BadAlign { strukt: def.name, align: a, natural });
            }
            Some(a) => a,
            None => natural,
        };
        let size = end.next_multiple_of(u64::from(align));
        if size > MAX_SIZE {
            return Err(LayoutError::TooLarge { strukt: def.name.clone(), size });
        }
        let id = StructId(self.defs.len() as u32);
        self.layouts.push(StructLayout { size: size as u32, align, offsets });
        self.by_name.insert(def.name.clone(), id);
        self.defs.push(def);
        Ok(id)
    }

    /// The struct of a name.
    pub(crate) fn find(&self, name: &str) -> Option<StructId> {
        self.by_name.get(name).copied()
    }

    /// A struct's declaration.
    pub(crate) fn def(&self, id: StructId) -> &StructDef {
        &self.defs[id.0 as usize]
    }

    /// A struct's layout.
    pub(crate) fn layout(&self, id: StructId) -> &StructLayout {
        &self.layouts[id.0 as usize]
    }

    /// `sizeof` and `alignof` of a type.
    pub(crate) fn size_align(&self, ty: CType) -> (u32, u32) {
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
pub(crate) struct ParamLayout {
    /// Each parameter's offset, aligned to its type.
    pub(crate) offsets: Vec<u32>,
    /// Each parameter's size.
    pub(crate) sizes: Vec<u32>,
    /// Where the last parameter ends (the `.param` bank's size).
    pub(crate) size: u32,
    /// The largest alignment (the buffer's).
    pub(crate) align: u32,
}

impl ParamLayout {
    /// Lays out parameters one after another, each at its alignment.
    pub(crate) fn of(params: &[CType], structs: &Structs) -> ParamLayout {
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

#[cfg(test)]
mod tests {
    use super::*;
    use AttrType::*;

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
        // A uint8 then the struct: the struct starts at its alignment.
        let params = ParamLayout::of(&[CType::Prim(UInt8), CType::Struct(outer)], &s);
        assert_eq!((params.offsets, params.size), (vec![0, 8], 40));
    }
}

#[cfg(test)]
mod limits {
    use super::*;
    use AttrType::*;

    #[test]
    fn a_struct_over_4_kb_is_an_error_naming_it() {
        let mut s = Structs::new();
        // Each level holds two of the one below: level 12 would be 4096 doubles.
        let mut prev = s.add(StructDef::new("D0", [Member::new("x", Float64)])).unwrap();
        let mut err = None;
        for i in 1..70 {
            let def = StructDef::new(
                &format!("D{i}"),
                [Member::of("a", CType::Struct(prev)), Member::of("b", CType::Struct(prev))],
            );
            match s.add(def) {
                Ok(id) => prev = id,
                Err(e) => {
                    err = Some((i, e));
                    break;
                }
            }
        }
        let (i, e) = err.unwrap();
        assert_eq!(i, 10, "D9 is 4096 bytes, D10 8192");
        assert_eq!(e, LayoutError::TooLarge { strukt: "D10".into(), size: 8192 });
        assert!(e.to_string().contains("`D10`") && e.to_string().contains("4096"), "{e}");
        // Alignment padding counts too.
        let mut members: Vec<Member> = (0..4089).map(|i| Member::new(&format!("m{i}"), Int8)).collect();
        members.push(Member::new("x", Float64));
        assert_eq!(
            s.add(StructDef::new("Pad", members)),
            Err(LayoutError::TooLarge { strukt: "Pad".into(), size: 4104 })
        );
        // 4096 bytes exactly is fine.
        let members: Vec<Member> = (0..4096).map(|i| Member::new(&format!("m{i}"), Int8)).collect();
        let full = s.add(StructDef::new("Full", members)).unwrap();
        assert_eq!(s.layout(full).size, 4096);
    }

    #[test]
    fn wide_structs_are_linear() {
        let mut s = Structs::new();
        let started = std::time::Instant::now();
        let members: Vec<Member> = (0..100_000).map(|i| Member::new(&format!("m{i}"), Int8)).collect();
        let err = s.add(StructDef::new("Wide", members)).unwrap_err();
        assert!(matches!(err, LayoutError::TooLarge { .. }), "{err}");
        let mut dup: Vec<Member> = (0..4000).map(|i| Member::new(&format!("m{i}"), Int8)).collect();
        dup.push(Member::new("m0", Int8));
        assert!(matches!(s.add(StructDef::new("Dup", dup)), Err(LayoutError::DuplicateMember { .. })));
        // A hang catcher only: the bounds are the errors (too large, a
        // duplicate) found in one pass.
        assert!(started.elapsed().as_secs() < 120, "{:?}", started.elapsed());
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples of this module's crate-private items, run as unit tests
    //! (an example in a doc comment must compile outside the crate).

    #[test]
    fn module() {
        use crate::binary::layout::{CType, Member, ParamLayout, StructDef, Structs};
        use crate::model::AttrType::{Float32, Float64, UInt16};
        let mut structs = Structs::new();
        let affine = structs
            .add(StructDef::new(
                "Affine",
                [Member::new("tag", UInt16), Member::new("scale", Float64), Member::new("shift", Float32)],
            ))
            .unwrap();
        let l = structs.layout(affine);
        assert_eq!((l.size, l.align, l.offsets.as_slice()), (24, 8, &[0, 8, 16][..]));
        let params = ParamLayout::of(&[CType::Struct(affine), CType::Pointer, CType::Prim(Float32)], &structs);
        assert_eq!((params.offsets.as_slice(), params.size), (&[0, 24, 32][..], 36));
    }

    #[test]
    fn structs_size_align() {
        use crate::binary::layout::{CType, Structs};
        use crate::model::AttrType;
        let s = Structs::new();
        assert_eq!(s.size_align(CType::Prim(AttrType::Complex64)), (8, 4));
        assert_eq!(s.size_align(CType::Pointer), (8, 8));
    }
}
