//! `begen.yaml`: optional configuration at the kernel directory's root.
//!
//! ```yaml
//! name: mykernels            # library name (default: the directory's name)
//! prefix: mykernels          # FFI target prefix (default: name)
//! platform: auto             # cpu | cuda | auto
//! jax_min: "0.10.2"          # the oldest jax to load on (default: the running one)
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

impl ExprConfig {
    /// The text as written (for locating it in begen.yaml).
    pub(crate) fn text(&self) -> String {
        match self {
            ExprConfig::Int(n) => n.to_string(),
            ExprConfig::Text(t) => t.clone(),
        }
    }
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
    /// Attribute name -> values the kernel does not support.
    #[serde(default)]
    pub(crate) unsupported: BTreeMap<String, Vec<serde_yaml_ng::Value>>,
    /// Inputs (C++ parameter names) the outputs are linear in, each with
    /// the others fixed: the kernel is then its own jvp.
    pub(crate) linear: Option<Vec<String>>,
    /// A linear input -> its transpose kernel (`name` or `module.name`).
    #[serde(default)]
    pub(crate) transpose: BTreeMap<String, String>,
    /// The tangent kernel (`name` or `module.name`, in the same module).
    pub(crate) jvp: Option<String>,
    /// The handler zeroes the outputs before the kernel runs.
    pub(crate) zero_outputs: Option<bool>,
    /// Typed-contract dimensions a call may be split along across devices.
    pub(crate) shard: Option<Vec<String>>,
    /// Typed-contract dimensions the outputs are sums over: split, the
    /// partial outputs are added up across devices.
    pub(crate) reduce: Option<Vec<String>>,
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

/// Where begen.yaml is in the source map, to point diagnostics at its keys,
/// with an index of its words (a begen.yaml may list thousands of entries,
/// and each needs locating at most once per diagnostic).
#[derive(Debug, Clone)]
pub(crate) struct ConfigFile {
    pub(crate) id: FileId,
    words: std::sync::Arc<WordIndex>,
}

/// Each delimited word of a file, with every place it stands: (1-based
/// line, byte offset, followed by `:`).
type WordIndex = std::collections::HashMap<String, Vec<(usize, usize, bool)>>;

/// Characters that bound a word of begen.yaml.
const DELIMITERS: &str = "{}[],:\"'#";

impl ConfigFile {
    fn new(id: FileId, text: &str) -> ConfigFile {
        let mut words = WordIndex::default();
        let mut start = 0;
        for (i, line) in text.split('\n').enumerate() {
            let is_delim = |c: char| c.is_whitespace() || DELIMITERS.contains(c);
            let mut k = 0;
            while k < line.len() {
                let rest = &line[k..];
                let c = rest.chars().next().unwrap_or(' ');
                if is_delim(c) {
                    k += c.len_utf8();
                    continue;
                }
                let len = rest.find(is_delim).unwrap_or(rest.len());
                let after = &rest[len..];
                let key = after.trim_start_matches(['"', '\'']).trim_start().starts_with(':');
                words.entry(rest[..len].to_string()).or_default().push((i + 1, start + k, key));
                k += len;
            }
            start += line.len() + 1;
        }
        ConfigFile { id, words: std::sync::Arc::new(words) }
    }
}

impl ConfigFile {
    /// The span of `word` as a key (`word:`) or, failing that, as a plain
    /// word (a list item), on the first line at or after `after_line` that
    /// has it; the file's start when there is none.
    pub(crate) fn span(&self, map: &SourceMap, word: &str, after_line: usize) -> Span {
        self.find(map, word, after_line, true)
    }

    /// The span of `word` as a value (a list item, or after `key:`) or,
    /// failing that, as a key, on the first line at or after `after_line`
    /// that has it; the file's start when there is none.
    pub(crate) fn value_span(&self, map: &SourceMap, word: &str, after_line: usize) -> Span {
        self.find(map, word, after_line, false)
    }

    fn find(&self, map: &SourceMap, word: &str, after_line: usize, want_key: bool) -> Span {
        if !word.is_empty() && !word.contains(|c: char| c.is_whitespace() || DELIMITERS.contains(c)) {
            let found = self.words.get(word).and_then(|places| {
                let later = || places.iter().filter(|(line, _, _)| *line >= after_line);
                later().find(|(_, _, key)| *key == want_key).or_else(|| later().next()).map(|&(_, at, _)| at)
            });
            return match found {
                Some(at) => map.span(self.id, at, at + word.len()),
                None => map.span(self.id, 0, 0),
            };
        }
        let bytes = &map.get(self.id).bytes;
        let text = String::from_utf8_lossy(bytes);
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(k, _)| k + 1));
        let lines: Vec<&str> = text.lines().collect();
        let find = |want_key: bool| {
            lines
                .iter()
                .enumerate()
                .skip(after_line.saturating_sub(1))
                .find_map(|(i, l)| word_at(l, word, want_key).map(|col| starts[i] + col))
        };
        match find(true).or_else(|| find(false)) {
            Some(at) => map.span(self.id, at, at + word.len()),
            None => map.span(self.id, 0, 0),
        }
    }
}

