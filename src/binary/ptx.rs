//! The kernels of a PTX module and their parameter lists, read from its
//! text: enough to check a manifest's `c` parameters against the `.entry`
//! they name, before anything runs.

use std::fmt;

use super::layout::{CType, Structs};
use crate::diag::messages::binary as bm;

/// A PTX fundamental type: `.u32` is `{ kind: 'u', bits: 32 }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct PtxType {
    /// `u`, `s`, `f` or `b`.
    pub(crate) kind: char,
    /// 8, 16, 32 or 64.
    pub(crate) bits: u32,
}

/// One `.param` of an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PtxParam {
    /// Its name in the PTX.
    pub(crate) name: String,
    /// Its element type.
    pub(crate) ty: PtxType,
    /// `.align N` of a by-value parameter, when given. (On a `.ptr`
    /// parameter `.align` is the pointee's alignment, not the parameter's.)
    pub(crate) explicit_align: Option<u32>,
    /// `[N]`: a byte array (a struct or array by value).
    pub(crate) count: Option<u32>,
    /// `.ptr` was given (a pointer parameter).
    pub(crate) pointer: bool,
}

impl PtxParam {
    /// Bytes the parameter takes.
    pub(crate) fn size(&self) -> u32 {
        // Saturates: a crafted `[N]` must not overflow (no kernel parameter comes near it).
        (self.ty.bits / 8).saturating_mul(self.count.unwrap_or(1))
    }

    /// Its alignment in the parameter space.
    pub(crate) fn align(&self) -> u32 {
        self.explicit_align.unwrap_or(self.ty.bits / 8)
    }
}

/// A kernel (`.entry`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PtxEntry {
    /// The symbol.
    pub(crate) name: String,
    /// Its parameters in order.
    pub(crate) params: Vec<PtxParam>,
}

/// PTX text begen could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PtxError {
    /// Byte offset in the text.
    pub(crate) offset: usize,
    /// What was wrong.
    pub(crate) kind: PtxErrorKind,
}

/// The kinds of [`PtxError`] (the tokens are the text's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PtxErrorKind {
    /// `.entry` not followed by a name.
    EntryWithoutName,
    /// A parameter list that does not close.
    Unclosed,
    /// A token that has no place in a parameter list.
    Unexpected(String),
    /// The text ends inside a `.param`.
    UnfinishedParam,
    /// `.align` not followed by a number.
    AlignWithoutNumber,
    /// A `.param` type begen does not know.
    UnknownType(String),
    /// A parameter (its name) without a type.
    Untyped(String),
    /// A token where a parameter's name should be.
    BadName(String),
    /// A parameter (its name) with a malformed `[N]`.
    BadCount(String),
}

impl fmt::Display for PtxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = match &self.kind {
            PtxErrorKind::EntryWithoutName => bm::PTX_ENTRY_WITHOUT_NAME.to_string(),
            PtxErrorKind::Unclosed => bm::PTX_UNCLOSED.to_string(),
            PtxErrorKind::Unexpected(t) => bm::ptx_unexpected(t),
            PtxErrorKind::UnfinishedParam => bm::PTX_UNFINISHED_PARAM.to_string(),
            PtxErrorKind::AlignWithoutNumber => bm::PTX_ALIGN_WITHOUT_NUMBER.to_string(),
            PtxErrorKind::UnknownType(t) => bm::ptx_unknown_type(t),
            PtxErrorKind::Untyped(n) => bm::ptx_untyped(n),
            PtxErrorKind::BadName(n) => bm::ptx_bad_name(n),
            PtxErrorKind::BadCount(n) => bm::ptx_bad_count(n),
        };
        f.write_str(&bm::ptx_at(self.offset, &why))
    }
}

impl std::error::Error for PtxError {}

/// Every `.entry` of a PTX module, in order.
pub(crate) fn entries(ptx: &str) -> Result<Vec<PtxEntry>, PtxError> {
    let tokens = tokenize(ptx);
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i].1 != ".entry" {
            i += 1;
            continue;
        }
        let at = tokens[i].0;
        let err = |offset, kind| PtxError { offset, kind };
        let (name_at, name) = *tokens.get(i + 1).ok_or_else(|| err(at, PtxErrorKind::EntryWithoutName))?;
        if !is_ident(name) {
            return Err(err(name_at, PtxErrorKind::EntryWithoutName));
        }
        i += 2;
        let mut params = Vec::new();
        if tokens.get(i).is_some_and(|t| t.1 == "(") {
            i += 1;
            loop {
                let Some(&(t_at, t)) = tokens.get(i) else {
                    return Err(err(at, PtxErrorKind::Unclosed));
                };
                match t {
                    ")" => {
                        i += 1;
                        break;
                    }
                    "," => i += 1,
                    ".param" => {
                        let (param, next) = read_param(&tokens, i + 1).map_err(|(o, k)| err(o, k))?;
                        params.push(param);
                        i = next;
                    }
                    _ => return Err(err(t_at, PtxErrorKind::Unexpected(t.to_string()))),
                }
            }
        }
        out.push(PtxEntry { name: name.to_string(), params });
    }
    Ok(out)
}

