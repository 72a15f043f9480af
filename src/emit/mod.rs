//! stage: emit
//!
//! Turns a checked [`Library`] into the text of every generated file, in
//! memory: one wrapper translation unit per annotated source (the source and
//! its kernels' trampolines), one glue translation unit per library (every
//! XLA FFI handler), the Python module (`<name>.py`, `<name>.pyi`) and the
//! manifest (`<name>.yaml`). See [`cpp`] for how a handler and its trampoline
//! split the work, and why.
//! Writing them to disk is the `build` stage's job.
//!
//! Rust resolves every name, type and expression into a view model
//! ([`cpp`] for the wrappers, [`python`] for the module); the askama
//! templates in `templates/` only loop and print. The Python functions are
//! written by the macros of `templates/python/function.py`, which the module
//! and the stub import: Rust writes no Python statement.
//! The manifest is serialized with serde, not templated.
//!

pub(crate) mod abi;
mod binary;
pub(crate) mod cpp;
mod manifest;
mod names;
mod native;
pub(crate) mod python;
pub(crate) mod runtime;

use std::borrow::Cow;
use std::collections::BTreeMap;

use askama::Template;

use crate::model::generated::{Emitted, FileKind, GeneratedFile};
use crate::model::{Function, Library};
// The Python templates match on these by name.
use python::{PyArg, PyBody, PyCheck, PyConversion, PyDoc, PyInputRole, PyParam, PyResult, PyReturn, PyRuleDoc};

pub(crate) use names::{glue_rel_path, is_tune_candidate, wrapper_rel_path};

#[derive(Template)]
#[template(path = "wrapper.cc", escape = "none")]
struct WrapperTemplate<'a> {
    w: &'a abi::WrapperView,
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

/// Generates every file of `lib`. `xla_api_version` (e.g. `"0.3"`) is
/// recorded in the manifest as the XLA FFI API version the wrappers are
/// built against. It cannot fail: `check` made every name and path safe.
pub(crate) fn emit(lib: &Library, xla_api_version: Option<&str>) -> Emitted {
    let mut files = emit_wrappers(lib, &native::wrapper_section);
    if lib.functions.iter().any(|f| f.binary.is_none()) {
        for g in cpp::glue_views(lib) {
            files.push(GeneratedFile {
                rel_path: glue_rel_path(&lib.name, g.part),
                kind: FileKind::Glue,
                source: None,
                contents: render(&GlueTemplate { g: &g }),
            });
        }
    }
    if binary::has_binaries(lib) {
        files.push(GeneratedFile {
            rel_path: format!("gen/{}.binaries.begen.cc", lib.name),
            kind: FileKind::Binaries,
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
    if let Some(table) = &lib.tuning.table {
        files.push(GeneratedFile {
            rel_path: lib.plan.outputs.tune_table.clone(),
            kind: FileKind::TuneTable,
            source: None,
            contents: table.clone(),
        });
    }
    Emitted { files }
}

/// A wrapper to emit: its source, the variant or candidate tag, the
/// defines before the source, its functions (a candidate's holding only
/// that candidate's instances).
type Wrapper<'a> = (&'a str, Option<String>, Vec<(String, String)>, Vec<Cow<'a, Function>>);

/// One wrapper per annotated source file, sorted by file; a source tuned
/// over its defines gets one wrapper per combination instead, each holding
/// its candidates (see [`names::tune_candidate_tag`]).
/// `section` is what the targets add to the wrapper of some functions.
fn emit_wrappers(lib: &Library, section: &dyn Fn(&[&Function]) -> abi::TargetSection) -> Vec<GeneratedFile> {
    // One wrapper per source and variant of it.
    let mut by_file: BTreeMap<(&str, Option<&str>), Vec<&Function>> = BTreeMap::new();
    for f in lib.functions.iter().filter(|f| f.binary.is_none()) {
        by_file.entry((f.file.as_str(), f.variant.as_deref())).or_default().push(f);
    }
    let mut wrappers: Vec<Wrapper> = Vec::new();
    for ((file, variant), functions) in by_file {
        let source = lib.sources.iter().find(|s| s.file == file);
        let defines = source
            .and_then(|s| s.variants.iter().find(|v| Some(v.module.as_str()) == variant))
            .map(|v| v.defines.clone())
            .unwrap_or_default();
        let tuned =
            lib.tuning.kernels.iter().find(|t| {
                !t.defines.is_empty() && functions.iter().any(|f| std::ptr::eq(*f, &lib.functions[t.function]))
            });
        let Some(tuned) = tuned else {
            wrappers.push((
                file,
                variant.map(str::to_string),
                defines,
                functions.into_iter().map(Cow::Borrowed).collect(),
            ));
            continue;
        };
        for (k, combo) in tuned.combos.iter().enumerate() {
            let pairs: Vec<(String, String)> = tuned.defines.iter().cloned().zip(combo.iter().cloned()).collect();
            let mut all = defines.clone();
            all.extend(pairs.iter().cloned());
            let copies = functions
                .iter()
                .map(|f| {
                    let mut f = (*f).clone();
                    f.instances.retain(|i| i.defines.is_empty() || i.defines == pairs);
                    Cow::Owned(f)
                })
                .collect();
            wrappers.push((file, Some(names::tune_candidate_tag(k)), all, copies));
        }
    }
    let paths = names::dedup_paths(
        wrappers.iter().map(|(file, tag, _, fs)| wrapper_rel_path(file, tag.as_deref(), fs[0].platform)).collect(),
    );
    let mut out = Vec::new();
    for ((file, _, defines, functions), rel_path) in wrappers.into_iter().zip(paths) {
        let functions: Vec<&Function> = functions.iter().map(|f| f.as_ref()).collect();
        let first = functions[0];
        let source = lib.sources.iter().find(|s| s.file == file);
        // `check` set the include text of every source with functions.
        let include_path = source.and_then(|s| s.include.clone()).unwrap_or_default();
        let w = abi::wrapper_view(file, include_path, defines, &functions, section(&functions));
        out.push(GeneratedFile {
            rel_path,
            kind: FileKind::Wrapper(first.platform),
            source: Some(file.to_string()),
            contents: render(&WrapperTemplate { w: &w }),
        });
    }
    out
}

/// Renders a template. The templates print strings the view models made
/// and write into a `String`: rendering cannot fail.
fn render(t: &impl Template) -> String {
    let mut text = t.render().unwrap_or_else(|e| unreachable!("rendering into a String failed: {e}"));
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests;
