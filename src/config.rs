//! `begen.yaml`: optional configuration at the kernel directory's root.
//!
//! ```yaml
//! name: mykernels            # library name (default: the directory's name)
//! prefix: mykernels          # FFI target prefix (default: name)
//! platform: auto             # cpu | cuda | auto
//! cuda:
//!   arch: [sm_90]            # else BEGEN_CUDA_ARCH, the local GPU, a default
//!   flags: [-lineinfo]
//! cxx_flags: [-O3]
//! include_dirs: [third_party/include]   # relative to the root
//! functions:                 # per-function options
//!   scale: {command_buffer: true, vmap_method: broadcast_all}
//! sources:                   # the seed's explicit forms, per source file
//!   ops/add.cu: {vector_add: [arg, arg, ret, stream]}   # dict form
//!   ops/cpu.cpp: [add_one]                              # list form
//! ```
//! Unknown keys are errors.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::model::VmapMethod;

/// The parsed `begen.yaml` (all fields optional).
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub name: Option<String>,
    pub prefix: Option<String>,
    pub platform: Option<String>,
    #[serde(default)]
    pub cuda: CudaConfig,
    #[serde(default)]
    pub cxx_flags: Vec<String>,
    #[serde(default)]
    pub include_dirs: Vec<String>,
    #[serde(default)]
    pub functions: BTreeMap<String, FunctionConfig>,
    #[serde(default)]
    pub sources: BTreeMap<String, SourceSpec>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CudaConfig {
    #[serde(default)]
    pub arch: Vec<String>,
    #[serde(default)]
    pub flags: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FunctionConfig {
    pub command_buffer: Option<bool>,
    pub vmap_method: Option<String>,
}

impl FunctionConfig {
    pub fn vmap(&self) -> Option<VmapMethod> {
        self.vmap_method.as_deref().and_then(VmapMethod::parse)
    }
}

/// The seed's two explicit forms for one source file.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum SourceSpec {
    /// `{vector_add: [arg, arg, ret, stream]}`: tokens given per function.
    Dict(BTreeMap<String, Vec<String>>),
    /// `[add_one]`: names whose arg_spec is auto-detected.
    List(Vec<String>),
}
