//! The library as a whole: which module each source's functions belong to
//! (`modules.rs`), the Python names (`names.rs`) and every symbol
//! (`symbols.rs`), begen.yaml's precompiled kernels (`binaries.rs`) and
//! the build plan (`plan.rs`).

pub(super) mod binaries;
pub(super) mod modules;
pub(super) mod names;
pub(super) mod plan;
pub(super) mod symbols;
