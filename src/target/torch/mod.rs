//! The `torch` target: from the checked library, one PyTorch op per kernel,
//! registered through PyTorch's stable ABI, beside the JAX module.
//!
//! It emits three files:
//!
//! - the registration TU (`gen/<NAME>.torch.cc`, host C++ against the
//!   installed torch's headers, `-DTORCH_TARGET_VERSION` for the floor): the
//!   schema of every op (`STABLE_TORCH_LIBRARY`), and per op a function that
//!   checks its tensors against the kernel's contract (dtype, rank, extents,
//!   device, layout, contiguity; messages name the kernel and the parameter,
//!   in the JAX side's words), computes the `dim.` values, allocates the
//!   outputs, picks a template kernel's instance, and calls the kernel's
//!   trampoline (`begen/abi.h`). It is linked with the same wrapper objects
//!   as `lib<NAME>.so` into `lib<NAME>_torch.so`, which links no libtorch.
//! - `<NAME>_torch.py`: loads that library, registers each op's fake
//!   (output sizes from the input sizes and attributes only) and, for a
//!   kernel with `vjp:`, its autograd formula over the backward kernel's op
//!   (with `linear:`/`transpose:` or a linear `jvp:` kernel, over the
//!   transpose kernels' ops: `autograd`), its `torch.func.vmap` rule
//!   (`vmap`); one typed function per op, which refuses forward-mode AD by
//!   name (torch.library has no forward-mode registration for custom ops).
//! - `<NAME>_torch.pyi`: the typed functions' signatures.
//!
//! A kernel the target cannot express yet is left out with a reason
//! ([`Skipped`]); the build reports each as a warning naming it.

mod algorithms;
mod autograd;
pub(crate) mod build;
mod meta;
mod tune;
mod vmap;

pub(crate) use build::Torch;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::model::{AttrType, ConstKind, ElementType, Extent, Function, Library, Param, Platform, ScalarKind, Token};
use crate::model::{is_py_keyword, is_py_reserved};

/// The oldest PyTorch whose stable ABI the registration TU is compiled for
/// (`TORCH_TARGET_VERSION`): major and minor.
pub(crate) const FLOOR: (u64, u64) = (2, 11);

/// `-DTORCH_TARGET_VERSION=...` for [`FLOOR`]: major in the top byte,
/// minor in the next (torch/csrc/stable/version.h).
pub(crate) fn target_version_define() -> String {
    format!("-DTORCH_TARGET_VERSION=0x{:016x}ULL", (FLOOR.0 << 56) | (FLOOR.1 << 48))
}

/// A kernel the torch target leaves out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Skipped {
    pub(crate) function: String,
    pub(crate) file: String,
    pub(crate) line: usize,
    pub(crate) reason: String,
}

/// The warning that names a kernel the torch target leaves out, at the
/// kernel's line (None where its source is not in the map).
pub(crate) fn skipped_warning(s: &Skipped, sources: &crate::source::SourceMap) -> Option<crate::diag::Diagnostic> {
    let message = format!("the torch target leaves out kernel '{}': {}", s.function, s.reason);
    let (id, f) = sources.files().find(|(_, f)| f.name == s.file)?;
    let range = f.line_range(s.line);
    Some(crate::diag::Diagnostic::warning(crate::source::Span::new(id, range.start, range.end), message))
}

/// What the target emits for one library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TorchFiles {
    /// The torch namespace of the library's ops.
    pub(crate) namespace: String,
    /// The registration TU.
    pub(crate) cc: String,
    /// `<NAME>_torch.py`.
    pub(crate) py: String,
    /// `<NAME>_torch.pyi`.
    pub(crate) pyi: String,
    /// The kernels left out.
    pub(crate) skipped: Vec<Skipped>,
}

/// The torch namespace of a library: its FFI prefix, `.` written `__`.
pub(crate) fn namespace(library: &Library) -> String {
    library.prefix.replace('.', "__")
}

/// Where one dimension's value comes from in an op.
#[derive(Debug, Clone)]
enum DimSource {
    /// Tensor input `input` (index among the op's tensors), axis.
    Input(usize, usize),
    /// An integer attribute of that name.
    Attr(String),
    /// Output `out` (index among the op's caller-given outputs), axis.
    Out(usize, usize),
}

/// One kernel as the torch op sees it.
struct Op<'a> {
    f: &'a Function,
    /// The op's name in the namespace.
    name: String,
    /// The typed function's name in `<NAME>_torch.py`: the kernel's Python
    /// name, or in a library of modules `module__name` (the module's
    /// namespace object, `m.module.name`, holds it under its own name).
    def_name: String,
    /// The typed function's path from the module: `name`, or `module.name`
    /// in a library of modules (the JAX module's path too).
    call: String,
    /// Tensor inputs (`arg`, `inout`) in signature order.
    inputs: Vec<&'a Param>,
    /// Outputs the op allocates (`ret`), in signature order.
    rets: Vec<&'a Param>,
    /// Outputs the caller gives (`ret`, in signature order), written in
    /// place: every output of a kernel where one output's dtype or shape
    /// is not known from the inputs and attributes (the out= op).
    outs: Vec<&'a Param>,
    /// The Python (and schema) names of `outs`: their own where free, with
    /// `_` appended while a Python keyword or another parameter's name.
    out_names: Vec<String>,
    /// Scalar attributes, in signature order.
    attrs: Vec<&'a Param>,
    /// Where each named dimension is first read from.
    dims: BTreeMap<String, DimSource>,
    /// The defines of a source tuned over them (their names): keyword-only
    /// integers of the schema that choose the candidate, which the typed
    /// function passes (never its own keywords: `config=` names them).
    defines: Vec<String>,
}

/// How an attribute crosses the op: its schema type, the C++ type the boxed
/// function receives it as, and the Python type of the typed function's
/// keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct AttrSchema {
    schema: &'static str,
    cpp: &'static str,
    py: &'static str,
}

/// The schema of an attribute parameter (a scalar, a string or a 1-D
/// array), or why it has none.
fn attr_schema(p: &Param) -> Result<AttrSchema, String> {
    let scalar = |ty: AttrType, list: bool| -> Result<AttrSchema, String> {
        let one = |schema, cpp, py| Ok(AttrSchema { schema, cpp, py });
        match (ty.kind(), list) {
            (ScalarKind::Bool, false) => one("bool", "bool", "bool"),
            (ScalarKind::Int { .. }, false) => one("int", "int64_t", "int"),
            (ScalarKind::Float, false) => one("float", "double", "float"),
            (ScalarKind::Bool, true) => one("bool[]", "std::vector<bool>", "list[bool]"),
            (ScalarKind::Int { .. }, true) => one("int[]", "std::vector<int64_t>", "list[int]"),
            (ScalarKind::Float, true) => one("float[]", "std::vector<double>", "list[float]"),
            (ScalarKind::FloatBits | ScalarKind::Complex, false) => Err(format!("attributes of type {ty}")),
            (ScalarKind::FloatBits | ScalarKind::Complex, true) => Err(format!("array attributes of type {ty}[]")),
        }
    };
    match &p.token {
        Token::Attr { ty, .. } => scalar(*ty, false),
        Token::Array { ty, .. } => scalar(*ty, true),
        Token::Str { .. } => Ok(AttrSchema { schema: "str", cpp: "std::string", py: "str" }),
        other => Err(format!("parameter '{}' ({other})", p.name)),
    }
}

/// The element type an array attribute's kernel reads (a bool as a byte:
/// a `std::vector<bool>` has no contiguous elements to hand over).
fn array_element(ty: AttrType) -> &'static str {
    if ty.kind() == ScalarKind::Bool { "uint8_t" } else { ty.cpp_type() }
}

/// torch's `ScalarType` enumerator, begen's XLA code and torch's Python
/// dtype name of an element type.
fn torch_dtype(ty: AttrType) -> (&'static str, &'static str, &'static str) {
    match ty {
        AttrType::Bool => ("Bool", "kPred", "bool"),
        AttrType::Int8 => ("Char", "kS8", "int8"),
        AttrType::UInt8 => ("Byte", "kU8", "uint8"),
        AttrType::Int16 => ("Short", "kS16", "int16"),
        AttrType::UInt16 => ("UInt16", "kU16", "uint16"),
        AttrType::Int32 => ("Int", "kS32", "int32"),
        AttrType::UInt32 => ("UInt32", "kU32", "uint32"),
        AttrType::Int64 => ("Long", "kS64", "int64"),
        AttrType::UInt64 => ("UInt64", "kU64", "uint64"),
        AttrType::Float32 => ("Float", "kF32", "float32"),
        AttrType::Float64 => ("Double", "kF64", "float64"),
        AttrType::Complex64 => ("ComplexFloat", "kC64", "complex64"),
        AttrType::Complex128 => ("ComplexDouble", "kC128", "complex128"),
        AttrType::Float16 => ("Half", "kF16", "float16"),
        AttrType::BFloat16 => ("BFloat16", "kBF16", "bfloat16"),
    }
}

