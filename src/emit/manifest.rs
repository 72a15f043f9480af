//! `<name>.yaml`: what a build produced, for tools and people. Serialized
//! with serde so that it is always valid YAML, whatever the names hold.

use serde::Serialize;

use crate::error::Error;
use crate::model::{Library, Platform};

use super::names::{handler_symbol, target_name};

/// The manifest document.
///
/// ```yaml
/// library: mykernels
/// shared_library: libmykernels.so
/// python_module: mykernels.py
/// target_prefix: mykernels
/// platform: cpu
/// xla_ffi_api_version: '0.3'
/// begen_version: 0.1.0
/// functions:
/// - name: scale_by
///   file: a.cpp
///   line: 4
///   platform: cpu
///   target: mykernels.scale_by
///   handler_symbol: begen_mykernels_scale_by
///   arg_spec: [arg, ret, attr.scale_factor:float32]
///   command_buffer: false
///   vmap_method: sequential
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Manifest {
    pub library: String,
    pub shared_library: String,
    pub python_module: String,
    pub target_prefix: String,
    /// `cuda` when any function is CUDA, else `cpu`.
    pub platform: String,
    pub xla_ffi_api_version: Option<String>,
    pub begen_version: String,
    pub functions: Vec<ManifestFunction>,
}

/// One function of the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ManifestFunction {
    pub name: String,
    pub file: String,
    pub line: usize,
    pub platform: String,
    pub target: String,
    pub handler_symbol: String,
    pub arg_spec: Vec<String>,
    pub command_buffer: bool,
    pub vmap_method: String,
}

/// Builds the manifest of `lib`.
pub fn manifest(lib: &Library, xla_api_version: Option<&str>) -> Manifest {
    let any_cuda = lib.functions.iter().any(|f| f.platform == Platform::Cuda);
    Manifest {
        library: lib.name.clone(),
        shared_library: format!("lib{}.so", lib.name),
        python_module: format!("{}.py", lib.name),
        target_prefix: lib.prefix.clone(),
        platform: if any_cuda { Platform::Cuda } else { Platform::Cpu }.as_str().to_string(),
        xla_ffi_api_version: xla_api_version.map(String::from),
        begen_version: env!("CARGO_PKG_VERSION").to_string(),
        functions: lib
            .functions
            .iter()
            .map(|f| ManifestFunction {
                name: f.name.clone(),
                file: f.file.clone(),
                line: f.line,
                platform: f.platform.as_str().to_string(),
                target: target_name(&lib.prefix, &f.name),
                handler_symbol: handler_symbol(&lib.name, &f.name),
                arg_spec: f.arg_spec().iter().map(|t| t.to_string()).collect(),
                command_buffer: f.options.command_buffer,
                vmap_method: f.options.vmap_method.as_str().to_string(),
            })
            .collect(),
    }
}

pub(crate) fn emit_manifest(lib: &Library, xla_api_version: Option<&str>) -> Result<String, Error> {
    serde_yaml_ng::to_string(&manifest(lib, xla_api_version))
        .map_err(|e| Error::Other(format!("cannot serialize the manifest: {e}")))
}
