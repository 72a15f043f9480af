//! cuTile's `cutile_python_v1` kernel symbols: the demangler and the flat
//! C parameter list a mangled signature stands for.
//!
//! An exported cuTile kernel's symbol is its Python name, `_K`, the
//! calling-convention code (`t1` for `cutile_python_v1`) and one `_`-prefixed
//! code per Python parameter:
//!
//! | code | parameter | kernel arguments |
//! |---|---|---|
//! | `A<ndim><dtype>[_<mask><preds>]*[_<extras>]` | array | pointer, `ndim` shapes, `ndim` strides at the index width |
//! | `L[g<id>]*[i]A...` | list of arrays | pointer to a `(1 + 2n) * L` word buffer, `int32_t` length |
//! | `S<dtype>` | scalar | one value of the dtype |
//! | `B0`/`B1`, `I<int>`, `F<16 hex>` | `ct.Constant` | none |
//!
//! An axis group `_<hex mask>` applies its predicates to every axis whose bit
//! is set: `i<n>` shape divisible by n, `t<n>` constant stride, `v<n>` stride
//! divisible by n, `l<n>` stride lower bound (inclusive), `s<n>` constant
//! shape (`cutile_python_v2` only). Extras: `p<n>` base address divisible by
//! n bytes, `g<hex>` alias groups, `i` may alias internally, `u`/`w` index
//! type `uint32`/`int64` (default `int32`). Negative integers are written
//! `_<digits>`.
//!
//! [`demangle`] accepts exactly what cuTile's own `demangle_kernel_name`
//! (cuda-tile 1.7) accepts for these conventions, and [`Signature::kernel_args`]
//! gives the arguments the kernel takes in order; `tests/binary.rs` checks both
//! against cuTile and against the parameter table of exported cubins.

use std::fmt;
use std::ops::Range;

use super::layout::CType;
use crate::diag::messages::binary as bm;
use crate::model::AttrType;
pub(crate) use crate::model::binary::Convention;

/// A cuTile element type, by its mangled code: one of begen's scalar types
/// (the row's `cutile` code and size), or one begen has no type for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Dtype {
    /// A begen type cuTile has (`f32`; `b8` is `ct.bool_`).
    Attr(AttrType),
    /// `tf32`: stored as a 32-bit float.
    TFloat32,
    /// `f8m3fn`: `float8_e4m3fn`.
    Float8E4M3Fn,
    /// `f8m2`: `float8_e5m2`.
    Float8E5M2,
    /// `f8m0fnu`: `float8_e8m0fnu`.
    Float8E8M0Fnu,
}

impl Dtype {
    /// The dtypes begen has no type for.
    const OTHERS: [Dtype; 4] = [Dtype::TFloat32, Dtype::Float8E4M3Fn, Dtype::Float8E5M2, Dtype::Float8E8M0Fnu];

    /// Every dtype: begen's types with a cuTile code, then the others.
    pub(crate) fn all() -> impl Iterator<Item = Dtype> {
        AttrType::ALL.into_iter().filter(|t| t.facts().cutile.is_some()).map(Dtype::Attr).chain(Dtype::OTHERS)
    }

    /// Its code in a mangled name and its bytes per element: a begen
    /// type's from its row.
    fn code_size(self) -> (&'static str, u32) {
        match self {
            Dtype::Attr(t) => (t.facts().cutile.unwrap_or("?"), t.facts().size),
            Dtype::TFloat32 => ("tf32", 4),
            Dtype::Float8E4M3Fn => ("f8m3fn", 1),
            Dtype::Float8E5M2 => ("f8m2", 1),
            Dtype::Float8E8M0Fnu => ("f8m0fnu", 1),
        }
    }

    /// The code in a mangled name.
    pub(crate) fn code(self) -> &'static str {
        self.code_size().0
    }

    /// The dtype of a mangled code.
    pub(crate) fn from_code(code: &str) -> Option<Dtype> {
        Dtype::all().find(|d| d.code() == code)
    }

    /// Bytes per element (and of a scalar argument).
    #[cfg(test)]
    pub(crate) fn size(self) -> u32 {
        self.code_size().1
    }

    /// begen's type of the same name, where there is one (`tf32` and the
    /// 8-bit floats have none).
    pub(crate) fn attr_type(self) -> Option<AttrType> {
        match self {
            Dtype::Attr(t) => Some(t),
            Dtype::TFloat32 | Dtype::Float8E4M3Fn | Dtype::Float8E5M2 | Dtype::Float8E8M0Fnu => None,
        }
    }
}

/// The type of an array's shape and stride arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum IndexType {
    /// `int32_t` (the default).
    Int32,
    /// `uint32_t` (extra `u`).
    UInt32,
    /// `int64_t` (extra `w`).
    Int64,
}

impl IndexType {
    /// The begen type of one shape or stride argument.
    pub(crate) fn attr_type(self) -> AttrType {
        match self {
            IndexType::Int32 => AttrType::Int32,
            IndexType::UInt32 => AttrType::UInt32,
            IndexType::Int64 => AttrType::Int64,
        }
    }

    /// cuTile's name (`ct.int32` ...): its type's.
    #[cfg(test)]
    pub(crate) fn name(self) -> &'static str {
        self.attr_type().as_str()
    }
}