/// A C++ string literal of checked text (identifiers, dtype names, digits).
fn lit(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A Python string literal.
fn pylit(s: &str) -> String {
    format!("{s:?}")
}

impl<'a> Op<'a> {
    /// The op of `f`, or why the torch target leaves it out.
    fn of(library: &Library, f: &'a Function) -> Result<Op<'a>, String> {
        if f.binary.is_some() {
            return Err("a precompiled binary kernel".into());
        }
        if f.native.is_some() {
            return Err("a kernel with XLA FFI's own signature".into());
        }
        if f.rets_like.is_some() {
            return Err("variadic outputs (`ret:like`)".into());
        }
        // A source tuned over its defines: each candidate is an instance
        // (a TU of its own), chosen in the op by the define values the
        // typed function passes (`config=`, the tables, the default).
        // Its derivative's ops are passed the forward call's define values
        // (`shared_consts`), as the JAX side runs the forward's candidate.
        let defines: Vec<String> = f.tuned_defines().into_iter().map(String::from).collect();
        // The rules from `linear:`/`jvp:` pass the caller's `config` on the
        // JAX side, a plain `vjp:` the forward's candidate; the torch ops
        // follow the latter only.
        if !defines.is_empty()
            && (f.options.jvp.is_some() || !f.options.linear.is_empty() || !f.options.groups.is_empty())
        {
            return Err("a kernel tuned over its defines whose derivative is `linear:` or `jvp:` (not yet)".into());
        }
        let mut inputs = Vec::new();
        let mut rets = Vec::new();
        let mut attrs = Vec::new();
        // Why the caller must give the outputs (out=), if they must.
        let mut needs_out = false;
        for p in &f.params {
            match &p.token {
                Token::Arg(c) | Token::Ret(c) | Token::InOut(c) => {
                    // An input without a contract (or without a shape) is
                    // checked for what is known: its dtype, if any, and its
                    // placement; an output without them is the caller's.
                    let dims = c.as_ref().and_then(|c| c.dims.as_ref());
                    if dims.is_some_and(|d| d.iter().any(|d| matches!(d, Extent::Rest(_)))) {
                        return Err(format!("parameter '{}' has leading dimensions (`...`)", p.name));
                    }
                    match p.token {
                        Token::Ret(_) => {
                            needs_out |= dims.is_none();
                            rets.push(p);
                        }
                        _ => inputs.push(p),
                    }
                }
                Token::Attr { .. } | Token::Array { .. } | Token::Str { .. } => {
                    attr_schema(p)?;
                    attrs.push(p);
                }
                Token::Dim { .. } | Token::Stream => {}
                other => return Err(format!("parameter '{}' ({other})", p.name)),
            }
        }
        if inputs.is_empty() {
            return Err("no tensor input (the op would not know its outputs' device)".into());
        }
        for k in &f.consts {
            match k.kind {
                ConstKind::Type => {
                    let typed = |p: &&Param| matches!(p.token.contract().map(|c| &c.dtype), Some(ElementType::Param(n)) if *n == k.name);
                    if !inputs.iter().any(typed) {
                        return Err(format!("template type '{}' is not the dtype of any input", k.name));
                    }
                }
                ConstKind::Value(t) if matches!(t.kind(), ScalarKind::Bool | ScalarKind::Int { .. }) => {}
                ConstKind::Value(t) => return Err(format!("template constant '{}' of type {t}", k.name)),
            }
        }
        let mut dims = BTreeMap::new();
        for (i, p) in inputs.iter().enumerate() {
            for (axis, d) in p.token.contract().and_then(|c| c.dims.as_ref()).into_iter().flatten().enumerate() {
                if let Extent::Named(n) = d {
                    dims.entry(n.clone()).or_insert(DimSource::Input(i, axis));
                }
            }
        }
        for p in &attrs {
            if let Token::Attr { name, ty } = &p.token
                && ty.is_integer()
                && !dims.contains_key(name)
            {
                dims.insert(name.clone(), DimSource::Attr(name.clone()));
            }
        }
        for p in &rets {
            for d in p.token.contract().and_then(|c| c.dims.as_ref()).into_iter().flatten() {
                if let Extent::Named(n) = d
                    && !dims.contains_key(n)
                {
                    needs_out = true;
                }
            }
            if known_dtype(f, p).is_none() {
                needs_out = true;
            }
        }
        // The out= op: every output the caller's, its unknown dimensions
        // read from the first output that has them.
        let outs = if needs_out { std::mem::take(&mut rets) } else { Vec::new() };
        for (k, p) in outs.iter().enumerate() {
            for (axis, d) in p.token.contract().and_then(|c| c.dims.as_ref()).into_iter().flatten().enumerate() {
                if let Extent::Named(n) = d {
                    dims.entry(n.clone()).or_insert(DimSource::Out(k, axis));
                }
            }
        }
        for p in &f.params {
            if let Token::Dim { name, .. } = &p.token
                && !dims.contains_key(name)
            {
                return Err(format!("dimension '{name}' is not known from the inputs or the outputs"));
            }
        }
        let mut name =
            if library.namespaced { format!("{}__{}", f.module.replace('.', "__"), f.name) } else { f.py_name.clone() };
        if !outs.is_empty() {
            name.push_str("_out");
        }
        let mut taken: Vec<String> = inputs.iter().chain(&attrs).map(|p| p.py_name.to_string()).collect();
        taken.extend(f.consts.iter().map(|k| k.py_name.clone()));
        if let Some(d) = defines.iter().find(|d| taken.contains(d) || is_py_keyword(d)) {
            return Err(format!("its define '{d}' has the name of a parameter or a Python keyword"));
        }
        taken.extend(defines.iter().cloned());
        let mut out_names = Vec::new();
        for p in &outs {
            let mut n = if p.name.starts_with("_begen") { p.name.trim_start_matches('_') } else { &p.name }.to_string();
            while is_py_keyword(&n) || is_py_reserved(&n) || FUNCTIONALIZE_RESERVED.contains(&&*n) || taken.contains(&n)
            {
                n.push('_');
            }
            taken.push(n.clone());
            out_names.push(n);
        }
        let (def_name, call) = if library.namespaced {
            (format!("{}__{}", f.module.replace('.', "__"), f.py_name), format!("{}.{}", f.module, f.py_name))
        } else {
            (f.py_name.clone(), f.py_name.clone())
        };
        Ok(Op { f, name, def_name, call, inputs, rets, outs, out_names, attrs, dims, defines })
    }

    /// The schema: tensors positional, attributes and value constants keyword-only.
    fn schema(&self) -> String {
        let mut args: Vec<String> = Vec::new();
        let mut alias = b'a';
        for p in &self.inputs {
            if matches!(p.token, Token::InOut(_)) {
                args.push(format!("Tensor({}!) {}", alias as char, self.sname(p)));
                alias += 1;
            } else {
                args.push(format!("Tensor {}", self.sname(p)));
            }
        }
        let mut kw = Vec::new();
        for p in &self.attrs {
            let schema = attr_schema(p).expect("checked in Op::of").schema;
            match p.default.as_deref().and_then(schema_default) {
                Some(d) => kw.push(format!("{schema} {}={d}", self.sname(p))),
                None => kw.push(format!("{schema} {}", self.sname(p))),
            }
        }
        for k in &self.f.consts {
            if let ConstKind::Value(t) = k.kind {
                let schema = if t.kind() == ScalarKind::Bool { "bool" } else { "int" };
                kw.push(format!("{schema} {}", k.py_name));
            }
        }
        for d in &self.defines {
            kw.push(format!("int {d}"));
        }
        // The caller's outputs: keyword-only, each its own alias set (torch's
        // convention for out= arguments), the op returning nothing.
        for p in &self.outs {
            kw.push(format!("Tensor({}!) {}", alias as char, self.tname(p)));
            alias += 1;
        }
        if !kw.is_empty() {
            args.push("*".into());
            args.extend(kw);
        }
        let rets = match self.rets.len() {
            0 => "()".to_string(),
            1 => "Tensor".to_string(),
            n => format!("({})", vec!["Tensor"; n].join(", ")),
        };
        format!("{}({}) -> {rets}", self.name, args.join(", "))
    }

    /// The dtype of a tensor parameter as a C++ expression of the op
    /// function (`ScalarType::Float`, or the dtype of the first input of
    /// that template type); `ScalarType::Undefined` where it is not known.
    fn dtype_cpp(&self, p: &Param) -> String {
        match known_dtype(self.f, p) {
            Some(ElementType::Dtype(t)) => format!("ScalarType::{}", torch_dtype(*t).0),
            Some(ElementType::Param(n)) => format!("begen_T_{n}"),
            None => "ScalarType::Undefined".into(),
        }
    }

    /// The check of one tensor against what its contract says: all of it
    /// (`check_tensor`), or its dtype where it says only that, or nothing
    /// but its placement where it has none (`check_loose`); an output the
    /// caller gives is also on the first input's device.
    fn check_cpp(&self, p: &Param, device: &str, out: &mut String) {
        let fname = lit(&self.f.name);
        let device = if device == "cuda" { "Cuda" } else { "Cpu" };
        let rank = p.token.contract().and_then(|c| c.dims.as_ref()).map(Vec::len);
        // The whole contract, or what it says (-1: no rank).
        let (check, rank) = match (known_dtype(self.f, p), rank) {
            (Some(_), Some(rank)) => ("check_tensor", rank.to_string()),
            (_, rank) => ("check_loose", rank.map_or(-1, |r| r as i64).to_string()),
        };
        let _ = writeln!(
            out,
            "  begen::torch_rt::{check}({fname}, {}, {}, {}, {rank}, begen::torch_rt::Device::k{device});",
            lit(self.tname(p)),
            cpp_name(p),
            self.dtype_cpp(p),
        );
        if self.outs.iter().any(|q| std::ptr::eq(*q, p)) {
            let _ = writeln!(
                out,
                "  begen::torch_rt::same_device({fname}, {}, {}, {}, {});",
                lit(self.tname(p)),
                cpp_name(p),
                lit(&self.inputs[0].py_name),
                cpp_name(self.inputs[0])
            );
        }
    }

    /// The dimension's value as a C++ expression.
    fn dim_cpp(&self, name: &str) -> String {
        format!("begen_d_{name}")
    }

    /// The function that checks, allocates and calls the kernel.
    fn cpp(&self, out: &mut String) {
        let f = self.f;
        let fname = lit(&f.name);
        let mut params = Vec::new();
        for p in &self.inputs {
            params.push(format!("Tensor {}", cpp_name(p)));
        }
        for p in &self.attrs {
            params.push(format!("{} {}", attr_schema(p).expect("checked in Op::of").cpp, cpp_name(p)));
        }
        for k in &f.consts {
            if let ConstKind::Value(t) = k.kind {
                let cpp = if t.kind() == ScalarKind::Bool { "bool" } else { "int64_t" };
                params.push(format!("{cpp} begen_k_{}", k.name));
            }
        }
        for d in &self.defines {
            params.push(format!("int64_t begen_def_{d}"));
        }
        for p in &self.outs {
            params.push(format!("Tensor {}", cpp_name(p)));
        }
        let ret = match self.rets.len() {
            0 => "void".to_string(),
            1 => "Tensor".to_string(),
            n => format!("std::tuple<{}>", vec!["Tensor"; n].join(", ")),
        };
        let _ = writeln!(out, "// {}: {}", f.name, f.spec_tokens().join(", "));
        let _ = writeln!(out, "{ret} begen_op_{}({}) {{", self.name, params.join(", "));
        let device = if f.platform == Platform::Cuda { "cuda" } else { "cpu" };
        // Template types: the first input of each gives its dtype.
        for k in f.consts.iter().filter(|k| k.kind == ConstKind::Type) {
            let first = self
                .inputs
                .iter()
                .find(|p| matches!(p.token.contract().map(|c| &c.dtype), Some(ElementType::Param(n)) if *n == k.name))
                .expect("checked: an input has the type");
            let _ = writeln!(out, "  const ScalarType begen_T_{} = {}.scalar_type();", k.name, cpp_name(first));
        }
        for p in self.inputs.iter().chain(&self.outs) {
            self.check_cpp(p, device, out);
        }
        // Dimensions: read from their first input (or caller's output),
        // checked everywhere else. A dimension only the contract names (no
        // kernel argument, no other tensor) is read and not used:
        // `[[maybe_unused]]` keeps the op's C++ warning-free.
        for (name, src) in &self.dims {
            let (t, axis) = match src {
                DimSource::Input(i, axis) => (self.inputs[*i], axis),
                DimSource::Out(k, axis) => (self.outs[*k], axis),
                DimSource::Attr(a) => {
                    let _ = writeln!(
                        out,
                        "  [[maybe_unused]] const int64_t {} = begen::torch_rt::size_attr({fname}, {}, {});",
                        self.dim_cpp(name),
                        lit(a),
                        cpp_name_of(a)
                    );
                    continue;
                }
            };
            let _ = writeln!(
                out,
                "  [[maybe_unused]] const int64_t {} = {}.size({axis});",
                self.dim_cpp(name),
                cpp_name(t)
            );
        }
        let tensors = self.inputs.iter().enumerate().map(|(i, p)| (DimSource::Input(i, 0), p));
        let outs = self.outs.iter().enumerate().map(|(k, p)| (DimSource::Out(k, 0), p));
        for (at, p) in tensors.chain(outs) {
            for (axis, d) in p.token.contract().and_then(|c| c.dims.as_ref()).into_iter().flatten().enumerate() {
                match d {
                    Extent::Named(n) => {
                        let here = match at {
                            DimSource::Input(i, _) => DimSource::Input(i, axis),
                            DimSource::Out(k, _) => DimSource::Out(k, axis),
                            DimSource::Attr(_) => unreachable!("tensors only"),
                        };
                        let (first, first_axis) = match (self.dims.get(n), &here) {
                            (Some(DimSource::Input(j, a)), DimSource::Input(i, b)) if (j, a) == (i, b) => continue,
                            (Some(DimSource::Out(j, a)), DimSource::Out(i, b)) if (j, a) == (i, b) => continue,
                            (Some(DimSource::Input(j, a)), _) => (self.inputs[*j].py_name.to_string(), *a as i64),
                            (Some(DimSource::Out(j, a)), _) => (self.out_names[*j].clone(), *a as i64),
                            _ => (n.clone(), -1),
                        };
                        let _ = writeln!(
                            out,
                            "  begen::torch_rt::dim_eq({fname}, {}, {}, {}, {first_axis}, {}, {}, {axis});",
                            lit(n),
                            self.dim_cpp(n),
                            lit(&first),
                            lit(self.tname(p)),
                            cpp_name(p)
                        );
                    }
                    Extent::Fixed(v) => {
                        let _ = writeln!(
                            out,
                            "  begen::torch_rt::fixed_eq({fname}, {}, {}, {axis}, {v});",
                            lit(self.tname(p)),
                            cpp_name(p)
                        );
                    }
                    Extent::Rest(_) => {}
                }
            }
        }
        // Integer attributes named like a dimension of the inputs agree with it.
        for p in &self.attrs {
            if let Token::Attr { name, ty } = &p.token
                && ty.is_integer()
                && matches!(self.dims.get(name), Some(DimSource::Input(..)))
            {
                let _ = writeln!(
                    out,
                    "  begen::torch_rt::attr_dim_eq({fname}, {}, {}, {});",
                    lit(name),
                    cpp_name(p),
                    self.dim_cpp(name)
                );
            }
        }
        // Attributes converted to the kernel's types, range-checked; a
        // string or an array handed over as its elements (`begen::ArrayArg`,
        // valid for the call), as the JAX side's handler hands XLA's.
        for p in &self.attrs {
            match &p.token {
                Token::Attr { ty, .. } => {
                    let _ = writeln!(
                        out,
                        "  const {} begen_a_{} = begen::torch_rt::attr<{}>({fname}, {}, {});",
                        ty.cpp_type(),
                        p.name,
                        ty.cpp_type(),
                        lit(&p.py_name),
                        cpp_name(p)
                    );
                }
                Token::Array { ty, .. } => {
                    let element = array_element(*ty);
                    let _ = writeln!(
                        out,
                        "  const std::vector<{element}> begen_v_{} = begen::torch_rt::attr_array<{element}>({fname}, {}, {});",
                        p.name,
                        lit(&p.py_name),
                        cpp_name(p)
                    );
                    let _ = writeln!(
                        out,
                        "  const begen::ArrayArg begen_a_{0}{{begen_v_{0}.data(), static_cast<int64_t>(begen_v_{0}.size())}};",
                        p.name
                    );
                }
                _ => {
                    let _ = writeln!(
                        out,
                        "  const begen::ArrayArg begen_a_{}{{{1}.data(), static_cast<int64_t>({1}.size())}};",
                        p.name,
                        cpp_name(p)
                    );
                }
            }
        }
        for p in &f.params {
            if let Token::Dim { name, ty } = &p.token {
                let _ = writeln!(
                    out,
                    "  const {} begen_m_{} = begen::torch_rt::dim_value<{}>({fname}, {}, {}, {});",
                    ty.cpp_type(),
                    p.name,
                    ty.cpp_type(),
                    lit(name),
                    lit(&p.name),
                    self.dim_cpp(name)
                );
            }
        }
        let first = cpp_name(self.inputs[0]);
        for p in &self.rets {
            let dims: Vec<String> = p
                .token
                .contract()
                .and_then(|c| c.dims.as_ref())
                .into_iter()
                .flatten()
                .map(|d| match d {
                    Extent::Named(n) => self.dim_cpp(n),
                    Extent::Fixed(v) => format!("int64_t{{{v}}}"),
                    Extent::Rest(_) => unreachable!("refused"),
                })
                .collect();
            let _ = writeln!(
                out,
                "  Tensor {} = begen::torch_rt::alloc({first}, {{{}}}, {});",
                cpp_name(p),
                dims.join(", "),
                self.dtype_cpp(p)
            );
        }
        let stream = if f.params.iter().any(|p| matches!(p.token, Token::Stream)) {
            let _ = writeln!(out, "  const int64_t begen_stream = begen::torch_rt::stream_of({first});");
            "begen_stream"
        } else {
            "0"
        };
        // Tensors in binding order: inputs (`arg`), then outputs (`ret`, `inout`).
        let mut tensors = Vec::new();
        for p in f.params.iter().filter(|p| matches!(p.token, Token::Arg(_))) {
            tensors.push(p);
        }
        for p in f.params.iter().filter(|p| matches!(p.token, Token::Ret(_) | Token::InOut(_))) {
            tensors.push(p);
        }
        let packed: Vec<String> = tensors
            .iter()
            .map(|p| {
                // A dtype the contract does not give is the tensor's own
                // (checked to be one begen kernels take).
                let code = match known_dtype(f, p) {
                    Some(ElementType::Dtype(t)) => format!("begen::xla_type::{}", torch_dtype(*t).1),
                    Some(ElementType::Param(_)) => format!("begen::torch_rt::xla_code({})", self.dtype_cpp(p)),
                    None => format!("begen::torch_rt::xla_code({}.scalar_type())", cpp_name(p)),
                };
                format!("begen::torch_rt::tensor_arg({}, {code})", cpp_name(p))
            })
            .collect();
        let _ = writeln!(out, "  const begen::TensorArg begen_t[] = {{{}}};", packed.join(", "));
        let attrs: Vec<String> = f
            .params
            .iter()
            .filter_map(|p| match &p.token {
                Token::Attr { .. } | Token::Array { .. } | Token::Str { .. } => Some(format!("&begen_a_{}", p.name)),
                Token::Dim { .. } => Some(format!("&begen_m_{}", p.name)),
                _ => None,
            })
            .collect();
        let attrs_arg = if attrs.is_empty() {
            "nullptr".to_string()
        } else {
            let _ = writeln!(out, "  const void* const begen_a[] = {{{}}};", attrs.join(", "));
            "begen_a".to_string()
        };
        // The instance: a plain kernel's own trampoline, or the template's
        // instance chosen by its types (the inputs' dtypes) and values.
        if f.instances.is_empty() {
            let _ =
                writeln!(out, "  begen::torch_rt::call({fname}, {}(begen_t, {attrs_arg}, {stream}));", f.trampoline);
        } else {
            let _ = writeln!(out, "  const char* begen_failure = nullptr;");
            let mut first_branch = true;
            for inst in &f.instances {
                let conds: Vec<String> = f
                    .consts
                    .iter()
                    .zip(&inst.values)
                    .map(|(k, v)| match k.kind {
                        ConstKind::Type => {
                            let t = AttrType::parse(v).expect("checked dtype name");
                            format!("begen_T_{} == ScalarType::{}", k.name, torch_dtype(t).0)
                        }
                        ConstKind::Value(t) if t.kind() == ScalarKind::Bool => {
                            format!("begen_k_{} == {}", k.name, if v == "true" { "true" } else { "false" })
                        }
                        ConstKind::Value(_) => format!("begen_k_{} == int64_t{{{v}}}", k.name),
                    })
                    .chain(inst.defines.iter().map(|(n, v)| format!("begen_def_{n} == int64_t{{{v}}}")))
                    .collect();
                let _ = writeln!(
                    out,
                    "  {}if ({}) {{\n    begen_failure = {}(begen_t, {attrs_arg}, {stream});",
                    if first_branch { "" } else { "} else " },
                    conds.join(" && "),
                    inst.trampoline
                );
                first_branch = false;
            }
            // No instance: the JAX side's words (`dtype X is not
            // instantiated; T is one of ...`), for the first const that
            // has no instance of its value.
            let _ = writeln!(out, "  }} else {{");
            for k in &f.consts {
                let allowed = lit(&k.values.join(", "));
                let given = match k.kind {
                    ConstKind::Type => {
                        format!("std::string(\"dtype \") + begen::torch_rt::dtype_name(begen_T_{})", k.name)
                    }
                    ConstKind::Value(t) if t.kind() == ScalarKind::Bool => {
                        format!("std::string({}) + (begen_k_{} ? \"=true\" : \"=false\")", lit(&k.py_name), k.name)
                    }
                    ConstKind::Value(_) => {
                        format!("std::string({}) + \"=\" + std::to_string(begen_k_{})", lit(&k.py_name), k.name)
                    }
                };
                let values: Vec<String> = k
                    .values
                    .iter()
                    .map(|v| match k.kind {
                        ConstKind::Type => format!(
                            "begen_T_{} == ScalarType::{}",
                            k.name,
                            torch_dtype(AttrType::parse(v).expect("checked dtype name")).0
                        ),
                        ConstKind::Value(t) if t.kind() == ScalarKind::Bool => {
                            format!("begen_k_{} == {}", k.name, if v == "true" { "true" } else { "false" })
                        }
                        ConstKind::Value(_) => format!("begen_k_{} == int64_t{{{v}}}", k.name),
                    })
                    .collect();
                let _ = writeln!(
                    out,
                    "    if (!({})) begen::torch_rt::fail({fname}, {given} + \" is not instantiated; {} is one of \" + {allowed});",
                    values.join(" || "),
                    k.py_name
                );
            }
            if !self.defines.is_empty() {
                // Defines no candidate was built with (begen.yaml `where:`).
                let shown: Vec<String> = self
                    .defines
                    .iter()
                    .map(|d| format!("std::string({}) + std::to_string(begen_def_{d})", lit(&format!("{d}="))))
                    .collect();
                let _ = writeln!(
                    out,
                    "    begen::torch_rt::fail({fname}, {} + \" is not a built candidate of its defines\");",
                    shown.join(" + \", \" + ")
                );
            }
            let _ = writeln!(
                out,
                "    begen::torch_rt::fail({fname}, std::string(\"this combination of template constants is not instantiated\"));"
            );
            let _ = writeln!(out, "  }}\n  begen::torch_rt::call({fname}, begen_failure);");
        }
        match self.rets.len() {
            0 => {}
            1 => {
                let _ = writeln!(out, "  return {};", cpp_name(self.rets[0]));
            }
            _ => {
                let names: Vec<String> = self.rets.iter().map(|p| cpp_name(p)).collect();
                let _ = writeln!(out, "  return std::make_tuple({});", names.join(", "));
            }
        }
        let _ = writeln!(out, "}}\n");
    }

    /// The fake (meta) function: the outputs' sizes from the inputs' sizes
    /// and the attributes only.
    fn py_fake(&self, ns: &str, out: &mut String) {
        let sig = keyword_after(self.fake_params(), self.out_names.iter().cloned());
        let _ = writeln!(out, "@_torch.library.register_fake({})", pylit(&format!("{ns}::{}", self.name)));
        let _ = writeln!(out, "def _fake_{}({sig}):", self.name);
        if self.rets.is_empty() {
            // The caller's outputs on the inputs' device: a tensor on
            // another (the meta device) dispatches here, not to the kernel.
            let first = self.sname(self.inputs[0]);
            for o in &self.out_names {
                let message = format!(
                    "{}: output '{o}' is on {{{o}.device}}, but the inputs are on {{{first}.device}}",
                    self.f.name
                );
                let _ = writeln!(
                    out,
                    "    if {o}.device != {first}.device:\n        raise ValueError(f{})",
                    pylit(&message)
                );
            }
            let _ = writeln!(out, "    return None\n\n");
            return;
        }
        let mut outs = Vec::new();
        for p in &self.rets {
            let dims: Vec<String> = p
                .token
                .contract()
                .and_then(|c| c.dims.as_ref())
                .into_iter()
                .flatten()
                .map(|d| match d {
                    Extent::Named(n) => match &self.dims[n] {
                        DimSource::Input(i, axis) => format!("{}.shape[{axis}]", self.inputs[*i].py_name),
                        DimSource::Attr(a) => py_name_of_attr(self, a),
                        DimSource::Out(k, axis) => format!("{}.shape[{axis}]", self.out_names[*k]),
                    },
                    Extent::Fixed(v) => v.to_string(),
                    Extent::Rest(_) => unreachable!("refused"),
                })
                .collect();
            let shape = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
            let dtype = match p.token.contract().map(|c| &c.dtype) {
                Some(ElementType::Dtype(t)) => format!("_torch.{}", torch_dtype(*t).2),
                Some(ElementType::Param(n)) => {
                    let first = self
                        .inputs
                        .iter()
                        .find(|q| matches!(q.token.contract().map(|c| &c.dtype), Some(ElementType::Param(m)) if m == n))
                        .expect("checked");
                    format!("{}.dtype", first.py_name)
                }
                None => unreachable!("refused"),
            };
            outs.push(format!("{}.new_empty({shape}, dtype={dtype})", self.inputs[0].py_name));
        }
        if outs.len() == 1 {
            let _ = writeln!(out, "    return {}\n\n", outs[0]);
        } else {
            let _ = writeln!(out, "    return ({})\n\n", outs.join(", "));
        }
    }

    /// The parameters of the public function over the op (with `typed`,
    /// annotated for the stub).
    fn py_params(&self, typed: bool) -> String {
        self.params_named(typed, |p| p.py_name.to_string())
    }

    /// The fake's parameters: named as in the schema ([`Op::sname`]), with
    /// the defines that choose a candidate.
    fn fake_params(&self) -> String {
        keyword_after(self.params_named(false, |p| self.sname(p)), self.defines.iter().cloned())
    }

    /// [`Op::py_params`] with each input and attribute named by `name`
    /// where not `typed`.
    fn params_named(&self, typed: bool, name: impl Fn(&Param) -> String) -> String {
        let mut args: Vec<String> =
            self.inputs.iter().map(|p| if typed { format!("{}: _torch.Tensor", p.py_name) } else { name(p) }).collect();
        let mut kw = Vec::new();
        for p in &self.attrs {
            let t = attr_schema(p).expect("checked in Op::of").py;
            let default = p.default.as_deref().map(|d| format!(" = {d}")).unwrap_or_default();
            kw.push(if typed { format!("{}: {t}{default}", p.py_name) } else { format!("{}{default}", name(p)) });
        }
        for k in &self.f.consts {
            if let ConstKind::Value(t) = k.kind {
                let ty = if t.kind() == ScalarKind::Bool { "bool" } else { "int" };
                kw.push(if typed { format!("{}: {ty}", k.py_name) } else { k.py_name.clone() });
            }
        }
        if typed && !args.is_empty() {
            args.push("/".into());
        }
        if !kw.is_empty() {
            args.push("*".into());
            args.extend(kw);
        }
        args.join(", ")
    }

    /// The value constants (`const.TILE`): keyword-only in the schema.
    fn value_consts(&self) -> impl Iterator<Item = &crate::model::Const> {
        self.f.consts.iter().filter(|k| matches!(k.kind, ConstKind::Value(_)))
    }

    /// The keyword arguments of a call of the op from the public function.
    fn py_call_kw(&self) -> Vec<String> {
        let mut kw = Vec::new();
        for p in &self.attrs {
            kw.push(format!("{}={}", self.sname(p), p.py_name));
        }
        for k in &self.f.consts {
            if let ConstKind::Value(_) = k.kind {
                kw.push(format!("{0}={0}", k.py_name));
            }
        }
        kw
    }

    /// Which outputs the public function returns: all but the residuals.
    fn returned(&self) -> Vec<usize> {
        self.rets
            .iter()
            .enumerate()
            .filter(|(_, p)| !self.f.options.residuals.iter().any(|r| *r == *p.name))
            .map(|(k, _)| k)
            .collect()
    }

    /// The public typed function.
    fn py_function(&self, ns: &str, tuned: Option<&tune::TorchTune>, out: &mut String) {
        let f = self.f;
        let mut sig = self.py_params(false);
        if let Some(t) = tuned {
            // The tuned consts are chosen when not given.
            let parts: Vec<String> = sig
                .split(", ")
                .map(|a| if t.consts.iter().any(|(_, kw)| kw == a) { format!("{a}=None") } else { a.to_string() })
                .collect();
            sig = parts.join(", ");
            sig.push_str(", config=None");
        }
        if !self.outs.is_empty() {
            sig = keyword_after(sig, ["out".to_string()]);
        }
        let _ = writeln!(out, "def {}({sig}):", self.def_name);
        let _ = writeln!(
            out,
            "    \"\"\"The {} kernel `{}` ({}:{}) as the op torch.ops.{}.{}.\n\n    arg_spec: {}\n    \"\"\"",
            if f.platform == Platform::Cuda { "CUDA" } else { "CPU" },
            f.name,
            f.file,
            f.line,
            ns,
            self.name,
            f.spec_tokens().join(", ")
        );
        // Inputs read-only are made contiguous (a copy only when they are
        // not); a tensor updated in place must be contiguous itself (the op
        // says so), since a copy would not be updated.
        let args: Vec<String> = self
            .inputs
            .iter()
            .map(|p| {
                if matches!(p.token, Token::InOut(_)) {
                    p.py_name.to_string()
                } else {
                    format!("{}.contiguous()", p.py_name)
                }
            })
            .collect();
        let mut all = args;
        all.extend(self.py_call_kw());
        if let Some(t) = tuned {
            // The key dims' extents: a contract's from its first input, an
            // untyped input's from where begen.yaml's key says (`x[0]`).
            let mut dims: Vec<String> = self
                .dims
                .iter()
                .filter_map(|(n, src)| match src {
                    DimSource::Input(i, axis) => Some(format!("{n:?}: {}.shape[{axis}]", self.inputs[*i].py_name)),
                    DimSource::Attr(_) | DimSource::Out(..) => None,
                })
                .collect();
            for (n, i, axis) in &t.key_at {
                if !self.dims.contains_key(n) {
                    dims.push(format!("{n:?}: {}.shape[{axis}]", self.inputs[*i].py_name));
                }
            }
            let dtypes: Vec<String> = self.inputs.iter().map(|p| format!("str({}.dtype)[6:]", p.py_name)).collect();
            let given: Vec<String> = t.consts.iter().map(|(n, kw)| format!("{n:?}: {kw}")).collect();
            let _ = writeln!(
                out,
                "    _begen_c = _begen_tune_choose({:?}, _begen_tune_static({{{}}}), ({},), config, {{{}}})",
                t.key,
                dims.join(", "),
                dtypes.join(", "),
                given.join(", ")
            );
            for (n, kw) in &t.consts {
                for a in all.iter_mut() {
                    if *a == format!("{kw}={kw}") {
                        *a = format!("{kw}=_begen_c[{n:?}]");
                    }
                }
            }
            // The defines are the op's keywords only: the choice gives them.
            for d in &self.defines {
                all.push(format!("{d}=_begen_c[{d:?}]"));
            }
        }
        let call = format!("_ops.{}({})", self.name, all.join(", "));
        // Forward mode would give zero tangents: refused by name.
        let tensors: Vec<&str> = self.inputs.iter().map(|p| &*p.py_name).collect();
        let _ = writeln!(out, "    _begen_no_forward_ad({}, {})", pylit(&f.name), tensors.join(", "));
        let inouts: Vec<&str> =
            self.inputs.iter().filter(|p| matches!(p.token, Token::InOut(_))).map(|p| &*p.py_name).collect();
        if !self.outs.is_empty() {
            // The caller's outputs: tensors written in place, or specs
            // allocated on the first input's device; no autograd (refused
            // by name), the outputs returned.
            let names: Vec<String> = self.outs.iter().map(|p| format!("_begen_out_{}", p.name)).collect();
            let labels: Vec<String> = self.out_names.iter().map(|n| pylit(n)).collect();
            let _ = writeln!(
                out,
                "    {}, = _begen_outs({}, ({},), out, {})",
                names.join(", "),
                pylit(&f.name),
                labels.join(", "),
                self.inputs[0].py_name
            );
            let _ = writeln!(
                out,
                "    _begen_no_autograd({}, ({}), ({}))",
                pylit(&f.name),
                tensors.iter().map(|t| format!("{t}, ")).collect::<String>(),
                names.iter().map(|t| format!("{t}, ")).collect::<String>()
            );
            let kw: Vec<String> = self.out_names.iter().zip(&names).map(|(o, n)| format!("{o}={n}")).collect();
            let call = format!("_ops.{}({}, {})", self.name, all.join(", "), kw.join(", "));
            let _ = writeln!(out, "    {call}");
            if names.len() == 1 {
                let _ = writeln!(out, "    return {}", names[0]);
            } else {
                let _ = writeln!(out, "    return ({})", names.join(", "));
            }
        } else if self.rets.is_empty() {
            let _ = writeln!(out, "    {call}");
            match inouts.len() {
                1 => {
                    let _ = writeln!(out, "    return {}", inouts[0]);
                }
                _ => {
                    let _ = writeln!(out, "    return ({},)", inouts.join(", "));
                }
            }
        } else if self.rets.len() == 1 {
            let _ = writeln!(out, "    return {call}");
        } else {
            let _ = writeln!(out, "    _begen_o = {call}");
            let kept = self.returned();
            if kept.len() == 1 {
                let _ = writeln!(out, "    return _begen_o[{}]", kept[0]);
            } else {
                let items: Vec<String> = kept.iter().map(|k| format!("_begen_o[{k}]")).collect();
                let _ = writeln!(out, "    return ({})", items.join(", "));
            }
        }
        let _ = writeln!(out, "\n");
    }

    /// The stub of the public function.
    fn pyi(&self, out: &mut String) {
        let (params, ret) = self.pyi_parts();
        let _ = writeln!(out, "def {}({params}) -> {ret}: ...", self.def_name);
    }

    /// The public function's annotated parameters and return type.
    fn pyi_parts(&self) -> (String, String) {
        let ret = if !self.outs.is_empty() {
            let n = self.outs.len();
            if n == 1 { "_torch.Tensor".to_string() } else { format!("tuple[{}]", vec!["_torch.Tensor"; n].join(", ")) }
        } else if self.rets.is_empty() {
            let n = self.inputs.iter().filter(|p| matches!(p.token, Token::InOut(_))).count();
            if n == 1 { "_torch.Tensor".to_string() } else { format!("tuple[{}]", vec!["_torch.Tensor"; n].join(", ")) }
        } else {
            let n = self.returned().len();
            if n == 1 { "_torch.Tensor".to_string() } else { format!("tuple[{}]", vec!["_torch.Tensor"; n].join(", ")) }
        };
        let mut params = self.py_params(true);
        if !self.outs.is_empty() {
            let n = self.outs.len();
            let one = "_torch.Tensor | _OutSpec";
            let ty = if n == 1 { one.to_string() } else { format!("tuple[{}]", vec![one; n].join(", ")) };
            params = keyword_after(params, [format!("out: {ty}")]);
        }
        (params, ret)
    }
}

/// The dtype a tensor parameter's contract gives: a dtype, or a type
/// constant of the kernel; None without a contract (or naming no constant).
fn known_dtype<'a>(f: &Function, p: &'a Param) -> Option<&'a ElementType> {
    match p.token.contract().map(|c| &c.dtype) {
        Some(ElementType::Param(n)) if !f.consts.iter().any(|k| k.kind == ConstKind::Type && k.name == *n) => None,
        other => other,
    }
}

