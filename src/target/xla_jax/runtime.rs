//! begen's Python runtime: the fixed helpers of every generated module,
//! written as real Python source in `src/target/xla_jax/runtime/begen_runtime/`
//! (one file per section, unit-tested and linted there) and embedded here.
//! A module holds only the sections its library uses (cxx's builtins way),
//! each from its `# begen: emit below` line on: what stands above that
//! line (the imports, and placeholders for the names the module defines
//! per library) is for using the file on its own. The module's imports are
//! printed once, from [`PY_IMPORTS`], for the sections it holds.

use crate::model::PY_IMPORTS;

/// The line after which a runtime file is emitted.
pub(crate) const MARKER: &str = "# begen: emit below\n";

/// One runtime file, emitted whole or not at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Section {
    /// Registration state, the XLA FFI version gate, the input checks of
    /// every function (every module).
    Core,
    /// Attribute values converted to their declared scalar types.
    Scalars,
    /// A binary kernel's struct attribute, packed into bytes.
    Structs,
    /// An annotated kernel's struct attribute, as a dict.
    Records,
    /// Array attributes.
    Arrays,
    /// Typed contracts: inputs and outputs checked, consts resolved.
    Contracts,
    /// `tune:` kernels: the candidate chosen when a call is traced.
    Tuning,
    /// A binary kernel's lists of arrays.
    Lists,
    /// `unsupported:` attribute values refused.
    Unsupported,
    /// `vjp:` backward kernels, as a jax.custom_vjp.
    Vjp,
    /// `python_vjp:` backward passes, Python functions of the module's own.
    PythonRules,
    /// `linear:`/`jvp:` kernels, as JAX primitives.
    Primitives,
    /// Primitives with groups of inputs linear together (`linear: [[a, b]]`):
    /// their jvp and transpose rules.
    Joint,
    /// Typed kernels across devices: `shard:`/`reduce:` plans.
    Sharding,
    /// `algorithms:` dispatch.
    Algorithms,
    /// An algorithm under `tune:` (`implementations: true`): its
    /// implementation chosen from the tuning tables when traced.
    TuneAlgorithms,
    /// `registry` (every module).
    Registry,
    /// `link: libs:` preloaded from pip's `nvidia` packages.
    Linked,
    /// A library of several modules: module objects.
    Modules,
    /// Kernels with XLA FFI types: string attributes, dictionaries' free
    /// keywords.
    Natives,
    /// Kernels with XLA FFI types: variadic inputs and outputs.
    Variadic,
}

/// Each section with its file under `src/target/xla_jax/runtime/begen_runtime/`,
/// in print order: the one list that `ALL`, `file` and `text` are made from.
macro_rules! section_files {
    ($($section:ident => $file:literal,)*) => {
        impl Section {
            /// Every section, in the order a module prints them.
            #[cfg(test)]
            pub(crate) const ALL: [Section; 21] = [$(Section::$section),*];

            /// The file's name under `src/target/xla_jax/runtime/begen_runtime/`.
            #[cfg(test)]
            pub(crate) fn file(self) -> &'static str {
                match self {
                    $(Section::$section => $file,)*
                }
            }

            /// The file's text.
            pub(crate) fn text(self) -> &'static str {
                match self {
                    $(Section::$section => include_str!(concat!("runtime/begen_runtime/", $file)),)*
                }
            }
        }
    };
}

section_files! {
    Core => "core.py",
    Scalars => "scalars.py",
    Structs => "structs.py",
    Records => "records.py",
    Arrays => "arrays.py",
    Contracts => "contracts.py",
    Tuning => "tuning.py",
    Lists => "lists.py",
    Unsupported => "unsupported.py",
    Vjp => "vjp.py",
    PythonRules => "python_rules.py",
    Primitives => "primitives.py",
    Joint => "joint.py",
    Sharding => "sharding.py",
    Algorithms => "algorithms.py",
    TuneAlgorithms => "tune_algorithms.py",
    Registry => "registry.py",
    Linked => "linked.py",
    Modules => "modules.py",
    Natives => "natives.py",
    Variadic => "variadic.py",
}

