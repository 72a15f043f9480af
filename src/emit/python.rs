//! The view model of the Python module and its stub: names, signatures and
//! attribute conversions, resolved in Rust; `templates/module.py(i)` print it.

use std::collections::BTreeSet;

use crate::model::{
    Algorithm, AttrType, Const, ConstKind, ElementType, Extent, Function, Library, Param, Platform, RecordType,
    ScalarKind, TensorType, Token,
};

use super::cpp::Unit;
use super::names::{comment_text, py_str};
use super::runtime::{self, Section};
use crate::model::is_py_keyword;

/// The generated Python module and its stub.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyModuleView {
    pub(crate) name: String,
    /// Source files the module was generated from (safe for a docstring).
    pub(crate) sources: Vec<String>,
    /// `lib<name>.so`, as a Python literal.
    pub(crate) library_file: String,
    /// The import block (runtime::imports).
    pub(crate) imports: String,
    /// The runtime sections the module holds.
    pub(crate) sections: Vec<Section>,
    /// Their text, in order.
    pub(crate) runtime: Vec<&'static str>,
    /// A binary kernel takes a list of arrays (the stub's `Sequence`).
    pub(crate) needs_lists: bool,
    /// Libraries it links, as Python literals (preloaded from pip's
    /// `nvidia` packages when they are there).
    pub(crate) linked: Vec<String>,
    /// The library has several modules: its functions live in `modules`,
    /// one namespace each; else in `functions`, at the top level.
    pub(crate) namespaced: bool,
    pub(crate) modules: Vec<PyNamespaceView>,
    /// `"name", ...` for `__all__`.
    pub(crate) all: Vec<String>,
    /// (function literal, target literal) for `TARGETS`.
    pub(crate) targets: Vec<(String, String)>,
    /// (target literal, symbol literal, platform literal) for `register()`.
    pub(crate) handlers: Vec<(String, String, String)>,
    pub(crate) functions: Vec<PyFunctionView>,
    pub(crate) algorithms: Vec<PyAlgorithmView>,
    /// The exported symbol returning the XLA FFI API version the library
    /// was compiled against, as a literal.
    pub(crate) api_symbol: String,
    /// `_BEGEN_WIDE`: the dtypes JAX holds only in x64 mode, as a tuple of
    /// literals ([`py_wide_dtypes`]).
    pub(crate) wide: String,
    /// `_BEGEN_BUILD`: empty in the view; emit writes the hash of the
    /// module's text in its place.
    pub(crate) build: String,
}

/// One module of a library of several: a namespace built by a function of
/// its name, holding its own `TARGETS` and typed functions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyNamespaceView {
    pub(crate) py_name: String,
    /// Its docstring (safe text).
    pub(crate) doc: String,
    /// `__all__` of the namespace, as literals.
    pub(crate) all: Vec<String>,
    /// (function literal, target literal) for its `TARGETS`.
    pub(crate) targets: Vec<(String, String)>,
    pub(crate) functions: Vec<PyFunctionView>,
}

/// One typed Python function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyFunctionView {
    /// The function's name in Python (`_` appended to a Python keyword).
    pub(crate) py_name: String,
    /// The parameter list, e.g. `x, /, *, alpha, out`.
    pub(crate) signature: String,
    /// The same, annotated, for the stub.
    pub(crate) stub_signature: String,
    /// The stub's return annotation.
    pub(crate) stub_return: String,
    /// The docstring's first line.
    pub(crate) doc_first: String,
    /// Its further lines, indented (empty lines stay empty).
    pub(crate) doc_rest: Vec<String>,
    /// The body's statements after `register()`, one line each (nested
    /// lines carry their own indentation).
    pub(crate) body: Vec<String>,
    /// Its positional parameters (the inputs), in order.
    pub(crate) inputs: Vec<String>,
    /// Its keyword parameters: (what it is, its Python name), what being an
    /// attribute's name, `const:<NAME>` or `out`.
    pub(crate) keywords: Vec<(String, String)>,
    /// Whether the body calls `register()` first (an algorithm's does not:
    /// its implementations do).
    pub(crate) registers: bool,
}

/// An algorithm of the library: its Python function (top level) and its
/// row of the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyAlgorithmView {
    pub(crate) function: PyFunctionView,
    /// Its name, as a literal.
    pub(crate) name: String,
    /// `True` / `False`.
    pub(crate) fallback: String,
    /// Best first: one tuple expression per implementation
    /// (`_BegenImplementation(...)`).
    pub(crate) implementations: Vec<String>,
}

/// The Python expression converting attribute value `v` to what the C++
/// side decodes (the arg_spec system's table): each kind by its runtime
/// helper, with the row's dtype; a float passed as bits travels as its
/// wire type's bits, a complex number as [real, imag] of its wire type.
/// `where` is the Python literal the conversions quote in their errors,
/// e.g. `"f: attribute 'n' (int8)"`.
pub(crate) fn py_attr_conversion(ty: AttrType, v: &str, r#where: &str) -> String {
    let s = ty.facts();
    let wire = s.wire.facts().py_dtype;
    match s.kind {
        ScalarKind::Bool => format!("_begen_bool({v}, {where})"),
        ScalarKind::Int { .. } => format!("_begen_int({v}, {}, {where})", s.py_dtype),
        ScalarKind::Float => format!("_begen_float({v}, {}, {where})", s.py_dtype),
        ScalarKind::FloatBits => format!("_begen_half({v}, {}, {wire}, {where})", s.py_dtype),
        ScalarKind::Complex => format!("_begen_complex({v}, {wire}, {where})"),
    }
}