/// Keywords torch's functionalization of an op that mutates a tensor
/// (`auto_functionalized`, under `torch.compile` and AOT) takes itself, so
/// such an op's own argument of that name would collide with it.
const FUNCTIONALIZE_RESERVED: [&str; 2] = ["mode", "_mutable_op"];

impl Op<'_> {
    /// Whether the op writes a tensor it is given (`inout`, out=).
    fn mutates(&self) -> bool {
        !self.outs.is_empty() || self.inputs.iter().any(|p| matches!(p.token, Token::InOut(_)))
    }

    /// An input's or attribute's name in the schema and the fake: its
    /// Python name, with `_` appended in an op that mutates a tensor where
    /// functionalization takes that keyword itself ([`FUNCTIONALIZE_RESERVED`]).
    /// The typed function keeps the Python name.
    fn sname(&self, p: &Param) -> String {
        if self.mutates() && FUNCTIONALIZE_RESERVED.contains(&&*p.py_name) {
            format!("{}_", p.py_name)
        } else {
            p.py_name.to_string()
        }
    }

    /// The name of a tensor parameter in messages, the schema and Python:
    /// an input's Python name, or an out= op's output's.
    fn tname<'p>(&'p self, p: &'p Param) -> &'p str {
        match self.outs.iter().position(|q| std::ptr::eq(*q, p)) {
            Some(k) => &self.out_names[k],
            None => &p.py_name,
        }
    }
}

