//! begen.yaml's precompiled GPU kernels, checked into
//! functions like the annotated ones.
//!
//! The binary front end (`binary::declare`) has read every binary and
//! declared each kernel; [`check_kernel`] decides: it resolves the kernel's
//! tokens against the calling convention (for `cutile_python_v1` the
//! demangled symbol; for `c` the PTX `.param` list or the cubin's parameter
//! table), the C arguments at their [`ParamLayout`] offsets, cuTile's array
//! assumptions, and the launch dimensions. Every problem is a diagnostic at
//! the place in begen.yaml that causes it.

use std::collections::BTreeMap;

use crate::binary::cutile::{self, ArgRole, KernelArg};
use crate::binary::declare::{Binaries, BinaryKernel, Contents};
use crate::binary::launch::{Expr, parse_expr};
use crate::binary::layout::{CType, ParamLayout, StructId, Structs};
use crate::config::{ExprConfig, yaml_path};
use crate::diag::{Diagnostic, Severity, messages as msg, messages::binary as bm};
use crate::model::binary::{
    ArgValue, ArrayRules, AxisRules, BinaryArg, BinaryCall, Convention, StructLeaf, StructType,
};
use crate::model::decl::Declared;
use crate::model::{self, AttrType, ElementType, Extent, Param, Platform, TensorType, Token, is_identifier};
use crate::source::{SourceMap, Span};

use crate::check::Checked;
use crate::check::function::arg_spec::check_tokens;
use crate::check::function::tokens::SpecToken;

/// A struct's layout flattened to its scalar leaves (at most
/// `layout::MAX_SIZE` of them), walked without recursion: nesting may be
/// as deep as the struct has bytes.
fn struct_type(structs: &Structs, id: StructId) -> StructType {
    let mut out = Vec::new();
    let mut path: Vec<String> = Vec::new();
    // (struct, its offset, the next member to visit)
    let mut stack = vec![(id, 0u32, 0usize)];
    while let Some(top) = stack.last_mut() {
        let (sid, base, i) = *top;
        let def = structs.def(sid);
        let Some(m) = def.members.get(i) else {
            stack.pop();
            path.pop();
            continue;
        };
        top.2 += 1;
        let offset = base + structs.layout(sid).offsets[i];
        match m.ty {
            CType::Prim(ty) => {
                let mut p = path.clone();
                p.push(m.name.clone());
                out.push(StructLeaf { path: p, ty, offset });
            }
            CType::Struct(inner) => {
                path.push(m.name.clone());
                stack.push((inner, offset, 0));
            }
            CType::Pointer => {}
        }
    }
    StructType { name: structs.def(id).name.clone(), size: structs.layout(id).size, leaves: out }
}

/// One manifest parameter after its token is read.
struct Slot {
    token: Option<SpecToken>,
    strukt: Option<StructId>,
    /// Written with a trailing `...`: a list of arrays.
    list: bool,
    span: Span,
    text: String,
}

/// The tokens resolved against the convention: the parameters, the
/// kernel's C arguments (each one's type and what it carries, with its
/// parameter's index), cuTile's array and list rules, and the block a cubin
/// fixes.
#[derive(Default)]
struct Bound {
    params: Vec<Param>,
    types: Vec<CType>,
    values: Vec<(usize, ArgValue)>,
    arrays: Vec<ArrayRules>,
    lists: Vec<ArrayRules>,
    required_block: Option<[u32; 3]>,
}

/// Where begen.yaml writes a kernel's options.
type Locate<'a> = &'a crate::config::Locator<'a>;

fn failed(diags: &[Diagnostic]) -> bool {
    diags.iter().any(|d| d.severity == Severity::Error)
}

/// Checks one binary kernel (its names are decided when it is kept, as an
/// annotated function's are).
pub(in crate::check) fn check_kernel(
    d: &Declared,
    kernel: &BinaryKernel,
    bins: &Binaries,
    req_map: &SourceMap,
    config_name: (&str, &std::path::Path),
    locate: Locate,
) -> (Option<Checked>, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let function = check_call(d, kernel, bins, locate, &mut diags).map(|(params, call)| {
        let (file, path) = config_name;
        let (line, column) = req_map.position(d.name_span);
        let at =
            model::Defined { file: file.to_string(), path: path.to_path_buf(), line, column, platform: Platform::Cuda };
        Checked {
            at,
            params,
            consts: Vec::new(),
            binary: Some(Box::new(call)),
            returns: crate::model::Returns::Void,
            native: None,
            rets_like: None,
        }
    });
    (function, diags)
}