/// What a signature assumes about one axis of an array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Axis {
    /// The extent is a multiple of this (elements; 1: no assumption).
    pub(crate) shape_divisible_by: i64,
    /// The extent is exactly this (`cutile_python_v2` only).
    pub(crate) shape_constant: Option<i64>,
    /// The stride is a multiple of this (elements; 1: no assumption).
    pub(crate) stride_divisible_by: i64,
    /// The stride is exactly this (elements).
    pub(crate) stride_constant: Option<i64>,
    /// The stride is at least this (elements, inclusive).
    pub(crate) stride_lower_bound: Option<i64>,
}

impl Default for Axis {
    fn default() -> Axis {
        Axis {
            shape_divisible_by: 1,
            shape_constant: None,
            stride_divisible_by: 1,
            stride_constant: None,
            stride_lower_bound: None,
        }
    }
}

/// An `ArrayConstraint`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Array {
    /// Element type.
    pub(crate) dtype: Dtype,
    /// One entry per dimension.
    pub(crate) axes: Vec<Axis>,
    /// Type of the shape and stride arguments.
    pub(crate) index: IndexType,
    /// The data pointer is a multiple of this (bytes; 1: no assumption).
    pub(crate) base_addr_divisible_by: i64,
    /// Alias group ids, strictly increasing (cuTile names them `group<id>`).
    pub(crate) alias_groups: Vec<u32>,
    /// Two in-bounds indices may address the same element.
    pub(crate) may_alias_internally: bool,
}

impl Array {
    /// The rank.
    pub(crate) fn ndim(&self) -> usize {
        self.axes.len()
    }
}

/// A `ListConstraint`: a list of arrays.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct List {
    /// What every element is.
    pub(crate) element: Array,
    /// Alias groups of the list's storage.
    pub(crate) alias_groups: Vec<u32>,
    /// Two elements may alias each other.
    pub(crate) elements_may_alias: bool,
}

/// The value of a `ct.Constant` parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Constant {
    /// `B0` / `B1`.
    Bool(bool),
    /// `I<int>`.
    Int(i128),
    /// `F<16 hex digits>`: the bits of an IEEE double.
    Float(f64),
}

/// One Python parameter of the kernel.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Param {
    /// An array.
    Array(Array),
    /// A list of arrays.
    List(List),
    /// A scalar passed by value.
    Scalar(Dtype),
    /// A compile-time constant: no kernel argument.
    Constant(Constant),
    /// A tuple (`cutile_python_v2` only; [`Signature::kernel_args`] refuses it).
    Tuple(Vec<Param>),
}

/// A parameter and where its code is in the symbol.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SymbolParam {
    /// The parameter.
    pub(crate) param: Param,
    /// Byte range of its code in the symbol (after the `_`).
    pub(crate) span: Range<usize>,
}

/// A demangled kernel symbol.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Signature {
    /// The Python function name (the symbol before its last `_K`).
    pub(crate) name: String,
    /// The calling convention.
    pub(crate) convention: Convention,
    /// One per Python parameter, constants included.
    pub(crate) params: Vec<SymbolParam>,
}

/// What one kernel argument carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ArgRole {
    /// The array's data pointer, or the list's word-buffer pointer.
    Base,
    /// The array's extent along an axis.
    Shape(u8),
    /// The array's stride along an axis (elements).
    Stride(u8),
    /// A scalar's value.
    Value,
    /// The list's length (`int32_t`).
    Length,
}

/// One argument of the compiled kernel, in launch order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct KernelArg {
    /// Index into [`Signature::params`].
    pub(crate) param: usize,
    /// What it carries.
    pub(crate) role: ArgRole,
    /// Its C type.
    pub(crate) ty: CType,
}

/// Why a symbol is not a valid cuTile kernel name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DemangleError {
    /// The symbol.
    pub(crate) symbol: String,
    /// Byte offset in the symbol where the problem is.
    pub(crate) offset: usize,
    /// What is wrong.
    pub(crate) kind: DemangleErrorKind,
}

