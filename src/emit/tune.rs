//! The `_BEGEN_TUNE` entry of a tuned kernel: the one spelling of the
//! tuning spec that the generated modules embed and the shared tuning
//! runtime (`src/target/xla_jax/runtime/begen_runtime/tuning.py`, which
//! the torch module holds too) and `begen tune` read. The JAX module's
//! entries carry what `begen tune` calls and feeds the kernel; the torch
//! module's only what the runtime chooses with.

use crate::model::{ConstKind, Function, Library, Tuned};

use super::names::{PyLit, py_str};

/// The keys of an entry, in the order the modules write them.
pub(crate) mod key {
    /// The FFI target without the instance (`prefix.name`), the table's
    /// `kernel`.
    pub(crate) const TARGET: &str = "target";
    pub(crate) const PLATFORM: &str = "platform";
    /// Each tuned parameter's (kind, values, default).
    pub(crate) const CONSTS: &str = "consts";
    /// The key dims.
    pub(crate) const KEY: &str = "key";
    /// The hash of what the candidates are compiled from.
    pub(crate) const HASH: &str = "hash";
    /// The function's path from the module.
    pub(crate) const CALL: &str = "call";
    /// The inputs' contracts.
    pub(crate) const ARGS: &str = "args";
    /// Each type const's values.
    pub(crate) const TYPES: &str = "types";
    /// Each attribute's keyword and Python type.
    pub(crate) const ATTRS: &str = "attrs";
    /// `module:function` generating inputs, or `None`.
    pub(crate) const INPUTS: &str = "inputs";
    /// The built candidates of a source tuned over defines.
    pub(crate) const CANDIDATES: &str = "candidates";
    /// The key dims read from an input's extent.
    pub(crate) const KEY_AT: &str = "key_at";
    /// An algorithm's implementations per platform.
    pub(crate) const IMPLEMENTATIONS: &str = "implementations";
}

/// One entry of `_BEGEN_TUNE` (every field a Python literal): what the
/// runtime chooses a candidate with and, in the JAX module, what `begen
/// tune` measures with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TuneSpec {
    /// The entry's key: the function as its messages name it (`name` or
    /// `module.name`, [`tune_key`]).
    pub(crate) key: String,
    /// The FFI target without the instance (`prefix.name`).
    pub(crate) target: String,
    pub(crate) platform: String,
    /// Each tuned const (then define): its name, and (kind, its values,
    /// its default).
    pub(crate) consts: Vec<(String, PyLit)>,
    /// The key dims.
    pub(crate) dims: PyLit,
    pub(crate) hash: String,
    /// What `begen tune` calls and feeds the kernel (the JAX module's
    /// entries; none in the torch module's).
    pub(crate) call: Option<TuneCall>,
    /// A source tuned over defines: every built candidate, a tuple of
    /// values in the order of `consts` (the others are not built).
    pub(crate) candidates: Option<PyLit>,
    /// The key dims read from an input's extent: `(dim, input index,
    /// axis)` each; None when every key dim is a typed one.
    pub(crate) key_at: Option<PyLit>,
    /// An algorithm tuned over its implementations: each platform's
    /// implementations, best first (None for a kernel).
    pub(crate) implementations: Option<String>,
}

/// What `begen tune` calls a tuned kernel with (every field a literal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TuneCall {
    /// The function's path from the module (`name` or `module.name`).
    pub(crate) call: String,
    /// The inputs' contracts, as `_begen_inputs` takes them.
    pub(crate) args: PyLit,
    /// Each type const: its name and values.
    pub(crate) types: Vec<(String, PyLit)>,
    /// Each attribute's keyword and Python type.
    pub(crate) attrs: PyLit,
    /// `module:function`, or `None`.
    pub(crate) inputs: String,
}

/// The name a tuned kernel's entry is keyed by: `name`, or `module.name`
/// in a library of modules.
pub(crate) fn tune_key(library: &Library, f: &Function) -> String {
    if library.namespaced { format!("{}.{}", f.module, f.name) } else { f.name.clone() }
}