/// A kernel's parameters and what its handler does, or `None` once
/// something is wrong (each check stops where a later one would only
/// repeat the problem).
fn check_call(
    d: &Declared,
    kernel: &BinaryKernel,
    bins: &Binaries,
    locate: Locate,
    diags: &mut Vec<Diagnostic>,
) -> Option<(Vec<Param>, BinaryCall)> {
    if !is_identifier(&d.name) {
        diags.push(Diagnostic::error(d.name_span, bm::bad_kernel_name(&d.name)));
        return None;
    }
    if matches!(*kernel.contents, Contents::Unusable) {
        return None;
    }
    let slots = check_slots(d, kernel.convention, &bins.structs, diags)?;
    let (symbol, symbol_span) = check_symbol(d, kernel, locate, diags)?;
    let mut bound = match kernel.convention {
        Convention::CutilePythonV1 | Convention::CutilePythonV2 => {
            check_cutile(d, kernel, &bins.structs, &slots, (&symbol, symbol_span), diags)?
        }
        Convention::C => check_c(d, kernel, &bins.structs, &slots, &symbol, diags)?,
    };
    // Struct attributes get their layout.
    for (p, s) in bound.params.iter_mut().zip(&slots) {
        if let (Some(id), Token::Attr { name, .. }) = (s.strukt, &p.token) {
            p.token = Token::Struct { name: name.clone(), ty: Box::new(struct_type(&bins.structs, id)) };
        }
    }
    check_names(&bound.params, &slots, diags);
    check_dims(&bound.params, &slots, diags);
    if !bound.params.iter().any(|p| p.token.is_output()) {
        diags.push(Diagnostic::error(d.name_span, bm::no_output(&d.name)));
    }
    let (grid, block, shared) = check_launch(kernel, &bound.params, bound.required_block, d.name_span, locate, diags);
    if failed(diags) {
        return None;
    }
    let layout = ParamLayout::of(&bound.types, &bins.structs);
    let args = bound
        .values
        .into_iter()
        .zip(layout.offsets.iter().zip(&layout.sizes))
        .map(|((param, value), (&offset, &size))| BinaryArg { param, value, offset, size })
        .collect();
    let call = BinaryCall {
        image: kernel.image,
        symbol,
        convention: kernel.convention,
        args,
        param_size: layout.size,
        arrays: bound.arrays,
        lists: bound.lists,
        grid,
        block,
        shared,
    };
    Some((bound.params, call))
}

/// Reads the tokens ([`read_slots`]) and refuses what a binary kernel
/// cannot take: a stream, a constant, an array attribute, a struct not
/// under `structs:`, a list that is not an input or not cuTile's.
fn check_slots(
    d: &Declared,
    convention: Convention,
    structs: &Structs,
    diags: &mut Vec<Diagnostic>,
) -> Option<Vec<Slot>> {
    let slots = read_slots(d, structs, diags)?;
    for s in &slots {
        match &s.token {
            Some(SpecToken::Stream) => diags.push(Diagnostic::error(s.span, bm::STREAM_IN_BINARY)),
            Some(SpecToken::Const { .. }) => diags.push(Diagnostic::error(s.span, bm::CONST_IN_BINARY)),
            Some(SpecToken::Arg(_)) => {}
            Some(t) if s.list => {
                let output = matches!(t, SpecToken::Ret(_) | SpecToken::InOut(_));
                diags.push(Diagnostic::error(s.span, bm::list_role(&s.text, output)));
            }
            // Not a struct of `structs:`.
            Some(SpecToken::Struct { ty, .. }) => {
                diags.push(Diagnostic::error(s.span, msg::bad_attr_type(&s.text, ty)).hint(msg::hint_attr_types()))
            }
            Some(SpecToken::Array { .. }) => diags.push(Diagnostic::error(s.span, bm::ARRAY_IN_BINARY)),
            _ => {}
        }
        if let Some(SpecToken::Arg(Some(c)) | SpecToken::Ret(Some(c)) | SpecToken::InOut(Some(c))) = &s.token
            && c.rest().is_some()
        {
            diags.push(Diagnostic::error(s.span, bm::rest_in_binary(&s.text)));
        }
        if s.list && convention == Convention::C {
            diags.push(Diagnostic::error(s.span, bm::c_list(&s.text)));
        }
    }
    if failed(diags) { None } else { Some(slots) }
}