/// The Python expression packing a struct attribute given as a dict of its
/// members into the struct's bytes (a uint8 array): each leaf converted
/// as an attribute of its type, at its offset.
pub(crate) fn py_struct_conversion(ty: &crate::model::binary::StructType, v: &str, r#where: &str) -> String {
    let leaves = py_tuple(ty.leaves.iter().map(|l| {
        let path = py_tuple(l.path.iter().map(|n| py_str(n)));
        format!("({path}, {}, lambda x, w: {})", l.offset, py_attr_conversion(l.ty, "x", "w"))
    }));
    format!("_begen_struct({v}, {leaves}, {}, {where})", ty.size, r#where = r#where)
}

/// The Python expression converting a struct attribute of an annotated
/// kernel, given as a dict of its members, into the dict XLA decodes: each
/// member converted as an attribute of its type.
pub(crate) fn py_record_conversion(ty: &RecordType, v: &str, r#where: &str) -> String {
    let members = py_tuple(ty.members.iter().map(|m| {
        format!("({}, {}, lambda x, w: {})", py_str(&m.name), py_str(m.ty.as_str()), py_attr_conversion(m.ty, "x", "w"))
    }));
    format!("_begen_record({v}, {members}, {where})", r#where = r#where)
}

/// The Python expression converting an array attribute, given as a
/// sequence or a 1-D array, into the 1-D numpy array XLA gets (of the
/// element type [`super::cpp::array_wire`] names).
pub(crate) fn py_array_conversion(ty: AttrType, v: &str, r#where: &str) -> String {
    let (wire, _) = ty.facts().array_wire;
    format!(
        "_begen_array({v}, {}, {}, lambda x, w: {}, {where})",
        py_str(ty.as_str()),
        wire.facts().py_dtype,
        py_attr_conversion(ty, "x", "w"),
        r#where = r#where
    )
}

/// The Python type users pass for an attribute, for the stub.
pub(crate) fn py_attr_type(ty: AttrType) -> &'static str {
    ty.kind().py_type()
}

/// The Python type a const takes (`str`: a dtype name), for the stub.
fn py_const_type(k: &Const) -> &'static str {
    match k.kind {
        ConstKind::Type => "str",
        ConstKind::Value(ty) => ty.kind().py_type(),
    }
}

/// What a const is to `_begen_inputs`: `type`, `bool` or `int`.
fn py_const_kind(k: &Const) -> &'static str {
    match k.kind {
        ConstKind::Type => "type",
        ConstKind::Value(ty) => ty.kind().py_type(),
    }
}

/// A contract as the Python helpers read it: `(name, dtype, dims)`, dtype
/// `None`, a dtype name or a 1-tuple naming a type const, dims `None` or a
/// tuple of names and integers.
fn py_spec(name: &str, contract: Option<&TensorType>) -> String {
    let Some(c) = contract else { return format!("({}, None, None)", py_str(name)) };
    let dtype = match &c.dtype {
        ElementType::Dtype(t) => py_str(t.as_str()),
        ElementType::Param(k) => format!("({},)", py_str(k)),
    };
    let dims = match &c.dims {
        None => "None".to_string(),
        Some(dims) => py_tuple(dims.iter().map(|d| match d {
            Extent::Named(n) => py_str(n),
            Extent::Fixed(n) => n.to_string(),
        })),
    };
    format!("({}, {dtype}, {dims})", py_str(name))
}

/// `(a,)`, `(a, b)`, `()`.
fn py_tuple(items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.collect();
    match items.len() {
        1 => format!("({},)", items[0]),
        _ => format!("({})", items.join(", ")),
    }
}

/// Whether a function needs the typed path (contracts, constants, in-place
/// tensors or dimensions); an untyped one keeps the arg_spec system's call.
fn is_typed(f: &Function) -> bool {
    !f.consts.is_empty()
        || f.params
            .iter()
            .any(|p| p.token.contract().is_some() || matches!(p.token, Token::InOut(_) | Token::Dim { .. }))
}

/// A one-line description of a parameter's contract for docstrings.
fn contract_text(c: Option<&TensorType>) -> String {
    c.map_or_else(|| "any dtype and shape".to_string(), |c| c.to_string())
}

/// The conversion of an attribute value `v`, quoted by `where` in its errors.
type Convert<'a> = Box<dyn Fn(&str, &str) -> String + 'a>;

/// One keyword attribute of a Python function.
struct PyAttr<'a> {
    /// Its name in XLA's call.
    xla: &'a str,
    /// Its Python name.
    py: &'a str,
    /// Its stub type.
    stub: &'static str,
    /// Its type as error messages show it (`int8`, `float16[]`, a struct's name).
    shown: String,
    convert: Convert<'a>,
}

/// What the parts of one function's Python view are built from: its
/// parameters by role, its attributes, and what its signature makes optional.
struct FunctionParts<'a> {
    f: &'a Function,
    /// How error messages name it.
    shown: &'a str,
    inputs: Vec<&'a Param>,
    outputs: Vec<&'a Param>,
    /// The outputs `out=` describes.
    rets: Vec<&'a Param>,
    attrs: Vec<PyAttr<'a>>,
    /// The consts given as keywords (not fixed by an input's dtype).
    keyword_consts: Vec<&'a Const>,
    typed: bool,
    /// Every `ret` can be inferred from the inputs, so `out=` may be left out.
    out_optional: bool,
}

impl<'a> FunctionParts<'a> {
    fn of(f: &'a Function, shown: &'a str) -> FunctionParts<'a> {
        let inputs: Vec<&Param> = f.input_params().collect();
        let outputs: Vec<&Param> = f.output_params().collect();
        let rets: Vec<&Param> = outputs.iter().copied().filter(|p| matches!(p.token, Token::Ret(_))).collect();
        let typed = is_typed(f);
        let out_optional = typed && rets.iter().all(|p| inferable(f, &inputs, p));
        let mut parts = FunctionParts {
            f,
            shown,
            inputs,
            outputs,
            rets,
            attrs: f.params.iter().filter_map(py_attr).collect(),
            keyword_consts: Vec::new(),
            typed,
            out_optional,
        };
        parts.keyword_consts = f.consts.iter().filter(|k| !parts.fixed_by_input(&k.name)).collect();
        parts
    }

    /// Whether an input's dtype fixes type const `k`.
    fn fixed_by_input(&self, k: &str) -> bool {
        self.inputs.iter().any(|p| p.token.contract().is_some_and(|c| c.dtype == ElementType::Param(k.to_string())))
    }

    /// The inputs that are lists of arrays, and the others.
    fn lists_and_fixed(&self) -> (Vec<&'a Param>, Vec<&'a Param>) {
        self.inputs.iter().copied().partition(|p| p.token.is_list())
    }
}