/// `{k: v, ...}` of literals.
fn py_dict(pairs: &[(String, PyLit)]) -> String {
    let items: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    format!("{{{}}}", items.join(", "))
}

impl TuneSpec {
    /// The entry of `f`, tuned as `tuned`, keyed `shown`: what both
    /// modules' entries hold (no [`TuneCall`]); `key_at` and `candidates`
    /// where `tuned` has them.
    pub(crate) fn new(f: &Function, tuned: &Tuned, shown: &str) -> TuneSpec {
        let consts = tuned
            .consts
            .iter()
            .zip(&tuned.default)
            .map(|(&k, default)| {
                let c = &f.consts[k];
                let kind = match c.kind {
                    ConstKind::Type => "type",
                    ConstKind::Value(ty) => ty.kind().py_type(),
                };
                (py_str(&c.name), PyLit::tuple([kind.into(), PyLit::strs(&c.values), default.as_str().into()]))
            })
            .chain(tuned.defines.iter().enumerate().map(|(k, name)| {
                let values = PyLit::strs(&tuned.define_values[k]);
                (py_str(name), PyLit::tuple(["int".into(), values, tuned.define_default[k].as_str().into()]))
            }))
            .collect();
        // Where `where:` leaves combinations out: the ones built, as tuples
        // of every tuned parameter's value (the consts', then the defines').
        let candidates = (!tuned.defines.is_empty()).then(|| {
            PyLit::tuple(f.instances.iter().map(|i| {
                let consts = tuned.consts.iter().map(|&k| i.values[k].clone());
                PyLit::strs(consts.chain(i.defines.iter().map(|(_, v)| v.clone())))
            }))
        });
        TuneSpec {
            key: py_str(shown),
            target: py_str(&f.target),
            platform: py_str(f.platform.as_str()),
            consts,
            dims: PyLit::strs(&tuned.key),
            hash: py_str(&tuned.hash),
            call: None,
            candidates,
            key_at: (!tuned.key_at.is_empty()).then(|| {
                PyLit::tuple(tuned.key_at.iter().map(|(dim, input, axis)| {
                    PyLit::tuple([dim.as_str().into(), PyLit::Raw(input.to_string()), PyLit::Raw(axis.to_string())])
                }))
            }),
            implementations: None,
        }
    }

    /// The entry's fields, in order, each (key, value literal); the
    /// absent ones left out.
    pub(crate) fn fields(&self) -> Vec<(&'static str, String)> {
        let mut out = vec![
            (key::TARGET, self.target.clone()),
            (key::PLATFORM, self.platform.clone()),
            (key::CONSTS, py_dict(&self.consts)),
            (key::KEY, self.dims.to_string()),
            (key::HASH, self.hash.clone()),
        ];
        if let Some(c) = &self.call {
            out.push((key::CALL, c.call.clone()));
            out.push((key::ARGS, c.args.to_string()));
            out.push((key::TYPES, py_dict(&c.types)));
            out.push((key::ATTRS, c.attrs.to_string()));
            out.push((key::INPUTS, c.inputs.clone()));
        }
        if let Some(c) = &self.candidates {
            out.push((key::CANDIDATES, c.to_string()));
        }
        if let Some(a) = &self.key_at {
            out.push((key::KEY_AT, a.to_string()));
        }
        if let Some(i) = &self.implementations {
            out.push((key::IMPLEMENTATIONS, i.clone()));
        }
        out
    }

    /// The entry on one line, `KEY: {"target": ..., ...},` (the torch
    /// module's layout; the JAX module's template writes a field a line).
    pub(crate) fn line(&self) -> String {
        let fields: Vec<String> = self.fields().iter().map(|(k, v)| format!("{}: {v}", py_str(k))).collect();
        format!("{}: {{{}}},", self.key, fields.join(", "))
    }
}
