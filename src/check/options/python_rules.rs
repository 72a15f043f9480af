//! `python_vjp: module:function`: a kernel's backward pass written as a
//! Python function of the generated module's own functions (a sparse
//! solver's cotangent is another solve), so no backward kernel is needed.
//!
//! Checked here: the form (Python identifiers, no keywords), that no other
//! derivative option sits beside it, and, where `module` is a `.py` file
//! beside begen.yaml, that the file defines the function at its top level
//! (with did-you-mean among the functions it does define). A module with
//! no such file is imported by name when the backward pass first runs.

use crate::config::{FunctionConfig, yaml_path};
use crate::diag::Diagnostic;
use crate::diag::messages as msg;
use crate::model::PythonRule;
use crate::settings::RunInput;

/// The rule `key`'s entry of `functions:` names, checked; `None` (with
/// the errors pushed onto `diags`) where it has none or it is wrong.
pub(in crate::check) fn check(
    req: &RunInput,
    key: &str,
    opts: &FunctionConfig,
    diags: &mut Vec<Diagnostic>,
) -> Option<PythonRule> {
    let spec = opts.python_vjp.as_deref()?;
    let at = req.locate().value(&yaml_path!["functions", key, "python_vjp"]);
    let mut failed = false;
    let beside = [
        ("vjp", opts.vjp.is_some()),
        ("jvp", opts.jvp.is_some()),
        ("linear", opts.linear.is_some()),
        ("transpose", !opts.transpose.is_empty()),
    ];
    for (other, set) in beside {
        if set && let Some(span) = req.locate().key(&yaml_path!["functions", key, "python_vjp"]) {
            diags.push(Diagnostic::error(span, msg::python_rule_beside(key, other)));
            failed = true;
        }
    }
    let Some((module, function)) = split(spec) else {
        if let Some(span) = at {
            diags.push(Diagnostic::error(span, msg::python_rule_form(spec)).hint(msg::HINT_PYTHON_RULE));
        }
        return None;
    };
    let rel = format!("{}.py", module.replace('.', "/"));
    let path = req.root.join(&rel);
    let file = if path.is_file() {
        let text = match std::fs::read_to_string(&path) {
            Ok(text) if text.chars().any(crate::model::is_invisible) => {
                Err("it holds characters that change how text is shown (bidirectional or zero-width)".to_string())
            }
            Ok(text) => Ok(text),
            Err(e) => Err(e.to_string()),
        };
        match text {
            Ok(text) => {
                let defined = top_level_functions(&text);
                if !defined.contains(&function) {
                    if let Some(span) = at {
                        let near = crate::diag::suggest::closest(function, defined.iter().copied());
                        diags.push(
                            Diagnostic::error(span, msg::python_rule_missing(spec, &rel, function, near))
                                .hint(msg::HINT_PYTHON_RULE),
                        );
                    }
                    return None;
                }
                Some((rel, text))
            }
            Err(why) => {
                if let Some(span) = at {
                    diags.push(Diagnostic::error(span, msg::python_rule_unreadable(&rel, &why)));
                }
                return None;
            }
        }
    } else {
        None
    };
    (!failed).then(|| PythonRule { module: module.to_string(), function: function.to_string(), file })
}

/// `module:function` split, when each part is made of Python identifiers
/// (the module's joined by `.`) and none is a Python keyword.
fn split(spec: &str) -> Option<(&str, &str)> {
    let (module, function) = spec.split_once(':')?;
    (module.split('.').all(is_py_name) && is_py_name(function)).then_some((module, function))
}

/// An ASCII Python identifier that is not a keyword.
fn is_py_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !crate::model::is_py_keyword(name)
}

/// The functions a Python file defines at its top level (`def name(`,
/// `async def name(` at the start of a line).
fn top_level_functions(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|line| line.strip_prefix("async ").unwrap_or(line).strip_prefix("def "))
        .filter_map(|rest| rest.split(['(', ' ', ':']).next())
        .filter(|name| is_py_name(name))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_is_module_colon_function_of_python_names() {
        assert_eq!(split("rules:solve_vjp"), Some(("rules", "solve_vjp")));
        assert_eq!(split("pkg.rules:f"), Some(("pkg.rules", "f")));
        // C++ keywords are Python names; Python's are not.
        assert_eq!(split("new:delete"), Some(("new", "delete")));
        for bad in ["rules", "rules:", ":f", "rules:lambda", "class.rules:f", "pkg..rules:f", "ru-les:f", "a:b:c"] {
            assert_eq!(split(bad), None, "{bad}");
        }
    }

    #[test]
    fn only_top_level_functions_count() {
        let text = "import jax\n\ndef solve_vjp(m, *a):\n    def inner():\n        pass\nasync def later(x): ...\nclass C:\n    def method(self): ...\n";
        assert_eq!(top_level_functions(text), ["solve_vjp", "later"]);
    }
}
