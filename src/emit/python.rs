//! The view model of the Python module and its stub: names, signatures and
//! attribute conversions, resolved in Rust; `templates/module.py(i)` print it.

use std::collections::BTreeSet;

use crate::model::{AttrType, Function, Library, Platform, Token};

use super::names::{comment_text, py_str};
use crate::model::is_py_keyword;

/// The generated Python module and its stub.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PyModuleView {
    pub name: String,
    /// Source files the module was generated from (safe for a docstring).
    pub sources: Vec<String>,
    /// `lib<name>.so`, as a Python literal.
    pub library_file: String,
    pub needs_ml_dtypes: bool,
    /// Libraries it links, as Python literals (preloaded from pip's
    /// `nvidia` packages when they are there).
    pub linked: Vec<String>,
    /// The library has several modules: its functions live in `modules`,
    /// one namespace each; else in `functions`, at the top level.
    pub namespaced: bool,
    pub modules: Vec<PyNamespaceView>,
    /// `"name", ...` for `__all__`.
    pub all: Vec<String>,
    /// (function literal, target literal) for `TARGETS`.
    pub targets: Vec<(String, String)>,
    /// (target literal, symbol literal, platform literal) for `register()`.
    pub handlers: Vec<(String, String, String)>,
    pub functions: Vec<PyFunctionView>,
}

/// One module of a library of several: a namespace built by a function of
/// its name, holding its own `TARGETS` and typed functions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PyNamespaceView {
    pub py_name: String,
    /// Its docstring (safe text).
    pub doc: String,
    /// `__all__` of the namespace, as literals.
    pub all: Vec<String>,
    /// (function literal, target literal) for its `TARGETS`.
    pub targets: Vec<(String, String)>,
    pub functions: Vec<PyFunctionView>,
}

/// One typed Python function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PyFunctionView {
    /// The function's name in Python (`_` appended to a Python keyword).
    pub py_name: String,
    /// The function's key in `TARGETS`, as a literal.
    pub key: String,
    /// The parameter list, e.g. `x, /, *, alpha, out`.
    pub signature: String,
    /// The same, annotated, for the stub.
    pub stub_signature: String,
    /// The stub's return annotation.
    pub stub_return: String,
    /// The docstring's first line.
    pub doc_first: String,
    /// Its further lines, indented (empty lines stay empty).
    pub doc_rest: Vec<String>,
    /// Statements that check `out` before the call (several outputs).
    pub out_checks: Vec<String>,
    /// The `result_shape_dtypes` expression.
    pub out_expr: String,
    pub vmap_method: String,
    /// Arguments of the call: inputs, then converted attributes.
    pub call_args: Vec<String>,
}

/// The Python expression converting attribute value `v` to what the C++
/// side decodes (the arg_spec system's table; float16/bfloat16 travel as uint16 bits,
/// complex as [real, imag]). `where` is the Python literal the checked
/// conversions (bool, integers, float32/64) quote in their errors, e.g.
/// `"f: attribute 'n' (int8)"`.
pub fn py_attr_conversion(ty: AttrType, v: &str, r#where: &str) -> String {
    match ty {
        AttrType::Bool => format!("_begen_bool({v}, {where})"),
        AttrType::Float32 | AttrType::Float64 => {
            format!("_begen_float({v}, _np.{}, {where})", ty.numpy_dtype())
        }
        AttrType::Float16 => format!("_begen_half({v}, _np.float16, {where})"),
        AttrType::BFloat16 => format!("_begen_half({v}, _ml_dtypes.bfloat16, {where})"),
        AttrType::Complex64 => format!("_begen_complex({v}, _np.float32, {where})"),
        AttrType::Complex128 => format!("_begen_complex({v}, _np.float64, {where})"),
        other => format!("_begen_int({v}, _np.{}, {where})", other.numpy_dtype()),
    }
}

/// The Python type users pass for an attribute, for the stub.
pub fn py_attr_type(ty: AttrType) -> &'static str {
    match ty {
        AttrType::Bool => "bool",
        AttrType::Float16 | AttrType::BFloat16 | AttrType::Float32 | AttrType::Float64 => "float",
        AttrType::Complex64 | AttrType::Complex128 => "complex",
        _ => "int",
    }
}