/// Each token: a struct attribute of `structs:` first, then the common
/// grammar (with a trailing `...`: a list of arrays). `None` at the first
/// token that does not read.
fn read_slots(d: &Declared, structs: &Structs, diags: &mut Vec<Diagnostic>) -> Option<Vec<Slot>> {
    let mut slots = Vec::new();
    for (text, at) in d.tokens.iter().flatten() {
        let strukt = text
            .strip_prefix("attr.")
            .and_then(|r| r.split_once(':'))
            .filter(|(n, _)| is_identifier(n))
            .and_then(|(n, ty)| structs.find(ty).map(|id| (n, id)));
        if let Some((n, id)) = strukt {
            let token = SpecToken::Attr { name: n.to_string(), ty: None };
            slots.push(Slot { token: Some(token), strukt: Some(id), list: false, span: *at, text: text.clone() });
            continue;
        }
        let (core, list) = match text.strip_suffix("...") {
            Some(core) => (core.to_string(), true),
            None => (text.clone(), false),
        };
        let parsed = check_tokens(&d.name, std::slice::from_ref(&(core, *at)), diags);
        let token = parsed.into_iter().next().map(|(t, _)| t);
        token.as_ref()?;
        slots.push(Slot { token, strukt: None, list, span: *at, text: text.clone() });
    }
    Some(slots)
}

/// The symbol (by default the kernel's name) and where begen.yaml writes
/// it: text a C string literal can hold, and in the binary (in a fatbin,
/// in one of the images begen could read; if it is in none and some are
/// compressed, it may be in those: a warning).
fn check_symbol(
    d: &Declared,
    kernel: &BinaryKernel,
    locate: Locate,
    diags: &mut Vec<Diagnostic>,
) -> Option<(String, Span)> {
    let symbol = kernel.config.symbol.clone().unwrap_or_else(|| d.name.clone());
    let symbol_path = yaml_path!["binaries", kernel.entry, "kernels", &kernel.name, "symbol"];
    let symbol_span = kernel.config.symbol.as_ref().and_then(|_| locate.value(&symbol_path)).unwrap_or(d.name_span);
    if symbol.is_empty() || !symbol.chars().all(|c| c.is_ascii_alphanumeric() || "_$.".contains(c)) {
        diags.push(Diagnostic::error(symbol_span, bm::bad_symbol(&symbol)));
        return None;
    }
    let known = kernel.contents.kernel_names();
    if !known.contains(&symbol) {
        let unread = match &*kernel.contents {
            Contents::Fatbin(f) => f.unread(),
            _ => vec![],
        };
        if unread.is_empty() {
            diags.push(
                Diagnostic::error(symbol_span, bm::symbol_missing(&symbol, &kernel.file))
                    .note(bm::known_symbols(&known)),
            );
            return None;
        }
        diags.push(
            Diagnostic::warning(symbol_span, bm::fatbin_unchecked(&symbol, &kernel.file))
                .note(bm::fatbin_unread(&unread))
                .note(bm::known_symbols(&known)),
        );
    }
    Some((symbol, symbol_span))
}