/// The C++ name of a tensor or attribute parameter in the op function.
fn cpp_name(p: &Param) -> String {
    format!("begen_p_{}", p.name)
}

/// The C++ name of the attribute parameter named `name`.
fn cpp_name_of(name: &str) -> String {
    format!("begen_p_{name}")
}

/// The Python name of the attribute named `name` of an op.
fn py_name_of_attr(op: &Op<'_>, name: &str) -> String {
    op.attrs
        .iter()
        .find(|p| p.token.attr_name() == Some(name))
        .map_or_else(|| name.to_string(), |p| p.py_name.to_string())
}

/// A Python parameter list with keyword-only parameters added at its end.
fn keyword_after(sig: String, kw: impl IntoIterator<Item = String>) -> String {
    let kw: Vec<String> = kw.into_iter().collect();
    if kw.is_empty() {
        return sig;
    }
    let star = sig.split(", ").any(|a| a == "*");
    let mut parts: Vec<String> = if sig.is_empty() { Vec::new() } else { vec![sig] };
    if !star {
        parts.push("*".into());
    }
    parts.extend(kw);
    parts.join(", ")
}

/// A Python literal default as a schema default, when it is one the schema
/// parser reads: a number or a boolean.
fn schema_default(d: &str) -> Option<String> {
    match d {
        "True" | "False" => Some(d.to_string()),
        _ if d.parse::<f64>().is_ok() => Some(d.to_string()),
        _ => None,
    }
}

