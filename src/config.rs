//! `begen.yaml`: optional configuration at the kernel directory's root.
//!
//! ```yaml
//! name: mykernels            # library name (default: the directory's name)
//! prefix: mykernels          # FFI target prefix (default: name)
//! platform: auto             # cpu | cuda | auto
//! jax_min: "0.10.2"          # the oldest jax to load on (default: the running one)
//! targets: [jax, torch]       # the bindings to build (default: jax)
//! cuda:
//!   arch: [sm_90]            # else BEGEN_CUDA_ARCH, the local GPU, a default
//!   flags: [-lineinfo]
//! cxx_flags: [-O3]
//! compiler_launcher: ccache  # every compile runs through it (BEGEN_COMPILER_LAUNCHER wins)
//! include_dirs: [third_party/include]   # relative to the root
//! functions:                 # per-function options
//!   scale: {command_buffer: true, vmap_method: broadcast_all, has_side_effect: false}
//!   square: {vjp: square_bwd}                 # the backward kernel: a jax.custom_vjp
//!   add_fast: {unsupported: {alpha: [0.0]}}   # attribute values it refuses
//!   mv: {linear: [A, x], transpose: {A: mv_tA, x: mv_tx}}   # a JAX primitive
//!   tanh_k: {jvp: tanh_jvp, zero_outputs: true}       # its tangent kernel
//! algorithms:                # one Python function, several implementations
//!   add: [{function: add_fast, priority: 10}, add_cpu, add_cuda]
//!   mul: {fallback: false, implementations: [mul_cpu, mul_cuda]}
//! sources:                   # the explicit forms, per source file
//!   ops/add.cu: {vector_add: [arg, arg, ret, stream]}   # dict form
//!   ops/cpu.cpp: [add_one]                              # list form
//! modules:                   # namespaces: targets are <module>.<function>
//!   per-file: true           # every source its own module, named from its path
//!   names: {_dense/mm.cu: dense_mm}   # a file or a directory -> a module
//! variants:                 # a source compiled again with defines, into its own module
//!   _csr/mv.cu: [{module: csr_mv_b256, defines: {BLOCK: 256}}]
//! structs: {Affine: [tag:uint16, scale:float64]}   # passed by value to binary kernels
//! binaries:                  # precompiled kernels (see `BinaryConfig`)
//!   - {file: k.cubin, convention: c, kernels: {k: {params: [...], grid: [1], block: [128]}}}
//! tune:                      # candidates compiled in, chosen per device and shape
//!   colsum: {consts: [BLOCK], key: [n]}
//!   table: tuning/kernels.tune.json   # shipped as OUT/<NAME>.tune.json
//! contracts:                # a whole arg_spec, named once: `// @BE k contract=pair`
//!   pair: "arg:float64[n, d] arg:float64[m, d] ret:float64[n, m]"
//! warnings: {order: false}   # begen warnings turned off (also per function)
//! link:
//!   libs: [cublas]           # CUDA toolkit libraries are found where nvcc's toolkit is
//!   dirs: [third_party/lib]  # relative to the root
//!   args: []                 # passed to the linker as they are
//! ```
//! Unknown keys are errors. This module reads the file's shape and finds
//! where its keys are written; what the values mean is `check`'s to decide.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::diag::{Diagnostic, messages as msg};
use crate::source::{FileId, SourceMap, Span};

/// The configuration file's name, at the kernel directory's root.
pub(crate) const FILE: &str = "begen.yaml";

/// The parsed `begen.yaml` (all fields optional).
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct Config {
    pub(crate) name: Option<String>,
    pub(crate) prefix: Option<String>,
    pub(crate) platform: Option<String>,
    /// The oldest jax release the library loads on: handlers are compiled
    /// against that jaxlib's XLA FFI headers.
    pub(crate) jax_min: Option<String>,
    /// The binding targets to build (`[jax, torch]`; default: jax).
    #[serde(default)]
    pub(crate) targets: Vec<String>,
    #[serde(default)]
    pub(crate) cuda: CudaConfig,
    #[serde(default)]
    pub(crate) cxx_flags: Vec<String>,
    /// A program every compile runs through (`ccache`, `sccache`).
    pub(crate) compiler_launcher: Option<String>,
    #[serde(default)]
    pub(crate) include_dirs: Vec<String>,
    #[serde(default)]
    pub(crate) functions: BTreeMap<String, FunctionConfig>,
    #[serde(default)]
    pub(crate) sources: BTreeMap<String, SourceSpec>,
    pub(crate) modules: Option<ModulesConfig>,
    #[serde(default)]
    pub(crate) link: LinkConfig,
    /// Sources compiled again with other defines, each into its own module.
    #[serde(default)]
    pub(crate) variants: BTreeMap<String, Vec<VariantConfig>>,
    /// Algorithms: a Python function dispatching to the best implementation
    /// for the platform it is lowered for.
    #[serde(default)]
    pub(crate) algorithms: BTreeMap<String, AlgorithmConfig>,
    /// Structs passed by value to binary kernels: name -> members
    /// (`[tag:uint16, scale:float64]`), in C layout.
    #[serde(default)]
    pub(crate) structs: BTreeMap<String, Vec<String>>,
    /// Precompiled GPU kernels (see `BinaryConfig`).
    #[serde(default)]
    pub(crate) binaries: Vec<BinaryConfig>,
    /// Tuned kernels (a kernel's name -> [`TuneConfig`]) and `table:`, the
    /// shipped tuning table; each entry is read by `check`, which reports
    /// its mistakes where they are written.
    #[serde(default)]
    pub(crate) tune: BTreeMap<String, serde_yaml_ng::Value>,
    /// Named contracts: a name -> the tokens of a whole arg_spec, written
    /// once and used by several kernels through `contract=<name>`.
    #[serde(default)]
    pub(crate) contracts: BTreeMap<String, String>,
    /// begen's own warnings the library turns off (`{order: false}`).
    #[serde(default)]
    pub(crate) warnings: WarningsConfig,
}

/// `warnings:`, at the top or per function: begen's warnings that can be
/// turned off, each on (`true`) unless set to `false`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct WarningsConfig {
    /// Parameters out of the conventional order (inputs, outputs,
    /// attributes, stream).
    pub(crate) order: Option<bool>,
}