fn read_param(tokens: &[(usize, &str)], mut i: usize) -> Result<(PtxParam, usize), (usize, PtxErrorKind)> {
    let (mut ty, mut explicit_align, mut pointer) = (None, None, false);
    loop {
        let Some(&(at, t)) = tokens.get(i) else {
            return Err((tokens.last().map_or(0, |t| t.0), PtxErrorKind::UnfinishedParam));
        };
        match t {
            ".align" => {
                let n = tokens.get(i + 1).and_then(|t| t.1.parse().ok());
                explicit_align = Some(n.ok_or((at, PtxErrorKind::AlignWithoutNumber))?);
                i += 2;
            }
            ".ptr" => {
                pointer = true;
                i += 1;
            }
            ".global" | ".const" | ".local" | ".shared" => i += 1,
            _ if t.starts_with('.') => {
                ty = Some(parse_type(t).ok_or_else(|| (at, PtxErrorKind::UnknownType(t.to_string())))?);
                i += 1;
            }
            _ => break,
        }
    }
    let (at, name) = tokens[i];
    let ty = ty.ok_or_else(|| (at, PtxErrorKind::Untyped(name.to_string())))?;
    if !is_ident(name) {
        return Err((at, PtxErrorKind::BadName(name.to_string())));
    }
    i += 1;
    let mut count = None;
    if tokens.get(i).is_some_and(|t| t.1 == "[") {
        let n = tokens.get(i + 1).and_then(|t| t.1.parse().ok());
        if n.is_none() || tokens.get(i + 2).is_none_or(|t| t.1 != "]") {
            return Err((at, PtxErrorKind::BadCount(name.to_string())));
        }
        count = n;
        i += 3;
    }
    if pointer {
        explicit_align = None;
    }
    Ok((PtxParam { name: name.to_string(), ty, explicit_align, count, pointer }, i))
}

fn parse_type(t: &str) -> Option<PtxType> {
    let rest = t.strip_prefix('.')?;
    let kind = rest.chars().next()?;
    let bits: u32 = rest[1..].parse().ok()?;
    (matches!(kind, 'u' | 's' | 'f' | 'b') && matches!(bits, 8 | 16 | 32 | 64)).then_some(PtxType { kind, bits })
}

fn is_ident(t: &str) -> bool {
    t.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || "_$%".contains(c))
        && t.chars().all(|c| c.is_ascii_alphanumeric() || "_$%.".contains(c))
}

/// Splits PTX into tokens with their offsets: directives and identifiers,
/// numbers, and single punctuation; comments and strings dropped.
fn tokenize(text: &str) -> Vec<(usize, &str)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if b[i..].starts_with(b"//") {
            i += b[i..].iter().position(|&c| c == b'\n').unwrap_or(b.len() - i);
        } else if b[i..].starts_with(b"/*") {
            i += b[i + 2..].windows(2).position(|w| w == b"*/").map_or(b.len() - i, |p| p + 4);
        } else if c == b'"' {
            i += 1 + b[i + 1..].iter().position(|&c| c == b'"').map_or(b.len() - i - 1, |p| p + 1);
        } else if c.is_ascii_alphanumeric() || b"._$%".contains(&c) {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b"._$%".contains(&b[i])) {
                i += 1;
            }
            out.push((start, &text[start..i]));
        } else {
            // One punctuation character (PTX text is ASCII; skip anything else whole).
            let len = text[i..].chars().next().map_or(1, char::len_utf8);
            out.push((i, &text[i..i + len]));
            i += len;
        }
    }
    out
}

/// Where a kernel's PTX parameters differ from the C parameters expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ParamMismatch {
    /// Different counts.
    Count {
        /// The kernel's.
        ptx: usize,
        /// Expected.
        expected: usize,
    },
    /// A parameter of another size or alignment.
    Param {
        /// Its index.
        index: usize,
        /// The kernel's (size, alignment).
        ptx: (u32, u32),
        /// Expected (size, alignment).
        expected: (u32, u32),
    },
}

impl fmt::Display for ParamMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamMismatch::Count { ptx, expected } => f.write_str(&bm::ptx_count(*ptx, *expected)),
            ParamMismatch::Param { index, ptx, expected } => f.write_str(&bm::ptx_param(*index, *ptx, *expected)),
        }
    }
}

