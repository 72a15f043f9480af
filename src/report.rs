//! The scan document of `begen scan --format json|yaml|table`. Its fields
//! are a contract (README, "Command line"): `name`, `file`, `line`,
//! `platform`, `arg_spec` of each function and `severity`, `file`, `line`,
//! `column`, `message` of each diagnostic may not change; fields may be
//! added.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::diag::Diagnostic;
use crate::driver::Run;
use crate::model::{Function, Token};
use crate::source::SourceMap;

/// The whole document: `functions`, the checked functions (those without
/// errors) sorted by file and line, then `diagnostics`, every diagnostic of
/// the run sorted by file, line and column. Each entry is made as it is
/// written, so the document is never held whole (a large tree has
/// thousands of diagnostics).
pub(crate) struct ScanDocument<'a> {
    run: &'a Run,
}

impl Serialize for ScanDocument<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        struct Seq<I>(std::cell::Cell<Option<I>>);
        impl<I: Iterator<Item = T>, T: Serialize> Serialize for Seq<I> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                // Written once; a second time (no serializer does) would be empty.
                match self.0.take() {
                    Some(entries) => serializer.collect_seq(entries),
                    None => serializer.collect_seq(std::iter::empty::<T>()),
                }
            }
        }
        let run = self.run;
        let functions = Seq(Some(run.library.functions.iter().map(function_entry)).into());
        let diagnostics = Seq(Some(run.diagnostics.iter().map(|d| diagnostic_entry(d, &run.sources))).into());
        let mut doc = serializer.serialize_struct("ScanDocument", 2)?;
        doc.serialize_field("functions", &functions)?;
        doc.serialize_field("diagnostics", &diagnostics)?;
        doc.end()
    }
}

/// One function of the document.
#[derive(Debug, Serialize)]
pub(crate) struct FunctionEntry<'a> {
    /// The C++ function name.
    pub(crate) name: &'a str,
    /// Its source file, relative to the scanned root with `/` separators.
    pub(crate) file: &'a str,
    /// 1-based line of the function's name.
    pub(crate) line: usize,
    /// `cpu` or `cuda`.
    pub(crate) platform: &'static str,
    /// The canonical arg_spec, one token per C++ parameter (`attr.x:float32`).
    pub(crate) arg_spec: ArgSpec<'a>,
    /// 1-based byte column of the function's name.
    pub(crate) column: usize,
    /// The module the function belongs to.
    pub(crate) module: &'a str,
    /// Its XLA FFI target, `<module>.<function>`.
    pub(crate) target: &'a str,
    /// A template kernel's constants: name -> its values (absent otherwise).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) consts: BTreeMap<&'a str, &'a [String]>,
    /// A template kernel's instantiations, one FFI target each (absent otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) instances: Vec<InstanceEntry<'a>>,
    /// The structs of its struct attributes, by name (absent when none).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) structs: BTreeMap<&'a str, StructEntry<'a>>,
}

/// A function's arg_spec in the document: its tokens' texts, each written
/// as it is made (a large tree has tens of thousands).
#[derive(Debug)]
pub(crate) struct ArgSpec<'a>(&'a Function);

impl Serialize for ArgSpec<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Text<'t>(&'t Token);
        impl Serialize for Text<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self.0)
            }
        }
        serializer.collect_seq(self.0.params.iter().map(|p| Text(&p.token)))
    }
}

/// A struct of a struct attribute in the document.
#[derive(Debug, Serialize)]
pub(crate) struct StructEntry<'a> {
    /// Where it is defined, relative to the scanned root.
    pub(crate) file: &'a str,
    /// 1-based line of its name there.
    pub(crate) line: usize,
    /// Its data members in order, as `name:type` (`scale:float32`).
    pub(crate) members: Vec<String>,
}

/// One instantiation of a template kernel in the document.
#[derive(Debug, Serialize)]
pub(crate) struct InstanceEntry<'a> {
    /// Its key in the Python module's `TARGETS`: `name[T=float32,N=4]`.
    pub(crate) key: &'a str,
    /// Its XLA FFI target.
    pub(crate) target: &'a str,
}

/// One diagnostic of the document.
#[derive(Debug, Serialize)]
pub(crate) struct DiagnosticEntry<'a> {
    /// `error` or `warning`.
    pub(crate) severity: &'static str,
    /// The primary location's file, relative to the scanned root.
    pub(crate) file: &'a str,
    /// 1-based line of the primary location (0 for a whole file).
    pub(crate) line: usize,
    /// 1-based byte column of the primary location (0 for a whole file).
    pub(crate) column: usize,
    /// The one-line message.
    pub(crate) message: &'a str,
    /// How to fix it, when there is advice.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) hint: Option<&'a str>,
    /// Further places the diagnostic points at.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) labels: Vec<LabelEntry<'a>>,
    /// Extra explanations, in order.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub(crate) notes: &'a [String],
}