/// A parameter's keyword attribute, if it is one.
fn py_attr(p: &Param) -> Option<PyAttr<'_>> {
    let (name, stub, convert): (&String, &'static str, Convert) = match &p.token {
        Token::Attr { name, ty } => {
            let ty = *ty;
            (name, py_attr_type(ty), Box::new(move |v, w| py_attr_conversion(ty, v, w)))
        }
        Token::Struct { name, ty } => (name, "dict", Box::new(move |v, w| py_struct_conversion(ty, v, w))),
        Token::Record { name, ty } => (name, "dict[str, Any]", Box::new(move |v, w| py_record_conversion(ty, v, w))),
        Token::Array { name, ty } => {
            let ty = *ty;
            (name, "ArrayLike", Box::new(move |v, w| py_array_conversion(ty, v, w)))
        }
        Token::Arg(_) | Token::Ret(_) | Token::InOut(_) | Token::List(_) | Token::Stream | Token::Dim { .. } => {
            return None;
        }
    };
    let shown = match &p.token {
        Token::Struct { ty, .. } => ty.name.clone(),
        other => other.to_string().rsplit(':').next().unwrap_or("").to_string(),
    };
    Some(PyAttr { xla: name, py: &p.py_name, stub, shown, convert })
}

/// The dimension names the contracts of `params` use.
fn named_dims<'a>(params: impl Iterator<Item = &'a Param>) -> BTreeSet<&'a str> {
    params
        .filter_map(|p| p.token.contract()?.dims.as_ref())
        .flatten()
        .filter_map(|d| match d {
            Extent::Named(n) => Some(n.as_str()),
            Extent::Fixed(_) => None,
        })
        .collect()
}

/// The integer attributes of `f` named like a dimension of its contracts:
/// each gives an output's dimension its value, and is checked against an
/// input's extent (a kernel reading `n` elements must get `n`).
fn size_attrs(f: &Function) -> Vec<&Param> {
    let dims = named_dims(f.input_params().chain(f.output_params()));
    f.attrs().filter(|(p, ty)| ty.is_integer() && dims.contains(p.name.as_str())).map(|(p, _)| p).collect()
}

/// Whether output `p`'s shape follows from the inputs' and the integer
/// attributes named like its dimensions: XLA cannot be told an untyped
/// `ret`, or one with a dimension nothing gives, without `out=`.
fn inferable(f: &Function, inputs: &[&Param], p: &Param) -> bool {
    let mut input_dims = named_dims(inputs.iter().copied());
    input_dims.extend(size_attrs(f).into_iter().map(|p| p.name.as_str()));
    p.token.contract().is_some_and(|c| {
        c.dims.as_ref().is_some_and(|dims| {
            dims.iter().all(|d| match d {
                Extent::Named(n) => input_dims.contains(n.as_str()),
                Extent::Fixed(_) => true,
            })
        })
    })
}

/// Resolves one typed Python function; `shown` names it in its error
/// messages (`module.function` in a library of several modules). Its key
/// in the `TARGETS` it reads (the module's, or the library's of a
/// one-module library) is its name (`name[T=float32,N=4]` per instance).
pub(crate) fn py_function_view(f: &Function, shown: &str) -> PyFunctionView {
    let parts = FunctionParts::of(f, shown);
    let (signature, stub_signature) = emit_signature(&parts);
    let mut hoisted = Vec::new();
    let call_args = emit_call_args(&parts, f.options.is_primitive().then_some(&mut hoisted));
    let mut body = if parts.typed { emit_typed_body(&parts, call_args) } else { emit_untyped_body(&parts, call_args) };
    let refusals = emit_refusals(&parts).len();
    body.splice(refusals..refusals, hoisted);
    let (doc_first, doc_rest) = emit_doc(&parts);
    PyFunctionView {
        py_name: f.py_name.clone(),
        signature,
        stub_signature,
        stub_return: emit_stub_return(&parts),
        doc_first,
        doc_rest,
        body,
        inputs: parts.inputs.iter().map(|p| p.py_name.clone()).collect(),
        keywords: emit_keywords(&parts),
        registers: true,
    }
}

/// The parameter list and the stub's annotated one: the inputs
/// (positional only), then the attributes, the keyword consts and `out`.
fn emit_signature(parts: &FunctionParts) -> (String, String) {
    let inputs = &parts.inputs;
    let mut params: Vec<String> = inputs.iter().map(|p| p.py_name.clone()).collect();
    let mut stub: Vec<String> = inputs
        .iter()
        .map(|p| {
            let ty = if p.token.is_list() { "Sequence[ArrayLike]" } else { "ArrayLike" };
            format!("{}: {ty}", p.py_name)
        })
        .collect();
    if !inputs.is_empty() {
        params.push("/".into());
        stub.push("/".into());
    }
    if !parts.attrs.is_empty() || !parts.rets.is_empty() || !parts.keyword_consts.is_empty() {
        params.push("*".into());
        stub.push("*".into());
    }
    for a in &parts.attrs {
        params.push(a.py.to_string());
        stub.push(format!("{}: {}", a.py, a.stub));
    }
    for k in &parts.keyword_consts {
        let default = match k.values.as_slice() {
            [only] => format!("={}", py_const_value(k, only)),
            _ => String::new(),
        };
        params.push(format!("{}{default}", k.py_name));
        stub.push(format!("{}: {}{default}", k.py_name, py_const_type(k)));
    }
    let struct_ty = match parts.rets.len() {
        1 => "jax.ShapeDtypeStruct".to_string(),
        n => format!("tuple[{}]", vec!["jax.ShapeDtypeStruct"; n].join(", ")),
    };
    if !parts.rets.is_empty() {
        if parts.out_optional {
            params.push("out=None".into());
            stub.push(format!("out: {struct_ty} | None = None"));
        } else {
            params.push("out".into());
            stub.push(format!("out: {struct_ty}"));
        }
    }
    (params.join(", "), stub.join(", "))
}

/// The stub's return annotation.
fn emit_stub_return(parts: &FunctionParts) -> String {
    match parts.outputs.len() {
        1 => "jax.Array".to_string(),
        n => format!("tuple[{}]", vec!["jax.Array"; n].join(", ")),
    }
}