impl Section {
    /// The other sections whose helpers this one calls (beside `Core`,
    /// which every module holds): its header's `from .<section> import`.
    pub(crate) fn requires(self) -> &'static [Section] {
        match self {
            Section::Lists => &[Section::Contracts],
            Section::PythonRules => &[Section::Vjp],
            Section::Joint => &[Section::Primitives],
            Section::Algorithms => &[Section::Unsupported],
            Section::TuneAlgorithms => &[Section::Algorithms, Section::Tuning, Section::Unsupported],
            _ => &[],
        }
    }

    /// The part for standalone use: the docstring, imports, placeholders.
    pub(crate) fn header(self) -> &'static str {
        self.text().split_once(MARKER).map_or("", |(header, _)| header)
    }

    /// The part a module holds, without blank lines around it.
    pub(crate) fn body(self) -> &'static str {
        let text = self.text();
        text.split_once(MARKER).map_or(text, |(_, body)| body).trim_matches('\n')
    }
}

/// The sections a module holds: `Core`, `wanted` and what they require, in
/// [`Section::ALL`]'s order.
pub(crate) fn sections(wanted: impl IntoIterator<Item = Section>) -> Vec<Section> {
    let mut chosen = vec![Section::Core];
    let mut todo: Vec<Section> = wanted.into_iter().collect();
    while let Some(s) = todo.pop() {
        if !chosen.contains(&s) {
            chosen.push(s);
            todo.extend_from_slice(s.requires());
        }
    }
    chosen.sort();
    chosen
}