/// `cutile_python_v1`: the demangled symbol's runtime parameters, one per
/// token, and the C arguments they expand to, which every cubin's
/// parameter table must agree with.
fn check_cutile(
    d: &Declared,
    kernel: &BinaryKernel,
    structs: &Structs,
    slots: &[Slot],
    (symbol, symbol_span): (&str, Span),
    diags: &mut Vec<Diagnostic>,
) -> Option<Bound> {
    let sig = match cutile::demangle(symbol) {
        Ok(s) => s,
        Err(e) => {
            diags.push(Diagnostic::error(symbol_span, e.to_string()));
            return None;
        }
    };
    let args = match sig.kernel_args() {
        Ok(a) => a,
        Err(e) => {
            diags.push(Diagnostic::error(symbol_span, bm::cutile_unbound(&e.to_string())));
            return None;
        }
    };
    let runtime = sig.runtime_params();
    if runtime.len() != slots.len() {
        diags.push(
            Diagnostic::error(d.name_span, bm::cutile_count(&d.name, runtime.len(), slots.len()))
                .note(bm::cutile_expected(&describe_cutile(&sig, &runtime))),
        );
        return None;
    }
    let mut bound = Bound::default();
    for (k, (s, &pi)) in slots.iter().zip(&runtime).enumerate() {
        match resolve_cutile(k, s, &sig.params[pi].param) {
            Ok((param, rules)) => {
                match rules {
                    Some(r) if param.token.is_list() => bound.lists.push(r),
                    Some(r) => bound.arrays.push(r),
                    None => {}
                }
                bound.params.push(param);
            }
            Err(m) => diags.push(Diagnostic::error(s.span, m)),
        }
    }
    if failed(diags) {
        return None;
    }
    cutile_values(&args, &runtime, &mut bound);
    for k in kernel.contents.cubins().into_iter().filter_map(|c| c.kernel(symbol)) {
        bound.required_block = bound.required_block.or(k.required_block);
        let layout = ParamLayout::of(&bound.types, structs);
        let table: Vec<(u32, u32)> = k.params.iter().map(|p| (p.offset as u32, p.size as u32)).collect();
        let ours: Vec<(u32, u32)> = layout.offsets.iter().copied().zip(layout.sizes.iter().copied()).collect();
        if !table.is_empty() && table != ours {
            diags.push(Diagnostic::error(symbol_span, bm::table_mismatch(symbol, &table, &ours)));
            return None;
        }
    }
    Some(bound)
}

/// Each C argument of a cuTile kernel: its type, and what it carries for
/// the manifest parameter it comes from.
fn cutile_values(args: &[KernelArg], runtime: &[usize], bound: &mut Bound) {
    for KernelArg { param, role, ty } in args {
        let k = runtime.iter().position(|r| r == param).unwrap_or(0);
        let v = match (role, ty) {
            (ArgRole::Base, _) if bound.params.get(k).is_some_and(|p| p.token.is_list()) => ArgValue::ListWords,
            (ArgRole::Length, _) => ArgValue::ListLength,
            (ArgRole::Base, _) => ArgValue::Pointer,
            (ArgRole::Shape(a), CType::Prim(t)) => ArgValue::Shape(*a as usize, *t),
            (ArgRole::Stride(a), CType::Prim(t)) => ArgValue::Stride(*a as usize, *t),
            (ArgRole::Value, CType::Prim(t)) => ArgValue::Scalar(*t),
            _ => ArgValue::Pointer,
        };
        bound.types.push(*ty);
        bound.values.push((k, v));
    }
}

/// `c`: each token's C type, in order, which the PTX `.param` lists and
/// the cubins' parameter tables must agree with (a mismatch is reported
/// and the other checks go on).
fn check_c(
    d: &Declared,
    kernel: &BinaryKernel,
    structs: &Structs,
    slots: &[Slot],
    symbol: &str,
    diags: &mut Vec<Diagnostic>,
) -> Option<Bound> {
    let mut bound = Bound::default();
    for (k, s) in slots.iter().enumerate() {
        match resolve_c(k, s, structs) {
            Ok((param, ty, v)) => {
                bound.params.push(param);
                bound.types.push(ty);
                bound.values.push((k, v));
            }
            Err(m) => diags.push(Diagnostic::error(s.span, m)),
        }
    }
    if failed(diags) {
        return None;
    }
    let layout = ParamLayout::of(&bound.types, structs);
    // Every image that has the kernel must agree (a fatbin holds one per
    // architecture); one complaint per kind is enough.
    if let Some(Err(m)) = kernel
        .contents
        .ptx()
        .into_iter()
        .filter_map(|entries| entries.iter().find(|e| e.name == symbol))
        .map(|e| e.check_params(&bound.types, structs))
        .find(Result::is_err)
    {
        diags.push(Diagnostic::error(d.name_span, bm::c_mismatch(symbol, &m.to_string())));
    }
    let ours: Vec<(u32, u32)> = layout.offsets.iter().copied().zip(layout.sizes.iter().copied()).collect();
    for k in kernel.contents.cubins().into_iter().filter_map(|c| c.kernel(symbol)) {
        bound.required_block = bound.required_block.or(k.required_block);
        let table: Vec<(u32, u32)> = k.params.iter().map(|p| (p.offset as u32, p.size as u32)).collect();
        if table != ours {
            diags.push(Diagnostic::error(d.name_span, bm::table_mismatch(symbol, &table, &ours)));
            break;
        }
    }
    Some(bound)
}

