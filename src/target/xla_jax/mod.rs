//! The XLA/JAX binding target (`jax`): one XLA FFI handler per kernel
//! instance, in the library's glue translation units ([`cpp`]; native
//! kernels' handlers in their wrapper, [`native`]; precompiled kernels' in
//! the binaries TU, [`binary`]), the Python module and stub over
//! `jax.ffi` ([`python`], with the runtime sections of
//! `src/target/xla_jax/runtime/begen_runtime`, [`runtime`]), and the manifest
//! ([`manifest`]). Its library is `lib<NAME>.so`: the wrappers' objects
//! and these TUs, compiled against XLA's FFI headers ([`toolchain`]).
//!
//! The templates are `templates/` beside this file: the Python functions
//! are written by the macros of `templates/python/function.py`, which the
//! module and the stub import: Rust writes no Python statement. The
//! manifest is serialized with serde, not templated.

mod binary;
pub(crate) mod cpp;
mod manifest;
mod native;
pub(crate) mod python;
pub(crate) mod runtime;
mod toolchain;

use askama::Template;

use crate::emit::abi::TargetSection;
use crate::emit::{glue_rel_path, render};
use crate::model::generated::{FileKind, GeneratedFile, JAX, TargetId};
use crate::model::{Function, Library};
// The Python templates match on these by name.
use python::{PyArg, PyBody, PyCheck, PyConversion, PyDoc, PyInputRole, PyParam, PyResult, PyReturn, PyRuleDoc};

/// The jax target.
pub(crate) struct Jax;

impl super::Target for Jax {
    fn id(&self) -> TargetId {
        JAX
    }

    fn wrapper_section(&self, functions: &[&Function]) -> TargetSection {
        native::wrapper_section(functions)
    }

    fn emit(&self, lib: &Library, api_version: Option<&str>) -> Vec<GeneratedFile> {
        emit_files(lib, api_version)
    }

    fn outputs(&self, lib: &Library) -> Vec<String> {
        lib.plan.outputs.all().map(String::from).to_vec()
    }

    fn toolchain(&self) -> &dyn crate::build::TargetToolchain {
        &toolchain::XlaFfi
    }
}

#[derive(Template)]
#[template(path = "glue.cc", escape = "none")]
struct GlueTemplate<'a> {
    g: &'a cpp::GlueView,
}

#[derive(Template)]
#[template(path = "binary.cc", escape = "none")]
struct BinaryTemplate<'a> {
    b: &'a binary::BinariesView,
}

#[derive(Template)]
#[template(path = "module.py", escape = "none")]
struct ModuleTemplate<'a> {
    m: &'a python::PyModuleView,
}

#[derive(Template)]
#[template(path = "module.pyi", escape = "none")]
struct StubTemplate<'a> {
    m: &'a python::PyModuleView,
}

/// Pieces of the Python module rendered as templates of their own, each
/// called from its callers' templates through the function beside it.
/// askama inlines a macro at every call, so a macro reached along several
/// paths (a function's body holds up to three kernels, a kernel up to four
/// calls, a call a conversion per attribute) multiplied into one render
/// function of some 47,000 lines, and borrow-checking it took most of the
/// crate's compile time. Called this way, each macro is generated once.
#[derive(Template)]
#[template(
    source = r#"{%- import "python/function.py" as fun -%}{% call fun::function(f, ind) %}{% endcall %}"#,
    ext = "py",
    escape = "none"
)]
struct PyFunctionText<'a> {
    f: &'a python::PyFunctionView,
    ind: &'a str,
}

#[derive(Template)]
#[template(
    source = r#"{%- import "python/function.py" as fun -%}{% call fun::kernel(f, k, ind) %}{% endcall %}"#,
    ext = "py",
    escape = "none"
)]
struct PyKernelText<'a> {
    f: &'a python::PyFunctionView,
    k: &'a python::PyKernelBody,
    ind: &'a str,
}

#[derive(Template)]
#[template(
    source = r#"{%- import "python/function.py" as fun -%}{% call fun::call(c, hoisted) %}{% endcall %}"#,
    ext = "py",
    escape = "none"
)]
struct PyCallText<'a> {
    c: &'a python::PyCall,
    hoisted: bool,
}

/// A Python function at indentation `ind` (`function` of function.py).
pub(crate) fn py_function<D: std::fmt::Display + ?Sized>(
    f: &python::PyFunctionView,
    ind: &D,
) -> askama::Result<String> {
    PyFunctionText { f, ind: &ind.to_string() }.render()
}

/// A kernel's statements at indentation `ind` (`kernel` of function.py).
pub(crate) fn py_kernel<D: std::fmt::Display + ?Sized>(
    f: &python::PyFunctionView,
    k: &python::PyKernelBody,
    ind: &D,
) -> askama::Result<String> {
    PyKernelText { f, k, ind: &ind.to_string() }.render()
}

/// A kernel's XLA FFI call expression (`call` of function.py).
pub(crate) fn py_call(c: &python::PyCall, hoisted: &bool) -> askama::Result<String> {
    PyCallText { c, hoisted: *hoisted }.render()
}

/// The module's text with its `_BEGEN_BUILD` set to a hash of the text
/// itself (rendered with it empty): two builds' modules differ exactly when
/// their builds do, which is what the library kept during a commit is named
/// by (`_begen_library_file`).
fn with_build_id(text: String) -> String {
    let empty = "\n_BEGEN_BUILD = \"\"\n";
    let id = crate::model::generated::fnv1a(text.as_bytes());
    text.replacen(empty, &format!("\n_BEGEN_BUILD = \"{id:016x}\"\n"), 1)
}

/// The jax target's files of `lib`, after the wrappers: the glue parts,
/// the binaries TU, the module, the stub and the manifest.
/// `xla_api_version` (e.g. `"0.3"`) is recorded in the manifest as the XLA
/// FFI API version the handlers are built against. It cannot fail: `check`
/// made every name and path safe.
fn emit_files(lib: &Library, xla_api_version: Option<&str>) -> Vec<GeneratedFile> {
    let mut files = Vec::new();
    if lib.functions.iter().any(|f| f.binary.is_none()) {
        for g in cpp::glue_views(lib) {
            files.push(GeneratedFile {
                rel_path: glue_rel_path(&lib.name, g.part),
                kind: FileKind::TargetUnit { target: JAX, heavy: true },
                source: None,
                contents: render(&GlueTemplate { g: &g }),
            });
        }
    }
    if binary::has_binaries(lib) {
        files.push(GeneratedFile {
            rel_path: format!("gen/{}.binaries.begen.cc", lib.name),
            kind: FileKind::TargetUnit { target: JAX, heavy: false },
            source: None,
            contents: render(&BinaryTemplate { b: &binary::binaries_view(lib) }),
        });
    }
    let module = python::py_module_view(lib);
    files.push(GeneratedFile {
        rel_path: lib.plan.outputs.module.clone(),
        kind: FileKind::PythonModule,
        source: None,
        contents: with_build_id(render(&ModuleTemplate { m: &module })),
    });
    files.push(GeneratedFile {
        rel_path: lib.plan.outputs.stub.clone(),
        kind: FileKind::PythonStub,
        source: None,
        contents: render(&StubTemplate { m: &module }),
    });
    files.push(GeneratedFile {
        rel_path: lib.plan.outputs.manifest.clone(),
        kind: FileKind::Manifest,
        source: None,
        contents: manifest::emit_manifest(lib, xla_api_version),
    });
    files
}

#[cfg(test)]
mod tests;