/// One `tune:` entry: which compiled-in candidates of a kernel are
/// measured, the dims that key the table, the default.
///
/// ```yaml
/// tune:
///   colsum: {consts: [BLOCK], key: [n], default: {BLOCK: 64}, inputs: "my_inputs:colsum"}
///   table: tuning/kernels.tune.json
/// ```
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct TuneConfig {
    /// The kernel's `const.` parameters whose instances are the candidates.
    #[serde(default)]
    pub(crate) consts: Vec<String>,
    /// The dimensions whose (bucketed) values select an entry.
    #[serde(default)]
    pub(crate) key: TuneKey,
    /// The candidate a call runs when no table has an entry for it.
    #[serde(default)]
    pub(crate) default: BTreeMap<String, serde_yaml_ng::Value>,
    /// `module:function`, a Python generator of realistic inputs for a key.
    pub(crate) inputs: Option<String>,
    /// A source's candidates: defines, each combination compiled in.
    #[serde(default)]
    pub(crate) defines: BTreeMap<String, serde_yaml_ng::Value>,
    /// Which combinations of `defines` are candidates.
    #[serde(rename = "where")]
    pub(crate) where_: Option<String>,
    /// An algorithm: its implementations are the candidates.
    pub(crate) implementations: Option<bool>,
}

/// `key:` of a `tune:` entry: typed-contract dimensions by name
/// (`[n, nnz]`), or each dimension with where a call's inputs give it
/// (`{n_pre: "vector[0]"}`: input `vector`'s extent along axis 0), for
/// kernels whose inputs have no typed contract.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub(crate) enum TuneKey {
    /// Typed-contract dimensions.
    Dims(Vec<String>),
    /// Dimension -> `INPUT[AXIS]`.
    At(BTreeMap<String, String>),
}

impl Default for TuneKey {
    fn default() -> Self {
        TuneKey::Dims(Vec::new())
    }
}

impl TuneKey {
    /// The key's dimension names, in the order written (sorted for a map).
    pub(crate) fn names(&self) -> Vec<String> {
        match self {
            TuneKey::Dims(d) => d.clone(),
            TuneKey::At(m) => m.keys().cloned().collect(),
        }
    }

    /// Where dimension `dim` is read from (`vector[0]`), in the map form.
    pub(crate) fn at(&self, dim: &str) -> Option<&str> {
        match self {
            TuneKey::Dims(_) => None,
            TuneKey::At(m) => m.get(dim).map(String::as_str),
        }
    }
}

/// One `binaries:` entry: a file, its calling convention and its kernels,
/// as written (what they mean is `check`'s; the binary front end reads the
/// files).
///
/// ```yaml
/// structs:
///   Affine: [tag:uint16, scale:float64, shift:float32]
/// binaries:
///   - file: tile/scale_sm90.cubin
///     convention: cutile_python_v1
///     kernels:
///       tile_scale:
///         symbol: scale_Kt1_A1f32_1l0_A1f32_1l0_Sf32_I16
///         params: ["arg:float32[n]", "ret:float32[n]", attr.s:float32]
///         grid: ["cdiv(n, 16)"]
/// ```
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct BinaryConfig {
    /// `.cubin`, `.fatbin` or `.ptx`, relative to the root.
    pub(crate) file: String,
    /// `cutile_python_v1` or `c`.
    pub(crate) convention: String,
    /// Python function (and target) name -> the kernel.
    #[serde(default)]
    pub(crate) kernels: BTreeMap<String, KernelConfig>,
}

/// One kernel of a binary.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct KernelConfig {
    /// The entry's symbol (default: the kernel's name).
    pub(crate) symbol: Option<String>,
    /// Typed tokens, one per parameter.
    #[serde(default)]
    pub(crate) params: Vec<String>,
    /// 1 to 3 entries: integers or expressions.
    #[serde(default)]
    pub(crate) grid: Vec<ExprConfig>,
    /// As `grid`; `cutile_python_v1` takes it from the cubin.
    pub(crate) block: Option<Vec<ExprConfig>>,
    /// Dynamic shared memory in bytes.
    pub(crate) shared: Option<ExprConfig>,
}

/// A launch dimension as written: a number or an expression's text.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub(crate) enum ExprConfig {
    /// `128`.
    Int(i64),
    /// `"cdiv(n, 128)"`.
    Text(String),
}

/// One algorithm: its implementations, or them with options.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AlgorithmConfig {
    /// `[add_cpu, {function: add_cuda, priority: 5}]`.
    List(Vec<ImplementationConfig>),
    /// `{fallback: false, implementations: [...]}`.
    Full(AlgorithmOptions),
}

/// An algorithm with its options.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct AlgorithmOptions {
    /// Whether a call an implementation refuses (an unsupported attribute
    /// value) goes to the next one for the platform (default: true).
    pub(crate) fallback: Option<bool>,
    pub(crate) implementations: Vec<ImplementationConfig>,
}

impl AlgorithmConfig {
    /// Its implementations, as listed.
    pub(crate) fn implementations(&self) -> &[ImplementationConfig] {
        match self {
            AlgorithmConfig::List(list) => list,
            AlgorithmConfig::Full(full) => &full.implementations,
        }
    }

    /// Whether it falls back past an implementation that refuses a call.
    pub(crate) fn fallback(&self) -> bool {
        match self {
            AlgorithmConfig::List(_) => true,
            AlgorithmConfig::Full(full) => full.fallback.unwrap_or(true),
        }
    }
}

/// One implementation of an algorithm: a function name (`name` or
/// `module.name`), with a priority (default 0; higher wins).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ImplementationConfig {
    Name(String),
    Full(ImplementationEntry),
}

/// `{function: add_cuda, priority: 5}`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct ImplementationEntry {
    pub(crate) function: String,
    #[serde(default)]
    pub(crate) priority: i64,
}

impl ImplementationConfig {
    /// The function it names.
    pub(crate) fn function(&self) -> &str {
        match self {
            ImplementationConfig::Name(name) => name,
            ImplementationConfig::Full(entry) => &entry.function,
        }
    }

