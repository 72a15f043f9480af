//! begen's Python runtime: the fixed helpers of every generated module,
//! written as real Python source in `build-support/python/begen_runtime/`
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
pub enum Section {
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
    /// A binary kernel's lists of arrays.
    Lists,
    /// `unsupported:` attribute values refused.
    Unsupported,
    /// `vjp:` backward kernels, as a jax.custom_vjp.
    Vjp,
    /// `algorithms:` dispatch.
    Algorithms,
    /// `registry` (every module).
    Registry,
    /// `link: libs:` preloaded from pip's `nvidia` packages.
    Linked,
    /// A library of several modules: module objects.
    Modules,
}

impl Section {
    /// Every section, in the order a module prints them.
    #[cfg(test)]
    pub const ALL: [Section; 13] = [
        Section::Core,
        Section::Scalars,
        Section::Structs,
        Section::Records,
        Section::Arrays,
        Section::Contracts,
        Section::Lists,
        Section::Unsupported,
        Section::Vjp,
        Section::Algorithms,
        Section::Registry,
        Section::Linked,
        Section::Modules,
    ];

    /// The file's name under `build-support/python/begen_runtime/`.
    #[cfg(test)]
    pub fn file(self) -> &'static str {
        match self {
            Section::Core => "core.py",
            Section::Scalars => "scalars.py",
            Section::Structs => "structs.py",
            Section::Records => "records.py",
            Section::Arrays => "arrays.py",
            Section::Contracts => "contracts.py",
            Section::Lists => "lists.py",
            Section::Unsupported => "unsupported.py",
            Section::Vjp => "vjp.py",
            Section::Algorithms => "algorithms.py",
            Section::Registry => "registry.py",
            Section::Linked => "linked.py",
            Section::Modules => "modules.py",
        }
    }

    /// The file's text.
    pub fn text(self) -> &'static str {
        macro_rules! file {
            ($name:literal) => {
                include_str!(concat!("../../build-support/python/begen_runtime/", $name))
            };
        }
        match self {
            Section::Core => file!("core.py"),
            Section::Scalars => file!("scalars.py"),
            Section::Structs => file!("structs.py"),
            Section::Records => file!("records.py"),
            Section::Arrays => file!("arrays.py"),
            Section::Contracts => file!("contracts.py"),
            Section::Lists => file!("lists.py"),
            Section::Unsupported => file!("unsupported.py"),
            Section::Vjp => file!("vjp.py"),
            Section::Algorithms => file!("algorithms.py"),
            Section::Registry => file!("registry.py"),
            Section::Linked => file!("linked.py"),
            Section::Modules => file!("modules.py"),
        }
    }

    /// The other sections whose helpers this one calls (beside `Core`,
    /// which every module holds): its header's `from .<section> import`.
    pub fn requires(self) -> &'static [Section] {
        match self {
            Section::Lists => &[Section::Contracts],
            Section::Algorithms => &[Section::Unsupported],
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
pub fn sections(wanted: impl IntoIterator<Item = Section>) -> Vec<Section> {
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
pub fn imports(sections: &[Section], ml_dtypes: bool) -> String {
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