/// The kinds of [`DemangleError`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DemangleErrorKind {
    /// No `_K` separates the name from the signature.
    NotMangled,
    /// Something else was expected here.
    Expected(&'static str),
    /// A calling-convention code cuTile does not define.
    UnknownConvention(String),
    /// A dtype code cuTile does not define.
    UnknownDtype(String),
    /// A parameter code cuTile does not define (or only in a development convention).
    UnknownParam(String),
    /// An axis mask of zero.
    ZeroAxisMask,
    /// An axis mask naming axes the array does not have.
    AxisMaskTooWide {
        /// The mask.
        mask: String,
        /// The array's rank.
        ndim: usize,
    },
    /// A per-axis predicate given twice for one axis.
    Repeated {
        /// Which predicate.
        what: &'static str,
        /// The axis.
        axis: usize,
    },
    /// A stride divisibility or lower bound together with a constant stride.
    WithStaticStride {
        /// Which predicate.
        what: &'static str,
        /// The axis.
        axis: usize,
    },
    /// A constant shape not divisible by the axis's shape divisibility.
    ShapeNotDivisible {
        /// The axis.
        axis: usize,
    },
    /// A divisibility of 0 or 1, or negative.
    Divisibility,
    /// A malformed alias group list.
    AliasGroup(&'static str),
    /// An alias group mentioned by one parameter only.
    AliasGroupOnce(u32),
    /// An alias group shared by an array and a list.
    AliasGroupMixed(u32),
    /// A list whose element is not an array.
    ListElement,
    /// An integer outside what begen represents (i64 for predicates, i128
    /// for constants, 4096 for a rank).
    OutOfRange,
    /// Lists and tuples nested deeper than [`MAX_NESTING`].
    TooDeep,
    /// A parameter kind the convention does not allow.
    NotInConvention {
        /// What it is.
        what: &'static str,
        /// The convention.
        convention: Convention,
    },
}

impl fmt::Display for DemangleErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            DemangleErrorKind::NotMangled => bm::DEMANGLE_NOT_MANGLED.to_string(),
            DemangleErrorKind::Expected(what) => bm::demangle_expected(what),
            DemangleErrorKind::UnknownConvention(c) => bm::demangle_unknown("calling convention", c),
            DemangleErrorKind::UnknownDtype(d) => bm::demangle_unknown("dtype", d),
            DemangleErrorKind::UnknownParam(p) => bm::demangle_unknown("parameter", p),
            DemangleErrorKind::ZeroAxisMask => bm::DEMANGLE_ZERO_MASK.to_string(),
            DemangleErrorKind::AxisMaskTooWide { mask, ndim } => bm::demangle_mask(mask, *ndim),
            DemangleErrorKind::Repeated { what, axis } => bm::demangle_repeated(what, *axis),
            DemangleErrorKind::WithStaticStride { what, axis } => bm::demangle_with_static_stride(what, *axis),
            DemangleErrorKind::ShapeNotDivisible { axis } => bm::demangle_shape_divisible(*axis),
            DemangleErrorKind::Divisibility => bm::DEMANGLE_DIVISIBILITY.to_string(),
            DemangleErrorKind::AliasGroup(why) => bm::demangle_alias(why),
            DemangleErrorKind::AliasGroupOnce(g) => bm::demangle_alias_once(*g),
            DemangleErrorKind::AliasGroupMixed(g) => bm::demangle_alias_mixed(*g),
            DemangleErrorKind::ListElement => bm::DEMANGLE_LIST_ELEMENT.to_string(),
            DemangleErrorKind::OutOfRange => bm::DEMANGLE_OUT_OF_RANGE.to_string(),
            DemangleErrorKind::TooDeep => bm::demangle_too_deep(MAX_NESTING),
            DemangleErrorKind::NotInConvention { what, convention } => bm::demangle_convention(what, convention.name()),
        };
        f.write_str(&text)
    }
}

impl fmt::Display for DemangleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let near: String = self.symbol.get(self.offset..).unwrap_or("").chars().take(20).collect();
        f.write_str(&bm::bad_cutile_symbol(&self.symbol, self.offset, &near, &self.kind.to_string()))
    }
}

impl std::error::Error for DemangleError {}

/// Why a signature has no flat argument list in begen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ArgsError {
    /// The convention is not `cutile_python_v1`.
    Convention(Convention),
    /// A scalar of a dtype begen has no type for (`tf32`, 8-bit floats).
    ScalarDtype {
        /// Index into [`Signature::params`].
        param: usize,
        /// The dtype.
        dtype: Dtype,
    },
}

impl fmt::Display for ArgsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgsError::Convention(c) => f.write_str(&bm::args_convention(c.name())),
            ArgsError::ScalarDtype { param, dtype } => f.write_str(&bm::args_scalar(*param, dtype.code())),
        }
    }
}

impl std::error::Error for ArgsError {}

impl Signature {
    /// The arguments the compiled kernel takes, in order: per array its
    /// pointer, shapes and strides at the index width; per list a pointer
    /// and an `int32_t` length; per scalar its value; nothing for a constant.
    pub(crate) fn kernel_args(&self) -> Result<Vec<KernelArg>, ArgsError> {
        if self.convention != Convention::CutilePythonV1 {
            return Err(ArgsError::Convention(self.convention));
        }
        let mut args = Vec::new();
        for (i, p) in self.params.iter().enumerate() {
            match &p.param {
                Param::Array(a) => {
                    args.push(KernelArg { param: i, role: ArgRole::Base, ty: CType::Pointer });
                    let index = CType::Prim(a.index.attr_type());
                    for axis in 0..a.ndim() {
                        args.push(KernelArg { param: i, role: ArgRole::Shape(axis as u8), ty: index });
                    }
                    for axis in 0..a.ndim() {
                        args.push(KernelArg { param: i, role: ArgRole::Stride(axis as u8), ty: index });
                    }
                }
                Param::List(_) => {
                    args.push(KernelArg { param: i, role: ArgRole::Base, ty: CType::Pointer });
                    args.push(KernelArg { param: i, role: ArgRole::Length, ty: CType::Prim(AttrType::Int32) });
                }
                Param::Scalar(d) => {
                    let ty = d.attr_type().ok_or(ArgsError::ScalarDtype { param: i, dtype: *d })?;
                    args.push(KernelArg { param: i, role: ArgRole::Value, ty: CType::Prim(ty) });
                }
                Param::Constant(_) => {}
                Param::Tuple(_) => return Err(ArgsError::Convention(Convention::CutilePythonV2)),
            }
        }
        Ok(args)
    }

    /// The parameters that take kernel arguments (constants left out), as
    /// indices into [`Signature::params`]: what a manifest's tokens name.
    pub(crate) fn runtime_params(&self) -> Vec<usize> {
        (0..self.params.len()).filter(|&i| !matches!(self.params[i].param, Param::Constant(_))).collect()
    }
}