/// A tensor parameter's name in messages and Python: its role and position.
fn tensor_name(token: &SpecToken, k: usize) -> String {
    match token {
        SpecToken::Ret(_) => format!("ret{k}"),
        SpecToken::InOut(_) => format!("inout{k}"),
        _ => format!("arg{k}"),
    }
}

fn param(name: String, token: Token) -> Param {
    Param {
        py_name: Box::default(),
        name: name.into(),
        token,
        half_repr: None,
        pointer: None,
        array: None,
        default: None,
    }
}

fn tensor_token(t: &SpecToken, contract: Option<TensorType>) -> Token {
    match t {
        SpecToken::Ret(_) => Token::Ret(contract),
        SpecToken::InOut(_) => Token::InOut(contract),
        _ => Token::Arg(contract),
    }
}

/// A typed tensor token's contract against a cuTile array (a parameter,
/// or a list's element): dtype and rank agree; the rules to check on the
/// host.
fn cutile_contract(
    k: usize,
    s: &Slot,
    c: &Option<TensorType>,
    a: &cutile::Array,
) -> Result<(TensorType, ArrayRules), String> {
    let want = a.dtype.attr_type().ok_or_else(|| bm::cutile_dtype(&s.text, a.dtype.code()))?;
    let untyped = || bm::cutile_untyped(&s.text, want.as_str(), a.ndim(), s.list);
    let Some(c) = c else { return Err(untyped()) };
    if c.dtype != ElementType::Dtype(want) {
        return Err(bm::cutile_array_dtype(&s.text, want.as_str(), &c.dtype.to_string(), s.list));
    }
    let Some(dims) = &c.dims else { return Err(untyped()) };
    if dims.len() != a.ndim() {
        return Err(bm::cutile_rank(&s.text, a.ndim(), dims.len(), s.list));
    }
    let rules = ArrayRules {
        param: k,
        index: a.index.attr_type(),
        axes: a
            .axes
            .iter()
            .map(|x| AxisRules {
                shape_divisible_by: x.shape_divisible_by,
                stride_divisible_by: x.stride_divisible_by,
                stride_constant: x.stride_constant,
                stride_lower_bound: x.stride_lower_bound,
            })
            .collect(),
        base_align: a.base_addr_divisible_by,
    };
    Ok((c.clone(), rules))
}

/// What a demangled cuTile parameter is, for messages.
fn cutile_what(p: &cutile::Param) -> String {
    match p {
        cutile::Param::Array(a) => bm::cutile_array_of_rank(a.ndim()),
        cutile::Param::List(l) => bm::cutile_list_of_rank(l.element.ndim()),
        cutile::Param::Scalar(d) => bm::cutile_scalar(d.code()),
        cutile::Param::Constant(_) | cutile::Param::Tuple(_) => bm::CUTILE_NOT_BINDABLE.into(),
    }
}

/// One `cutile_python_v1` parameter: the token against the demangled one.
fn resolve_cutile(k: usize, s: &Slot, p: &cutile::Param) -> Result<(Param, Option<ArrayRules>), String> {
    let token = s.token.as_ref().unwrap_or(&SpecToken::Stream);
    match (token, p) {
        (SpecToken::Arg(c), cutile::Param::List(l)) if s.list => {
            let (c, rules) = cutile_contract(k, s, c, &l.element)?;
            Ok((param(tensor_name(token, k), Token::List(c)), Some(rules)))
        }
        (_, p) if s.list => Err(bm::cutile_not_list(&s.text, &cutile_what(p))),
        (_, cutile::Param::List(l)) => {
            let dtype = l.element.dtype.attr_type().map_or(l.element.dtype.code(), |t| t.as_str());
            Err(bm::cutile_list_expected(&s.text, dtype, l.element.ndim()))
        }
        (SpecToken::Arg(c) | SpecToken::Ret(c) | SpecToken::InOut(c), cutile::Param::Array(a)) => {
            let (c, rules) = cutile_contract(k, s, c, a)?;
            Ok((param(tensor_name(token, k), tensor_token(token, Some(c))), Some(rules)))
        }
        (SpecToken::Attr { name, ty } | SpecToken::Dim { name, ty }, cutile::Param::Scalar(d)) => {
            let want = d.attr_type().ok_or_else(|| bm::cutile_dtype(&s.text, d.code()))?;
            if s.strukt.is_some() || ty.is_some_and(|t| t != want) {
                return Err(bm::cutile_scalar_type(&s.text, want.as_str()));
            }
            let is_dim = matches!(token, SpecToken::Dim { .. });
            if is_dim && !want.is_integer() {
                return Err(bm::cutile_scalar_type(&s.text, want.as_str()));
            }
            let token = if is_dim {
                Token::Dim { name: name.clone(), ty: want }
            } else {
                Token::Attr { name: name.clone(), ty: want }
            };
            Ok((param(name.clone(), token), None))
        }
        (_, p) => Err(bm::cutile_kind(&s.text, &cutile_what(p))),
    }
}

