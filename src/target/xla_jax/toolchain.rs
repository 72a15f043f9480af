//! What the jax target needs from the machine: XLA's FFI headers — jaxlib
//! `jax_min`'s (from the per-user cache, downloaded once), else
//! `XLA_FFI_INCLUDE_DIR`, else the running jaxlib's — the FFI API version
//! they declare (recorded in the manifest and checked by the module at
//! import), their fingerprint (a jaxlib upgrade recompiles the glue), and
//! its library, `lib<NAME>.so`.

use std::path::Path;

use crate::build::{Discovery, TargetHeaders, TargetToolchain, content_hash, jaxlib_headers, xla_ffi_api_version};
use crate::env::Env;
use crate::error::Result;
use crate::model::generated::JAX;
use crate::model::plan::Plan;

/// The jax target's toolchain needs.
pub(crate) struct XlaFfi;

impl TargetToolchain for XlaFfi {
    fn find(&self, plan: &Plan, discovery: &Discovery, env: &Env) -> Result<TargetHeaders> {
        let include = match plan.jax_min.as_deref() {
            Some(version) => jaxlib_headers(env, &discovery.python(), version)?,
            None => discovery.xla_ffi_include()?,
        };
        Ok(TargetHeaders {
            target: JAX,
            api_version: xla_ffi_api_version(&include),
            fingerprint: fingerprint(&include),
            system_includes: vec![include],
            unit_args: Vec::new(),
            library: plan.outputs.library.clone(),
            undefined_symbols: false,
        })
    }
}

/// The XLA FFI headers' contents, as one fingerprint.
fn fingerprint(include: &Path) -> String {
    let mut parts = Vec::new();
    for header in ["xla/ffi/api/ffi.h", "xla/ffi/api/api.h", "xla/ffi/api/c_api.h"] {
        let hash = content_hash(&include.join(header)).unwrap_or_default();
        parts.push(format!("{header}={hash:016x}"));
    }
    format!("xla-ffi {}", parts.join(" "))
}