/// The byte column of `word` in `line` standing alone (bounded by YAML
/// punctuation or quotes); with `key`, only where a `:` follows.
fn word_at(line: &str, word: &str, key: bool) -> Option<usize> {
    if word.is_empty() {
        return None;
    }
    let bound = |c: Option<char>| c.is_none_or(|c| c.is_whitespace() || "{}[],:\"'#".contains(c));
    line.match_indices(word).map(|(i, _)| i).find(|&i| {
        let before = line[..i].chars().next_back();
        let rest = &line[i + word.len()..];
        if !bound(before) || !bound(rest.chars().next()) {
            return false;
        }
        !key || rest.trim_start_matches(['"', '\'']).trim_start().starts_with(':')
    })
}

/// Reads `root/begen.yaml` into the source map if it exists. Returns the
/// config (default on any error), where the file is, and diagnostics.
pub(crate) fn load(root: &Path, map: &mut SourceMap) -> (Config, Option<ConfigFile>, Vec<Diagnostic>) {
    let path = root.join(FILE);
    // Absent: no configuration. Present but a directory, a FIFO or a device
    // (`/dev/zero`): said so, never read (it could block, or never end).
    if std::fs::symlink_metadata(&path).is_err() {
        return (Config::default(), None, Vec::new());
    }
    if std::fs::metadata(&path).is_ok_and(|m| !m.is_file()) {
        let id = map.add(FILE, &path, Vec::new());
        let d = Diagnostic::file(crate::diag::Severity::Error, id, msg::CONFIG_NOT_A_FILE.to_string());
        return (Config::default(), None, vec![d]);
    }
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            let id = map.add(FILE, &path, Vec::new());
            let d = Diagnostic::file(crate::diag::Severity::Error, id, msg::unreadable(&e.to_string()));
            return (Config::default(), None, vec![d]);
        }
    };
    let id = map.add(FILE, &path, bytes);
    let text = String::from_utf8_lossy(&map.get(id).bytes).into_owned();
    let file = ConfigFile::new(id, &text);
    if text.trim().is_empty() {
        return (Config::default(), Some(file), Vec::new());
    }
    if let Some(at) = too_deep(&text) {
        let d = Diagnostic::error(map.span(id, at, at + 1), msg::yaml_too_deep(MAX_FLOW_DEPTH));
        return (Config::default(), Some(file), vec![d]);
    }
    // The typed reading keeps the last of two equal keys in a map
    // (`functions: {f: .., f: ..}`); the untyped one refuses them at every level.
    let read = serde_yaml_ng::from_str::<Config>(&text)
        .and_then(|config| serde_yaml_ng::from_str::<serde_yaml_ng::Value>(&text).map(|_| config));
    match read {
        Ok(config) => (config, Some(file), Vec::new()),
        Err(e) => {
            let at = e.location().map_or(0, |l| l.index());
            let message = e.to_string();
            // The location is shown apart; drop serde's " at line N column M".
            let message = message.find(" at line ").map_or(message.as_str(), |k| &message[..k]);
            let d = Diagnostic::error(map.span(id, at, at), msg::yaml_error(message));
            (Config::default(), Some(file), vec![d])
        }
    }
}

/// How deep begen.yaml may nest flow collections (`[`, `{`): a begen.yaml
/// needs a handful; the YAML parser takes time quadratic in the depth.
const MAX_FLOW_DEPTH: usize = 64;

/// The byte offset of the first `[` or `{` that opens a flow collection
/// deeper than [`MAX_FLOW_DEPTH`], found in one linear pass. Quoted
/// scalars and comments are skipped; outside a flow collection a bracket
/// opens one only where a value may start (after a blank, or at a line's
/// start), as in YAML, where `a[b` is a plain scalar. Where this reading is
/// rougher than YAML's, it only errs towards handing the text on.
fn too_deep(text: &str) -> Option<usize> {
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
        // Timing: 200,000 levels are refused in one pass (the YAML parser took 22 s on 100,000).
        let start = std::time::Instant::now();
        assert!(too_deep(&deep(200_000)).is_some());
        assert!(start.elapsed().as_secs() < 5);
    }
}