/// One `c` parameter: its C type and what is written there.
fn resolve_c(k: usize, s: &Slot, structs: &Structs) -> Result<(Param, CType, ArgValue), String> {
    let token = s.token.as_ref().unwrap_or(&SpecToken::Stream);
    match token {
        SpecToken::Arg(c) | SpecToken::Ret(c) | SpecToken::InOut(c) => {
            if let Some(TensorType { dtype: ElementType::Param(p), .. }) = c {
                return Err(bm::c_dtype_param(&s.text, p));
            }
            Ok((param(tensor_name(token, k), tensor_token(token, c.clone())), CType::Pointer, ArgValue::Pointer))
        }
        SpecToken::Attr { name, ty } => {
            if let Some(id) = s.strukt {
                let _ = structs.def(id);
                return Ok((
                    param(name.clone(), Token::Attr { name: name.clone(), ty: AttrType::UInt8 }),
                    CType::Struct(id),
                    ArgValue::Struct,
                ));
            }
            let ty = ty.ok_or_else(|| bm::c_needs_type(&s.text))?;
            Ok((param(name.clone(), Token::Attr { name: name.clone(), ty }), CType::Prim(ty), ArgValue::Scalar(ty)))
        }
        SpecToken::Dim { name, ty } => {
            let ty = ty.ok_or_else(|| bm::c_needs_type(&s.text))?;
            Ok((param(name.clone(), Token::Dim { name: name.clone(), ty }), CType::Prim(ty), ArgValue::Scalar(ty)))
        }
        SpecToken::Stream | SpecToken::Const { .. } => Err(bm::STREAM_IN_BINARY.to_string()),
        // Refused in `check_kernel`.
        SpecToken::Struct { .. } | SpecToken::Array { .. } => Err(bm::ARRAY_IN_BINARY.to_string()),
    }
}

/// Attribute and dimension names are unique (they are keywords and XLA
/// attribute names).
fn check_names(params: &[Param], slots: &[Slot], diags: &mut Vec<Diagnostic>) {
    let mut seen: BTreeMap<&str, ()> = BTreeMap::new();
    for (p, s) in params.iter().zip(slots) {
        if seen.insert(&*p.name, ()).is_some() {
            diags.push(Diagnostic::error(s.span, bm::duplicate_param(&p.name)));
        }
    }
}

/// A `dim.` parameter's value comes from the tensors: some tensor must
/// name it.
fn check_dims(params: &[Param], slots: &[Slot], diags: &mut Vec<Diagnostic>) {
    for (p, s) in params.iter().zip(slots) {
        if let Token::Dim { name, .. } = &p.token
            && !named_dims(params).contains(&name.as_str())
        {
            diags.push(Diagnostic::error(s.span, bm::dim_unknown(name)));
        }
    }
}

fn named_dims(params: &[Param]) -> Vec<&str> {
    params
        .iter()
        .filter_map(|p| p.token.contract()?.dims.as_ref())
        .flatten()
        .filter_map(|e| match e {
            Extent::Named(n) => Some(n.as_str()),
            Extent::Fixed(_) | Extent::Rest(_) => None,
        })
        .collect()
}