/// XLA's operands and attributes: the arrays, then every list's elements
/// (the handler reads them as its remaining arguments), list by list, then
/// each attribute converted. With `hoisted`, each conversion is a statement
/// pushed there (run when the function is called) and the call names its
/// result: a primitive's FFI call runs later, when it is lowered.
fn emit_call_args(parts: &FunctionParts, mut hoisted: Option<&mut Vec<String>>) -> Vec<String> {
    let (lists, fixed) = parts.lists_and_fixed();
    let mut call_args: Vec<String> = fixed.iter().map(|p| p.py_name.clone()).collect();
    call_args.extend(lists.iter().map(|p| format!("*{}", p.py_name)));
    for a in &parts.attrs {
        let r#where = py_str(&format!("{}: attribute '{}' ({})", parts.shown, a.py, a.shown));
        let mut value = (a.convert)(a.py, &r#where);
        if let Some(hoisted) = hoisted.as_deref_mut() {
            let var = format!("_begen_v{}", hoisted.len());
            hoisted.push(format!("{var} = {value}"));
            value = var;
        }
        if is_py_keyword(a.xla) {
            call_args.push(format!("**{{{}: {value}}}", py_str(a.xla)));
        } else {
            call_args.push(format!("{}={value}", a.xla));
        }
    }
    call_args
}

/// `vmap_method=` of the call (with `has_side_effect=True` where set).
fn emit_vmap(f: &Function) -> String {
    let vmap = py_str(f.options.vmap_method.as_str());
    if f.options.has_side_effect { format!("{vmap}, has_side_effect=True") } else { vmap }
}

/// The statements before the call both bodies begin with: unsupported
/// attribute values refused.
fn emit_refusals(parts: &FunctionParts) -> Vec<String> {
    let f = parts.f;
    if f.options.unsupported.is_empty() {
        return Vec::new();
    }
    vec![format!("_begen_refuse({}, {})", py_str(parts.shown), unsupported_table(f))]
}

/// The body of a function without contracts: the x64 check and the
/// arg_spec system's call, `out=` as given.
fn emit_untyped_body(parts: &FunctionParts, call_args: Vec<String>) -> Vec<String> {
    let (f, shown) = (parts.f, parts.shown);
    let mut body = emit_refusals(parts);
    let arrays = py_tuple(parts.inputs.iter().map(|p| p.py_name.clone()));
    body.push(format!(
        "_begen_honest({}, {arrays}, {})",
        py_str(shown),
        py_tuple(parts.inputs.iter().map(|p| py_str(&p.py_name)))
    ));
    let out_expr = match parts.rets.len() {
        1 => "out".to_string(),
        n => {
            let msg = py_str(&format!("{shown}: out= takes a tuple of {n} jax.ShapeDtypeStruct, one per output"));
            body.push(format!("if not isinstance(out, (tuple, list)) or len(out) != {n}:"));
            body.push(format!("    raise TypeError({msg})"));
            "tuple(out)".to_string()
        }
    };
    body.push(format!(
        "return _jax.ffi.ffi_call(TARGETS[{}], {out_expr}, vmap_method={})({})",
        py_str(&f.name),
        emit_vmap(f),
        call_args.join(", ")
    ));
    body
}

/// The body of a typed function: inputs checked and consts resolved,
/// outputs checked or inferred, in-place inputs aliased, each list's hidden
/// words result dropped.
fn emit_typed_body(parts: &FunctionParts, call_args: Vec<String>) -> Vec<String> {
    let f = parts.f;
    let shown_lit = py_str(parts.shown);
    let (lists, fixed) = parts.lists_and_fixed();
    let mut body = emit_refusals(parts);
    let arrays = py_tuple(parts.inputs.iter().map(|p| p.py_name.clone()));
    let check = if lists.is_empty() { "_begen_inputs" } else { "_begen_list_inputs" };
    body.push(format!(
        "_begen_d, _begen_c = {check}({shown_lit}, {arrays}, {}, {})",
        emit_input_specs(parts),
        emit_const_specs(parts)
    ));
    for p in size_attrs(f) {
        body.push(format!("_begen_size({shown_lit}, _begen_d, {}, {})", py_str(&p.name), p.py_name));
    }
    if !parts.rets.is_empty() {
        let out_specs = py_tuple(parts.rets.iter().map(|p| py_spec(&p.name, p.token.contract())));
        body.push(format!("_begen_o = _begen_outputs({shown_lit}, out, {out_specs}, _begen_d, _begen_c)"));
    }
    let mut results = Vec::new();
    let mut aliases = Vec::new();
    let mut ret_k = 0;
    for (out_index, p) in parts.outputs.iter().enumerate() {
        match p.token {
            Token::InOut(_) => {
                let in_index = fixed.iter().position(|q| q.name == p.name).unwrap_or(0);
                aliases.push(format!("{in_index}: {out_index}"));
                results.push(format!("_begen_like({})", p.py_name));
            }
            _ => {
                results.push(format!("_begen_o[{ret_k}]"));
                ret_k += 1;
            }
        }
    }
    // Each list's words: a hidden result the handler fills, dropped here.
    let real = results.len();
    for p in &lists {
        let rank = p.token.contract().and_then(|c| c.dims.as_ref()).map_or(0, Vec::len);
        results.push(format!("_begen_words({}, {})", p.py_name, 1 + 2 * rank));
    }
    let result_expr = if results.len() == 1 { results[0].clone() } else { py_tuple(results.into_iter()) };
    let key = target_key(f);
    let aliases =
        if aliases.is_empty() { String::new() } else { format!(", input_output_aliases={{{}}}", aliases.join(", ")) };
    // A kernel that may be split calls through the runtime's
    // `_begen_ffi_call`: under auto mesh axes it is partitioned there.
    let ffi_call = if f.options.is_sharded() { "_begen_ffi_call(_begen_r, " } else { "_jax.ffi.ffi_call(" };
    let call = format!(
        "{ffi_call}TARGETS[{key}], {result_expr}{aliases}, vmap_method={})({})",
        emit_vmap(f),
        call_args.join(", ")
    );
    body.push(match (lists.is_empty(), real) {
        (true, _) => format!("return {call}"),
        (false, 1) => format!("return {call}[0]"),
        (false, n) => format!("return tuple({call}[:{n}])"),
    });
    body
}

/// The expression of a typed function's key in `TARGETS` (an instance's,
/// from the consts `_begen_inputs` resolved).
fn target_key(f: &Function) -> String {
    if f.consts.is_empty() { py_str(&f.name) } else { format!("_begen_key({}, _begen_c)", py_str(&f.name)) }
}

/// The inputs' contracts for `_begen_inputs`: a list's spec is its
/// elements', marked.
fn emit_input_specs(parts: &FunctionParts) -> String {
    py_tuple(parts.inputs.iter().map(|p| {
        let spec = py_spec(&p.py_name, p.token.contract());
        match spec.strip_suffix(')') {
            Some(open) if p.token.is_list() => format!("{open}, True)"),
            _ => spec,
        }
    }))
}

/// The consts for `_begen_inputs`: `(name, Python name, kind, the given
/// value or None, the instantiated values)`.
fn emit_const_specs(parts: &FunctionParts) -> String {
    py_tuple(parts.f.consts.iter().map(|k| {
        let given =
            if parts.keyword_consts.iter().any(|g| g.name == k.name) { k.py_name.clone() } else { "None".into() };
        format!(
            "({}, {}, {}, {given}, {})",
            py_str(&k.name),
            py_str(&k.py_name),
            py_str(py_const_kind(k)),
            py_tuple(k.values.iter().map(|v| py_str(v)))
        )
    }))
}

/// The docstring: its first line, then the arg_spec, each input's and
/// output's contract and each const (typed functions), side effects and
/// unsupported values.
fn emit_doc(parts: &FunctionParts) -> (String, Vec<String>) {
    let f = parts.f;
    let doc_first = format!(
        "Calls the {} kernel `{}` ({}:{}) through XLA FFI.",
        f.platform.as_str().to_uppercase(),
        f.name,
        comment_text(&f.file),
        f.line
    );
    let mut doc_rest = vec![String::new(), format!("    arg_spec: {}", comment_text(&f.spec_tokens().join(", ")))];
    if parts.typed {
        doc_rest.push(String::new());
        for p in &parts.inputs {
            let contract = comment_text(&contract_text(p.token.contract()));
            let line = match p.token {
                Token::InOut(_) => format!("{contract} (updated in place and returned)"),
                Token::List(_) => format!("a list or tuple of {contract} (inputs, at least one)"),
                _ => format!("{contract} (input)"),
            };
            doc_rest.push(format!("    {}: {line}", p.py_name));
        }
        for p in &parts.rets {
            let how = if parts.out_optional { "out= optional" } else { "give out=" };
            doc_rest.push(format!("    -> {}: {} ({how})", p.name, comment_text(&contract_text(p.token.contract()))));
        }
        for k in &f.consts {
            let how = if parts.fixed_by_input(&k.name) { "from the inputs' dtype" } else { "keyword" };
            doc_rest.push(format!("    {}: one of {} ({how})", k.py_name, comment_text(&k.values.join(", "))));
        }
    }
    if f.options.has_side_effect {
        doc_rest.push(String::new());
        doc_rest.push("    Has side effects: XLA keeps every call.".into());
    }
    for (attr, values) in &f.options.unsupported {
        doc_rest.push(format!("    Does not support {attr} = {}.", comment_text(&values.join(", "))));
    }
    (doc_first, doc_rest)
}

/// The keyword parameters: (what it is, its Python name), what being an
/// attribute's XLA name, `const:<NAME>` or `out`.
fn emit_keywords(parts: &FunctionParts) -> Vec<(String, String)> {
    let mut keywords: Vec<(String, String)> =
        parts.attrs.iter().map(|a| (a.xla.to_string(), a.py.to_string())).collect();
    keywords.extend(parts.keyword_consts.iter().map(|k| (format!("const:{}", k.name), k.py_name.clone())));
    if !parts.rets.is_empty() {
        keywords.push(("out".into(), "out".into()));
    }
    keywords
}

/// Each attribute with values the kernel does not support: (its XLA name,
/// its Python name, the values as Python literals).
fn unsupported(f: &Function) -> impl Iterator<Item = (&str, &str, &Vec<String>)> {
    f.options.unsupported.iter().map(|(attr, values)| {
        let py = f.params.iter().find(|p| p.name == *attr).map_or(attr.as_str(), |p| p.py_name.as_str());
        (attr.as_str(), py, values)
    })
}

/// `{"alpha": (alpha, (0.0,)), ...}`: each attribute's value with the
/// values the kernel does not support, for `_begen_refuse`.
fn unsupported_table(f: &Function) -> String {
    let items: Vec<String> = unsupported(f)
        .map(|(attr, py, values)| format!("{}: ({py}, {})", py_str(attr), py_tuple(values.iter().cloned())))
        .collect();
    format!("{{{}}}", items.join(", "))
}

/// The values a kernel does not support, without the arguments, for the
/// registry: `{"alpha": (0.0,)}`, by the attributes' Python names.
fn unsupported_values(f: &Function) -> String {
    let items: Vec<String> =
        unsupported(f).map(|(_, py, values)| format!("{}: {}", py_str(py), py_tuple(values.iter().cloned()))).collect();
    format!("{{{}}}", items.join(", "))
}

/// Makes `view` (of `f`) a `jax.custom_vjp` whose backward pass calls
/// `bwd`'s Python function: the body becomes the primal, a nested
/// function; the backward gets the primal inputs, one cotangent per output,
/// the attributes `bwd` declares (by name) and `out=` the inputs' structs.
pub(crate) fn with_vjp(view: &mut PyFunctionView, f: &Function, bwd: &Function, bwd_view: &PyFunctionView) {
    let inputs = view.inputs.clone();
    let n_out = f.outputs();
    let mut body = vec![format!("def _begen_primal({}):", inputs.join(", "))];
    body.extend(view.body.iter().map(|line| format!("    {line}")));
    let cts: Vec<String> = (0..n_out).map(|k| format!("_begen_ct{k}")).collect();
    let mut args: Vec<String> = inputs.clone();
    args.extend(cts.iter().cloned());
    let mut call: Vec<String> = args.clone();
    for (what, py) in &bwd_view.keywords {
        if what == "out" {
            continue;
        }
        if let Some((_, fwd_py)) = view.keywords.iter().find(|(w, _)| w == what) {
            call.push(format!("{py}={fwd_py}"));
        }
    }
    // The backward's outputs are the cotangents of the forward's inputs,
    // in order; `out=` describes its `ret`s.
    let mut structs = Vec::new();
    for (k, p) in bwd.params.iter().filter(|p| p.token.is_output()).enumerate() {
        if matches!(p.token, Token::Ret(_))
            && let Some(x) = inputs.get(k)
        {
            structs.push(format!("_begen_aval({x})"));
        }
    }
    if bwd_view.keywords.iter().any(|(w, _)| w == "out") {
        let out = if structs.len() == 1 { structs[0].clone() } else { py_tuple(structs.into_iter()) };
        call.push(format!("out={out}"));
    }
    body.push(format!("def _begen_backward({}):", args.join(", ")));
    body.push(format!("    return {}({})", bwd_view.py_name, call.join(", ")));
    body.push(format!(
        "return _begen_vjp(_begen_primal, _begen_backward, {}, {n_out})",
        py_tuple(inputs.iter().cloned())
    ));
    view.body = body;
    view.doc_rest.push(String::new());
    view.doc_rest.push(format!("    Differentiable: a jax.custom_vjp whose backward kernel is `{}`.", bwd.name));
}

/// The call of a related kernel's Python function (`g`, a tangent or
/// transpose kernel of the kernel `view` shows) inside a rule's closure:
/// `args` first, then the attributes `g` declares (by name, from the
/// kernel's own keywords) and `out=out`.
fn related_call(view: &PyFunctionView, g: &PyFunctionView, args: &[String]) -> String {
    let mut call: Vec<String> = args.to_vec();
    for (what, py) in &g.keywords {
        if what == "out" {
            call.push("out=out".into());
        } else if let Some((_, own)) = view.keywords.iter().find(|(w, _)| w == what) {
            call.push(format!("{py}={own}"));
        }
    }
    format!("{}({})", g.py_name, call.join(", "))
}

/// Makes `view` (of `f`, a typed kernel with `linear:` or `jvp:`, without
/// lists or in-place tensors: checked) bind the kernel's JAX primitive: its
/// FFI call becomes a closure (`_begen_raw`), and so does each tangent or
/// transpose kernel's call (`out` is the structs the rule passes).
pub(crate) fn with_primitive(
    view: &mut PyFunctionView,
    f: &Function,
    functions: &[Function],
    views: &[PyFunctionView],
) {
    let Some(last) = view.body.pop() else { return };
    let call = last.strip_prefix("return ").unwrap_or(&last).to_string();
    let inputs = view.inputs.clone();
    let find = |name: &str| functions.iter().position(|g| g.module == f.module && g.name == name);
    let mut body = std::mem::take(&mut view.body);
    body.push(format!("def _begen_raw({}):", inputs.join(", ")));
    body.push(format!("    return {call}"));
    let mut doc = Vec::new();
    let jvp = match f.options.jvp.as_deref().and_then(&find) {
        Some(k) => {
            let floats: Vec<String> = f
                .input_params()
                .enumerate()
                .filter(|(_, p)| f.float_inputs().any(|q| q.name == p.name))
                .map(|(i, _)| format!("_begen_t{i}"))
                .collect();
            let mut args = inputs.clone();
            args.extend(floats.iter().cloned());
            let mut params = args.clone();
            params.push("out".into());
            body.push(format!("def _begen_jvp({}):", params.join(", ")));
            body.push(format!("    return {}", related_call(view, &views[k], &args)));
            doc.push(format!("tangent kernel `{}`", functions[k].name));
            "_begen_jvp".to_string()
        }
        None => "None".to_string(),
    };
    let index = |name: &str| f.input_params().position(|p| p.name == name);
    let linear: Vec<String> = f.options.linear.iter().filter_map(|p| index(p)).map(|i| i.to_string()).collect();
    if !f.options.linear.is_empty() {
        doc.push(format!("linear in {}", comment_text(&f.options.linear.join(", "))));
    }
    let mut transposes = Vec::new();
    for (param, kernel) in &f.options.transpose {
        let (Some(i), Some(k)) = (index(param), find(kernel)) else { continue };
        let mut args: Vec<String> =
            inputs.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, x)| x.clone()).collect();
        args.extend((0..f.outputs()).map(|o| format!("_begen_ct{o}")));
        let mut params = args.clone();
        params.push("out".into());
        body.push(format!("def _begen_transpose{i}({}):", params.join(", ")));
        body.push(format!("    return {}", related_call(view, &views[k], &args)));
        transposes.push(format!("({i}, _begen_transpose{i})"));
        doc.push(format!("transpose of {} `{}`", comment_text(param), functions[k].name));
    }
    body.push(format!(
        "return _begen_bind(TARGETS[{}], _begen_raw, {}, _begen_o, {}, {jvp}, {}, {})",
        target_key(f),
        py_tuple(inputs.iter().cloned()),
        py_tuple(linear.into_iter()),
        py_tuple(transposes.into_iter()),
        py_tuple(f.input_params().map(|p| py_str(&p.name)))
    ));
    view.body = body;
    view.doc_rest.push(String::new());
    view.doc_rest.push(format!("    A JAX primitive (jvp, transpose, vmap): {}.", doc.join("; ")));
}