    /// Its priority (higher wins; 0 when not given).
    pub(crate) fn priority(&self) -> i64 {
        match self {
            ImplementationConfig::Name(_) => 0,
            ImplementationConfig::Full(entry) => entry.priority,
        }
    }
}

/// One variant of a source: `{module: csr_mv_b256, defines: {BLOCK: 256}}`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct VariantConfig {
    pub(crate) module: String,
    /// Macro name -> value (a number, `true`/`false`, or an identifier).
    #[serde(default)]
    pub(crate) defines: BTreeMap<String, serde_yaml_ng::Value>,
}

/// `link:`: libraries the shared library links.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct LinkConfig {
    /// `-l` names (`cublas`, `m`).
    #[serde(default)]
    pub(crate) libs: Vec<String>,
    /// Search directories, relative to the root.
    #[serde(default)]
    pub(crate) dirs: Vec<String>,
    /// Passed to the linker as they are.
    #[serde(default)]
    pub(crate) args: Vec<String>,
}

/// `modules:`: how sources map to modules.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct ModulesConfig {
    /// Every source file is its own module, named from its path.
    #[serde(rename = "per-file", default)]
    pub(crate) per_file: bool,
    /// A file or directory (relative to the root) -> a module name.
    #[serde(default)]
    pub(crate) names: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct CudaConfig {
    #[serde(default)]
    pub(crate) arch: Vec<String>,
    #[serde(default)]
    pub(crate) flags: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct FunctionConfig {
    pub(crate) command_buffer: Option<bool>,
    pub(crate) vmap_method: Option<String>,
    /// XLA must not drop or reorder the call (jax.ffi's `has_side_effect`).
    pub(crate) has_side_effect: Option<bool>,
    /// The backward kernel (`name` or `module.name`, in the same module).
    pub(crate) vjp: Option<String>,
    /// Outputs (C++ parameter names) the forward kernel returns for its
    /// backward kernel only: the Python function leaves them out.
    pub(crate) residuals: Option<Vec<String>>,
    /// Attribute name -> values the kernel does not support.
    #[serde(default)]
    pub(crate) unsupported: BTreeMap<String, Vec<serde_yaml_ng::Value>>,
    /// Inputs (C++ parameter names) the outputs are linear in, each with
    /// the others fixed, and groups (a nested list) linear in their inputs
    /// together: the kernel is then its own jvp.
    pub(crate) linear: Option<Vec<LinearItem>>,
    /// A linear input, or a group (`"a, b"`: its inputs, comma-separated),
    /// -> its transpose kernel (`name` or `module.name`), or a kernel with
    /// its arguments named (`{kernel: dot, args: [Aj, Ai, Ax, ct]}`).
    #[serde(default)]
    pub(crate) transpose: BTreeMap<String, TransposeConfig>,
    /// The tangent kernel (`name` or `module.name`, in the same module).
    pub(crate) jvp: Option<String>,
    /// The backward pass as a Python function, `module:function` (a `.py`
    /// file beside begen.yaml, or a module Python imports): it composes
    /// the module's own functions, so no backward kernel is needed.
    pub(crate) python_vjp: Option<String>,
    /// The handler zeroes the outputs before the kernel runs.
    pub(crate) zero_outputs: Option<bool>,
    /// A native kernel's state: the function that creates it (XLA's
    /// instantiate stage).
    pub(crate) instantiate: Option<String>,
    /// Typed-contract dimensions a call may be split along across devices.
    pub(crate) shard: Option<Vec<String>>,
    /// Typed-contract dimensions the outputs are sums over: split, the
    /// partial outputs are added up across devices.
    pub(crate) reduce: Option<Vec<String>>,
    /// Output (C++ parameter name) -> `shard` dimensions it is a sum over:
    /// split along one, each device computes a partial output (a weight
    /// gradient's), added up across devices; the other outputs keep the split.
    #[serde(default)]
    pub(crate) sum: BTreeMap<String, Vec<String>>,
    /// begen's warnings turned off (or back on) for this function; they
    /// win over the top-level `warnings:`.
    #[serde(default)]
    pub(crate) warnings: WarningsConfig,
    /// How `jax.vmap` batches the kernel beyond `vmap_method`.
    pub(crate) vmap: Option<VmapConfig>,
}

/// `vmap: {fold: {input: dimension}}`: a batch axis of each listed input
/// folds into that dimension of its typed contract (the kernel treats the
/// dimension's slices independently, as a solver's right-hand sides), and
/// each output's same dimension unfolds into the batch: one call per vmap.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct VmapConfig {
    #[serde(default)]
    pub(crate) fold: BTreeMap<String, String>,
}

/// A `transpose:` entry: a kernel bound by position (the other inputs in
/// order, then one cotangent per output), or a kernel with the arguments
/// it is called with (`args`: inputs by name, `ct`/`ct<k>` for the
/// cotangents), or bound by position on purpose (`by_position: true`: no
/// warning that a name looks like another input's).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TransposeConfig {
    Kernel(String),
    Mapped(TransposeMapping),
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct TransposeMapping {
    pub(crate) kernel: String,
    pub(crate) args: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) by_position: bool,
}

impl TransposeConfig {
    /// The kernel it names.
    pub(crate) fn kernel(&self) -> &str {
        match self {
            TransposeConfig::Kernel(k) => k,
            TransposeConfig::Mapped(m) => &m.kernel,
        }
    }
}

impl<'de> Deserialize<'de> for TransposeConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = TransposeConfig;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a kernel's name, or {kernel: ..., args: [...]}")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(TransposeConfig::Kernel(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                Deserialize::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(TransposeConfig::Mapped)
            }
        }
        d.deserialize_any(V)
    }
}

/// One item of `linear:`: an input linear with the others fixed, or a
/// group (a nested list) of inputs linear together.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum LinearItem {
    One(String),
    Group(Vec<String>),
}