/// The grid, block and shared-memory expressions: parsed, their names
/// known (a dimension some tensor names, or an integer attribute), the
/// block taken from the cubin where it fixes one.
fn check_launch(
    kernel: &BinaryKernel,
    params: &[Param],
    required: Option<[u32; 3]>,
    at: Span,
    locate: Locate,
    diags: &mut Vec<Diagnostic>,
) -> ([Expr; 3], [Expr; 3], Expr) {
    let c = &kernel.config;
    let option = |what: &'static str| yaml_path!["binaries", kernel.entry, "kernels", &kernel.name, what];
    let dims = named_dims(params);
    let known = |n: &str| {
        dims.contains(&n)
            || params
                .iter()
                .any(|p| matches!(&p.token, Token::Attr { name, ty } if name == n && ty.int_range().is_some()))
    };
    // `item`: the entry's index in a list (`grid`, `block`), `None` for `shared`.
    let one = |e: &ExprConfig, what: &'static str, item: Option<usize>, diags: &mut Vec<Diagnostic>| -> Expr {
        let where_ = match item {
            Some(k) => locate.value(&[&option(what)[..], &yaml_path![k]].concat()),
            None => locate.value(&option(what)),
        };
        let where_ = where_.unwrap_or(at);
        let parsed = match e {
            ExprConfig::Int(n) if *n >= 0 => Ok(Expr::Int(*n)),
            ExprConfig::Int(_) => Err(bm::negative_launch(what)),
            ExprConfig::Text(t) => parse_expr(t).map_err(|e| bm::bad_expr(what, t, &e.to_string())),
        };
        match parsed {
            Ok(x) => {
                for n in x.names() {
                    if !known(n) {
                        diags.push(Diagnostic::error(where_, bm::unknown_name(what, n)).hint(bm::HINT_EXPR_NAMES));
                    }
                }
                x
            }
            Err(m) => {
                diags.push(Diagnostic::error(where_, m));
                Expr::Int(1)
            }
        }
    };
    let three = |list: &[ExprConfig], what: &'static str, diags: &mut Vec<Diagnostic>| -> [Expr; 3] {
        if list.is_empty() || list.len() > 3 {
            diags.push(Diagnostic::error(locate.key(&option(what)).unwrap_or(at), bm::launch_len(what, list.len())));
        }
        let mut out = [Expr::Int(1), Expr::Int(1), Expr::Int(1)];
        for (k, e) in list.iter().take(3).enumerate() {
            out[k] = one(e, what, Some(k), diags);
        }
        out
    };
    let grid = three(&c.grid, "grid", diags);
    let block = match (kernel.convention, &c.block, required) {
        (_, Some(b), Some(r)) => {
            let given = three(b, "block", diags);
            let fixed = r.map(|v| Expr::Int(v.into()));
            if given != fixed {
                diags.push(Diagnostic::error(
                    locate.key(&option("block")).unwrap_or(at),
                    bm::block_fixed(&kernel.file, r),
                ));
            }
            fixed
        }
        (_, None, Some(r)) => r.map(|v| Expr::Int(v.into())),
        (_, Some(b), None) => three(b, "block", diags),
        (Convention::CutilePythonV1 | Convention::CutilePythonV2, None, None) => {
            diags.push(Diagnostic::error(at, bm::cutile_block_unknown(&kernel.file)));
            [Expr::Int(1), Expr::Int(1), Expr::Int(1)]
        }
        (Convention::C, None, None) => {
            diags.push(Diagnostic::error(at, bm::c_block_missing()));
            [Expr::Int(1), Expr::Int(1), Expr::Int(1)]
        }
    };
    let shared = c.shared.as_ref().map_or(Expr::Int(0), |e| one(e, "shared", None, diags));
    (grid, block, shared)
}

fn describe_cutile(sig: &cutile::Signature, runtime: &[usize]) -> String {
    runtime
        .iter()
        .map(|&i| match &sig.params[i].param {
            cutile::Param::Array(a) => {
                let dims: Vec<String> = (0..a.ndim()).map(|k| format!("d{k}")).collect();
                format!("arg:{}[{}]", a.dtype.attr_type().map_or(a.dtype.code(), |t| t.as_str()), dims.join(","))
            }
            cutile::Param::Scalar(d) => format!("attr.p{i}:{}", d.attr_type().map_or(d.code(), |t| t.as_str())),
            cutile::Param::List(l) => {
                let a = &l.element;
                let dims: Vec<String> = (0..a.ndim()).map(|k| format!("d{k}")).collect();
                format!("arg:{}[{}]...", a.dtype.attr_type().map_or(a.dtype.code(), |t| t.as_str()), dims.join(","))
            }
            cutile::Param::Constant(_) | cutile::Param::Tuple(_) => "?".into(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}