/// Demangles a `cutile_python_v1` (or `v2`) kernel symbol.
pub(crate) fn demangle(symbol: &str) -> Result<Signature, DemangleError> {
    let mut p = Parser { s: symbol, pos: 0, last_group: -1, depth: 0 };
    let k = symbol.rfind("_K").ok_or_else(|| p.err_at(0, DemangleErrorKind::NotMangled))?;
    let name = symbol[..k].to_string();
    p.pos = k + 2;
    let conv_start = p.pos;
    let code = p.take_while(|c| c != b'_');
    let convention = match code {
        "t1" => Convention::CutilePythonV1,
        "t2" => Convention::CutilePythonV2,
        "" => return Err(p.err_at(conv_start, DemangleErrorKind::Expected("a calling convention code after `_K`"))),
        other => return Err(p.err_at(conv_start, DemangleErrorKind::UnknownConvention(other.to_string()))),
    };
    let mut params = Vec::new();
    while p.pos < symbol.len() {
        p.expect(b'_', "an underscore")?;
        let start = p.pos;
        let param = p.param()?;
        params.push(SymbolParam { param, span: start..p.pos });
    }
    let sig = Signature { name, convention, params };
    validate(&sig, symbol)?;
    Ok(sig)
}

struct Parser<'a> {
    s: &'a str,
    pos: usize,
    /// The alias group id read last (cuTile's rule: a new id is at most one more).
    last_group: i64,
    /// How many lists and tuples enclose the parameter being read.
    depth: usize,
}

impl<'a> Parser<'a> {
    fn err_at(&self, offset: usize, kind: DemangleErrorKind) -> DemangleError {
        DemangleError { symbol: self.s.to_string(), offset, kind }
    }

    fn err(&self, kind: DemangleErrorKind) -> DemangleError {
        self.err_at(self.pos, kind)
    }

    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<u8> {
        self.s.as_bytes().get(self.pos + ahead).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8, what: &'static str) -> Result<(), DemangleError> {
        if self.eat(c) { Ok(()) } else { Err(self.err(DemangleErrorKind::Expected(what))) }
    }

