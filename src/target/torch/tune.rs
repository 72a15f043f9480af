//! Tuned kernels in the torch target: a tuned kernel's typed function
//! chooses its candidate at call time from the call's shapes, as the JAX
//! module does (`config=`, `BEGEN_TUNE`, the user's table, the shipped
//! table, the nearest bucket, the default), and caches the choice per key.
//!
//! The table code is the JAX runtime's own tuning section
//! (`build-support/python/begen_runtime/tuning.py`, below its marker): it
//! references jax and numpy only inside two functions, which the torch
//! module redefines after it (the device kind from torch, dtype names from
//! torch dtypes), so the module imports without jax and reads the same
//! tables, keyed by the same FFI target names.

use std::fmt::Write as _;

use crate::emit::tune::{TuneSpec, tune_key};
use crate::model::{Function, Library, Tuned};

/// The JAX runtime's tuning section.
const TUNING_PY: &str = include_str!("../xla_jax/runtime/begen_runtime/tuning.py");

/// The torch module's own definitions over that section.
const TORCH_TUNE_PY: &str = include_str!("tune_runtime.py");

/// The part of the tuning section a module holds.
fn tuning_body() -> &'static str {
    TUNING_PY.split_once("\n# begen: emit below\n").map_or(TUNING_PY, |(_, b)| b).trim_matches('\n')
}

/// What a typed function of a tuned kernel needs: the tuned consts' Python
/// names, and the key dims as (name, input, axis).
pub(crate) struct TorchTune {
    /// The key in `_BEGEN_TUNE` (the kernel's name as the JAX side shows it).
    pub(crate) key: String,
    /// Tuned consts: (const name, its keyword).
    pub(crate) consts: Vec<(String, String)>,
    /// Key dims read from an input's extent (`key: {n: "x[0]"}`): (the
    /// dimension, the input's index among the kernel's inputs, the axis).
    pub(crate) key_at: Vec<(String, usize, usize)>,
}

/// The tuning of `f`, when it is tuned (over its consts, or its source's
/// defines).
pub(crate) fn of(library: &Library, index: usize) -> Option<&Tuned> {
    library.tuning.of(index)
}

/// The typed function's view of a tuned kernel.
pub(crate) fn view(library: &Library, f: &Function, tuned: &Tuned) -> TorchTune {
    let consts = tuned.consts.iter().map(|&k| (f.consts[k].name.clone(), f.consts[k].py_name.clone())).collect();
    TorchTune { key: tune_key(library, f), consts, key_at: tuned.key_at.clone() }
}

/// The module's tuning runtime and its `_BEGEN_TUNE`, for the tuned kernels
/// (`(function, tuning)`) and, with `algorithms`, a tuned algorithm's
/// choice; nothing when there are neither.
pub(crate) fn runtime(library: &Library, tuned: &[(&Function, &Tuned)], algorithms: bool) -> String {
    if tuned.is_empty() && !algorithms {
        return String::new();
    }
    let mut py = String::from("import threading as _threading\n\n");
    // The tables are `<NAME>.tune.json`, named from the JAX library's file.
    let _ = writeln!(
        py,
        "LIBRARY = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), {:?})",
        format!("lib{}.so", library.name)
    );
    py.push_str("_BEGEN_TUNE = {\n");
    for (f, t) in tuned {
        let mut spec = TuneSpec::new(f, t, &tune_key(library, f));
        // The typed function passes the key dims' extents to the choice
        // itself: the tuning section here is given dtype names, not the
        // inputs, so it has nothing to read a `key_at` from.
        spec.key_at = None;
        let _ = writeln!(py, "    {}", spec.line());
    }
    py.push_str("}\n\n");
    py.push_str(tuning_body());
    py.push_str("\n\n\n");
    py.push_str(TORCH_TUNE_PY);
    py.push('\n');
    py
}