// A list or a mapping, a name or a mapping: deserialized by hand so that a
// mistake inside the mapping (an unknown key) is reported as itself, not as
// "data did not match any variant".
impl<'de> Deserialize<'de> for AlgorithmConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = AlgorithmConfig;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of implementations, or {fallback: ..., implementations: [...]}")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                Deserialize::deserialize(serde::de::value::SeqAccessDeserializer::new(seq)).map(AlgorithmConfig::List)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                Deserialize::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(AlgorithmConfig::Full)
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for LinearItem {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = LinearItem;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an input's name, or a list of inputs linear together")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(LinearItem::One(v.to_string()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                Deserialize::deserialize(serde::de::value::SeqAccessDeserializer::new(seq)).map(LinearItem::Group)
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for ImplementationConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ImplementationConfig;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a function name, or {function: ..., priority: ...}")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(ImplementationConfig::Name(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                Deserialize::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(ImplementationConfig::Full)
            }
        }
        d.deserialize_any(V)
    }
}

/// The arg_spec system's two explicit forms for one source file.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub(crate) enum SourceSpec {
    /// `{vector_add: [arg, arg, ret, stream]}`: tokens given per function.
    Dict(BTreeMap<String, Vec<String>>),
    /// `[add_one]`: names whose arg_spec is auto-detected.
    List(Vec<String>),
}

/// Where begen.yaml is in the source map, and where the parser found each
/// of its keys and values, to point diagnostics at them.
#[derive(Debug, Clone)]
pub(crate) struct ConfigFile {
    pub(crate) id: FileId,
    places: std::sync::Arc<Places>,
}

/// One step of a path into begen.yaml: a mapping's key or a list's item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Seg<'a> {
    Key(&'a str),
    Item(usize),
}

impl<'a> From<&'a str> for Seg<'a> {
    fn from(key: &'a str) -> Self {
        Seg::Key(key)
    }
}

impl<'a> From<&'a String> for Seg<'a> {
    fn from(key: &'a String) -> Self {
        Seg::Key(key)
    }
}

impl From<usize> for Seg<'_> {
    fn from(item: usize) -> Self {
        Seg::Item(item)
    }
}

/// A path into begen.yaml from its root: `yaml_path!["functions", name, "vjp"]`,
/// `yaml_path!["binaries", 0, "file"]`.
macro_rules! yaml_path {
    ($($seg:expr),* $(,)?) => {
        [$($crate::config::Seg::from($seg)),*]
    };
}
pub(crate) use yaml_path;

/// A [`Seg`] that owns its key, as the index stores it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum OwnedSeg {
    Key(String),
    Item(usize),
}

/// One node of begen.yaml (the document, a scalar, a list or a mapping)
/// with byte ranges into the file.
#[derive(Debug, Clone)]
struct Node {
    /// The key it is the value of, unquoted (absent for the document and
    /// for list items).
    key: Option<(usize, usize)>,
    key_text: Option<String>,
    /// The value: a scalar unquoted, a collection from its first character
    /// to its last.
    value: (usize, usize),
    /// A scalar's text (absent for a collection or an alias).
    text: Option<String>,
    /// The index past its last descendant: its subtree is `self..end`.
    end: usize,
}

/// Every node of begen.yaml in document order, and the way from each
/// collection to its children.
#[derive(Debug, Default)]
struct Places {
    nodes: Vec<Node>,
    /// The document's node (the first document's, if several).
    root: Option<usize>,
    /// (a collection, a key or item of it) -> the child's node.
    children: std::collections::HashMap<(usize, OwnedSeg), usize>,
}

/// An open collection while the parser's events are read.
enum Open {
    /// A mapping, with its key once read (a key that is a collection is
    /// not a name: its value is indexed under an empty key).
    Map {
        node: usize,
        key: Option<(String, (usize, usize))>,
    },
    List {
        node: usize,
        next: usize,
    },
    /// A collection used as a key: nothing inside it is indexed.
    Ignored,
}

impl Places {
    /// Reads `text`'s nodes from the YAML parser's events. Where the parser
    /// stops at an error, the nodes read so far are kept: a lookup past
    /// them falls back to the nearest one above.
    fn new(text: &str) -> Places {
        // The parser counts characters; the source map counts bytes.
        let bytes: Option<Vec<usize>> =
            (!text.is_ascii()).then(|| text.char_indices().map(|(b, _)| b).chain([text.len()]).collect());
        let byte = |char_index: usize| match &bytes {
            Some(b) => b.get(char_index).copied().unwrap_or(text.len()),
            None => char_index.min(text.len()),
        };
        let mut places = Places::default();
        let mut open: Vec<Open> = Vec::new();
        let mut last_end = 0;
        for event in saphyr_parser::Parser::new_from_str(text) {
            let Ok((event, span)) = event else { break };
            let end = byte(span.end.index());
            let start = after_properties(text, byte(span.start.index())).min(end);
            use saphyr_parser::{Event, ScalarStyle};
            let (text_of, opens) = match &event {
                Event::Scalar(value, style, ..) => {
                    let quoted = matches!(style, ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted);
                    (Some((value.to_string(), quoted)), false)
                }
                Event::Alias(_) => (None, false),
                Event::SequenceStart(..) | Event::MappingStart(..) => (None, true),
                Event::SequenceEnd | Event::MappingEnd => {
                    if end > start {
                        last_end = end;
                    }
                    let closed = open.pop();
                    if let Some(Open::Map { node, .. } | Open::List { node, .. }) = closed {
                        places.nodes[node].end = places.nodes.len();
                        let value = &mut places.nodes[node].value;
                        value.1 = last_end.max(value.0);
                    }
                    if matches!(closed, Some(Open::Ignored))
                        && !matches!(open.last(), Some(Open::Ignored))
                        && let Some(Open::Map { key, .. }) = open.last_mut()
                    {
                        *key = Some((String::new(), (start, start)));
                    }
                    continue;
                }
                _ => continue,
            };
            // A scalar's range without its quotes (the parser's end of a
            // quoted scalar can lie past blanks and a comment after it).
            let range = match (&text_of, closing_quote(text, start)) {
                (Some((_, true)), Some(close)) => (start + 1, close),
                _ => (start, end),
            };
            if text_of.is_some() || matches!(event, Event::Alias(_)) {
                last_end = end;
            }
            // A key, or a node that is a value: of which collection, under what.
            let (seg, key) = match open.last_mut() {
                Some(Open::Ignored) => {
                    if opens {
                        open.push(Open::Ignored);
                    }
                    continue;
                }
                Some(Open::Map { key: key @ None, .. }) => {
                    match text_of {
                        Some((k, _)) => *key = Some((k, range)),
                        None if opens => open.push(Open::Ignored),
                        None => *key = Some((String::new(), range)),
                    }
                    continue;
                }
                Some(Open::Map { node, key }) => {
                    let (k, at) = key.take().unwrap_or_default();
                    (Some((*node, OwnedSeg::Key(k))), Some(at))
                }
                Some(Open::List { node, next }) => {
                    *next += 1;
                    (Some((*node, OwnedSeg::Item(*next - 1))), None)
                }
                None => (None, None),
            };
            let id = places.nodes.len();
            let key_text = match &seg {
                Some((_, OwnedSeg::Key(k))) => Some(k.clone()),
                _ => None,
            };
            match seg {
                // A key written twice (an error of its own) keeps its first node.
                Some(seg) => _ = places.children.entry(seg).or_insert(id),
                None => _ = places.root.get_or_insert(id),
            }
            places.nodes.push(Node { key, key_text, value: range, text: text_of.map(|(t, _)| t), end: id + 1 });
            if opens {
                open.push(if matches!(event, Event::MappingStart(..)) {
                    Open::Map { node: id, key: None }
                } else {
                    Open::List { node: id, next: 0 }
                });
            }
        }
        places
    }