/// Makes `view` (of `f`, shown as `shown`) plan its call across devices
/// first: `_begen_r` is the kernel's rule (its name, its inputs' names,
/// each input's and output's dimension names, `shard`, `reduce`). A kernel
/// that may be split runs per shard under explicit mesh axes by calling
/// itself on each block (`_begen_shard_map`); one that may not only warns
/// where an input is split (it is gathered). Without shapes for every
/// array, nothing can be named: the body stays as it is.
pub(crate) fn with_sharding(view: &mut PyFunctionView, f: &Function, shown: &str) {
    if !is_typed(f) || !f.is_fully_shaped() {
        return;
    }
    let dims =
        |p: &Param| py_tuple(p.dim_names().unwrap_or_default().into_iter().map(|d| d.map_or("None".into(), py_str)));
    let names = |v: &[String]| py_tuple(v.iter().map(|d| py_str(d)));
    let rule = format!(
        "({}, {}, {}, {}, {}, {})",
        py_str(shown),
        py_tuple(f.input_params().map(|p| py_str(&p.name))),
        py_tuple(f.input_params().map(dims)),
        py_tuple(f.output_params().map(dims)),
        names(&f.options.shard),
        names(&f.options.reduce)
    );
    let arrays = py_tuple(view.inputs.iter().cloned());
    let mut head = vec![format!("_begen_r = {rule}")];
    if f.options.is_sharded() {
        let mut call: Vec<String> = view.inputs.clone();
        call.extend(view.keywords.iter().map(|(_, py)| format!("{py}={py}")));
        let mut params = view.inputs.clone();
        params.push("_begen_out".into());
        let call = call.into_iter().map(|a| if a == "out=out" { "out=_begen_out".into() } else { a });
        let out = if view.keywords.iter().any(|(what, _)| what == "out") { "out" } else { "None" };
        head.push(format!("_begen_p = _begen_split(_begen_r, {arrays})"));
        head.push("if _begen_p is not None:".into());
        head.push(format!(
            "    return _begen_shard_map(_begen_p, _begen_r, lambda {}: {}({}), {arrays}, {out})",
            params.join(", "),
            view.py_name,
            call.collect::<Vec<_>>().join(", ")
        ));
    } else {
        head.push(format!("_begen_split(_begen_r, {arrays})"));
    }
    view.body.splice(0..0, head);
    if f.options.is_sharded() {
        let mut said = Vec::new();
        if !f.options.shard.is_empty() {
            said.push(format!("split along {}", comment_text(&f.options.shard.join(", "))));
        }
        if !f.options.reduce.is_empty() {
            said.push(format!("partial sums over {} added up", comment_text(&f.options.reduce.join(", "))));
        }
        view.doc_rest.push(String::new());
        view.doc_rest.push(format!("    Runs per shard across devices: {}.", said.join("; ")));
    }
}

