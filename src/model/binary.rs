//! Precompiled kernels in the resolved model: what a checked binary
//! kernel's handler does (which image, which symbol, the C arguments at
//! their offsets, the host-side array checks, the launch dimensions).
//! Made by `check` (`check/library/binaries.rs`); `target/xla_jax/binary.rs` prints it.

use std::fmt;

use crate::model::AttrType;

/// A calling convention: how a precompiled kernel takes its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Convention {
    /// cuTile's `t1`: `cutile_python_v1` (a symbol that spells out its
    /// parameters and their assumptions).
    CutilePythonV1,
    /// cuTile's `t2`: `cutile_python_v2` (static shapes, tuples);
    /// demangled, not bound.
    CutilePythonV2,
    /// `c`: the kernel's C parameters (PTX `.param`s, a cubin's table).
    C,
}

impl Convention {
    /// The name in cuTile and in begen.yaml.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Convention::CutilePythonV1 => "cutile_python_v1",
            Convention::CutilePythonV2 => "cutile_python_v2",
            Convention::C => "c",
        }
    }

    /// The convention of that begen.yaml name, if begen binds it.
    pub(crate) fn bound(name: &str) -> Option<Convention> {
        [Convention::CutilePythonV1, Convention::C].into_iter().find(|c| c.name() == name)
    }
}

/// One embedded image (a `binaries:` file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BinaryImage {
    /// Path relative to the root, `/`-separated.
    pub(crate) file: String,
    /// Its bytes as embedded (PTX text with its terminating NUL).
    pub(crate) bytes: Vec<u8>,
}

/// What a binary kernel's generated handler does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BinaryCall {
    /// Index into `Library::binaries`.
    pub(crate) image: usize,
    /// The entry's symbol in the image.
    pub(crate) symbol: String,
    /// How the kernel takes its arguments.
    pub(crate) convention: Convention,
    /// The kernel's C arguments, in order.
    pub(crate) args: Vec<BinaryArg>,
    /// The parameter buffer's size.
    pub(crate) param_size: u32,
    /// Host-side checks of cuTile array parameters.
    pub(crate) arrays: Vec<ArrayRules>,
    /// Host-side checks of each element of cuTile list parameters (one per
    /// list, in parameter order; `param` is the list's).
    pub(crate) lists: Vec<ArrayRules>,
    /// x, y, z.
    pub(crate) grid: [Expr; 3],
    /// x, y, z.
    pub(crate) block: [Expr; 3],
    /// Dynamic shared memory in bytes.
    pub(crate) shared: Expr,
}

/// One C argument of a binary kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BinaryArg {
    /// Index into `Function::params`.
    pub(crate) param: usize,
    /// What is written.
    pub(crate) value: ArgValue,
    /// Offset in the parameter buffer.
    pub(crate) offset: u32,
    /// Size in bytes.
    pub(crate) size: u32,
}

/// What a binary argument carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ArgValue {
    /// A tensor's device address.
    Pointer,
    /// A cuTile array's extent along an axis, at the index type.
    Shape(usize, AttrType),
    /// A cuTile array's stride (elements) along an axis, at the index type.
    Stride(usize, AttrType),
    /// An attribute's or dimension's value, as this C type.
    Scalar(AttrType),
    /// A struct attribute's bytes.
    Struct,
    /// The device address of a list's word buffer: `(1 + 2n)` 64-bit words
    /// per element (address, extents, strides), which the handler writes
    /// into a hidden output before the launch.
    ListWords,
    /// A list's length, `int32_t`.
    ListLength,
}

/// The assumptions a cuTile array parameter was compiled with, checked on
/// the host before each launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ArrayRules {
    /// Index into `Function::params`.
    pub(crate) param: usize,
    /// `int32`, `uint32` or `int64`.
    pub(crate) index: AttrType,
    /// Per axis.
    pub(crate) axes: Vec<AxisRules>,
    /// The data address is a multiple of this many bytes (1: none).
    pub(crate) base_align: i64,
}

/// The assumptions about one axis (1 / `None`: no assumption).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AxisRules {
    /// The extent is a multiple of this.
    pub(crate) shape_divisible_by: i64,
    /// The stride (elements) is a multiple of this.
    pub(crate) stride_divisible_by: i64,
    /// The stride is exactly this.
    pub(crate) stride_constant: Option<i64>,
    /// The stride is at least this.
    pub(crate) stride_lower_bound: Option<i64>,
}

/// A struct passed by value: its layout, flattened to its scalar leaves.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct StructType {
    /// Its name in begen.yaml's `structs:`.
    pub(crate) name: String,
    /// `sizeof`.
    pub(crate) size: u32,
    /// Every scalar member, nested ones by their path, in layout order.
    pub(crate) leaves: Vec<StructLeaf>,
}

/// One scalar member of a struct.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct StructLeaf {
    /// Member names from the outer struct down.
    pub(crate) path: Vec<String>,
    /// Its type.
    pub(crate) ty: AttrType,
    /// Its offset from the struct's start.
    pub(crate) offset: u32,
}

/// A binary operator of a launch expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Op {
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/` (truncating, as C).
    Div,
    /// `%`.
    Rem,
    /// `cdiv(a, b)`: `(a + b - 1) / b`.
    Cdiv,
}

impl Op {
    /// The operator's text.
    pub(crate) fn text(self) -> &'static str {
        match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::Div => "/",
            Op::Rem => "%",
            Op::Cdiv => "cdiv",
        }
    }
}

/// A launch expression over integers and names (dims and attributes),
/// as `binary::launch::parse_expr` reads it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Expr {
    /// A literal.
    Int(i64),
    /// A dimension or attribute.
    Name(String),
    /// `a <op> b`.
    Bin(Op, Box<Expr>, Box<Expr>),
}

impl Expr {
    /// Every name it reads, in order of appearance.
    pub(crate) fn names(&self) -> Vec<&str> {
        match self {
            Expr::Int(_) => vec![],
            Expr::Name(n) => vec![n.as_str()],
            Expr::Bin(_, a, b) => {
                let mut v = a.names();
                v.extend(b.names());
                v
            }
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Int(n) => write!(f, "{n}"),
            Expr::Name(n) => f.write_str(n),
            Expr::Bin(Op::Cdiv, a, b) => write!(f, "cdiv({a}, {b})"),
            Expr::Bin(op, a, b) => write!(f, "({a} {} {b})", op.text()),
        }
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples of this module's crate-private items, run as unit tests
    //! (an example in a doc comment must compile outside the crate).

    #[test]
    fn convention() {
        use crate::model::binary::Convention;
        assert_eq!(Convention::bound("c"), Some(Convention::C));
        assert_eq!(Convention::CutilePythonV1.name(), "cutile_python_v1");
        // cuTile's second convention is demangled, not bound.
        assert_eq!(Convention::bound("cutile_python_v2"), None);
    }

    #[test]
    fn binary_image() {
        let i = crate::model::binary::BinaryImage { file: "k.ptx".into(), bytes: b".version 8.0\0".to_vec() };
        assert!(i.bytes.ends_with(&[0]));
    }

    #[test]
    fn struct_type() {
        use crate::model::{
            AttrType,
            binary::{StructLeaf, StructType},
        };
        let s = StructType {
            name: "P".into(),
            size: 16,
            leaves: vec![StructLeaf { path: vec!["a".into()], ty: AttrType::Float64, offset: 0 }],
        };
        assert_eq!(s.leaves[0].offset, 0);
    }
}