    /// The node at `path`, else the nearest one above it that the file
    /// has (the document's, if any), and the length of its path.
    fn nearest(&self, path: &[Seg]) -> Option<(usize, usize)> {
        let mut at = self.root?;
        for (depth, seg) in path.iter().enumerate() {
            let seg = match *seg {
                Seg::Key(k) => OwnedSeg::Key(k.to_string()),
                Seg::Item(i) => OwnedSeg::Item(i),
            };
            match self.children.get(&(at, seg)) {
                Some(&child) => at = child,
                None => return Some((at, depth)),
            }
        }
        Some((at, path.len()))
    }
}

/// Where a node's own text starts when the parser's start is at its
/// properties (`&anchor`, `!tag`): past them and the blanks after them.
fn after_properties(text: &str, mut start: usize) -> usize {
    let b = text.as_bytes();
    while matches!(b.get(start), Some(b'&' | b'!')) {
        while b.get(start).is_some_and(|c| !c.is_ascii_whitespace()) {
            start += 1;
        }
        while b.get(start).is_some_and(|c| c.is_ascii_whitespace()) {
            start += 1;
        }
    }
    start
}

/// The byte offset of the quote that closes the quoted scalar opening at
/// `start` (`''` is a quote inside a single-quoted one, `\"` inside a
/// double-quoted one); `None` when no quote opens there.
fn closing_quote(text: &str, start: usize) -> Option<usize> {
    let b = text.as_bytes();
    let quote = *b.get(start).filter(|c| matches!(c, b'"' | b'\''))?;
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' if quote == b'"' => i += 1,
            b'\'' if quote == b'\'' && b.get(i + 1) == Some(&b'\'') => i += 1,
            c if c == quote => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

impl ConfigFile {
    fn new(id: FileId, text: &str) -> ConfigFile {
        ConfigFile { id, places: std::sync::Arc::new(Places::new(text)) }
    }

    /// Where the key at `path` is written (for a list item, the item).
    /// Where the file lacks the path (a part of it missing, or written
    /// through an alias), the nearest place above it; the file's start
    /// when there is none.
    pub(crate) fn key(&self, map: &SourceMap, path: &[Seg]) -> Span {
        // Nothing of the path but the document: the file's start.
        match self.places.nearest(path) {
            Some((id, depth)) if depth > 0 || path.is_empty() => {
                let node = &self.places.nodes[id];
                let (start, end) = node.key.unwrap_or(node.value);
                map.span(self.id, start, end)
            }
            _ => map.span(self.id, 0, 0),
        }
    }

    /// Where the value at `path` is written (a scalar without its quotes;
    /// a collection from its first character to its last); where the file
    /// lacks the path, as [`ConfigFile::key`].
    pub(crate) fn value(&self, map: &SourceMap, path: &[Seg]) -> Span {
        match self.places.nearest(path) {
            Some((id, depth)) if depth == path.len() => {
                let (start, end) = self.places.nodes[id].value;
                map.span(self.id, start, end)
            }
            _ => self.key(map, path),
        }
    }

    /// Where a scalar of text `text` is written inside the value at
    /// `path`: the first value that is, else the first key that is;
    /// else as [`ConfigFile::key`].
    pub(crate) fn find(&self, map: &SourceMap, path: &[Seg], text: &str) -> Span {
        let places = &self.places;
        let found = places.nearest(path).filter(|&(_, depth)| depth == path.len()).and_then(|(id, _)| {
            let inside = &places.nodes[id + 1..places.nodes[id].end];
            inside
                .iter()
                .find(|n| n.text.as_deref() == Some(text))
                .map(|n| n.value)
                .or_else(|| inside.iter().find(|n| n.key_text.as_deref() == Some(text)).and_then(|n| n.key))
        });
        match found {
            Some((start, end)) => map.span(self.id, start, end),
            None => self.key(map, path),
        }
    }
}

/// begen.yaml's places with the source map they are spans of, for code
/// that has both (`None` without a begen.yaml).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Locator<'a> {
    pub(crate) map: &'a SourceMap,
    pub(crate) file: Option<&'a ConfigFile>,
}

impl Locator<'_> {
    /// [`ConfigFile::key`].
    pub(crate) fn key(&self, path: &[Seg]) -> Option<Span> {
        self.file.map(|f| f.key(self.map, path))
    }

    /// [`ConfigFile::value`].
    pub(crate) fn value(&self, path: &[Seg]) -> Option<Span> {
        self.file.map(|f| f.value(self.map, path))
    }

    /// [`ConfigFile::find`].
    pub(crate) fn find(&self, path: &[Seg], text: &str) -> Option<Span> {
        self.file.map(|f| f.find(self.map, path, text))
    }
}