/// The Python function and registry row of an algorithm. Its signature is
/// its first implementation's; each implementation is called with its own
/// keyword names (they differ only where a name had to be changed).
fn py_algorithm_view(library: &Library, a: &Algorithm, views: &[(usize, PyFunctionView, String)]) -> PyAlgorithmView {
    let view_of = |k: usize| views.iter().find(|(i, _, _)| *i == k).expect("every function has a view");
    let (_, first, _) = view_of(a.implementations[0].function);
    let mut implementations = Vec::new();
    let mut doc_rest = vec![String::new()];
    for platform in [Platform::Cpu, Platform::Cuda] {
        let listed: Vec<String> = a
            .implementations
            .iter()
            .filter(|i| library.functions[i.function].platform == platform)
            .map(|i| format!("{} (priority {})", library.functions[i.function].name, i.priority))
            .collect();
        if !listed.is_empty() {
            doc_rest.push(format!("    {}: {}", platform.as_str(), comment_text(&listed.join(", "))));
        }
    }
    if !a.fallback {
        doc_rest.push("    A call the best implementation refuses is an error (no fallback).".into());
    }
    for i in &a.implementations {
        let f = &library.functions[i.function];
        let (_, view, path) = view_of(i.function);
        let renames: Vec<String> = first
            .keywords
            .iter()
            .filter_map(|(what, alg_py)| {
                let (_, own) = view.keywords.iter().find(|(w, _)| w == what)?;
                (own != alg_py).then(|| format!("{}: {}", py_str(alg_py), py_str(own)))
            })
            .collect();
        implementations.push(format!(
            "_BegenImplementation({}, {}, {}, {}, {}, {}, {{{}}})",
            py_str(&a.name),
            py_str(&shown_name(library, f)),
            py_str(f.platform.as_str()),
            i.priority,
            unsupported_values(f),
            path,
            renames.join(", ")
        ));
    }
    let mut kwargs: Vec<String> =
        first.keywords.iter().map(|(_, py)| format!("{}: {py}", py_str(py))).collect::<Vec<_>>();
    kwargs.dedup();
    let function = PyFunctionView {
        py_name: a.name.clone(),
        signature: first.signature.clone(),
        stub_signature: first.stub_signature.clone(),
        stub_return: first.stub_return.clone(),
        doc_first: format!(
            "Algorithm `{}`: calls its best implementation for the platform the call is lowered for.",
            a.name
        ),
        doc_rest,
        body: vec![format!(
            "return _begen_dispatch({}, {}, {{{}}})",
            py_str(&a.name),
            py_tuple(first.inputs.iter().cloned()),
            kwargs.join(", ")
        )],
        inputs: first.inputs.clone(),
        keywords: first.keywords.clone(),
        registers: false,
    };
    PyAlgorithmView {
        function,
        name: py_str(&a.name),
        fallback: if a.fallback { "True" } else { "False" }.into(),
        implementations,
    }
}

