//! begen turns C++/CUDA kernels annotated with `// @BE` into XLA FFI custom
//! calls that JAX can call.
//!
//! The pipeline, one module each:
//! `scan` (walk the tree, find annotations) -> `parse` (tree-sitter
//! signatures, macro expansion) -> `check` (infer the arg_spec, diagnose) ->
//! `emit` (askama: C++ wrappers, Python module, manifest) -> `build` (cc:
//! compile; link a shared library). [`Build`] is the build.rs front end; the
//! `begen` binary is the CLI front end.

pub mod build;
pub mod check;
pub mod config;
pub mod diag;
pub mod emit;
pub mod error;
pub mod model;
pub mod parse;
pub mod scan;

pub use build::Build;
pub use error::{Error, Result};