/// The module's import block: each import a chosen section's header has
/// (and `ml_dtypes` when a conversion names it), standard library first,
/// then a blank line and the others.
pub(crate) fn imports(sections: &[Section], ml_dtypes: bool) -> String {
    let used = |statement: &str| {
        (ml_dtypes && statement.contains("ml_dtypes"))
            || sections.iter().any(|s| s.header().lines().any(|line| line == statement))
    };
    let chosen: Vec<_> = PY_IMPORTS.iter().filter(|i| used(i.statement)).collect();
    let group = |third_party: bool| -> Vec<&str> {
        chosen.iter().filter(|i| i.third_party == third_party).map(|i| i.statement).collect()
    };
    [group(false), group(true)].iter().filter(|g| !g.is_empty()).map(|g| g.join("\n")).collect::<Vec<_>>().join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::is_py_reserved;
    use crate::model::pynames::PY_LATE_IMPORTS;

    const TEMPLATE: &str = include_str!("templates/module.py");

    /// `name` of a top-level `def name(`, `class name(`/`:` or `name = `/
    /// `name: ` line of Python text (not a template placeholder).
    fn defined(line: &str) -> Option<&str> {
        let rest = line.strip_prefix("def ").or_else(|| line.strip_prefix("class ")).unwrap_or(line);
        let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
        let name = &rest[..end];
        let after = &rest[end..];
        let is_def = rest.len() != line.len() && (after.starts_with('(') || after.starts_with(':'));
        let is_assignment = after.starts_with(" = ") || after.starts_with(": ");
        (!name.is_empty() && (is_def || is_assignment)).then_some(name)
    }

    /// The top-level names `text` defines.
    fn top_level_names(text: &str) -> Vec<&str> {
        text.lines().filter(|l| !l.starts_with(char::is_whitespace)).filter_map(defined).collect()
    }

    /// The modules `text` imports inside functions (indented `import x` and
    /// `from x import y`).
    fn late_imports(text: &str) -> Vec<&str> {
        text.lines()
            .filter(|l| l.starts_with(char::is_whitespace))
            .filter_map(|l| {
                let l = l.trim_start();
                let rest = l.strip_prefix("import ").or_else(|| l.strip_prefix("from "))?;
                rest.split([' ', '.']).next()
            })
            .collect()
    }

    #[test]
    fn every_file_has_one_marker_and_no_import_below_it() {
        for s in Section::ALL {
            assert_eq!(s.text().matches(MARKER).count(), 1, "{}: one `{}` line", s.file(), MARKER.trim());
            assert!(!s.body().is_empty(), "{}", s.file());
            for line in s.body().lines() {
                assert!(
                    !line.starts_with("import ") && !line.starts_with("from "),
                    "{}: top-level imports belong above the marker, where begen reads them: {line}",
                    s.file()
                );
            }
        }
    }

    #[test]
    fn headers_import_only_the_listed_modules_and_the_required_sections() {
        for s in Section::ALL {
            let mut required = Vec::new();
            for line in s.header().lines().filter(|l| l.starts_with("import ") || l.starts_with("from ")) {
                if let Some(rest) = line.strip_prefix("from .") {
                    let module = rest.split(' ').next().unwrap_or_default();
                    let section = Section::ALL.into_iter().find(|r| r.file() == format!("{module}.py"));
                    let section = section.unwrap_or_else(|| panic!("{}: no section {module}", s.file()));
                    required.push(section);
                } else {
                    assert!(
                        PY_IMPORTS.iter().any(|i| i.statement == line),
                        "{}: `{line}` is not in model::PY_IMPORTS (add it there, in print order)",
                        s.file()
                    );
                }
            }
            required.retain(|r| *r != Section::Core);
            required.sort();
            let mut declared = s.requires().to_vec();
            declared.sort();
            assert_eq!(required, declared, "{}: Section::requires and the header's `from .x import` differ", s.file());
        }
    }

    #[test]
    fn every_name_the_module_defines_is_reserved() {
        let mut names: Vec<&str> = Section::ALL.iter().flat_map(|s| top_level_names(s.body())).collect();
        let template_names = top_level_names(TEMPLATE);
        assert!(template_names.contains(&"register") && template_names.contains(&"_ALGORITHMS"));
        names.extend(template_names);
        for name in names.into_iter().filter(|n| !n.starts_with("__")) {
            assert!(is_py_reserved(name), "`{name}` is defined by the generated module: add it to model::PY_RESERVED");
        }
        for i in PY_IMPORTS {
            assert!(is_py_reserved(i.binds), "{}", i.binds);
        }
    }

    #[test]
    fn every_module_imported_in_a_function_is_listed() {
        let texts = Section::ALL.iter().map(|s| s.body()).chain([TEMPLATE]);
        let modules: Vec<&str> = texts.flat_map(late_imports).collect();
        assert!(modules.contains(&"jaxlib") && modules.contains(&"nvidia"), "{modules:?}");
        for m in modules {
            assert!(
                PY_LATE_IMPORTS.contains(&m) || PY_IMPORTS.iter().any(|i| i.module == m),
                "`{m}` is imported by the generated module: add it to model::PY_LATE_IMPORTS"
            );
            assert!(crate::model::shadows_py_module(m), "{m}");
        }
    }

    #[test]
    fn the_reading_helpers_read_python() {
        assert_eq!(
            top_level_names("def f(x):\nclass C:\nclass D(E):\nX = 1\ny: int = 2\n    z = 3\nf(x)\n"),
            ["f", "C", "D", "X", "y"]
        );
        assert_eq!(late_imports("import os\n    import sys\n    from jax import export\n"), ["sys", "jax"]);
    }

    #[test]
    fn the_standalone_x64_dtypes_are_those_the_module_gets() {
        let line = format!("_BEGEN_WIDE = {}", super::super::python::py_wide_dtypes());
        assert_eq!(line, r#"_BEGEN_WIDE = ("int64", "uint64", "float64", "complex128")"#);
        assert!(Section::Core.header().lines().any(|l| l == line), "core.py's placeholder is not `{line}`");
        assert!(TEMPLATE.contains("_BEGEN_WIDE = {{ m.wide }}"));
    }

    #[test]
    fn all_lists_every_runtime_file_once_in_print_order() {
        assert!(Section::ALL.windows(2).all(|w| w[0] < w[1]), "section_files! lists the sections out of print order");
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/target/xla_jax/runtime/begen_runtime");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".py") && n != "__init__.py")
            .collect();
        on_disk.sort();
        let mut listed: Vec<&str> = Section::ALL.iter().map(|s| s.file()).collect();
        listed.sort();
        assert_eq!(listed, on_disk);
    }

    #[test]
    fn sections_come_with_what_they_require_in_print_order() {
        assert_eq!(sections([]), [Section::Core]);
        assert_eq!(
            sections([Section::Registry, Section::Lists]),
            [Section::Core, Section::Contracts, Section::Lists, Section::Registry]
        );
        assert_eq!(sections([Section::Algorithms]), [Section::Core, Section::Unsupported, Section::Algorithms]);
    }

    #[test]
    fn imports_are_those_of_the_sections_grouped() {
        assert_eq!(
            imports(&[Section::Core], false),
            "import ctypes as _ctypes\nimport os as _os\nimport threading as _threading\n\nimport jax as _jax\nimport numpy as _np"
        );
        let all = imports(&Section::ALL, true);
        for i in PY_IMPORTS {
            assert_eq!(all.matches(i.statement).count(), 1, "{}", i.statement);
        }
        assert!(all.contains("from typing import NamedTuple as _NamedTuple\n\nimport jax as _jax"));
        assert!(!imports(&[Section::Core], false).contains("ml_dtypes"));
    }
}