    fn take_while(&mut self, f: impl Fn(u8) -> bool) -> &'a str {
        let start = self.pos;
        while self.peek().is_some_and(&f) {
            self.pos += 1;
        }
        &self.s[start..self.pos]
    }

    fn digits(&mut self) -> Result<&'a str, DemangleError> {
        let d = self.take_while(|c| c.is_ascii_digit());
        if d.is_empty() { Err(self.err(DemangleErrorKind::Expected("a decimal integer"))) } else { Ok(d) }
    }

    /// `[_]<digits>`: a signed integer, `_` meaning minus.
    fn signed(&mut self) -> Result<i128, DemangleError> {
        let start = self.pos;
        let negative = self.eat(b'_');
        let d = self.digits()?;
        let v: i128 = d.parse().map_err(|_| self.err_at(start, DemangleErrorKind::OutOfRange))?;
        Ok(if negative { -v } else { v })
    }

    fn signed64(&mut self) -> Result<i64, DemangleError> {
        let start = self.pos;
        let v = self.signed()?;
        i64::try_from(v).map_err(|_| self.err_at(start, DemangleErrorKind::OutOfRange))
    }

    fn divisibility(&mut self) -> Result<i64, DemangleError> {
        let start = self.pos;
        let v = self.signed()?;
        if v <= 1 {
            return Err(self.err_at(start, DemangleErrorKind::Divisibility));
        }
        i64::try_from(v).map_err(|_| self.err_at(start, DemangleErrorKind::OutOfRange))
    }

    fn dtype(&mut self) -> Result<Dtype, DemangleError> {
        let start = self.pos;
        let code = self.take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        if code.is_empty() {
            return Err(self.err(DemangleErrorKind::Expected("a dtype code")));
        }
        Dtype::from_code(code).ok_or_else(|| self.err_at(start, DemangleErrorKind::UnknownDtype(code.to_string())))
    }

    /// A parameter; one nested in lists and tuples more than
    /// [`MAX_NESTING`] deep is an error (read recursively, a symbol of
    /// 100,000 `L`s would overflow the stack).
    fn param(&mut self) -> Result<Param, DemangleError> {
        if self.depth > MAX_NESTING {
            return Err(self.err(DemangleErrorKind::TooDeep));
        }
        self.depth += 1;
        let param = self.param_inner();
        self.depth -= 1;
        param
    }

    fn param_inner(&mut self) -> Result<Param, DemangleError> {
        let start = self.pos;
        let code = match self.peek() {
            Some(b'C') => {
                // `C<lowercase/digits>_`: constants of later conventions.
                self.pos += 1;
                let rest = self.take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
                if rest.is_empty() || !self.eat(b'_') {
                    return Err(self.err_at(start, DemangleErrorKind::Expected("a parameter code")));
                }
                return Err(self.err_at(start, DemangleErrorKind::UnknownParam(self.s[start..self.pos].to_string())));
            }
            Some(c) if c.is_ascii_uppercase() => {
                self.pos += 1;
                c
            }
            _ => return Err(self.err(DemangleErrorKind::Expected("a parameter code (a capital letter)"))),
        };
        match code {
            b'A' => Ok(Param::Array(self.array()?)),
            b'L' => {
                let alias_groups = self.alias_groups()?;
                let elements_may_alias = self.eat(b'i');
                let element_start = self.pos;
                match self.param()? {
                    Param::Array(element) => Ok(Param::List(List { element, alias_groups, elements_may_alias })),
                    _ => Err(self.err_at(element_start, DemangleErrorKind::ListElement)),
                }
            }
            b'T' => {
                let count: usize =
                    self.digits()?.parse().map_err(|_| self.err_at(start + 1, DemangleErrorKind::OutOfRange))?;
                let mut items = Vec::new();
                for _ in 0..count {
                    items.push(self.param()?);
                }
                Ok(Param::Tuple(items))
            }
            b'S' => Ok(Param::Scalar(self.dtype()?)),
            b'B' => match self.peek() {
                Some(c @ (b'0' | b'1')) => {
                    self.pos += 1;
                    Ok(Param::Constant(Constant::Bool(c == b'1')))
                }
                _ => Err(self.err(DemangleErrorKind::Expected("0 or 1"))),
            },
            b'I' => Ok(Param::Constant(Constant::Int(self.signed()?))),
            b'F' => {
                let hex = self
                    .s
                    .get(self.pos..self.pos + 16)
                    .filter(|h| h.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)));
                let Some(hex) = hex else {
                    return Err(self.err(DemangleErrorKind::Expected("16 hex digits")));
                };
                let bits =
                    u64::from_str_radix(hex, 16).map_err(|_| self.err(DemangleErrorKind::Expected("16 hex digits")))?;
                self.pos += 16;
                Ok(Param::Constant(Constant::Float(f64::from_bits(bits))))
            }
            _ => Err(self.err_at(start, DemangleErrorKind::UnknownParam((code as char).to_string()))),
        }
    }

    fn alias_groups(&mut self) -> Result<Vec<u32>, DemangleError> {
        let mut ids = Vec::new();
        while self.eat(b'g') {
            let start = self.pos;
            let hex = self.take_while(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c));
            if hex.is_empty() {
                return Err(self.err(DemangleErrorKind::Expected("a hex alias group id")));
            }
            if hex.len() > 1 && hex.starts_with('0') {
                return Err(self.err_at(start, DemangleErrorKind::AliasGroup("leading zero in an id")));
            }
            let id = u32::from_str_radix(hex, 16).map_err(|_| self.err_at(start, DemangleErrorKind::OutOfRange))?;
            if i64::from(id) > self.last_group + 1 {
                return Err(self.err_at(start, DemangleErrorKind::AliasGroup("an id more than one past the last one")));
            }
            if ids.last().is_some_and(|&prev| id <= prev) {
                return Err(self.err_at(start, DemangleErrorKind::AliasGroup("ids not strictly increasing")));
            }
            self.last_group = id.into();
            ids.push(id);
        }
        Ok(ids)
    }

    fn array(&mut self) -> Result<Array, DemangleError> {
        let start = self.pos;
        let ndim_start = self.pos;
        let ndim: usize = self.digits()?.parse().map_err(|_| self.err_at(ndim_start, DemangleErrorKind::OutOfRange))?;
        let dtype = self.dtype()?;
        if ndim > MAX_RANK {
            return Err(self.err_at(ndim_start, DemangleErrorKind::OutOfRange));
        }
        let mut axes = vec![Axis::default(); ndim];
        // Axis groups: `_<hex mask>` then its predicates, in the order s i t v l.
        while self.peek() == Some(b'_') && self.peek_at(1).is_some_and(is_lower_hex) {
            let mask_start = self.pos;
            self.pos += 1;
            let hex = self.take_while(is_lower_hex);
            let significant = hex.trim_start_matches('0');
            if significant.is_empty() {
                return Err(self.err_at(mask_start, DemangleErrorKind::ZeroAxisMask));
            }
            // The mask's bits, lowest axis first (a rank may exceed 64).
            let bits: Vec<bool> = significant
                .bytes()
                .rev()
                .flat_map(|c| {
                    let v = (c as char).to_digit(16).unwrap_or(0);
                    (0..4).map(move |b| v & (1 << b) != 0)
                })
                .collect();
            let width = bits.iter().rposition(|&b| b).map_or(0, |i| i + 1);
            if width > ndim {
                return Err(self.err_at(mask_start, DemangleErrorKind::AxisMaskTooWide { mask: hex.to_string(), ndim }));
            }
            let shape_constant = if self.eat(b's') { Some(self.signed64()?) } else { None };
            let shape_div = if self.eat(b'i') { Some(self.divisibility()?) } else { None };
            let stride_constant = if self.eat(b't') { Some(self.signed64()?) } else { None };
            let stride_div = if self.eat(b'v') { Some(self.divisibility()?) } else { None };
            let lower = if self.eat(b'l') { Some(self.signed64()?) } else { None };
            // cuTile applies a mask from its highest axis down; the first
            // repeated predicate it meets is the one reported.
            for axis in (0..width).rev().filter(|&a| bits[a]) {
                let a = &mut axes[axis];
                let repeated = |what| self.err_at(mask_start, DemangleErrorKind::Repeated { what, axis });
                if let Some(v) = shape_constant {
                    if a.shape_constant.is_some() {
                        return Err(repeated("a constant shape"));
                    }
                    a.shape_constant = Some(v);
                }
                if let Some(v) = shape_div {
                    if a.shape_divisible_by != 1 {
                        return Err(repeated("a shape divisibility"));
                    }
                    a.shape_divisible_by = v;
                }
                if let Some(v) = stride_constant {
                    if a.stride_constant.is_some() {
                        return Err(repeated("a constant stride"));
                    }
                    a.stride_constant = Some(v);
                }
                if let Some(v) = stride_div {
                    if a.stride_divisible_by != 1 {
                        return Err(repeated("a stride divisibility"));
                    }
                    a.stride_divisible_by = v;
                }
                if let Some(v) = lower {
                    if a.stride_lower_bound.is_some() {
                        return Err(repeated("a stride lower bound"));
                    }
                    a.stride_lower_bound = Some(v);
                }
            }
        }
        for (axis, a) in axes.iter_mut().enumerate() {
            if a.stride_constant.is_some() {
                if a.stride_divisible_by != 1 {
                    return Err(
                        self.err_at(start, DemangleErrorKind::WithStaticStride { what: "a stride divisibility", axis })
                    );
                }
                if a.stride_lower_bound.is_some() {
                    return Err(
                        self.err_at(start, DemangleErrorKind::WithStaticStride { what: "a stride lower bound", axis })
                    );
                }
            }
            if let Some(shape) = a.shape_constant {
                // cuTile's ArrayConstraint folds a divisibility into a constant shape.
                if shape < 0 {
                    return Err(self.err_at(start, DemangleErrorKind::Expected("a non-negative constant shape")));
                }
                if shape % a.shape_divisible_by != 0 {
                    return Err(self.err_at(start, DemangleErrorKind::ShapeNotDivisible { axis }));
                }
                a.shape_divisible_by = 1;
            }
        }
        let mut array = Array {
            dtype,
            axes,
            index: IndexType::Int32,
            base_addr_divisible_by: 1,
            alias_groups: Vec::new(),
            may_alias_internally: false,
        };
        if self.peek() == Some(b'_') && self.peek_at(1).is_some_and(|c| c.is_ascii_lowercase()) {
            self.pos += 1;
            if self.eat(b'p') {
                array.base_addr_divisible_by = self.divisibility()?;
            }
            array.alias_groups = self.alias_groups()?;
            array.may_alias_internally = self.eat(b'i');
            if self.eat(b'u') {
                array.index = IndexType::UInt32;
            } else if self.eat(b'w') {
                array.index = IndexType::Int64;
            }
        }
        Ok(array)
    }
}