/// The keyword arguments that hand `bwd` the value constants and the
/// defines it shares by name with `fwd` (saved in the context): the
/// backward runs the instance or candidate the forward ran, as on the JAX
/// side.
fn shared_consts(fwd: &Op<'_>, bwd: &Op<'_>) -> Vec<String> {
    bwd.value_consts()
        .filter_map(|k| {
            fwd.value_consts().find(|q| q.name == k.name).map(|q| format!("{}=ctx.{}", k.py_name, q.py_name))
        })
        .chain(bwd.defines.iter().filter(|d| fwd.defines.contains(d)).map(|d| format!("{d}=ctx._begen_def_{d}")))
        .collect()
}

/// `setup_context`'s lines that keep the forward call's define values (its
/// keyword-only inputs) for the backward pass.
fn save_defines(fwd: &Op<'_>, out: &mut String) {
    for d in &fwd.defines {
        let _ = writeln!(out, "    ctx._begen_def_{d} = keyword_only_inputs[{}]", pylit(d));
    }
}

/// Whether a tensor input gets a gradient: a float or complex dtype, or a
/// template type (whose instances the backward kernel covers).
fn is_float(p: &Param) -> bool {
    p.token.contract().is_some_and(|c| match &c.dtype {
        ElementType::Dtype(t) => matches!(t.kind(), ScalarKind::Float | ScalarKind::FloatBits | ScalarKind::Complex),
        ElementType::Param(_) => true,
    })
}