impl PtxEntry {
    /// Checks that the kernel takes exactly these C parameters (by size and
    /// alignment: PTX does not keep C's types).
    pub(crate) fn check_params(&self, expected: &[CType], structs: &Structs) -> Result<(), ParamMismatch> {
        if self.params.len() != expected.len() {
            return Err(ParamMismatch::Count { ptx: self.params.len(), expected: expected.len() });
        }
        for (index, (p, &t)) in self.params.iter().zip(expected).enumerate() {
            let want = structs.size_align(t);
            if (p.size(), p.align()) != want {
                return Err(ParamMismatch::Param { index, ptx: (p.size(), p.align()), expected: want });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::AttrType;

    const NVCC_STYLE: &str = r#"
//
// Generated by NVIDIA NVVM Compiler
.version 9.0
.target sm_90
.address_size 64

	// .globl	affine_kernel   /* a comment ( with .entry fake( */
.visible .entry affine_kernel(
	.param .align 8 .b8 affine_kernel_param_0[24],
	.param .u64 .ptr .global .align 4 affine_kernel_param_1,
	.param .u64 affine_kernel_param_2,
	.param .u64 .ptr .align 1 affine_kernel_param_3
)
.maxntid 128, 1, 1
{
	ret;
}
.weak .entry empty()
{
	ret;
}
.func helper(.param .b32 x) { ret; }
.entry slice_sum(.param .u64 a, .param .u64 b, .param .u8 c, .param .s16 d, .param .f64 e)
{ ret; }
"#;

    #[test]
    fn reads_entries_not_funcs() {
        let e = entries(NVCC_STYLE).unwrap();
        let names: Vec<_> = e.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["affine_kernel", "empty", "slice_sum"]);
        let a = &e[0].params;
        assert_eq!(a.len(), 4);
        assert_eq!((a[0].size(), a[0].align(), a[0].count), (24, 8, Some(24)));
        assert!(a[1].pointer && !a[2].pointer);
        assert_eq!((a[1].size(), a[1].align()), (8, 8));
        assert!(e[1].params.is_empty());
        let s: Vec<_> = e[2].params.iter().map(|p| (p.ty.kind, p.ty.bits)).collect();
        assert_eq!(s, [('u', 64), ('u', 64), ('u', 8), ('s', 16), ('f', 64)]);
    }

    #[test]
    fn checks_c_params() {
        let e = entries(NVCC_STYLE).unwrap();
        let structs = Structs::new();
        let slice = [
            CType::Pointer,
            CType::Prim(AttrType::UInt64),
            CType::Prim(AttrType::UInt8),
            CType::Prim(AttrType::Int16),
            CType::Prim(AttrType::Float64),
        ];
        assert_eq!(e[2].check_params(&slice, &structs), Ok(()));
        assert_eq!(e[2].check_params(&slice[..4], &structs), Err(ParamMismatch::Count { ptx: 5, expected: 4 }));
        let mut wrong = slice;
        wrong[3] = CType::Prim(AttrType::Int32);
        assert_eq!(
            e[2].check_params(&wrong, &structs),
            Err(ParamMismatch::Param { index: 3, ptx: (2, 2), expected: (4, 4) })
        );
    }

    #[test]
    fn errors_have_offsets() {
        let e = entries(".entry k(.param .q32 x)").unwrap_err();
        assert_eq!((e.offset, &e.kind), (16, &PtxErrorKind::UnknownType(".q32".into())));
        assert_eq!(e.to_string(), "PTX at byte 16: unknown parameter type `.q32`");
        assert!(entries(".entry k(.param .u32 x").is_err());
        assert!(entries(".entry").is_err());
    }

    #[test]
    fn huge_counts_saturate() {
        let e = entries(".entry k(.param .b64 x[4294967295])").unwrap();
        assert_eq!(e[0].params[0].size(), u32::MAX);
        assert!(entries(".entry k(.param .b64 x[4294967296])").is_err());
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples of this module's crate-private items, run as unit tests
    //! (an example in a doc comment must compile outside the crate).

    #[test]
    fn module() {
        use crate::binary::ptx::{PtxType, entries};
        let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
            .visible .entry affine(\n  .param .align 8 .b8 affine_param_0[24],\n  .param .u64 .ptr .align 1 affine_param_1,\n  .param .f32 affine_param_2\n)\n{ ret; }";
        let e = entries(ptx).unwrap();
        assert_eq!(e[0].name, "affine");
        assert_eq!(e[0].params.iter().map(|p| (p.size(), p.align())).collect::<Vec<_>>(), [(24, 8), (8, 8), (4, 4)]);
        assert_eq!(e[0].params[2].ty, PtxType { kind: 'f', bits: 32 });
    }
}
