//! begen.yaml's feature options of `functions:` and the library's, each
//! checked at build time so that the generated rules never meet a kernel
//! they do not fit: `algorithms:` and the gradients (`algorithms.rs`),
//! `tune:` (`tune.rs`, its `where:` language in `tune_where.rs`),
//! `instantiate:` (`creator.rs`), `linear:`/`transpose:`/`jvp:`
//! (`primitives.rs`), `shard:`/`reduce:` (`sharding.rs`) and `vmap: fold:`
//! (`fold.rs`), `python_vjp:` (`python_rules.rs`).

pub(super) mod algorithms;
pub(super) mod creator;
pub(super) mod fold;
pub(super) mod primitives;
pub(super) mod python_rules;
pub(super) mod sharding;
pub(super) mod tune;
pub(super) mod tune_where;