/// The autograd registration of a kernel with `vjp:` over its backward
/// kernel's op: residuals saved in `setup_context`, `None` for integer
/// inputs; one gradient per positional (tensor) input, which torch takes
/// for an op whose attributes are keyword-only.
fn py_autograd(ns: &str, fwd: &Op<'_>, bwd: &Op<'_>, out: &mut String) {
    let f = fwd.f;
    let n_in = fwd.inputs.len();
    // Attributes are keyword-only in the schema: torch passes them apart.
    let _ = writeln!(out, "def _setup_{}(ctx, inputs, output, keyword_only_inputs=None):", fwd.name);
    let _ = writeln!(out, "    _begen_out = output if isinstance(output, tuple) else (output,)");
    let _ = writeln!(out, "    ctx.save_for_backward(*inputs[:{n_in}], *_begen_out)");
    let attr_names: Vec<String> = fwd.attrs.iter().map(|p| p.py_name.to_string()).collect();
    for name in attr_names.iter().chain(fwd.value_consts().map(|k| &k.py_name)) {
        let _ = writeln!(out, "    ctx.{name} = keyword_only_inputs[{}]", pylit(name));
    }
    save_defines(fwd, out);
    let _ = writeln!(out, "\n");
    let _ = writeln!(out, "def _backward_{}(ctx, *grads):", fwd.name);
    let _ = writeln!(out, "    _begen_s = ctx.saved_tensors");
    let _ = writeln!(out, "    _begen_i, _begen_o = _begen_s[:{n_in}], _begen_s[{n_in}:]");
    let returned = fwd.returned();
    let args: Vec<String> = if f.options.vjp_bind.is_empty() {
        (0..n_in)
            .map(|k| format!("_begen_i[{k}]"))
            .chain((0..fwd.rets.len()).map(|k| format!("grads[{k}].contiguous()")))
            .collect()
    } else {
        f.options
            .vjp_bind
            .iter()
            .map(|a| match *a {
                crate::model::VjpArg::Input(k) => format!("_begen_i[{k}]"),
                crate::model::VjpArg::Output(k) => format!("_begen_o[{k}]"),
                crate::model::VjpArg::Cotangent(k) => format!("grads[{}].contiguous()", returned[k]),
            })
            .collect()
    };
    let mut all = args;
    for p in &bwd.attrs {
        let name = p.token.attr_name().unwrap_or_default();
        let own = fwd.attrs.iter().find(|q| q.token.attr_name() == Some(name)).map(|q| q.py_name.to_string());
        if let Some(own) = own {
            all.push(format!("{}=ctx.{own}", p.py_name));
        }
    }
    all.extend(shared_consts(fwd, bwd));
    let _ = writeln!(out, "    _begen_g = _torch.ops.{ns}.{}({})", bwd.name, all.join(", "));
    let _ = writeln!(out, "    _begen_g = _begen_g if isinstance(_begen_g, tuple) else (_begen_g,)");
    let grads: Vec<String> = fwd
        .inputs
        .iter()
        .enumerate()
        .map(|(k, p)| if is_float(p) { format!("_begen_g[{k}]") } else { "None".to_string() })
        .collect();
    let _ = writeln!(out, "    return ({},)\n\n", grads.join(", "));
    let _ = writeln!(
        out,
        "_torch.library.register_autograd({}, _backward_{}, setup_context=_setup_{})\n\n",
        pylit(&format!("{ns}::{}", fwd.name)),
        fwd.name,
        fwd.name
    );
}