/// A function as the registry names it: `module.name` in a library of
/// modules, else its name.
fn shown_name(library: &Library, f: &Function) -> String {
    if library.namespaced { format!("{}.{}", f.module, f.name) } else { f.name.clone() }
}

/// A const value as a Python default: a number, `True`/`False`, a dtype name.
fn py_const_value(k: &Const, v: &str) -> String {
    match (k.kind, v) {
        (ConstKind::Type, _) => py_str(v),
        (_, "true") => "True".into(),
        (_, "false") => "False".into(),
        _ => v.to_string(),
    }
}

/// The platform name `jax.ffi.register_ffi_target` expects.
pub(crate) fn jax_platform(p: Platform) -> &'static str {
    match p {
        Platform::Cpu => "cpu",
        Platform::Cuda => "CUDA",
    }
}

/// Resolves the Python module.
pub(crate) fn py_module_view(library: &Library) -> PyModuleView {
    let sources: BTreeSet<String> = library.functions.iter().map(|f| comment_text(&f.file)).collect();
    let fs = &library.functions;
    // Every function's view, with the Python expression that reaches it
    // from the module's top level (for the algorithms' registry).
    let py_module = |f: &Function| library.modules.iter().find(|m| m.name == f.module).map(|m| m.py_name.clone());
    let mut views: Vec<(usize, PyFunctionView, String)> = fs
        .iter()
        .enumerate()
        .map(|(k, f)| {
            if library.namespaced {
                let m = py_module(f).unwrap_or_default();
                (k, py_function_view(f, &format!("{}.{}", f.module, f.name)), format!("{m}.{}", f.py_name))
            } else {
                (k, py_function_view(f, &f.name), f.py_name.clone())
            }
        })
        .collect();
    let plain: Vec<PyFunctionView> = views.iter().map(|(_, v, _)| v.clone()).collect();
    let mut has_vjp = false;
    for (k, view, _) in views.iter_mut() {
        let f = &fs[*k];
        let Some(bwd_name) = &f.options.vjp else { continue };
        if let Some(b) = fs.iter().position(|g| g.module == f.module && g.name == *bwd_name) {
            with_vjp(view, f, &fs[b], &plain[b]);
            has_vjp = true;
        }
    }
    let mut has_primitive = false;
    for (k, view, _) in views.iter_mut() {
        if fs[*k].options.is_primitive() {
            with_primitive(view, &fs[*k], fs, &plain);
            has_primitive = true;
        }
    }
    let mut has_sharding = false;
    for (k, view, _) in views.iter_mut() {
        let f = &fs[*k];
        let shown = if library.namespaced { format!("{}.{}", f.module, f.name) } else { f.name.clone() };
        let before = view.body.len();
        with_sharding(view, f, &shown);
        has_sharding |= view.body.len() != before;
    }
    let algorithms: Vec<PyAlgorithmView> =
        library.algorithms.iter().map(|a| py_algorithm_view(library, a, &views)).collect();
    let (functions, modules) = if library.namespaced {
        let modules: Vec<PyNamespaceView> = library
            .modules
            .iter()
            .map(|m| {
                let functions: Vec<PyFunctionView> = m.functions.iter().map(|&k| views[k].1.clone()).collect();
                PyNamespaceView {
                    py_name: m.py_name.clone(),
                    doc: comment_text(&format!(
                        "Module `{}` of {}: {} kernel(s).",
                        m.name,
                        library.name,
                        functions.len()
                    )),
                    all: all(functions.iter().map(|f| f.py_name.as_str())),
                    targets: m
                        .functions
                        .iter()
                        .flat_map(|&k| targets(&fs[k]))
                        .map(|(key, target)| (py_str(&key), py_str(&target)))
                        .collect(),
                    functions,
                }
            })
            .collect();
        (Vec::new(), modules)
    } else {
        (views.into_iter().map(|(_, v, _)| v).collect(), Vec::new())
    };
    let names = functions
        .iter()
        .map(|f: &PyFunctionView| f.py_name.as_str())
        .chain(modules.iter().map(|m| m.py_name.as_str()))
        .chain(algorithms.iter().map(|a| a.function.py_name.as_str()));
    let sections = runtime::sections(module_sections(library, has_vjp, has_primitive, has_sharding));
    PyModuleView {
        name: library.name.clone(),
        sources: sources.into_iter().collect(),
        library_file: py_str(&library.plan.outputs.library),
        imports: runtime::imports(&sections, needs_ml_dtypes(library)),
        runtime: sections.iter().map(|s| s.body()).collect(),
        sections,
        needs_lists: any_param(library, |t| t.is_list()),
        namespaced: library.namespaced,
        linked: library.plan.link.preload.iter().map(|l| py_str(l)).collect(),
        all: all_top(names),
        targets: fs
            .iter()
            .flat_map(|f| {
                targets(f).into_iter().map(move |(key, target)| {
                    let key = if library.namespaced { format!("{}.{key}", f.module) } else { key };
                    (key, target)
                })
            })
            .map(|(key, target)| (py_str(&key), py_str(&target)))
            .collect(),
        handlers: fs
            .iter()
            .flat_map(|f| {
                handlers(f)
                    .into_iter()
                    .map(move |(target, handler)| (py_str(&target), py_str(&handler), py_str(jax_platform(f.platform))))
            })
            .collect(),
        functions,
        modules,
        algorithms,
        api_symbol: py_str(&super::cpp::ffi_api_symbol(&library.name)),
        wide: py_wide_dtypes(),
        build: String::new(),
    }
}

