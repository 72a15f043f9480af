//! One declared function, typed: its arg_spec from inline or begen.yaml
//! tokens (`tokens.rs`, named contracts in `named.rs`) cross-checked
//! against the signature or inferred from it (`infer.rs`, XLA FFI's own
//! types in `native.rs`), its struct and array attributes (`attrs.rs`) and
//! its shape contract (`contract.rs`); `arg_spec.rs` puts them together.

pub(super) mod arg_spec;
pub(super) mod attrs;
pub(super) mod contract;
pub(super) mod infer;
pub(super) mod named;
pub(super) mod native;
pub(super) mod tokens;