/// The torch target's files for a library.
pub(crate) fn emit(library: &Library) -> TorchFiles {
    let ns = namespace(library);
    let mut ops = Vec::new();
    let mut skipped = Vec::new();
    for f in &library.functions {
        match Op::of(library, f) {
            Ok(op) => ops.push(op),
            Err(reason) => {
                skipped.push(Skipped { function: f.name.clone(), file: f.file.clone(), line: f.line, reason })
            }
        }
    }
    // A forward whose backward kernel is left out has no autograd formula:
    // it is left out too, never registered without its gradient.
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let mut rules: Vec<(usize, autograd::Rule)> = Vec::new();
    let mut drop: Vec<(usize, String)> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        // Two ops of one name (a kernel `k_out` beside `k`'s out= op): the
        // out= op is left out.
        if !op.outs.is_empty() && ops.iter().any(|o| o.name == op.name && o.outs.is_empty()) {
            drop.push((i, format!("its out= op '{}' has the name of another kernel's op", op.name)));
            continue;
        }
        // An out= op has no autograd: the typed function refuses inputs
        // that require grad, by name.
        if !op.outs.is_empty() {
            continue;
        }
        if let Some(b) = &op.f.options.vjp {
            match locate(&ops, op.f, b, "backward kernel") {
                Ok(j) => pairs.push((i, j)),
                Err(reason) => drop.push((i, reason)),
            }
        } else if let Some(r) = &op.f.options.python_vjp {
            // A backward pass in Python composes the JAX module's functions,
            // which a torch autograd formula cannot call.
            drop.push((
                i,
                format!("its backward pass is a Python function of the JAX module (`python_vjp: {}`)", r.spec()),
            ));
        } else {
            // `linear:` + `transpose:`, or a `jvp:` whose tangent kernel has them.
            match autograd::rule(op, &ops) {
                Some(Ok(rule)) => rules.push((i, rule)),
                Some(Err(reason)) => drop.push((i, reason)),
                None => {}
            }
        }
    }
    for (i, reason) in &drop {
        let f = ops[*i].f;
        skipped.push(Skipped { function: f.name.clone(), file: f.file.clone(), line: f.line, reason: reason.clone() });
    }
    let drop: Vec<usize> = drop.into_iter().map(|(i, _)| i).collect();
    pairs.retain(|(a, _)| !drop.contains(a));
    let kept: Vec<usize> = (0..ops.len()).filter(|i| !drop.contains(i)).collect();

    let mut cc = String::new();
    let _ = writeln!(
        cc,
        "// Generated by begen: the PyTorch ops of library {}, registered through\n// PyTorch's stable ABI. Do not edit: begen rewrites it.\n",
        library.name
    );
    cc.push_str(RUNTIME_CC);
    for &i in &kept {
        let op = &ops[i];
        for t in trampolines(op.f) {
            let _ = writeln!(
                cc,
                "BEGEN_TRAMPOLINE const char* {t}(const begen::TensorArg* t, const void* const* a, int64_t stream) noexcept;"
            );
        }
    }
    cc.push_str("\nnamespace {\nusing torch::stable::Tensor;\nusing torch::headeronly::ScalarType;\n\n");
    for &i in &kept {
        ops[i].cpp(&mut cc);
    }
    cc.push_str("}  // namespace\n\n");
    let _ = writeln!(cc, "STABLE_TORCH_LIBRARY({ns}, m) {{");
    if kept.is_empty() {
        // No op: the library is registered empty, warning-free.
        cc.push_str(
            "  static_cast<void>(m);
",
        );
    }
    for &i in &kept {
        let _ = writeln!(cc, "  m.def({});", lit(&ops[i].schema()));
    }
    cc.push_str("}\n");
    for (key, platform) in [("CPU", Platform::Cpu), ("CUDA", Platform::Cuda)] {
        let these: Vec<usize> = kept.iter().copied().filter(|&i| ops[i].f.platform == platform).collect();
        if these.is_empty() {
            continue;
        }
        let _ = writeln!(cc, "\nSTABLE_TORCH_LIBRARY_IMPL({ns}, {key}, m) {{");
        for i in these {
            let _ = writeln!(cc, "  m.impl({}, TORCH_BOX(&begen_op_{}));", lit(&ops[i].name), ops[i].name);
        }
        cc.push_str("}\n");
    }

    let mut py = String::new();
    let _ = writeln!(
        py,
        "\"\"\"PyTorch ops of the kernel library `{}`, generated by begen. Do not edit.\n\nEach function calls an op of torch.ops.{ns}, registered by lib{}_torch.so\nbeside this file through PyTorch's stable ABI.\n\"\"\"\n",
        library.name, library.name
    );
    py.push_str(RUNTIME_PY.replace("{LIB}", &format!("lib{}_torch.so", library.name)).replace("{NS}", &ns).as_str());
    let with_out = kept.iter().any(|&i| !ops[i].outs.is_empty());
    if with_out {
        py.push_str(RUNTIME_OUT_PY);
    }
    // Algorithms dispatch over the typed functions: written after them.
    let mut algorithms_py = String::new();
    let algorithm_names = algorithms::py(library, &ops, &kept, &mut algorithms_py);
    let mut names: Vec<String> = if library.namespaced {
        // The modules' namespace objects, as the JAX module's submodules.
        let mut tops: Vec<String> = kept.iter().map(|&i| top_module(&ops[i].f.module).to_string()).collect();
        tops.dedup();
        tops.sort();
        tops.dedup();
        tops.iter().map(|t| pylit(t)).collect()
    } else {
        kept.iter().map(|&i| pylit(&ops[i].def_name)).collect()
    };
    names.extend(algorithm_names);
    let _ = writeln!(py, "__all__ = [\"NAMESPACE\", {}]\n\n", names.join(", "));
    for &i in &kept {
        ops[i].py_fake(&ns, &mut py);
    }
    for &(i, j) in &pairs {
        py_autograd(&ns, &ops[i], &ops[j], &mut py);
    }
    for (i, rule) in &rules {
        autograd::py(&ns, &ops[*i], rule, &ops, &mut py);
    }
    for &i in &kept {
        vmap::py(&ops[i], &mut py);
    }
    py.push('\n');
    let index = |f: &Function| library.functions.iter().position(|g| std::ptr::eq(g, f));
    let tuned: Vec<(usize, &crate::model::Tuned)> =
        kept.iter().filter_map(|&i| index(ops[i].f).and_then(|k| tune::of(library, k)).map(|t| (i, t))).collect();
    let pairs_t: Vec<(&Function, &crate::model::Tuned)> = tuned.iter().map(|&(i, t)| (ops[i].f, t)).collect();
    py.push_str(&tune::runtime(library, &pairs_t, algorithms::tuned(library, &ops, &kept)));
    for &i in &kept {
        let view = tuned.iter().find(|(j, _)| *j == i).map(|(_, t)| tune::view(library, ops[i].f, t));
        ops[i].py_function(&ns, view.as_ref(), &mut py);
    }
    py.push_str(&algorithms_py);
    if library.namespaced {
        py.push_str(&modules_py(&ops, &kept));
    }
    meta::emit(&ops, &kept, &pairs, &mut py);
    let mut pyi = String::from("# Generated by begen. Do not edit.\nimport torch as _torch\n\nNAMESPACE: str\n\n");
    if with_out {
        pyi.push_str(OUT_SPEC_PYI);
    }
    for &i in &kept {
        ops[i].pyi(&mut pyi);
    }
    algorithms::pyi(library, &ops, &kept, &mut pyi);
    if library.namespaced {
        pyi.push_str(&modules_pyi(&ops, &kept));
    }
    TorchFiles { namespace: ns, cc, py, pyi, skipped }
}