/// The largest rank begen reads (cuTile sets none; this bounds what a
/// symbol can make begen allocate).
const MAX_RANK: usize = 4096;

/// The deepest nesting of lists and tuples a symbol may have (cuTile's
/// kernels nest a few levels).
const MAX_NESTING: usize = 64;

fn is_lower_hex(c: u8) -> bool {
    c.is_ascii_digit() || (b'a'..=b'f').contains(&c)
}

/// The whole-signature rules cuTile's `KernelSignature` enforces: alias
/// groups shared by at least two parameters of one kind, and the
/// convention's allowed parameter kinds.
fn validate(sig: &Signature, symbol: &str) -> Result<(), DemangleError> {
    let err = |offset, kind| Err(DemangleError { symbol: symbol.to_string(), offset, kind });
    // Every alias-group list with whether it is a list's storage and where
    // its parameter starts.
    fn walk<'p>(p: &'p Param, at: usize, out: &mut Vec<(&'p [u32], bool, usize)>) {
        match p {
            Param::Array(a) => out.push((&a.alias_groups, false, at)),
            Param::List(l) => {
                out.push((&l.alias_groups, true, at));
                out.push((&l.element.alias_groups, false, at));
            }
            Param::Tuple(items) => items.iter().for_each(|i| walk(i, at, out)),
            Param::Scalar(_) | Param::Constant(_) => {}
        }
    }
    let mut lists = Vec::new();
    for p in &sig.params {
        walk(&p.param, p.span.start, &mut lists);
    }
    // (group, uses, is_list, where first seen)
    let mut groups: Vec<(u32, u32, bool, usize)> = Vec::new();
    for (ids, is_list, at) in lists {
        for &g in ids {
            match groups.iter_mut().find(|e| e.0 == g) {
                Some(e) if e.2 != is_list => return err(at, DemangleErrorKind::AliasGroupMixed(g)),
                Some(e) => e.1 += 1,
                None => groups.push((g, 1, is_list, at)),
            }
        }
    }
    if let Some(&(g, _, _, at)) = groups.iter().find(|e| e.1 == 1) {
        return err(at, DemangleErrorKind::AliasGroupOnce(g));
    }
    if sig.convention == Convention::CutilePythonV1 {
        fn v2_only(p: &Param) -> Option<&'static str> {
            match p {
                Param::Tuple(_) => Some("tuple parameters"),
                Param::Array(a) if a.axes.iter().any(|x| x.shape_constant.is_some()) => Some("constant shapes"),
                Param::List(l) if l.element.axes.iter().any(|x| x.shape_constant.is_some()) => Some("constant shapes"),
                _ => None,
            }
        }
        for p in &sig.params {
            if let Some(what) = v2_only(&p.param) {
                return err(p.span.start, DemangleErrorKind::NotInConvention { what, convention: sig.convention });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dtype_code_names_one_dtype_of_its_size() {
        let got: Vec<(&str, u32)> = Dtype::all().map(|d| (d.code(), d.size())).collect();
        let want = [
            ("b8", 1),
            ("i8", 1),
            ("u8", 1),
            ("i16", 2),
            ("u16", 2),
            ("i32", 4),
            ("u32", 4),
            ("i64", 8),
            ("u64", 8),
            ("f32", 4),
            ("f64", 8),
            ("f16", 2),
            ("bf16", 2),
            ("tf32", 4),
            ("f8m3fn", 1),
            ("f8m2", 1),
            ("f8m0fnu", 1),
        ];
        assert_eq!(got, want);
        for d in Dtype::all() {
            assert_eq!(Dtype::from_code(d.code()), Some(d));
        }
        // A begen type cuTile lacks is no dtype a code names.
        assert_eq!((Dtype::from_code("?"), Dtype::from_code("c64")), (None, None));
    }

    #[test]
    fn index_types_are_their_integer_types() {
        let got = [IndexType::Int32, IndexType::UInt32, IndexType::Int64].map(|i| (i.name(), i.attr_type()));
        assert_eq!(got, [("int32", AttrType::Int32), ("uint32", AttrType::UInt32), ("int64", AttrType::Int64)]);
    }

    fn array(sym: &str) -> Array {
        match demangle(sym).unwrap().params.remove(0).param {
            Param::Array(a) => a,
            p => panic!("{p:?}"),
        }
    }

    #[test]
    fn seed_example() {
        let sig = demangle("scale_Kt1_A1f32_1l0_A1f32_1l0_Sf32_I16").unwrap();
        assert_eq!(sig.name, "scale");
        assert_eq!(sig.convention, Convention::CutilePythonV1);
        let a = array("scale_Kt1_A1f32_1l0_A1f32_1l0_Sf32_I16");
        assert_eq!(a.axes[0].stride_lower_bound, Some(0));
        assert_eq!(sig.params[2].param, Param::Scalar(Dtype::Attr(AttrType::Float32)));
        assert_eq!(sig.params[3].param, Param::Constant(Constant::Int(16)));
        assert_eq!(sig.params[3].span, 35..38);
        assert_eq!(sig.runtime_params(), vec![0, 1, 2]);
        let roles: Vec<_> = sig.kernel_args().unwrap().iter().map(|a| (a.param, a.role)).collect();
        assert_eq!(
            roles,
            vec![
                (0, ArgRole::Base),
                (0, ArgRole::Shape(0)),
                (0, ArgRole::Stride(0)),
                (1, ArgRole::Base),
                (1, ArgRole::Shape(0)),
                (1, ArgRole::Stride(0)),
                (2, ArgRole::Value)
            ]
        );
    }

    #[test]
    fn masks_extras_and_index_types() {
        let a = array("k_Kt1_A3f16_1t1_6v8_3i4_2l_2_p16g0iw_A1f16_g0");
        assert_eq!(a.ndim(), 3);
        assert_eq!(a.axes[0], Axis { shape_divisible_by: 4, stride_constant: Some(1), ..Axis::default() });
        assert_eq!(
            a.axes[1],
            Axis { shape_divisible_by: 4, stride_divisible_by: 8, stride_lower_bound: Some(-2), ..Axis::default() }
        );
        assert_eq!(a.axes[2], Axis { stride_divisible_by: 8, ..Axis::default() });
        assert_eq!((a.base_addr_divisible_by, a.alias_groups.clone(), a.may_alias_internally), (16, vec![0], true));
        assert_eq!(a.index, IndexType::Int64);
        assert_eq!(array("k_Kt1_A2i8_u").index, IndexType::UInt32);
        let sig = demangle("k_Kt1_A2i64_w").unwrap();
        let args = sig.kernel_args().unwrap();
        assert!(args[1..].iter().all(|a| a.ty == CType::Prim(AttrType::Int64)));
    }

    #[test]
    fn lists_and_constants() {
        let sig = demangle("k_Kt1_Lg0iA2f32_3v2_Lg0A1f32_B1_I_7_F3ff8000000000000").unwrap();
        let Param::List(l) = &sig.params[0].param else { panic!() };
        assert_eq!((l.alias_groups.clone(), l.elements_may_alias, l.element.ndim()), (vec![0], true, 2));
        assert_eq!(sig.params[2].param, Param::Constant(Constant::Bool(true)));
        assert_eq!(sig.params[3].param, Param::Constant(Constant::Int(-7)));
        assert_eq!(sig.params[4].param, Param::Constant(Constant::Float(1.5)));
        let args = sig.kernel_args().unwrap();
        assert_eq!(args.len(), 4);
        assert_eq!(args[1], KernelArg { param: 0, role: ArgRole::Length, ty: CType::Prim(AttrType::Int32) });
    }

    #[test]
    fn nesting_is_bounded() {
        // 64 levels are read; 100,000 are an error, not a stack overflow.
        assert!(demangle(&format!("f_Kt2_{}Sf32", "T1".repeat(MAX_NESTING))).is_ok());
        for symbol in [format!("f_Kt1_{}Sf32", "T1".repeat(100_000)), format!("f_Kt1_{}A1f32", "L".repeat(100_000))] {
            let err = demangle(&symbol).unwrap_err();
            assert_eq!(err.kind, DemangleErrorKind::TooDeep, "{}", &symbol[..20]);
            assert!(err.to_string().contains("nested more than 64 deep"), "{err}");
        }
    }

    #[test]
    fn errors_name_their_offset() {
        let cases: &[(&str, usize, DemangleErrorKind)] = &[
            ("nothing", 0, DemangleErrorKind::NotMangled),
            ("k_Kt9_Sf32", 3, DemangleErrorKind::UnknownConvention("t9".into())),
            ("k_Kt1_A1f32_0", 11, DemangleErrorKind::ZeroAxisMask),
            ("k_Kt1_A1f32_2i4", 11, DemangleErrorKind::AxisMaskTooWide { mask: "2".into(), ndim: 1 }),
            ("k_Kt1_A1f32_1i1", 14, DemangleErrorKind::Divisibility),
            ("k_Kt1_A2f32_3i4_1i8", 15, DemangleErrorKind::Repeated { what: "a shape divisibility", axis: 0 }),
            ("k_Kt1_A1f32_1t1v2", 7, DemangleErrorKind::WithStaticStride { what: "a stride divisibility", axis: 0 }),
            ("k_Kt1_A1f32_g0", 6, DemangleErrorKind::AliasGroupOnce(0)),
            ("k_Kt1_A1f32_g1_A1f32_g1", 13, DemangleErrorKind::AliasGroup("an id more than one past the last one")),
            ("k_Kt1_Sf32X", 10, DemangleErrorKind::Expected("an underscore")),
            ("k_Kt1_LSf32", 7, DemangleErrorKind::ListElement),
            ("k_Kt1_Q", 6, DemangleErrorKind::UnknownParam("Q".into())),
            ("k_Kt1_Cs_abc_z", 6, DemangleErrorKind::UnknownParam("Cs_".into())),
            (
                "k_Kt1_T1Sf32",
                6,
                DemangleErrorKind::NotInConvention { what: "tuple parameters", convention: Convention::CutilePythonV1 },
            ),
            (
                "k_Kt1_A1f32_1s4",
                6,
                DemangleErrorKind::NotInConvention { what: "constant shapes", convention: Convention::CutilePythonV1 },
            ),
            ("k_Kt1_I99999999999999999999999999999999999999999", 7, DemangleErrorKind::OutOfRange),
        ];
        for (sym, offset, kind) in cases {
            let e = demangle(sym).expect_err(sym);
            assert_eq!((e.offset, &e.kind), (*offset, kind), "{sym}: {e}");
        }
        let e = demangle("k_Kt1_A1f32_0").unwrap_err();
        assert_eq!(
            e.to_string(),
            "`k_Kt1_A1f32_0` is not a valid cuTile kernel symbol: at offset 11 (near `_0`): an axis mask of zero"
        );
    }

    #[test]
    fn v2_demangles_but_is_not_bound() {
        let sig = demangle("k_Kt2_T2A1f32Sf32_A1f32_1s8").unwrap();
        assert_eq!(sig.convention, Convention::CutilePythonV2);
        assert_eq!(sig.kernel_args(), Err(ArgsError::Convention(Convention::CutilePythonV2)));
        let sig = demangle("k_Kt1_Stf32").unwrap();
        assert_eq!(sig.kernel_args(), Err(ArgsError::ScalarDtype { param: 0, dtype: Dtype::TFloat32 }));
    }

    #[test]
    fn the_last_k_splits() {
        let sig = demangle("my_Kernel_Kt1_Sf32").unwrap();
        assert_eq!(sig.name, "my_Kernel");
        assert_eq!(demangle("_Kt1").unwrap().name, "");
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples of this module's crate-private items, run as unit tests
    //! (an example in a doc comment must compile outside the crate).

    #[test]
    fn module() {
        use crate::binary::cutile::{ArgRole, Param, demangle};
        let sig = demangle("scale_Kt1_A1f32_1i16t1_p16_A1f32_1i16t1_p16_Sf32_I16").unwrap();
        assert_eq!(sig.name, "scale");
        assert_eq!(sig.params.len(), 4);
        let Param::Array(x) = &sig.params[0].param else { panic!() };
        assert_eq!((x.ndim(), x.axes[0].shape_divisible_by, x.axes[0].stride_constant), (1, 16, Some(1)));
        assert_eq!(x.base_addr_divisible_by, 16);
        let args = sig.kernel_args().unwrap();
        // x: pointer, shape, stride; y likewise; s; the constant 16 takes no argument
        assert_eq!(args.len(), 7);
        assert_eq!(args[1].role, ArgRole::Shape(0));
    }

    #[test]
    fn dtype_all() {
        use crate::binary::cutile::Dtype;
        assert_eq!(Dtype::all().count(), 17);
    }

    #[test]
    fn dtype_code() {
        use crate::{binary::cutile::Dtype, model::AttrType};
        assert_eq!(Dtype::Attr(AttrType::BFloat16).code(), "bf16");
    }

    #[test]
    fn dtype_from_code() {
        use crate::{binary::cutile::Dtype, model::AttrType};
        assert_eq!(Dtype::from_code("b8"), Some(Dtype::Attr(AttrType::Bool)));
        assert_eq!(Dtype::from_code("f8m2"), Some(Dtype::Float8E5M2));
    }

    #[test]
    fn dtype_attr_type() {
        use crate::binary::cutile::Dtype;
        use crate::model::AttrType;
        assert_eq!(Dtype::Attr(AttrType::Float32).attr_type(), Some(AttrType::Float32));
        assert_eq!(Dtype::Float8E5M2.attr_type(), None);
    }

    #[test]
    fn demangle() {
        use crate::binary::cutile::{DemangleErrorKind, demangle};
        let e = demangle("k_Kt1_A1f99").unwrap_err();
        assert_eq!(e.offset, 8);
        assert_eq!(e.kind, DemangleErrorKind::UnknownDtype("f99".into()));
    }
}
