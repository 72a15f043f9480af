//! The scan document of `begen scan --format json|yaml|table`. Field order
//! is the contract in DESIGN.md ("CLI contract"); fields may be added, never
//! changed.

use serde::Serialize;

use super::Scan;
use crate::diag::Diagnostic;
use crate::model::Function;

/// The whole document.
#[derive(Debug, Serialize)]
pub struct Report {
    pub functions: Vec<FunctionEntry>,
    pub diagnostics: Vec<DiagnosticEntry>,
}

#[derive(Debug, Serialize)]
pub struct FunctionEntry {
    pub name: String,
    pub file: String,
    pub line: usize,
    pub platform: &'static str,
    pub arg_spec: Vec<String>,
    pub column: usize,
}

#[derive(Debug, Serialize)]
pub struct DiagnosticEntry {
    pub severity: &'static str,
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Report {
    pub fn new(scan: &Scan) -> Self {
        Report {
            functions: scan.functions.iter().map(function_entry).collect(),
            diagnostics: scan.diagnostics.iter().map(diagnostic_entry).collect(),
        }
    }

    pub fn to_json(&self) -> String {
        // Serialising plain structs of strings and numbers cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// Writes [`Report::to_json`]'s text to `w`.
    pub fn write_json(&self, mut w: impl std::io::Write) -> std::io::Result<()> {
        serde_json::to_writer_pretty(&mut w, self)?;
        w.write_all(b"\n")
    }

    pub fn to_yaml(&self) -> String {
        serde_yaml_ng::to_string(self).unwrap_or_default()
    }
}

fn function_entry(f: &Function) -> FunctionEntry {
    FunctionEntry {
        name: f.name.clone(),
        file: f.file.clone(),
        line: f.line,
        platform: f.platform.as_str(),
        arg_spec: f.arg_spec().iter().map(ToString::to_string).collect(),
        column: f.column,
    }
}

fn diagnostic_entry(d: &Diagnostic) -> DiagnosticEntry {
    DiagnosticEntry {
        severity: d.severity.as_str(),
        file: d.file.clone(),
        line: d.line,
        column: d.column,
        message: d.message.clone(),
        hint: d.hint.clone(),
    }
}

/// A table of the functions for people (diagnostics go to stderr apart).
pub fn table(scan: &Scan) -> String {
    let rows: Vec<[String; 4]> = scan
        .functions
        .iter()
        .map(|f| {
            let spec: Vec<String> = f.arg_spec().iter().map(ToString::to_string).collect();
            [f.name.clone(), format!("{}:{}", f.file, f.line), f.platform.as_str().to_string(), spec.join(" ")]
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
        out.push_str(&format!("{:w0$}  {:w1$}  {:w2$}  {}\n", r[0], r[1], r[2], r[3], w0 = widths[0], w1 = widths[1], w2 = widths[2]));
    }
    let errors = scan.diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = scan.diagnostics.len() - errors;
    out.push_str(&format!(
        "\n{} function(s) in {} source file(s); {errors} error(s), {warnings} warning(s)\n",
        scan.functions.len(),
        scan.sources.len()
    ));
    out
}