/// A module path's first part (`a` of `a.b`).
fn top_module(module: &str) -> &str {
    module.split('.').next().unwrap_or(module)
}

/// The modules of a library of modules, each a tree of its functions and
/// its submodules: module path -> [(name, Python expression)].
fn module_tree(ops: &[Op<'_>], kept: &[usize]) -> BTreeMap<String, Vec<(String, String)>> {
    let mut tree: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for &i in kept {
        let op = &ops[i];
        tree.entry(op.f.module.clone()).or_default().push((op.f.py_name.clone(), op.def_name.clone()));
        // Every enclosing module exists, and holds its child.
        let mut path = op.f.module.as_str();
        while let Some((parent, _)) = path.rsplit_once('.') {
            tree.entry(parent.to_string()).or_default();
            path = parent;
        }
    }
    tree
}

/// The namespace object of each module of a library of modules
/// (`m.jit_csr.scale`, as the JAX module's submodules), innermost first so
/// that each parent can hold its children.
fn modules_py(ops: &[Op<'_>], kept: &[usize]) -> String {
    let tree = module_tree(ops, kept);
    let mut out = String::from(
        "import types as _types

",
    );
    let var = |path: &str| format!("_begen_module_{}", path.replace('.', "__"));
    for (path, functions) in tree.iter().rev() {
        let mut items: Vec<String> = functions.iter().map(|(n, d)| format!("{n}={d}")).collect();
        let prefix = format!("{path}.");
        for child in tree.keys().filter(|c| c.strip_prefix(&prefix).is_some_and(|rest| !rest.contains('.'))) {
            items.push(format!("{}={}", &child[prefix.len()..], var(child)));
        }
        let _ = writeln!(out, "{} = _types.SimpleNamespace({})", var(path), items.join(", "));
    }
    for path in tree.keys().filter(|p| !p.contains('.')) {
        let _ = writeln!(out, "{path} = {}", var(path));
    }
    out.push_str(
        "

",
    );
    out
}

/// The stubs of the modules' namespace objects: a class per module whose
/// attributes are its functions and submodules.
fn modules_pyi(ops: &[Op<'_>], kept: &[usize]) -> String {
    fn class(tree: &BTreeMap<String, Vec<(String, String)>>, path: &str, indent: usize, out: &mut String) {
        let pad = " ".repeat(indent);
        let name = path.rsplit('.').next().unwrap_or(path);
        let _ = writeln!(out, "{pad}class {name}:");
        for (n, d) in &tree[path] {
            let _ = writeln!(out, "{pad}    {n} = staticmethod({d})");
        }
        let prefix = format!("{path}.");
        let children: Vec<&String> =
            tree.keys().filter(|c| c.strip_prefix(&prefix).is_some_and(|rest| !rest.contains('.'))).collect();
        for child in &children {
            class(tree, child, indent + 4, out);
        }
        if tree[path].is_empty() && children.is_empty() {
            let _ = writeln!(out, "{pad}    ...");
        }
    }
    let tree = module_tree(ops, kept);
    let mut out = String::new();
    for path in tree.keys().filter(|p| !p.contains('.')) {
        class(&tree, path, 0, &mut out);
    }
    out
}

/// The op of the kernel `name` (of `f`'s module) that an autograd formula
/// of `f` calls as its `role`, or why there is none: the kernel is left
/// out, or its op takes its outputs from the caller (out=).
fn locate(ops: &[Op<'_>], f: &Function, name: &str, role: &str) -> Result<usize, String> {
    let bare = name.rsplit('.').next().unwrap_or(name);
    match ops.iter().position(|o| o.f.name == bare && o.f.module == f.module) {
        Some(j) if !ops[j].outs.is_empty() => Err(format!(
            "its {role} '{name}' takes its outputs from the caller (out=), which no autograd formula can give"
        )),
        // The backward pass runs the forward call's candidate: a define
        // the forward does not choose would have no value there.
        Some(j) => match ops[j].f.define_not_in(f) {
            Some(d) => Err(format!("its {role} '{name}' is tuned over the define '{d}', which the forward is not")),
            None => Ok(j),
        },
        None => Err(format!("its {role} '{name}' is left out")),
    }
}

/// Every trampoline symbol an op may call.
fn trampolines(f: &Function) -> Vec<String> {
    if f.instances.is_empty() {
        vec![f.trampoline.clone()]
    } else {
        f.instances.iter().map(|i| i.trampoline.clone()).collect()
    }
}

/// The helpers every registration TU starts with.
const RUNTIME_CC: &str = include_str!("runtime.cc");

/// The loader every `<NAME>_torch.py` starts with.
const RUNTIME_PY: &str = include_str!("runtime.py");

/// The out= helpers, in a module that has an out= op.
const RUNTIME_OUT_PY: &str = include_str!("runtime_out.py");

/// What an out= parameter takes besides a tensor, in the stub.
const OUT_SPEC_PYI: &str = "from typing import Any as _Any, Protocol as _Protocol, Sequence as _Sequence\n\n\nclass _OutSpec(_Protocol):\n    @property\n    def shape(self) -> _Sequence[int]: ...\n    @property\n    def dtype(self) -> _Any: ...\n\n\n";

#[cfg(test)]
mod tests;