/// A secondary location of a diagnostic.
#[derive(Debug, Serialize)]
pub(crate) struct LabelEntry<'a> {
    /// The file, relative to the scanned root (may differ from the primary's).
    pub(crate) file: &'a str,
    /// 1-based line of the span's start.
    pub(crate) line: usize,
    /// 1-based byte column of the span's start.
    pub(crate) column: usize,
    /// What the diagnostic says at this place.
    pub(crate) message: &'a str,
}

// The scan document is this module's; `Run` is the driver's, and the
// driver does not write documents.
impl Run {
    /// The scan document of `begen scan --format json`: the functions (name,
    /// file, line, platform, arg_spec, module, target...) and every
    /// diagnostic, pretty-printed, ending with a newline.
    ///
    /// ```no_run
    /// let run = begen::driver::run(&begen::driver::Settings::new("kernels"))?;
    /// let json = run.to_json();
    /// assert!(json.starts_with('{') && json.ends_with("}\n"));
    /// # Ok::<(), begen::Error>(())
    /// ```
    pub fn to_json(&self) -> String {
        ScanDocument::new(self).to_json()
    }
}

impl<'a> ScanDocument<'a> {
    /// The document of a run.
    pub(crate) fn new(run: &'a Run) -> Self {
        ScanDocument { run }
    }

    /// The document as pretty-printed JSON, ending with a newline
    /// (`begen scan --format json`).
    pub(crate) fn to_json(&self) -> String {
        // Serialising plain structs of strings and numbers cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// Writes [`ScanDocument::to_json`]'s text to `w`.
    #[cfg_attr(not(feature = "cli"), allow(dead_code))] // used by the CLI (`begen doctor`, `begen scan`)
    pub(crate) fn write_json(&self, mut w: impl std::io::Write) -> std::io::Result<()> {
        serde_json::to_writer_pretty(&mut w, self)?;
        w.write_all(b"\n")
    }

    /// The document as YAML (`begen scan --format yaml`).
    #[cfg_attr(not(feature = "cli"), allow(dead_code))] // used by the CLI (`begen doctor`, `begen scan`)
    pub(crate) fn to_yaml(&self) -> String {
        serde_yaml_ng::to_string(self).unwrap_or_default()
    }
}

fn function_entry(f: &Function) -> FunctionEntry<'_> {
    FunctionEntry {
        name: &f.name,
        file: &f.file,
        line: f.line,
        platform: f.platform.as_str(),
        arg_spec: ArgSpec(f),
        column: f.column,
        module: &f.module,
        target: &f.target,
        consts: f.consts.iter().map(|k| (k.name.as_str(), k.values.as_slice())).collect(),
        instances: f.instances.iter().map(|i| InstanceEntry { key: &i.key, target: &i.target }).collect(),
        structs: f
            .params
            .iter()
            .filter_map(|p| match &p.token {
                Token::Record { ty, .. } => Some((
                    ty.name.as_str(),
                    StructEntry {
                        file: &ty.file,
                        line: ty.line,
                        members: ty.members.iter().map(|m| format!("{}:{}", m.name, m.ty)).collect(),
                    },
                )),
                _ => None,
            })
            .collect(),
    }
}

fn diagnostic_entry<'a>(d: &'a Diagnostic, map: &'a SourceMap) -> DiagnosticEntry<'a> {
    let (file, line, column) = d.location(map);
    DiagnosticEntry {
        severity: d.severity.as_str(),
        file,
        line,
        column,
        message: &d.message,
        hint: d.hint.as_deref(),
        labels: d
            .labels
            .iter()
            .map(|l| {
                let (line, column) = map.position(l.span);
                LabelEntry { file: map.name(l.span), line, column, message: &l.text }
            })
            .collect(),
        notes: &d.notes,
    }
}

/// A table of the functions for people (diagnostics go to stderr apart).
#[cfg_attr(not(feature = "cli"), allow(dead_code))] // used by the CLI (`begen doctor`, `begen scan`)
pub(crate) fn table(run: &Run) -> String {
    let rows: Vec<[String; 4]> = run
        .library
        .functions
        .iter()
        .map(|f| {
            let spec = f.spec_tokens();
            let name = if run.library.namespaced { format!("{}.{}", f.module, f.name) } else { f.name.clone() };
            [name, format!("{}:{}", f.file, f.line), f.platform.as_str().to_string(), spec.join(" ")]
        })
        .collect();
    let header = ["FUNCTION", "LOCATION", "PLATFORM", "ARG_SPEC"].map(String::from);
    let mut widths = [0usize; 3];
    for r in std::iter::once(&header).chain(&rows) {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    for r in std::iter::once(&header).chain(&rows) {
        out.push_str(&format!(
            "{:w0$}  {:w1$}  {:w2$}  {}\n",
            r[0],
            r[1],
            r[2],
            r[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        ));
    }
    let errors = run.diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = run.diagnostics.len() - errors;
    out.push_str(&format!(
        "\n{} function(s) in {} source file(s); {errors} error(s), {warnings} warning(s)\n",
        run.library.functions.len(),
        run.source_files
    ));
    out
}
