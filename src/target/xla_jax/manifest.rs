//! `<name>.yaml`: what a build produced, for tools and people. Serialized
//! with serde so that it is always valid YAML, whatever the names hold.

use serde::Serialize;

use crate::model::{Library, Platform};

/// The manifest document.
///
/// ```yaml
/// library: mykernels
/// shared_library: libmykernels.so
/// python_module: mykernels.py
/// target_prefix: mykernels
/// platform: cpu
/// xla_ffi_api_version: '0.3'
/// xla_ffi_api_symbol: begen_ffi_api__mykernels
/// begen_version: 0.1.0
/// modules:
/// - name: mykernels
///   functions: [scale_by]
/// functions:
/// - name: scale_by
///   module: mykernels
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
pub(crate) struct Manifest {
    pub(crate) library: String,
    pub(crate) shared_library: String,
    pub(crate) python_module: String,
    pub(crate) target_prefix: String,
    /// `cuda` when any function is CUDA, else `cpu`.
    pub(crate) platform: String,
    pub(crate) xla_ffi_api_version: Option<String>,
    /// The oldest jax release the library loads on, when it was built for
    /// one (`--jax-min`): its range is that release and every newer one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) jax_min: Option<String>,
    /// The library's exported `const char* (void)` returning the version
    /// its handlers were compiled against (what the Python module checks).
    pub(crate) xla_ffi_api_symbol: String,
    pub(crate) begen_version: String,
    pub(crate) modules: Vec<ManifestModule>,
    pub(crate) functions: Vec<ManifestFunction>,
    /// begen.yaml's algorithms (absent when there are none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) algorithms: Vec<ManifestAlgorithm>,
}

/// One algorithm: its implementations, best first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ManifestAlgorithm {
    pub(crate) name: String,
    pub(crate) fallback: bool,
    pub(crate) implementations: Vec<ManifestImplementation>,
}

/// One implementation of an algorithm.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ManifestImplementation {
    pub(crate) function: String,
    pub(crate) module: String,
    pub(crate) platform: String,
    pub(crate) priority: i64,
}

/// One module of the manifest: its name and its functions' names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ManifestModule {
    pub(crate) name: String,
    pub(crate) functions: Vec<String>,
}

/// One function of the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ManifestFunction {
    pub(crate) name: String,
    pub(crate) module: String,
    pub(crate) file: String,
    pub(crate) line: usize,
    pub(crate) platform: String,
    pub(crate) target: String,
    pub(crate) handler_symbol: String,
    pub(crate) arg_spec: Vec<String>,
    pub(crate) command_buffer: bool,
    pub(crate) vmap_method: String,
    /// Set when XLA must keep every call.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) has_side_effect: bool,
    /// The backward kernel of the function's `jax.custom_vjp`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) vjp: Option<String>,
    /// A template kernel's instantiations (absent for a plain function).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) instances: Vec<ManifestInstance>,
    /// A precompiled kernel's binary (absent for an annotated function).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) binary: Option<ManifestBinary>,
}

/// The binary a precompiled kernel launches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ManifestBinary {
    /// Relative to the root.
    pub(crate) file: String,
    pub(crate) symbol: String,
    pub(crate) convention: String,
}

/// One instantiation of a template kernel: its own target and handler.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ManifestInstance {
    /// `name[T=float32,N=4]`.
    pub(crate) key: String,
    pub(crate) target: String,
    pub(crate) handler_symbol: String,
}

/// Builds the manifest of `lib`.
pub(crate) fn manifest(lib: &Library, xla_api_version: Option<&str>) -> Manifest {
    let any_cuda = lib.functions.iter().any(|f| f.platform == Platform::Cuda);
    Manifest {
        library: lib.name.clone(),
        shared_library: lib.plan.outputs.library.clone(),
        python_module: lib.plan.outputs.module.clone(),
        target_prefix: lib.prefix.clone(),
        platform: if any_cuda { Platform::Cuda } else { Platform::Cpu }.as_str().to_string(),
        xla_ffi_api_version: xla_api_version.map(String::from),
        jax_min: lib.plan.jax_min.clone(),
        xla_ffi_api_symbol: super::cpp::ffi_api_symbol(&lib.name),
        begen_version: env!("CARGO_PKG_VERSION").to_string(),
        modules: lib
            .modules
            .iter()
            .map(|m| ManifestModule {
                name: m.name.clone(),
                functions: m.functions.iter().map(|&k| lib.functions[k].name.clone()).collect(),
            })
            .collect(),
        functions: lib
            .functions
            .iter()
            .map(|f| ManifestFunction {
                name: f.name.clone(),
                module: f.module.clone(),
                file: f.file.clone(),
                line: f.line,
                platform: f.platform.as_str().to_string(),
                target: f.target.clone(),
                handler_symbol: f.handler.clone(),
                arg_spec: f.arg_spec(),
                command_buffer: f.options.command_buffer,
                vmap_method: f.options.vmap_method.as_str().to_string(),
                has_side_effect: f.options.has_side_effect,
                vjp: f.options.vjp.clone(),
                instances: f
                    .instances
                    .iter()
                    .map(|i| ManifestInstance {
                        key: i.key.clone(),
                        target: i.target.clone(),
                        handler_symbol: i.handler.clone(),
                    })
                    .collect(),
                binary: f.binary.as_ref().map(|b| ManifestBinary {
                    file: lib.binaries.get(b.image).map_or_else(String::new, |i| i.file.clone()),
                    symbol: b.symbol.clone(),
                    convention: b.convention.name().to_string(),
                }),
            })
            .collect(),
        algorithms: lib
            .algorithms
            .iter()
            .map(|a| ManifestAlgorithm {
                name: a.name.clone(),
                fallback: a.fallback,
                implementations: a
                    .implementations
                    .iter()
                    .map(|i| {
                        let f = &lib.functions[i.function];
                        ManifestImplementation {
                            function: f.name.clone(),
                            module: f.module.clone(),
                            platform: f.platform.as_str().to_string(),
                            priority: i.priority,
                        }
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// The manifest as YAML. Serialising plain structs of strings, numbers and
/// booleans cannot fail.
pub(crate) fn emit_manifest(lib: &Library, xla_api_version: Option<&str>) -> String {
    serde_yaml_ng::to_string(&manifest(lib, xla_api_version)).unwrap_or_default()
}