/// The dtypes JAX holds only with `jax_enable_x64` (the rows' `x64`), as a
/// Python tuple of their names: a numpy input of one is refused when x64
/// is off (`_begen_honest`).
pub(crate) fn py_wide_dtypes() -> String {
    py_tuple(AttrType::ALL.into_iter().filter(|t| t.facts().x64).map(|t| py_str(t.as_str())))
}

/// Whether a parameter of a function of `library` has a token `pred` holds for.
fn any_param(library: &Library, pred: impl Fn(&Token) -> bool) -> bool {
    library.functions.iter().any(|f| f.params.iter().any(|p| pred(&p.token)))
}

/// The runtime sections the functions' bodies, the algorithms' table and
/// the template call into (`Core` and what these require come with them).
fn module_sections(library: &Library, has_vjp: bool, has_primitive: bool, has_sharding: bool) -> Vec<Section> {
    let algorithms = !library.algorithms.is_empty();
    let wanted = [
        (
            Section::Scalars,
            any_param(library, |t| {
                matches!(t, Token::Attr { .. } | Token::Struct { .. } | Token::Record { .. } | Token::Array { .. })
            }),
        ),
        (Section::Structs, any_param(library, |t| matches!(t, Token::Struct { .. }))),
        (Section::Records, any_param(library, |t| matches!(t, Token::Record { .. }))),
        (Section::Arrays, any_param(library, |t| matches!(t, Token::Array { .. }))),
        (Section::Contracts, library.functions.iter().any(is_typed)),
        (Section::Lists, any_param(library, |t| t.is_list())),
        (Section::Unsupported, algorithms || library.functions.iter().any(|f| !f.options.unsupported.is_empty())),
        (Section::Vjp, has_vjp),
        (Section::Primitives, has_primitive),
        (Section::Sharding, has_sharding),
        (Section::Algorithms, algorithms),
        (Section::Registry, true),
        (Section::Linked, !library.plan.link.preload.is_empty()),
        (Section::Modules, library.namespaced),
    ];
    wanted.into_iter().filter(|(_, used)| *used).map(|(s, _)| s).collect()
}

/// A conversion names `ml_dtypes` (an attribute, member or element of a
/// type whose dtype, or whose wire type's, is one of ml_dtypes').
fn needs_ml_dtypes(library: &Library) -> bool {
    let names = |ty: &AttrType| [*ty, ty.facts().wire].iter().any(|t| t.facts().py_dtype.starts_with("_ml_dtypes."));
    any_param(library, |t| match t {
        Token::Attr { ty, .. } | Token::Array { ty, .. } => names(ty),
        Token::Struct { ty, .. } => ty.leaves.iter().any(|l| names(&l.ty)),
        Token::Record { ty, .. } => ty.members.iter().any(|m| names(&m.ty)),
        Token::Arg(_) | Token::Ret(_) | Token::InOut(_) | Token::List(_) | Token::Stream | Token::Dim { .. } => false,
    })
}

/// A function's `TARGETS` entries: its name, or one key per instance.
fn targets(f: &Function) -> Vec<(String, String)> {
    Unit::all(f).iter().map(|u| (u.key().to_string(), u.target().to_string())).collect()
}

/// A function's (target, handler symbol) pairs.
fn handlers(f: &Function) -> Vec<(String, String)> {
    Unit::all(f).iter().map(|u| (u.target().to_string(), u.handler().to_string())).collect()
}

/// `__all__` of a module namespace: its own names, then `names`, as literals.
fn all<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    ["register", "TARGETS", "LIBRARY", "export_safety_checks"].into_iter().chain(names).map(py_str).collect()
}

/// `__all__` of the library's module: `all`, with the registry and
/// `deserialize`.
fn all_top<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    all(["registry", "deserialize"].into_iter().chain(names))
}