/// Resolves one typed Python function; `shown` names it in its error
/// messages (`module.function` in a library of several modules). Its key
/// in the `TARGETS` it reads (the module's, or the library's of a
/// one-module library) is its name.
pub fn py_function_view(f: &Function, shown: &str) -> PyFunctionView {
    let mut inputs = Vec::new();
    let mut attrs = Vec::new();
    for p in &f.params {
        match &p.token {
            Token::Arg => inputs.push(p.py_name.clone()),
            Token::Attr { name, ty } => attrs.push((name.clone(), p.py_name.clone(), *ty)),
            Token::Ret | Token::Stream => {}
        }
    }
    let outputs = f.outputs();
    let mut params: Vec<String> = inputs.clone();
    let mut stub: Vec<String> = inputs.iter().map(|n| format!("{n}: ArrayLike")).collect();
    if !inputs.is_empty() {
        params.push("/".into());
        stub.push("/".into());
    }
    if !attrs.is_empty() || outputs > 0 {
        params.push("*".into());
        stub.push("*".into());
    }
    for (_, py, ty) in &attrs {
        params.push(py.clone());
        stub.push(format!("{py}: {}", py_attr_type(*ty)));
    }
    let key = py_str(&f.name);
    let (out_expr, stub_return, out_checks) = match outputs {
        0 => ("()".to_string(), "tuple[()]".to_string(), vec![]),
        1 => {
            params.push("out".into());
            stub.push("out: jax.ShapeDtypeStruct".into());
            ("out".to_string(), "jax.Array".to_string(), vec![])
        }
        n => {
            params.push("out".into());
            stub.push(format!("out: tuple[{}]", vec!["jax.ShapeDtypeStruct"; n].join(", ")));
            let msg = py_str(&format!("{shown}: out= takes a tuple of {n} jax.ShapeDtypeStruct, one per output"));
            (
                "tuple(out)".to_string(),
                format!("tuple[{}]", vec!["jax.Array"; n].join(", ")),
                vec![
                    format!("if not isinstance(out, (tuple, list)) or len(out) != {n}:"),
                    format!("    raise TypeError({msg})"),
                ],
            )
        }
    };
    let mut call_args = inputs.clone();
    for (xla_name, py, ty) in &attrs {
        let r#where = py_str(&format!("{shown}: attribute '{py}' ({ty})"));
        let value = py_attr_conversion(*ty, py, &r#where);
        if is_py_keyword(xla_name) {
            call_args.push(format!("**{{{}: {value}}}", py_str(xla_name)));
        } else {
            call_args.push(format!("{xla_name}={value}"));
        }
    }
    let doc_first = format!(
        "Calls the {} kernel `{}` ({}:{}) through XLA FFI.",
        f.platform.as_str().to_uppercase(),
        f.name,
        comment_text(&f.file),
        f.line
    );
    let doc_rest = vec![
        String::new(),
        format!("    arg_spec: {}", f.arg_spec().iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", ")),
    ];
    PyFunctionView {
        py_name: f.py_name.clone(),
        key,
        signature: params.join(", "),
        stub_signature: stub.join(", "),
        stub_return,
        doc_first,
        doc_rest,
        out_checks,
        out_expr,
        vmap_method: py_str(f.options.vmap_method.as_str()),
        call_args,
    }
}

/// The platform name `jax.ffi.register_ffi_target` expects.
pub fn jax_platform(p: Platform) -> &'static str {
    match p {
        Platform::Cpu => "cpu",
        Platform::Cuda => "CUDA",
    }
}

/// Resolves the Python module.
pub fn py_module_view(library: &Library) -> PyModuleView {
    let sources: BTreeSet<String> = library.functions.iter().map(|f| comment_text(&f.file)).collect();
    let fs = &library.functions;
    let (functions, modules) = if library.namespaced {
        let modules: Vec<PyNamespaceView> = library
            .modules
            .iter()
            .map(|m| {
                let functions: Vec<PyFunctionView> = m
                    .functions
                    .iter()
                    .map(|&k| py_function_view(&fs[k], &format!("{}.{}", m.name, fs[k].name)))
                    .collect();
                PyNamespaceView {
                    py_name: m.py_name.clone(),
                    doc: comment_text(&format!(
                        "Module `{}` of {}: {} kernel(s).",
                        m.name,
                        library.name,
                        functions.len()
                    )),
                    all: all(functions.iter().map(|f| f.py_name.as_str())),
                    targets: m.functions.iter().map(|&k| (py_str(&fs[k].name), py_str(&fs[k].target))).collect(),
                    functions,
                }
            })
            .collect();
        (Vec::new(), modules)
    } else {
        (fs.iter().map(|f| py_function_view(f, &f.name)).collect(), Vec::new())
    };
    let names =
        functions.iter().map(|f: &PyFunctionView| f.py_name.as_str()).chain(modules.iter().map(|m| m.py_name.as_str()));
    PyModuleView {
        name: library.name.clone(),
        sources: sources.into_iter().collect(),
        library_file: py_str(&format!("lib{}.so", library.name)),
        needs_ml_dtypes: fs.iter().any(|f| f.attrs().any(|(_, t)| t == AttrType::BFloat16)),
        namespaced: library.namespaced,
        linked: library.settings.link_libs.iter().map(|l| py_str(l)).collect(),
        all: all(names),
        targets: fs
            .iter()
            .map(|f| {
                let key = if library.namespaced { format!("{}.{}", f.module, f.name) } else { f.name.clone() };
                (py_str(&key), py_str(&f.target))
            })
            .collect(),
        handlers: fs
            .iter()
            .map(|f| (py_str(&f.target), py_str(&f.handler), py_str(jax_platform(f.platform))))
            .collect(),
        functions,
        modules,
    }
}

/// `__all__`: the module's own names, then `names`, as literals.
fn all<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    ["register", "TARGETS", "LIBRARY"].into_iter().chain(names).map(py_str).collect()
}