/// Reads `root/begen.yaml`, or the file `explicit` names (`--config`),
/// into the source map if it exists. Returns the config (default on any
/// error), where the file is, and diagnostics.
pub(crate) fn load(
    root: &Path,
    explicit: Option<&Path>,
    map: &mut SourceMap,
) -> (Config, Option<ConfigFile>, Vec<Diagnostic>) {
    let path = explicit.map_or_else(|| root.join(FILE), Path::to_path_buf);
    let name = explicit.map_or_else(|| FILE.to_string(), |p| shown_name(root, p));
    let name = name.as_str();
    // Absent: no configuration, unless it was named. Present but a
    // directory, a FIFO or a device (`/dev/zero`): said so, never read (it
    // could block, or never end).
    if std::fs::symlink_metadata(&path).is_err() {
        if explicit.is_none() {
            return (Config::default(), None, Vec::new());
        }
        let id = map.add(name, &path, Vec::new());
        let d = Diagnostic::file(crate::diag::Severity::Error, id, msg::config_missing(name));
        return (Config::default(), None, vec![d]);
    }
    if std::fs::metadata(&path).is_ok_and(|m| !m.is_file()) {
        let id = map.add(name, &path, Vec::new());
        let d = Diagnostic::file(crate::diag::Severity::Error, id, msg::CONFIG_NOT_A_FILE.to_string());
        return (Config::default(), None, vec![d]);
    }
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            let id = map.add(name, &path, Vec::new());
            let d = Diagnostic::file(crate::diag::Severity::Error, id, msg::unreadable(&e.to_string()));
            return (Config::default(), None, vec![d]);
        }
    };
    let id = map.add(name, &path, bytes);
    let text = String::from_utf8_lossy(&map.get(id).bytes).into_owned();
    // Too deep a file is not indexed either: refused before any parser reads it.
    let unread = ConfigFile { id, places: Default::default() };
    if text.trim().is_empty() {
        return (Config::default(), Some(unread), Vec::new());
    }
    if let Some(at) = too_deep(&text) {
        let d = Diagnostic::error(map.span(id, at, at + 1), msg::yaml_too_deep(MAX_FLOW_DEPTH));
        return (Config::default(), Some(unread), vec![d]);
    }
    let file = ConfigFile::new(id, &text);
    // The typed reading keeps the last of two equal keys in a map
    // (`functions: {f: .., f: ..}`); the untyped one refuses them at every level.
    let read = serde_yaml_ng::from_str::<Config>(&text)
        .and_then(|config| serde_yaml_ng::from_str::<serde_yaml_ng::Value>(&text).map(|_| config));
    match read {
        Ok(config) => (config, Some(file), Vec::new()),
        Err(e) => {
            let message = e.to_string();
            let at = yaml_error_at(&text, e.location().map(|l| l.index()), &message);
            // The location is shown apart; drop serde's " at line N column M".
            let message = message.find(" at line ").map_or(message.as_str(), |k| &message[..k]);
            let near = near_field(message);
            let near = near.as_ref().map(|(k, n)| (*k, n.as_str()));
            let d = Diagnostic::error(map.span(id, at, at), msg::yaml_error(message, near));
            (Config::default(), Some(file), vec![d])
        }
    }
}

/// Where a YAML error points: its location, else the first " at line N
/// column M" of its message. One at the end of the file (an unclosed `{`
/// or quote: libyaml finds out at the end of the stream) points at where
/// the construct it was parsing started ("while parsing a flow mapping at
/// line 2 column 12"), else at the last character written, so that the
/// snippet shows a line of the file.
fn yaml_error_at(text: &str, location: Option<usize>, message: &str) -> usize {
    // The byte offset of a 1-based line and column.
    let offset = |line: usize, column: usize| {
        let start: usize = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
        let line_text = text[start.min(text.len())..].split('\n').next().unwrap_or("");
        let col: usize = line_text.chars().take(column.saturating_sub(1)).map(char::len_utf8).sum();
        (start + col).min(text.len())
    };
    // Each " at line N column M" of the message, in order.
    let marks: Vec<usize> = message
        .match_indices(" at line ")
        .filter_map(|(k, p)| {
            let rest = &message[k + p.len()..];
            let (line, rest) = rest.split_once(" column ")?;
            let column: String = rest.chars().take_while(char::is_ascii_digit).collect();
            Some(offset(line.parse().ok()?, column.parse().ok()?))
        })
        .collect();
    let at = location.or_else(|| marks.first().copied()).unwrap_or(0);
    let end = text.trim_end().len();
    if at < end || end == 0 {
        return at;
    }
    marks.iter().copied().find(|&m| m < end).unwrap_or(end - text[..end].chars().next_back().map_or(0, char::len_utf8))
}

/// How diagnostics name a configuration file given by path: relative to
/// the kernel directory with `/` separators when it is inside it (as the
/// sources are named), else the path as given.
fn shown_name(root: &Path, path: &Path) -> String {
    let inside = std::fs::canonicalize(root)
        .ok()
        .zip(std::fs::canonicalize(path).ok())
        .and_then(|(r, p)| p.strip_prefix(r).ok().map(Path::to_path_buf));
    match inside {
        Some(rel) => rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/"),
        None => path.display().to_string(),
    }
}

/// For serde's "unknown field `shrad`, expected one of `vjp`, `shard`, ..."
/// (and "unknown variant ..."): the expected name closest to the unknown
/// one, when one is close enough to be a slip, and where the unknown name
/// ends in the message (just after its closing backquote).
pub(crate) fn near_field(message: &str) -> Option<(usize, String)> {
    let start = ["unknown field `", "unknown variant `"].iter().find_map(|p| message.find(p).map(|k| k + p.len()))?;
    let (word, rest) = message[start..].split_once('`')?;
    let (_, expected) = rest.split_once(", expected ")?;
    // The expected names are every other piece between backquotes.
    let names = expected.split('`').skip(1).step_by(2);
    let near = crate::diag::suggest::closest(word, names)?;
    Some((start + word.len() + 1, near.to_string()))
}

/// How deep begen.yaml may nest flow collections (`[`, `{`): a begen.yaml
/// needs a handful; the YAML parser takes time quadratic in the depth.
pub(crate) const MAX_FLOW_DEPTH: usize = 64;

