//! begen turns C++/CUDA kernels annotated with `// @BE` into XLA FFI custom
//! calls that JAX can call.
//!
//! The pipeline, one module each, owned by [`driver::run`]:
//! `scan` (walk the tree into the source map, find annotations) ->
//! `parse` (tree-sitter signatures, macro expansion) -> `check` (decide
//! everything: arg_specs, modules, names; diagnose) -> `emit` (askama:
//! C++ wrappers, Python module, manifest) -> `build` (cc: compile; link a
//! shared library). `scan` and `parse` are the annotated-source front end:
//! what it hands `check` (the model's `decl` items) is the seam a second
//! front end plugs into. [`Build`] is the build.rs front end; the `begen`
//! binary is the CLI front end.
//!
//! The stages are private; the public API is the builder ([`Build`]), the
//! driver's entry points and settings ([`driver`]), the diagnostics and
//! their rendering ([`diag`]), a read-only view of the checked library
//! ([`Library`], [`Function`]) and one opaque [`Error`].
//!
//! ```no_run
//! let run = begen::driver::run(&begen::driver::Settings::new("kernels"))?;
//! for d in &run.diagnostics {
//!     eprintln!("{}", begen::diag::render::render_text(d, &run.sources, false));
//! }
//! # Ok::<(), begen::Error>(())
//! ```

#![warn(missing_docs)]

mod binary;
mod build;
mod buildrs;
mod check;
/// The `begen` command line (the binary's `main`), behind the `cli` feature.
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;
mod config;
pub mod diag;
pub mod driver;
mod emit;
mod env;
mod error;
mod model;
mod par;
mod parse;
mod report;
mod scan;
mod settings;
mod source;
mod target;

/// The readers of begen's work-directory records, for tests/fuzz.rs.
#[doc(hidden)]
pub use build::fuzz_hooks;
pub use buildrs::Build;
/// The cc crate as begen uses it: the type of [`Build::cc_host`] and
/// [`Build::cc_cuda`].
pub use cc;
pub use error::{Error, ErrorKind, Result};
pub use model::{Function, Library};