/// The byte offset of the first `[` or `{` that opens a flow collection
/// deeper than [`MAX_FLOW_DEPTH`], found in one linear pass. Quoted
/// scalars and comments are skipped; outside a flow collection a bracket
/// opens one only where a value may start (after a blank, or at a line's
/// start), as in YAML, where `a[b` is a plain scalar. Where this reading is
/// rougher than YAML's, it only errs towards handing the text on.
pub(crate) fn too_deep(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    // Where a value (a quoted scalar, a flow collection, a comment) may start.
    let starts = |i: usize, depth: usize| {
        i == 0 || {
            let p = b[i - 1];
            p.is_ascii_whitespace() || (depth > 0 && b"[{,:".contains(&p))
        }
    };
    while i < b.len() {
        let c = b[i];
        match c {
            b'#' if starts(i, 0) => {
                i += b[i..].iter().position(|&c| c == b'\n').unwrap_or(b.len() - i);
                continue;
            }
            b'\'' if starts(i, depth) => {
                // '' is a quote inside; the scalar ends at a lone '.
                i += 1;
                while i < b.len() {
                    if b[i] == b'\'' {
                        if b.get(i + 1) == Some(&b'\'') {
                            i += 1;
                        } else {
                            break;
                        }
                    }
                    i += 1;
                }
            }
            b'"' if starts(i, depth) => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'[' | b'{' if depth > 0 || starts(i, 0) => {
                depth += 1;
                if depth > MAX_FLOW_DEPTH {
                    return Some(i);
                }
            }
            b']' | b'}' if depth > 0 => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text each lookup points at, in a begen.yaml of `text`.
    fn located(text: &str) -> (SourceMap, ConfigFile) {
        let mut map = SourceMap::default();
        let id = map.add(FILE, Path::new(FILE), text.as_bytes().to_vec());
        (map, ConfigFile::new(id, text))
    }

    fn shown(map: &SourceMap, span: Span) -> String {
        let bytes = &map.get(span.file).bytes;
        String::from_utf8_lossy(&bytes[span.start..span.end]).into_owned()
    }

    fn line(map: &SourceMap, span: Span) -> usize {
        map.position(span).0
    }

    #[test]
    fn keys_and_values_are_where_the_parser_read_them() {
        let text = "\
# functions: scale, vjp: scale, sources: ops/add.cu
name: scale   # name: scale
functions:
  scale: {command_buffer: true, \"vmap_method\": 'broadcast_all'}
  'scale.bwd':
    vjp: scale
    linear: [A, x, A]
sources:
  ops/add.cu: {scale: [arg, ret], add: [arg, arg]}
  ops/cpu.cpp:
    - add
    - scale
binaries:
  - {file: k.cubin, convention: c, kernels: {k: {params: [arg, ret], grid: [1, \"cdiv(n, 2)\"]}}}
  - file: scale.cubin
    kernels:
      scale: {params: [ret]}
link: {libs: [m, scale], dirs: []}
";
        let (map, file) = located(text);
        let key = |path: &[Seg]| file.key(&map, path);
        let value = |path: &[Seg]| file.value(&map, path);
        // A key is the key, never the same word in a comment or a value before it.
        let at = key(&yaml_path!["functions", "scale"]);
        assert_eq!((shown(&map, at), line(&map, at)), ("scale".into(), 4));
        let at = value(&yaml_path!["name"]);
        assert_eq!((shown(&map, at), line(&map, at)), ("scale".into(), 2));
        // Quoted keys and values, without their quotes.
        let at = key(&yaml_path!["functions", "scale", "vmap_method"]);
        assert_eq!((shown(&map, at), line(&map, at)), ("vmap_method".into(), 4));
        assert_eq!(shown(&map, value(&yaml_path!["functions", "scale", "vmap_method"])), "broadcast_all");
        let at = key(&yaml_path!["functions", "scale.bwd"]);
        assert_eq!((shown(&map, at), line(&map, at)), ("scale.bwd".into(), 5));
        let at = value(&yaml_path!["functions", "scale.bwd", "vjp"]);
        assert_eq!((shown(&map, at), line(&map, at)), ("scale".into(), 6));
        // A word listed twice: each item where it stands.
        let first = value(&yaml_path!["functions", "scale.bwd", "linear", 0]);
        let third = value(&yaml_path!["functions", "scale.bwd", "linear", 2]);
        assert_eq!((shown(&map, first), shown(&map, third)), ("A".into(), "A".into()));
        assert!(third.start > first.start);
        let found = file.find(&map, &yaml_path!["functions", "scale.bwd", "linear"], "x");
        assert_eq!((shown(&map, found), line(&map, found)), ("x".into(), 7));
        // Nested flow and block forms under `sources:`, `binaries:` and `link:`.
        let at = key(&yaml_path!["sources", "ops/add.cu", "scale"]);
        assert_eq!((shown(&map, at), line(&map, at)), ("scale".into(), 9));
        let at = value(&yaml_path!["sources", "ops/cpu.cpp", 1]);
        assert_eq!((shown(&map, at), line(&map, at)), ("scale".into(), 12));
        let at = value(&yaml_path!["binaries", 0, "kernels", "k", "grid", 1]);
        assert_eq!((shown(&map, at), line(&map, at)), ("cdiv(n, 2)".into(), 14));
        let at = key(&yaml_path!["binaries", 1, "kernels", "scale"]);
        assert_eq!((shown(&map, at), line(&map, at)), ("scale".into(), 17));
        let at = value(&yaml_path!["link", "libs", 1]);
        assert_eq!((shown(&map, at), line(&map, at)), ("scale".into(), 18));
        // A collection's value spans its text.
        assert_eq!(shown(&map, value(&yaml_path!["link", "libs"])), "[m, scale]");
        assert_eq!(shown(&map, value(&yaml_path!["sources", "ops/cpu.cpp"])), "- add\n    - scale");
        // What the file lacks: the nearest place above it.
        let at = key(&yaml_path!["functions", "scale.bwd", "jvp"]);
        assert_eq!((shown(&map, at), line(&map, at)), ("scale.bwd".into(), 5));
        let at = value(&yaml_path!["nothing"]);
        assert_eq!((at.start, at.end), (0, 0));
        let (map, file) = located("# nothing but a comment\n");
        assert_eq!(file.key(&map, &yaml_path!["name"]).start, 0);
    }

    #[test]
    fn positions_count_bytes() {
        let (map, file) = located("name: \"é\"  # ü\nprefix: x\n");
        let at = file.value(&map, &yaml_path!["prefix"]);
        assert_eq!((shown(&map, at), line(&map, at)), ("x".into(), 2));
        assert_eq!(shown(&map, file.value(&map, &yaml_path!["name"])), "é");
        let (map, file) = located("a: 'it''s'  # x\nb: \"q\\\"\" # y\n");
        assert_eq!(shown(&map, file.value(&map, &yaml_path!["a"])), "it''s");
        assert_eq!(shown(&map, file.value(&map, &yaml_path!["b"])), "q\\\"");
    }

    #[test]
    fn what_the_parser_cannot_read_falls_back() {
        // Read up to the error: what came before it is still found.
        let (map, file) = located("name: a\nfunctions:\n  f: {vjp: g\n");
        assert_eq!(shown(&map, file.key(&map, &yaml_path!["name"])), "name");
        // An alias's inside is not indexed: the alias stands for it.
        let (map, file) = located("a: &x {b: 1}\nc: *x\n");
        assert_eq!(shown(&map, file.key(&map, &yaml_path!["a", "b"])), "b");
        assert_eq!(shown(&map, file.key(&map, &yaml_path!["c", "b"])), "c");
        assert_eq!(shown(&map, file.value(&map, &yaml_path!["c"])), "*x");
        // Anchors and tags are not the value.
        let (map, file) = located("a: &x \"q\"  # c\nb: !!str 'r'\nc: &y plain\nd: &z [1]\n");
        let values: Vec<String> =
            ["a", "b", "c", "d"].iter().map(|k| shown(&map, file.value(&map, &yaml_path![*k]))).collect();
        assert_eq!(values, ["q", "r", "plain", "[1]"]);
        // A key that is a collection is skipped, and the keys after it read.
        let (map, file) = located("? [a, b]\n: 1\nd: 2\n");
        assert_eq!(shown(&map, file.key(&map, &yaml_path!["d"])), "d");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2048, ..Default::default() })]

        /// Any text is read without a panic, and every place found is a
        /// range of it on character boundaries.
        #[test]
        fn places_lie_inside_the_text(text in "([a-zé:,#'\"\\[\\]{}&*?|>!% -]|\n|\t){0,80}") {
            let places = Places::new(&text);
            for node in &places.nodes {
                for (start, end) in node.key.into_iter().chain([node.value]) {
                    proptest::prop_assert!(start <= end && end <= text.len());
                    proptest::prop_assert!(text.is_char_boundary(start) && text.is_char_boundary(end));
                }
            }
        }
    }

    #[test]
    fn flow_depth_is_bounded_in_one_pass() {
        let deep = |n: usize| format!("name: {}", "[".repeat(n));
        assert_eq!(too_deep(&deep(MAX_FLOW_DEPTH)), None);
        assert_eq!(too_deep(&deep(MAX_FLOW_DEPTH + 1)), Some(6 + MAX_FLOW_DEPTH));
        assert_eq!(too_deep(&format!("a: {}", "{a: ".repeat(200_000))), Some(3 + 4 * MAX_FLOW_DEPTH));
        // Closed collections, quoted brackets, comments and plain scalars do not count.
        let nested = format!("a: {}{}", "[".repeat(40), "]".repeat(40));
        let flat = format!("{nested}\nb: {nested}\n");
        assert_eq!(too_deep(&flat), None);
        let quoted = format!("a: ['{0}', \"{0}\", 'it''s {0}', \"\\\" {0}\"] # {0}\nb: x{0}\n", "[".repeat(100));
        assert_eq!(too_deep(&quoted), None);
        // 200,000 levels are refused in one pass, long before the YAML
        // parser (quadratic in the depth) would have read them.
        let start = std::time::Instant::now();
        assert!(too_deep(&deep(200_000)).is_some());
        // A hang catcher only (the parser would take minutes).
        assert!(start.elapsed().as_secs() < 120);
    }

    /// Every level's unknown key is said with the key it is a slip of, right
    /// after it, at the key's line and column.
    #[test]
    fn an_unknown_key_says_which_it_is_a_slip_of() {
        let cases = [
            ("nmae: lib\n", "unknown field `nmae` (did you mean `name`?), expected one of", (1, 1)),
            ("functions:\n  f: {shrad: {x: [n]}}\n", "unknown field `shrad` (did you mean `shard`?)", (2, 7)),
            ("functions:\n  f: {vpj: g}\n", "unknown field `vpj` (did you mean `vjp`?)", (2, 7)),
            ("functions:\n  f: {residual: [y]}\n", "unknown field `residual` (did you mean `residuals`?)", (2, 7)),
            ("functions:\n  f: {instanciate: {}}\n", "(did you mean `instantiate`?)", (2, 7)),
            ("cuda:\n  arhc: [sm_90]\n", "unknown field `arhc` (did you mean `arch`?), expected", (2, 3)),
            ("modules:\n  per_file: true\n", "unknown field `per_file` (did you mean `per-file`?)", (2, 3)),
            ("link: {lbis: [m]}\n", "unknown field `lbis` (did you mean `libs`?)", (1, 8)),
            ("zzzzzz: 1\n", "unknown field `zzzzzz`, expected one of", (1, 1)),
        ];
        for (text, want, (line, column)) in cases {
            let dir =
                std::env::temp_dir().join(format!("begen-dym-{}-{line}-{column}-{}", std::process::id(), text.len()));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(FILE), text).unwrap();
            let mut map = SourceMap::default();
            let (_, _, diags) = load(&dir, None, &mut map);
            std::fs::remove_dir_all(&dir).unwrap();
            assert_eq!(diags.len(), 1, "{text}");
            assert!(diags[0].message.contains(want), "{text}: {}", diags[0].message);
            assert_eq!(map.position(diags[0].span), (line, column), "{text}");
        }
    }
}
