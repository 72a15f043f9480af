//! The resolved model every stage after `check` works from.
//!
//! A front end (`scan` + `parse` for annotated sources) produces
//! [`decl::Declared`] functions; `check` resolves them into a [`Library`]
//! whose every function has its module, FFI target, symbols and Python
//! names decided and every parameter a role ([`Token`]) with its attr type
//! resolved. Only `check` can make a `Library`; `emit` and `build` only read
//! it and cannot fail on it.

mod attr;
pub(crate) mod binary;
pub(crate) mod decl;
pub(crate) mod generated;
mod ident;
pub(crate) mod plan;
pub(crate) mod pynames;
mod scalar;
mod view;

use std::fmt;
use std::path::PathBuf;

pub(crate) use attr::{ArrayBinding, Container, RecordMember, RecordType};
pub(crate) use ident::is_identifier;
pub(crate) use ident::{KEYWORDS, is_invisible, is_py_keyword, is_release_number};
pub(crate) use pynames::{PY_IMPORTS, is_py_reserved, shadows_py_module};
pub(crate) use scalar::{AttrType, ScalarKind};

/// Where a function runs: decided by its source file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Platform {
    /// `.cpp`, `.cc`, `.cxx`: compiled with the host C++ compiler.
    Cpu,
    /// `.cu`: compiled with nvcc, bound to a CUDA stream.
    Cuda,
}

impl Platform {
    /// The lower-case name used in JSON, YAML and the CLI.
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::Cpu => "cpu",
            Platform::Cuda => "cuda",
        }
    }
}

/// Which kernels a build includes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PlatformChoice {
    /// CPU kernels always; CUDA kernels when CUDA sources exist (then nvcc
    /// is required).
    #[default]
    Auto,
    /// CPU kernels only; CUDA sources are skipped with a warning each.
    Cpu,
    /// Everything; nvcc is required.
    Cuda,
}

impl PlatformChoice {
    /// Parses `cpu`, `cuda` or `auto`.
    pub fn parse(s: &str) -> Option<PlatformChoice> {
        match s {
            "auto" => Some(PlatformChoice::Auto),
            "cpu" => Some(PlatformChoice::Cpu),
            "cuda" => Some(PlatformChoice::Cuda),
            _ => None,
        }
    }

    /// The name `parse` reads.
    pub fn as_str(self) -> &'static str {
        match self {
            PlatformChoice::Auto => "auto",
            PlatformChoice::Cpu => "cpu",
            PlatformChoice::Cuda => "cuda",
        }
    }
}

/// One resolved arg_spec token. Canonical: kernix aliases are normalised and
/// every attr carries its type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Token {
    /// An input tensor, `const BE::Tensor` (or, typed, `const T*`); the
    /// contract is `None` for the untyped `arg`.
    Arg(Option<TensorType>),
    /// An output tensor, `BE::Tensor` (or, typed, `T*`).
    Ret(Option<TensorType>),
    /// A tensor updated in place: an input aliased to an output.
    InOut(Option<TensorType>),
    /// The CUDA stream, `int64_t`.
    Stream,
    /// A scalar attribute passed by name.
    Attr {
        /// The attribute name XLA sees, which is also the C++ parameter's name.
        name: String,
        /// Its resolved scalar type.
        ty: AttrType,
    },
    /// An integer parameter that receives the value of a dimension, resolved
    /// from the tensors.
    Dim {
        /// The dimension's name, as the tensors' contracts write it.
        name: String,
        /// The parameter's integer type.
        ty: AttrType,
    },
    /// A list of input arrays (binary kernels: cuTile's `ListConstraint`),
    /// written `arg:<dtype>[<dims>]...`: from Python a list or tuple of at
    /// least one array, each of the contract (the named dimensions are
    /// shared by every element); to XLA one input buffer per element.
    List(TensorType),
    /// The variadic inputs of a kernel with XLA FFI types
    /// (`ffi::RemainingArgs`), written `arg...`: from Python a list or tuple
    /// of arrays, to XLA one input per element after the other inputs.
    Args,
    /// The variadic outputs of a kernel with XLA FFI types
    /// (`ffi::RemainingRets`), written `ret...`: `out=` lists their structs
    /// after the other outputs'.
    Rets,
    /// A struct passed by value (binary kernels): from Python a dict of
    /// its members, to XLA the struct's bytes.
    Struct {
        /// The attribute name XLA sees.
        name: String,
        /// Its layout (boxed: a struct is rare, and a parameter's record is
        /// kept for every function).
        ty: Box<binary::StructType>,
    },
    /// A struct attribute of an annotated kernel: from Python a dict of its
    /// members, to XLA a dictionary attribute it decodes into the struct.
    Record {
        /// The attribute name XLA sees, which is also the C++ parameter's name.
        name: String,
        /// The struct, as begen read it (boxed, as a `Struct`'s layout).
        ty: Box<RecordType>,
    },
    /// A 1-D array attribute (`attr.w:float32[]`): from Python a sequence
    /// or 1-D array, to XLA an array attribute, to the kernel a span or a
    /// vector ([`Param::array`]).
    Array {
        /// The attribute name XLA sees, which is also the C++ parameter's name.
        name: String,
        /// The element type.
        ty: AttrType,
    },
    /// A string attribute of a kernel with XLA FFI types
    /// (`std::string_view`): from Python a `str`, to XLA a string attribute.
    Str {
        /// The attribute name XLA sees, which is also the C++ parameter's name.
        name: String,
    },
    /// Every attribute of the call as one dictionary (`BE::Attrs`, a
    /// `BE::Tensor` kernel's `ffi::Dictionary`): from Python free keywords,
    /// to XLA each an attribute, to the kernel typed getters by key.
    Dict,
    /// The kernel's per-executable state (`T& state` of a `BE::Tensor`
    /// kernel), created by begen.yaml's `instantiate:` function when XLA
    /// instantiates the executable: no Python argument, no attribute.
    State {
        /// The declared type `T`, as spelled.
        ty: String,
        /// The parameter's declaration, where its errors point.
        at: crate::source::Span,
    },
}

/// What a parameter is to a call, whatever its token's spelling: the
/// stages that order parameters, name them in Python or describe them ask
/// this, so a new token kind is placed for all of them by its arm in
/// [`Token::role`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// A tensor the kernel reads (`arg`).
    Input,
    /// Any number of tensors the kernel reads (a binary kernel's list, a
    /// native kernel's `arg...`).
    InputList,
    /// A tensor read and written in place (`inout`).
    InOut,
    /// A tensor the kernel writes (`ret`).
    Output,
    /// Any number of tensors the kernel writes (`ret...`).
    OutputList,
    /// A value the caller gives by name: a scalar, struct, array or string
    /// attribute.
    Attribute,
    /// An integer the glue reads off the tensors' dimensions.
    Dim,
    /// Every attribute of the call as one dictionary (`BE::Attrs`).
    Dict,
    /// The stream.
    Stream,
    /// The per-executable state its creator made.
    State,
}

impl Role {
    /// Whether the kernel reads tensors through it.
    pub(crate) fn is_input(self) -> bool {
        matches!(self, Role::Input | Role::InOut | Role::InputList)
    }

    /// Whether the kernel writes tensors through it.
    pub(crate) fn is_output(self) -> bool {
        matches!(self, Role::Output | Role::InOut | Role::OutputList)
    }

    /// Whether the caller passes it from Python (a tensor it reads or a
    /// named value): what gets a Python parameter name.
    pub(crate) fn is_passed(self) -> bool {
        self.is_input() || self == Role::Attribute
    }
}

impl Token {
    /// What it is to a call.
    pub(crate) fn role(&self) -> Role {
        match self {
            Token::Arg(_) => Role::Input,
            Token::List(_) | Token::Args => Role::InputList,
            Token::InOut(_) => Role::InOut,
            Token::Ret(_) => Role::Output,
            Token::Rets => Role::OutputList,
            Token::Attr { .. }
            | Token::Struct { .. }
            | Token::Record { .. }
            | Token::Array { .. }
            | Token::Str { .. } => Role::Attribute,
            Token::Dim { .. } => Role::Dim,
            Token::Dict => Role::Dict,
            Token::Stream => Role::Stream,
            Token::State { .. } => Role::State,
        }
    }

    /// Whether it is read by the kernel: a tensor (`arg` or `inout`) or a
    /// list of arrays.
    pub(crate) fn is_input(&self) -> bool {
        self.role().is_input()
    }

    /// Whether it is a tensor XLA returns (`ret` or `inout`), or the
    /// variadic outputs.
    pub(crate) fn is_output(&self) -> bool {
        self.role().is_output()
    }

    /// An attribute's name, of whatever kind (scalar, struct, array).
    pub(crate) fn attr_name(&self) -> Option<&str> {
        match self {
            Token::Attr { name, .. }
            | Token::Struct { name, .. }
            | Token::Record { name, .. }
            | Token::Array { name, .. }
            | Token::Str { name } => Some(name),
            _ => None,
        }
    }

    /// The typed contract of a tensor token, if it has one (a list's is
    /// every element's).
    pub(crate) fn contract(&self) -> Option<&TensorType> {
        match self {
            Token::Arg(c) | Token::Ret(c) | Token::InOut(c) => c.as_ref(),
            Token::List(c) => Some(c),
            Token::Args
            | Token::Rets
            | Token::Stream
            | Token::Attr { .. }
            | Token::Dim { .. }
            | Token::Struct { .. }
            | Token::Record { .. }
            | Token::Array { .. }
            | Token::Str { .. }
            | Token::Dict
            | Token::State { .. } => None,
        }
    }

    /// Whether it is a list of arrays (a binary kernel's list, or a native
    /// kernel's variadic inputs or outputs).
    pub(crate) fn is_list(&self) -> bool {
        matches!(self, Token::List(_) | Token::Args | Token::Rets)
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tensor = |f: &mut fmt::Formatter<'_>, word: &str, c: &Option<TensorType>| match c {
            Some(c) => write!(f, "{word}:{c}"),
            None => f.write_str(word),
        };
        match self {
            Token::Arg(c) => tensor(f, "arg", c),
            Token::Ret(c) => tensor(f, "ret", c),
            Token::InOut(c) => tensor(f, "inout", c),
            Token::List(c) => write!(f, "arg:{c}..."),
            Token::Args => f.write_str("arg..."),
            Token::Rets => f.write_str("ret..."),
            Token::Stream => f.write_str("stream"),
            Token::Attr { name, ty } => write!(f, "attr.{name}:{ty}"),
            Token::Dim { name, ty } => write!(f, "dim.{name}:{ty}"),
            Token::Struct { name, ty } => write!(f, "attr.{name}:{}", ty.name),
            Token::Record { name, ty } => write!(f, "attr.{name}:{ty}"),
            Token::Array { name, ty } => write!(f, "attr.{name}:{ty}[]"),
            Token::Str { name } => write!(f, "attr.{name}:str"),
            Token::Dict => f.write_str("attrs"),
            Token::State { .. } => f.write_str("state"),
        }
    }
}

/// A typed tensor's contract: its element type and, where given, its shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct TensorType {
    /// The element type.
    pub(crate) dtype: ElementType,
    /// The extents; `None` when only the element type is given (any shape).
    pub(crate) dims: Option<Vec<Extent>>,
}

impl TensorType {
    /// The rest its shape starts with (`...`: `Some(None)`; `b...`:
    /// `Some(Some("b"))`), if any.
    pub(crate) fn rest(&self) -> Option<Option<&str>> {
        match self.dims.as_deref()?.first()? {
            Extent::Rest(name) => Some(name.as_deref()),
            Extent::Named(_) | Extent::Fixed(_) => None,
        }
    }

    /// Its rank when the shape fixes one (dims given, no rest).
    pub(crate) fn fixed_rank(&self) -> Option<usize> {
        let dims = self.dims.as_ref()?;
        self.rest().is_none().then_some(dims.len())
    }
}

impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.dtype)?;
        if let Some(dims) = &self.dims {
            let dims: Vec<String> = dims.iter().map(ToString::to_string).collect();
            write!(f, "[{}]", dims.join(","))?;
        }
        Ok(())
    }
}

/// The element type of a typed tensor.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum ElementType {
    /// One of the 15 types.
    Dtype(AttrType),
    /// A template type parameter (`const.T=float32,float64`): each instance
    /// fixes it.
    Param(String),
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElementType::Dtype(t) => write!(f, "{t}"),
            ElementType::Param(name) => f.write_str(name),
        }
    }
}

/// One extent of a typed tensor's shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Extent {
    /// A named dimension: every tensor that names it has the same extent.
    Named(String),
    /// A literal extent.
    Fixed(u64),
    /// Any number of leading extents (`...`, or `name...` to name them):
    /// written first only. Every tensor of one kernel that writes the same
    /// rest (the anonymous one, or one name) has the same leading extents,
    /// and `dim.<name>` receives their product.
    Rest(Option<String>),
}

impl Extent {
    /// A rest's key where the Python helpers record it: `...` or `...name`.
    pub(crate) fn rest_key(name: Option<&str>) -> String {
        format!("...{}", name.unwrap_or(""))
    }
}

impl fmt::Display for Extent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Extent::Named(name) => f.write_str(name),
            Extent::Fixed(n) => write!(f, "{n}"),
            Extent::Rest(None) => f.write_str("..."),
            Extent::Rest(Some(name)) => write!(f, "{name}..."),
        }
    }
}

/// A compile-time constant of a template kernel (`const.<NAME>=v1,v2`):
/// begen instantiates the template once per value (per combination when
/// there are several).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Const {
    /// The template parameter's name.
    pub(crate) name: String,
    /// Its keyword in the Python function (`_` appended where needed).
    pub(crate) py_name: String,
    /// A type or a value parameter.
    pub(crate) kind: ConstKind,
    /// Canonical values: dtype names for a type, literals for a value.
    pub(crate) values: Vec<String>,
}

/// What kind of template parameter a [`Const`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ConstKind {
    /// `typename T` / `class T`: its values are dtypes.
    Type,
    /// A non-type parameter of this type (`int N`, `bool B`).
    Value(AttrType),
}

/// One instantiation of a template kernel: its own FFI target, handler and
/// trampoline.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Instance {
    /// One value per const of the function, in its order.
    pub(crate) values: Vec<String>,
    /// Its key in the Python module's `TARGETS`: `name[A=v,B=w]`.
    pub(crate) key: String,
    /// Its XLA FFI target name.
    pub(crate) target: String,
    /// Its exported handler symbol.
    pub(crate) handler: String,
    /// Its hidden trampoline symbol.
    pub(crate) trampoline: String,
    /// A candidate of a source tuned over its defines (`tune:` with
    /// `defines:`): each define's name and value, compiled into a wrapper of
    /// its own; empty otherwise.
    pub(crate) defines: Vec<(String, String)>,
}

impl Instance {
    /// Whether it is a candidate of a source tuned over its defines (built
    /// in its combination's wrapper only).
    pub(crate) fn is_candidate(&self) -> bool {
        !self.defines.is_empty()
    }
}

/// A tensor parameter the kernel takes as a pointer to its elements
/// (`const float* x`) instead of a `BE::Tensor` view.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Pointer {
    /// The element type as declared (`float`, `T`, `__half`).
    pub(crate) pointee: String,
    /// `const T*`.
    pub(crate) is_const: bool,
}

/// How the C++ parameter that receives a float16/bfloat16 attr is declared;
/// the wrapper passes the raw bits, reinterpreted when the kernel takes the
/// CUDA type itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum HalfRepr {
    /// `uint16_t` / `unsigned short`: raw bits, as the arg_spec system prescribes.
    Bits,
    /// `__half` / `half`.
    CudaHalf,
    /// `__nv_bfloat16`.
    CudaBFloat16,
}

/// One parameter of the kernel, in C++ signature order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Param {
    /// The parameter's name in the signature (a checked C++ identifier; for
    /// attrs it is also the attribute name XLA sees). Names are boxed
    /// strings, as the rare fields below are boxed: a large tree keeps
    /// every function's parameters.
    pub(crate) name: Box<str>,
    /// Its name in the typed Python function (inputs and attributes only):
    /// the C++ name, with `_` appended where it would be a Python keyword,
    /// a name the module uses itself, `out`, or taken.
    pub(crate) py_name: Box<str>,
    /// The role and resolved type.
    pub(crate) token: Token,
    /// Set for float16/bfloat16 attrs only.
    pub(crate) half_repr: Option<HalfRepr>,
    /// Set for a typed tensor taken as a pointer to its elements. The
    /// rarely set fields are boxed: most parameters are plain tensors.
    pub(crate) pointer: Option<Box<Pointer>>,
    /// Set for an array attribute: the container the kernel takes it in.
    pub(crate) array: Option<Box<ArrayBinding>>,
    /// A scalar attribute's default (`attr.eps=1e-5`), as a Python literal.
    pub(crate) default: Option<Box<str>>,
}

impl Param {
    /// Its typed contract's dimensions, in order: a name, or None for a
    /// fixed extent; None when it has no shape or no fixed rank (`[..., n]`).
    pub(crate) fn dim_names(&self) -> Option<Vec<Option<&str>>> {
        let dims = self.token.contract()?.dims.as_ref()?;
        dims.iter()
            .map(|d| match d {
                Extent::Named(n) => Some(Some(n.as_str())),
                Extent::Fixed(_) => Some(None),
                Extent::Rest(_) => None,
            })
            .collect()
    }

    /// The names a call may be split along, one per entry of its typed
    /// shape: a dimension's name, a named rest's (`rows` of `[rows..., d]`:
    /// all its leading extents), None for a fixed extent or the anonymous
    /// `...`; None without a typed shape.
    pub(crate) fn split_names(&self) -> Option<Vec<Option<&str>>> {
        let dims = self.token.contract()?.dims.as_ref()?;
        Some(
            dims.iter()
                .map(|d| match d {
                    Extent::Named(n) => Some(n.as_str()),
                    Extent::Fixed(_) => None,
                    Extent::Rest(name) => name.as_deref(),
                })
                .collect(),
        )
    }
}

/// How `jax.vmap` treats calls (jax.ffi's `vmap_method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub(crate) enum VmapMethod {
    /// Loop over the batch, one call per element (safe default).
    #[default]
    Sequential,
    /// Like `Sequential`, unrolled: one call per element, without a loop.
    SequentialUnrolled,
    /// The kernel accepts inputs with a leading batch dimension of the same size.
    ExpandDims,
    /// The kernel broadcasts any leading batch dimensions itself.
    BroadcastAll,
    /// jax's deprecated `vectorized=True` behaviour (jax warns when it is used).
    LegacyVectorized,
}

impl VmapMethod {
    /// Every method jax.ffi offers, in its order.
    pub(crate) const ALL: [VmapMethod; 5] = [
        VmapMethod::Sequential,
        VmapMethod::SequentialUnrolled,
        VmapMethod::ExpandDims,
        VmapMethod::BroadcastAll,
        VmapMethod::LegacyVectorized,
    ];

    /// The name jax.ffi and `begen.yaml` use.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            VmapMethod::Sequential => "sequential",
            VmapMethod::SequentialUnrolled => "sequential_unrolled",
            VmapMethod::ExpandDims => "expand_dims",
            VmapMethod::BroadcastAll => "broadcast_all",
            VmapMethod::LegacyVectorized => "legacy_vectorized",
        }
    }

    /// Parses one of jax.ffi's method names.
    pub(crate) fn parse(s: &str) -> Option<VmapMethod> {
        VmapMethod::ALL.into_iter().find(|m| m.as_str() == s)
    }
}

/// Per-function options from `begen.yaml`'s `functions:` section.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct FunctionOptions {
    /// Mark the handler `kCmdBufferCompatible` (CUDA graphs). Off by default:
    /// a kernel that synchronises or allocates during capture breaks.
    pub(crate) command_buffer: bool,
    /// How `jax.vmap` batches calls of the Python function.
    pub(crate) vmap_method: VmapMethod,
    /// XLA must keep the call even when its results are unused.
    pub(crate) has_side_effect: bool,
    /// The backward kernel, a function of the same module (checked: it
    /// takes the inputs and one cotangent per output and returns one
    /// cotangent per input); the Python function is then a `jax.custom_vjp`,
    /// or with `linear` a JAX primitive whose other inputs' reverse mode
    /// runs it.
    pub(crate) vjp: Option<String>,
    /// Outputs (C++ names) kept for the backward kernel only (`residuals:`):
    /// the Python function returns the others.
    pub(crate) residuals: Vec<String>,
    /// How the backward kernel's inputs are bound when it takes residuals
    /// (checked): one entry per input, by name. Empty: by position, the
    /// forward's inputs then one cotangent per output.
    pub(crate) vjp_bind: Vec<VjpArg>,
    /// The inputs (positions) the backward kernel returns a cotangent for,
    /// in order, when it leaves out the integer inputs' (checked). Empty:
    /// one cotangent per input.
    pub(crate) vjp_grads: Vec<usize>,
    /// Attribute values the kernel does not support, per attribute name,
    /// as Python literals (`0.0`, `True`, `3`).
    pub(crate) unsupported: Vec<(String, Vec<String>)>,
    /// The inputs (C++ parameter names, float tensors) the outputs are
    /// linear in, each with the others fixed (checked); with `jvp`, the
    /// Python function binds a JAX primitive.
    pub(crate) linear: Vec<String>,
    /// Groups of inputs (C++ parameter names, float tensors, none listed
    /// twice: checked) the outputs are linear in together, the other inputs
    /// fixed (`linear: [[a, b]]`): the jvp is the kernel on the group's
    /// tangents at once.
    pub(crate) groups: Vec<Vec<String>>,
    /// A linear input's transpose kernel, a function of the same module
    /// (checked: it takes the other inputs and one cotangent per output and
    /// returns the input's cotangent): (parameter name, kernel name). A
    /// group's is keyed `"a, b"` (its names, comma-separated) and returns
    /// one cotangent per input of the group.
    pub(crate) transpose: Vec<(String, String)>,
    /// How a transpose kernel is called where begen.yaml says so (checked:
    /// by types and dims): the arguments by name, or by position on purpose.
    pub(crate) transpose_bind: Vec<TransposeBind>,
    /// The tangent kernel, a function of the same module (checked: it
    /// takes the inputs and one tangent per float input and returns one
    /// tangent per output).
    pub(crate) jvp: Option<String>,
    /// The backward pass as a Python function of the module's own
    /// functions (`python_vjp: module:function`, checked): the Python
    /// function is then a `jax.custom_vjp` whose backward pass calls it.
    pub(crate) python_vjp: Option<PythonRule>,
    /// The handler zeroes the outputs before the kernel runs.
    pub(crate) zero_outputs: bool,
    /// A native kernel's per-executable state: the function (a checked
    /// identifier) that creates it when XLA instantiates the executable.
    pub(crate) instantiate: Option<String>,
    /// Typed-contract dimensions a call may be split along across devices
    /// (checked: each in an input and in every output).
    pub(crate) shard: Vec<String>,
    /// Typed-contract dimensions the outputs are sums over (checked: in an
    /// input, in no output); split, the partial outputs are added up.
    pub(crate) reduce: Vec<String>,
    /// Outputs that are sums over some `shard` dimensions (checked: each a
    /// `shard` dimension not in that output's shape): (output name, its
    /// summed dimensions). Split, their partial outputs are added up.
    pub(crate) sum: Vec<(String, Vec<String>)>,
    /// begen.yaml's `vmap: {fold: {input: dim}}` as written.
    pub(crate) fold: Vec<(String, String)>,
    /// The fold resolved by the check: a vmap whose batched inputs are all
    /// folded makes one call with the batch inside the dimension.
    pub(crate) fold_plan: Option<FoldPlan>,
}

/// A `transpose:` entry's binding beyond the kernel's name: `args` names
/// the inputs (of the transposed kernel) and cotangents (`ct`, `ct<k>`)
/// passed, in the transpose kernel's order; `by_position` binds by
/// position without the check that names match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TransposeBind {
    pub(crate) param: String,
    pub(crate) args: Option<Vec<String>>,
    pub(crate) by_position: bool,
}

/// A checked `python_vjp:` rule: `module:function`, each part made of
/// Python identifiers (not keywords). `file` is the module's `.py` file
/// beside begen.yaml, when there is one: its path (relative to the root)
/// and its text, which the generated module carries and runs as that
/// module; without one, the generated module imports `module` by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PythonRule {
    pub(crate) module: String,
    pub(crate) function: String,
    pub(crate) file: Option<(String, String)>,
}

impl PythonRule {
    /// As begen.yaml writes it: `module:function`.
    pub(crate) fn spec(&self) -> String {
        format!("{}:{}", self.module, self.function)
    }
}

/// A checked `vmap: fold`: for each folded input, its position among the
/// inputs and the axis of the dimension; for each output, that axis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FoldPlan {
    pub(crate) dim: String,
    pub(crate) inputs: Vec<(usize, usize)>,
    pub(crate) outputs: Vec<usize>,
}

/// A function's [`FunctionOptions`], boxed only once one is set: most
/// functions of a large tree have no entry under `functions:`, and each
/// keeps its record until the library is done with. Reads see the
/// defaults where nothing is stored; a write stores the defaults first.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options(Option<Box<FunctionOptions>>);

/// What [`Options`] reads where none are stored.
static DEFAULT_OPTIONS: FunctionOptions = FunctionOptions {
    command_buffer: false,
    vmap_method: VmapMethod::Sequential,
    has_side_effect: false,
    vjp: None,
    residuals: Vec::new(),
    vjp_bind: Vec::new(),
    vjp_grads: Vec::new(),
    unsupported: Vec::new(),
    linear: Vec::new(),
    groups: Vec::new(),
    transpose: Vec::new(),
    transpose_bind: Vec::new(),
    jvp: None,
    python_vjp: None,
    zero_outputs: false,
    instantiate: None,
    shard: Vec::new(),
    reduce: Vec::new(),
    sum: Vec::new(),
    fold: Vec::new(),
    fold_plan: None,
};

impl std::ops::Deref for Options {
    type Target = FunctionOptions;

    fn deref(&self) -> &FunctionOptions {
        self.0.as_deref().unwrap_or(&DEFAULT_OPTIONS)
    }
}

impl std::ops::DerefMut for Options {
    fn deref_mut(&mut self) -> &mut FunctionOptions {
        self.0.get_or_insert_with(Box::default)
    }
}

impl From<FunctionOptions> for Options {
    fn from(options: FunctionOptions) -> Options {
        Options((options != DEFAULT_OPTIONS).then(|| Box::new(options)))
    }
}

/// Equal when they read the same (stored defaults or none).
impl PartialEq for Options {
    fn eq(&self, other: &Options) -> bool {
        **self == **other
    }
}

impl Eq for Options {}

/// What one input of a backward kernel bound by name receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VjpArg {
    /// The forward's input of that position.
    Input(usize),
    /// The forward's output of that position (among all its outputs): a residual.
    Output(usize),
    /// The cotangent of the forward's returned output of that position.
    Cotangent(usize),
}

/// The inputs a `transpose:` key names when it is a group's (`"a, b"`:
/// comma-separated), else None.
pub(crate) fn group_key(key: &str) -> Option<Vec<String>> {
    key.contains(',').then(|| key.split(',').map(|n| n.trim().to_string()).collect())
}

impl FunctionOptions {
    /// Whether the Python function binds a JAX primitive (`linear` or `jvp`).
    pub(crate) fn is_primitive(&self) -> bool {
        !self.linear.is_empty() || !self.groups.is_empty() || self.jvp.is_some() || self.fold_plan.is_some()
    }

    /// Whether a call may be split across devices (`shard` or `reduce`).
    pub(crate) fn is_sharded(&self) -> bool {
        !self.shard.is_empty() || !self.reduce.is_empty()
    }
}

/// An algorithm: one Python function over several implementations, each
/// a function of the library for one platform (begen.yaml's `algorithms:`).
/// Implementations agree on inputs, outputs, attributes and contracts
/// (checked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Algorithm {
    /// Its Python name, at the module's top level (a checked identifier).
    pub(crate) name: String,
    /// A call an implementation refuses goes to the next one for the platform.
    pub(crate) fallback: bool,
    /// Highest priority first; equal priorities in begen.yaml's order.
    pub(crate) implementations: Vec<Implementation>,
}

/// One implementation of an [`Algorithm`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Implementation {
    /// Index into [`Library::functions`].
    pub(crate) function: usize,
    /// Higher wins among the implementations for one platform.
    pub(crate) priority: i64,
}

/// A checked, fully resolved annotated function.
///
/// ```
/// let run = begen::driver::run(&begen::driver::Settings::new("fixtures/config_forms/input"))?;
/// for f in run.library.functions() {
///     println!("{} ({}:{}) -> {}", f.name(), f.file(), f.line(), f.target());
/// }
/// # Ok::<(), begen::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// The C++ function name (a checked identifier).
    pub(crate) name: String,
    /// The module it belongs to (see [`Module`]).
    pub(crate) module: String,
    /// Its XLA FFI target name, `<module>.<function>`.
    pub(crate) target: String,
    /// Its name in the Python module: `name`, with `_` appended where that
    /// would be a Python keyword or one of the module's own names.
    pub(crate) py_name: String,
    /// The exported XLA FFI handler symbol in `lib<library>.so`.
    pub(crate) handler: String,
    /// The hidden `extern "C"` trampoline in the source's translation unit
    /// that the handler calls; a binary kernel has none (the name stays
    /// reserved).
    pub(crate) trampoline: String,
    /// Source path relative to the scanned root, `/`-separated.
    pub(crate) file: String,
    /// The variant of the source it is compiled in (its module's name), if
    /// it is in one (begen.yaml's `variants:`).
    pub(crate) variant: Option<String>,
    /// The source path as found on disk.
    pub(crate) path: PathBuf,
    /// 1-based line of the function's name.
    pub(crate) line: usize,
    /// 1-based byte column of the function's name.
    pub(crate) column: usize,
    /// From the source file's extension: which compiler and XLA platform.
    pub(crate) platform: Platform,
    /// Parameters in C++ signature order; `params[i].token` is `arg_spec()[i]`.
    pub(crate) params: Vec<Param>,
    /// Its entry under `functions:` in begen.yaml (defaults otherwise).
    pub(crate) options: Options,
    /// The template parameters a template kernel is instantiated over
    /// (`const.` tokens), in the template's order; empty for a plain function.
    pub(crate) consts: Vec<Const>,
    /// A template kernel's instantiations, one per combination of its
    /// consts' values (in lexicographic order of the consts' value lists);
    /// empty for a plain function, whose target, handler and trampoline are
    /// the function's own.
    pub(crate) instances: Vec<Instance>,
    /// A precompiled kernel (begen.yaml's `binaries:`): what its handler
    /// launches. `None` for an annotated source's function.
    pub(crate) binary: Option<Box<binary::BinaryCall>>,
    /// What the kernel returns and how the handler passes it on.
    pub(crate) returns: Returns,
    /// A kernel declared with XLA FFI's own parameter types: the handler is
    /// generated in the source's translation unit and binds each parameter
    /// as declared. `None` for a `BE::Tensor` or typed-pointer kernel.
    pub(crate) native: Option<Native>,
    /// `ret:like(<xs>)` over the variadic outputs (`BE::Tensors`,
    /// `ffi::RemainingRets`): the C++ name of the variadic input whose
    /// elements they are shaped and typed like, one output per element
    /// (no `out=` for them).
    pub(crate) rets_like: Option<String>,
    /// What its source declares of the functions begen.yaml's
    /// `instantiate:` may name for it (for `check`; empty for most).
    pub(crate) creators: Vec<decl::Creator>,
}

/// What a kernel returns: nothing, or a status whose error the handler
/// returns to XLA with its code. Any other return type is refused by
/// `check` (its value would be discarded).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Returns {
    #[default]
    Void,
    /// `BE::Status` (begen's headers): `ok()`, `code()`, `message()`.
    Status,
    /// `xla::ffi::Error`.
    FfiError,
    /// `xla::ffi::ErrorOr<T>`: its error is returned; its value is not used.
    FfiErrorOr,
}

/// A kernel written against XLA FFI's own types: how each parameter (in
/// signature order) is bound. The types are the kernel's own, so the
/// binding names them through the function's type, never by a spelling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Native {
    pub(crate) params: Vec<NativeBind>,
    /// The outputs updated in place (`inout` over an input and over a
    /// result): each aliased to its input (XLA's `input_output_aliases`).
    pub(crate) aliases: Vec<NativeAlias>,
    /// The buffers whose types fix a rank (`ffi::Buffer<ffi::F64, 2>`), in
    /// signature order: a batching method that adds a leading dimension
    /// cannot call the kernel.
    pub(crate) ranks: Vec<NativeRank>,
}

/// A native kernel's buffer parameter whose type fixes its rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NativeRank {
    pub(crate) name: Box<str>,
    /// The C++ type as written, for messages.
    pub(crate) ty: Box<str>,
    pub(crate) rank: u32,
}

/// An output of a native kernel that is an input updated in place: the two
/// C++ parameters (indices in the signature, and names).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NativeAlias {
    pub(crate) input: usize,
    pub(crate) output: usize,
    pub(crate) input_name: String,
    pub(crate) output_name: String,
}

/// How one parameter of a native kernel is bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NativeBind {
    /// `.Arg<T>()`: a buffer (`Buffer<...>`, `AnyBuffer`).
    Arg,
    /// `.Ret<T>()` of the `Result<T>` the kernel takes.
    Ret,
    /// `.Arg<T>()` of the `Result<T>` the kernel takes: its author stated
    /// the role (`arg`), as a hand-written binding may (XLA's `Result<T>`
    /// is made from a `T`).
    ArgResult,
    /// `.Attr<T>("name")`: a scalar, a span, a string.
    Attr(String),
    /// `.Attrs()`: every attribute as an `ffi::Dictionary`.
    Attrs,
    /// `.Ctx<T>()` as declared (`PlatformStream<T>`, `State<T>`, ...).
    Ctx,
    /// `.RemainingArgs()`: the inputs after the others.
    RemainingArgs,
    /// `.RemainingRets()`: the outputs after the others.
    RemainingRets,
    /// `.Ctx<PlatformStream<cudaStream_t>>()` for a `cudaStream_t`.
    CudaStream,
    /// `.Ctx<State<T>>()` for a `T*`: the per-executable state that
    /// begen.yaml's `instantiate:` function creates (the parameter and
    /// `T` as declared, for messages).
    State(crate::source::Span, String),
}

/// Where a function is placed in the library: its module and the variant
/// of its source it is compiled in. Its symbols come later, after tuning
/// (`check::library::symbols`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FunctionNames {
    /// The module it belongs to.
    pub(crate) module: String,
    /// The variant of its source it is compiled in, if any.
    pub(crate) variant: Option<String>,
}

/// Where a function is defined: its file (as the user names it and as
/// found on disk), the position of its name, and its platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Defined {
    pub(crate) file: String,
    pub(crate) path: PathBuf,
    pub(crate) line: usize,
    pub(crate) column: usize,
    pub(crate) platform: Platform,
}

impl Function {
    /// A checked function with its names, where it is defined, its
    /// parameters and template consts, and what a precompiled kernel's
    /// handler launches. Its Python name starts as its own name (the module's
    /// other names may rename it, `check::library::names`); its options are the
    /// defaults until begen.yaml's `functions:` entry is applied; its target,
    /// symbols and instances are decided after tuning (`check::library::symbols`).
    pub(crate) fn new(
        name: String,
        names: FunctionNames,
        at: Defined,
        params: Vec<Param>,
        consts: Vec<Const>,
        binary: Option<Box<binary::BinaryCall>>,
    ) -> Function {
        let FunctionNames { module, variant } = names;
        let Defined { file, path, line, column, platform } = at;
        Function {
            py_name: name.clone(),
            name,
            module,
            // Decided with every other symbol, after tuning (`check::library::symbols`).
            target: String::new(),
            handler: String::new(),
            trampoline: String::new(),
            file,
            variant,
            path,
            line,
            column,
            platform,
            params,
            options: Options::default(),
            consts,
            instances: Vec::new(),
            binary,
            returns: Returns::Void,
            native: None,
            rets_like: None,
            creators: Vec::new(),
        }
    }

    /// The canonical arg_spec, one token per C++ parameter, as `begen scan`
    /// reports it (`arg`, `attr.x:float32`).
    ///
    /// ```
    /// let run = begen::driver::run(&begen::driver::Settings::new("fixtures/config_forms/input"))?;
    /// let f = run.library.functions().iter().find(|f| f.name() == "sub_one").unwrap();
    /// assert_eq!(f.arg_spec()[2], "attr.k:int32");
    /// # Ok::<(), begen::Error>(())
    /// ```
    pub fn arg_spec(&self) -> Vec<String> {
        self.params.iter().map(|p| self.shown_token(p)).collect()
    }

    /// Whether a parameter is updated in place: an `inout` tensor, or
    /// either half (buffer, result) of a native kernel's input aliased to
    /// its result.
    pub(crate) fn in_place(&self, p: &Param) -> bool {
        matches!(p.token, Token::InOut(_))
            || self
                .native
                .iter()
                .flat_map(|n| &n.aliases)
                .any(|a| *a.input_name == *p.name || *a.output_name == *p.name)
    }

    /// A parameter's token as text: `inout` for either half of a native
    /// kernel's input updated in place (its buffer and its result).
    fn shown_token(&self, p: &Param) -> String {
        let aliased =
            self.native.iter().flat_map(|n| &n.aliases).any(|a| *a.input_name == *p.name || *a.output_name == *p.name);
        match &p.token {
            Token::Arg(c) | Token::Ret(c) if aliased => Token::InOut(c.clone()).to_string(),
            t => t.to_string(),
        }
    }

    /// The arg_spec as text, then a template kernel's `const.` tokens:
    /// what comments, docstrings and the scan table show.
    pub(crate) fn spec_tokens(&self) -> Vec<String> {
        let tokens = self.params.iter().map(|p| self.shown_token(p));
        tokens.chain(self.consts.iter().map(|k| format!("const.{}={}", k.name, k.values.join(",")))).collect()
    }

    /// Whether every input and output has a shape (a rest included) and
    /// none is a list: a sharding plan can name each of their dimensions
    /// (a rest's once the ranks are known).
    pub(crate) fn is_fully_shaped(&self) -> bool {
        self.input_params().chain(self.output_params()).all(|p| !p.token.is_list() && p.split_names().is_some())
    }

    /// The element types of its inputs, in order (None: untyped, or a
    /// template's type): implementations of one algorithm that differ in
    /// them serve different dtypes.
    pub(crate) fn input_dtypes(&self) -> Vec<Option<AttrType>> {
        self.input_params()
            .map(|p| match p.token.contract().map(|c| &c.dtype) {
                Some(ElementType::Dtype(t)) => Some(*t),
                _ => None,
            })
            .collect()
    }

    /// The defines its source is tuned over (their names), which choose
    /// its candidate; none for a kernel of any other source.
    pub(crate) fn tuned_defines(&self) -> Vec<&str> {
        self.instances.first().map(|i| i.defines.iter().map(|(n, _)| n.as_str()).collect()).unwrap_or_default()
    }

    /// The first define it is tuned over that `other` is not: where `other`
    /// (a forward) calls it (its backward kernel) with its own candidate,
    /// this define would have no value.
    pub(crate) fn define_not_in(&self, other: &Function) -> Option<&str> {
        let theirs = other.tuned_defines();
        self.tuned_defines().into_iter().find(|d| !theirs.contains(d))
    }

    /// Its tensor inputs (`arg` and `inout`), in signature order.
    pub(crate) fn input_params(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(|p| p.token.is_input())
    }

    /// The tensors XLA returns (`ret` and `inout`), in signature order.
    pub(crate) fn output_params(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(|p| p.token.is_output())
    }
    /// Its inputs with floating elements (real or complex; a template type
    /// when every type it is instantiated with is one): those that have a
    /// tangent and a cotangent.
    pub(crate) fn float_inputs(&self) -> impl Iterator<Item = &Param> {
        self.input_params().filter(|p| p.token.contract().is_some_and(|c| self.is_float(c)))
    }

    /// Whether a contract of this function has floating elements.
    fn is_float(&self, c: &TensorType) -> bool {
        let float = |t: AttrType| matches!(t.kind(), ScalarKind::Float | ScalarKind::FloatBits | ScalarKind::Complex);
        match &c.dtype {
            ElementType::Dtype(t) => float(*t),
            ElementType::Param(name) => self
                .consts
                .iter()
                .find(|k| k.name == *name)
                .is_some_and(|k| k.values.iter().all(|v| AttrType::parse(v).is_some_and(float))),
        }
    }

    /// Whether it is a kernel with XLA FFI types that takes every
    /// attribute as an `ffi::Dictionary` (its Python function, free keywords).
    pub(crate) fn takes_dictionary(&self) -> bool {
        self.native.as_ref().is_some_and(|n| n.params.contains(&NativeBind::Attrs))
            || self.params.iter().any(|p| p.token == Token::Dict)
    }

    /// Whether it takes per-executable state: a native kernel's `T*` of
    /// XLA FFI types, a `BE::Tensor` kernel's `T&`.
    /// Every symbol its handlers and trampolines are exported or defined
    /// as: each unit's handler and trampoline and, for a stateful kernel,
    /// its state's ([`state_symbols`], [`make_state_symbol`]).
    pub(crate) fn symbols(&self) -> Vec<String> {
        let units: Vec<(&str, &str)> = if self.instances.is_empty() {
            vec![(&self.handler, &self.trampoline)]
        } else {
            self.instances.iter().map(|i| (i.handler.as_str(), i.trampoline.as_str())).collect()
        };
        let mut out = vec![self.handler.clone(), self.trampoline.clone()];
        for (handler, trampoline) in units {
            out.extend([handler.to_string(), trampoline.to_string()]);
            if self.takes_state() {
                let (instantiate, type_id, type_info) = state_symbols(handler);
                out.extend([instantiate, type_id, type_info, make_state_symbol(trampoline)]);
            }
        }
        out.sort();
        out.dedup();
        out
    }

    pub(crate) fn takes_state(&self) -> bool {
        self.state_param().is_some()
    }

    /// Where its state parameter is declared, if it takes one.
    pub(crate) fn state_param(&self) -> Option<crate::source::Span> {
        let native = self.native.iter().flat_map(|n| &n.params).find_map(|b| match b {
            NativeBind::State(at, _) => Some(*at),
            _ => None,
        });
        native.or_else(|| {
            self.params.iter().find_map(|p| match p.token {
                Token::State { at, .. } => Some(at),
                _ => None,
            })
        })
    }

    /// How many output tensors (`ret` and `inout`) XLA returns.
    pub(crate) fn outputs(&self) -> usize {
        self.output_params().count()
    }

    /// Its attribute parameters with their types, in signature order.
    pub(crate) fn attrs(&self) -> impl Iterator<Item = (&Param, AttrType)> {
        self.params.iter().filter_map(|p| match &p.token {
            Token::Attr { ty, .. } => Some((p, *ty)),
            Token::Arg(_)
            | Token::Ret(_)
            | Token::InOut(_)
            | Token::List(_)
            | Token::Args
            | Token::Rets
            | Token::Stream
            | Token::Dim { .. }
            | Token::Struct { .. }
            | Token::Record { .. }
            | Token::Array { .. }
            | Token::Str { .. }
            | Token::Dict
            | Token::State { .. } => None,
        })
    }

    /// Every attribute parameter (scalar, struct or array), in signature
    /// order, with its type as the arg_spec writes it after `attr.<name>:`
    /// (a struct with its members, so that two structs of one name but
    /// different members differ).
    pub(crate) fn attributes(&self) -> impl Iterator<Item = (&Param, String)> {
        self.params.iter().filter_map(|p| match &p.token {
            Token::Attr { ty, .. } => Some((p, ty.to_string())),
            Token::Array { ty, .. } => Some((p, format!("{ty}[]"))),
            Token::Str { .. } => Some((p, "str".to_string())),
            Token::Dict | Token::State { .. } => None,
            Token::Struct { ty, .. } => Some((p, ty.name.clone())),
            Token::Record { ty, .. } => {
                let members: Vec<String> = ty.members.iter().map(|m| format!("{}: {}", m.name, m.ty)).collect();
                Some((p, format!("{} {{{}}}", ty.name, members.join(", "))))
            }
            Token::Arg(_)
            | Token::Ret(_)
            | Token::InOut(_)
            | Token::List(_)
            | Token::Args
            | Token::Rets
            | Token::Stream
            | Token::Dim { .. } => None,
        })
    }
}

/// One source file of the library (annotated or not), relative to the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SourceFile {
    /// Path relative to the scanned root, `/`-separated.
    pub(crate) file: String,
    /// Where it was read from.
    pub(crate) path: PathBuf,
    /// From its extension: compiled by nvcc (`cuda`) or the host compiler.
    pub(crate) platform: Platform,
    /// The path written into `#include "..."` by the wrapper of an
    /// annotated source: relative to the root (which every TU has on its
    /// include path), or absolute where an include directory searched
    /// first holds a file of that name; checked to be safe there. `None`
    /// for sources without functions, which compile as they are.
    pub(crate) include: Option<String>,
    /// The source's variants: each compiles it again, with its defines,
    /// into its own module.
    pub(crate) variants: Vec<Variant>,
}

/// One variant of a source (begen.yaml's `variants:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Variant {
    /// Its module's name (a checked identifier).
    pub(crate) module: String,
    /// `#define NAME VALUE` lines before the source (checked identifiers
    /// and numeric or identifier values).
    pub(crate) defines: Vec<(String, String)>,
}

/// A namespace of functions inside a library: names are unique within a
/// module, and a function's target is `<module>.<function>`. A library
/// without `modules:` in begen.yaml is one module named after its prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Module {
    /// The module's name as targets use it (identifiers joined by dots).
    pub(crate) name: String,
    /// Its attribute name in the Python module of a library of several
    /// modules (`_` appended to a Python keyword or a module-level name).
    pub(crate) py_name: String,
    /// Indices into [`Library::functions`], in order.
    pub(crate) functions: Vec<usize>,
}

/// What `emit` and `build` take: the checked functions of one library.
/// Made only by `check` (through `driver::run`; it is non-exhaustive,
/// so no other crate can make one): every name in it is a checked
/// identifier, every symbol distinct, every include path safe.
///
/// ```
/// let run = begen::driver::run(&begen::driver::Settings::new("fixtures/config_forms/input"))?;
/// let lib = &run.library;
/// assert_eq!(lib.name(), "mykernels");
/// println!("lib{}.so: {} function(s)", lib.name(), lib.functions().len());
/// # Ok::<(), begen::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Library {
    /// Library name (a checked identifier): `lib<name>.so`, `<name>.py`.
    pub(crate) name: String,
    /// FFI target prefix of a one-module library: targets are `<prefix>.<function>`.
    pub(crate) prefix: String,
    /// Sorted by (file, line).
    pub(crate) functions: Vec<Function>,
    /// The modules, sorted by name; one for a library without `modules:`.
    pub(crate) modules: Vec<Module>,
    /// Whether begen.yaml declares `modules:` (the Python module then has
    /// one namespace per module).
    pub(crate) namespaced: bool,
    /// Every source file to compile, sorted by `file`.
    pub(crate) sources: Vec<SourceFile>,
    /// begen.yaml's algorithms, sorted by name.
    pub(crate) algorithms: Vec<Algorithm>,
    /// How it is built: inputs, flags, backends, link, outputs.
    pub(crate) plan: plan::Plan,
    /// The root the sources were found under (absolute).
    pub(crate) root: PathBuf,
    /// The images of begen.yaml's `binaries:` that kernels use.
    pub(crate) binaries: Vec<binary::BinaryImage>,
    /// begen.yaml's `tune:`: the tuned kernels and the shipped table.
    pub(crate) tuning: Tuning,
}

/// What begen.yaml's `tune:` declares, checked: kernels whose compiled-in
/// candidates a call chooses among when it is traced, and the table
/// shipped with the library.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Tuning {
    /// Sorted by function index.
    pub(crate) kernels: Vec<Tuned>,
    /// The algorithms tuned over their implementations
    /// (`implementations: true`), in begen.yaml's order.
    pub(crate) algorithms: Vec<TunedAlgorithm>,
    /// The shipped table (`table:`): its text, checked to be a table;
    /// written into OUT as `<NAME>.tune.json`.
    pub(crate) table: Option<String>,
}

impl Tuning {
    /// The tuning of function `index` of the library, if it is tuned.
    pub(crate) fn of(&self, index: usize) -> Option<&Tuned> {
        self.kernels.iter().find(|t| t.function == index)
    }
}

/// One algorithm tuned over its implementations: its candidates, per
/// platform, are its implementations for that platform; the default is the
/// priority order (the best one that supports the call).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TunedAlgorithm {
    /// Index into [`Library::algorithms`].
    pub(crate) algorithm: usize,
    /// The key dimensions, as begen.yaml names them.
    pub(crate) key: Vec<String>,
    /// Where each key dimension is read from: (the dimension, the input's
    /// index, the axis), resolved over the highest-priority
    /// implementation's contract (the algorithm's signature), so that
    /// implementations naming the dimension differently key alike.
    pub(crate) key_at: Vec<(String, usize, usize)>,
    /// `module:function` generating realistic inputs (checked identifiers).
    pub(crate) inputs: Option<String>,
    /// A hash of what the candidates are (each implementation's source
    /// file, contract, platform and priority), 16 hex digits.
    pub(crate) hash: String,
}

/// One tuned kernel: its candidates are the instances of its tuned consts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tuned {
    /// Index into [`Library::functions`].
    pub(crate) function: usize,
    /// Indices into the function's consts: the tuned ones (integer or bool
    /// value parameters), in the function's order.
    pub(crate) consts: Vec<usize>,
    /// Each tuned const's default value (one of its values, canonical).
    pub(crate) default: Vec<String>,
    /// Typed-contract dimensions of the inputs that key the table.
    pub(crate) key: Vec<String>,
    /// Key dimensions read from an input's extent (`key: {n: "x[0]"}`):
    /// (the dimension, the input's index among the kernel's inputs, the
    /// axis). Every one is also in `key`.
    pub(crate) key_at: Vec<(String, usize, usize)>,
    /// `module:function` generating realistic inputs (checked identifiers).
    pub(crate) inputs: Option<String>,
    /// A hash of what the candidates are compiled from (the kernel's source
    /// file, its contract and its candidates), 16 hex digits: a table entry
    /// made for other sources is stale.
    pub(crate) hash: String,
    /// A source tuned over its defines: the defines' names (sorted), after
    /// the tuned consts in every candidate's key.
    pub(crate) defines: Vec<String>,
    /// The combinations of the defines' values that are built (those
    /// `where:` allows), each one value per define, canonical text.
    pub(crate) combos: Vec<Vec<String>>,
    /// The default combination, one of `combos`.
    pub(crate) define_default: Vec<String>,
    /// Each define's values as declared (canonical text).
    pub(crate) define_values: Vec<Vec<String>>,
}

/// The exported symbols of `handler`'s per-executable state: (instantiate
/// handler, type id, type info).
pub(crate) fn state_symbols(handler: &str) -> (String, String, String) {
    (format!("{handler}__instantiate"), format!("{handler}__state_type_id"), format!("{handler}__state_type_info"))
}

/// The trampoline that runs a `BE::Tensor` kernel's `instantiate:`
/// function (hidden in the kernel's TU).
pub(crate) fn make_state_symbol(trampoline: &str) -> String {
    format!("{trampoline}__make_state")
}

#[cfg(test)]
mod doc_examples {
    //! The examples of this module's crate-private items, run as unit tests
    //! (an example in a doc comment must compile outside the crate).

    #[test]
    fn function_options_is_primitive() {
        let mut opts = crate::model::FunctionOptions::default();
        assert!(!opts.is_primitive());
        opts.jvp = Some("tanh_jvp".into());
        assert!(opts.is_primitive());
        let linear = crate::model::FunctionOptions { linear: vec!["x".into()], ..Default::default() };
        assert!(linear.is_primitive());
    }

    #[test]
    fn options_read_the_defaults_until_one_is_set() {
        use crate::model::{FunctionOptions, Options, VmapMethod};
        let mut o = Options::default();
        assert_eq!(*o, FunctionOptions::default());
        assert_eq!(o, Options::from(FunctionOptions::default()));
        o.vmap_method = VmapMethod::ExpandDims;
        assert_eq!(o.vmap_method, VmapMethod::ExpandDims);
        assert_ne!(o, Options::default());
        o.vmap_method = VmapMethod::Sequential;
        assert_eq!(o, Options::default());
    }

    #[test]
    fn platform() {
        assert_eq!(crate::model::Platform::Cuda.as_str(), "cuda");
    }

    #[test]
    fn platform_as_str() {
        assert_eq!(crate::model::Platform::Cpu.as_str(), "cpu");
    }

    #[test]
    fn platform_choice() {
        use crate::model::PlatformChoice;
        assert_eq!(PlatformChoice::default(), PlatformChoice::Auto);
    }

    #[test]
    fn platform_choice_parse() {
        use crate::model::PlatformChoice;
        assert_eq!(PlatformChoice::parse("cpu"), Some(PlatformChoice::Cpu));
        assert_eq!(PlatformChoice::parse("gpu"), None);
    }

    #[test]
    fn platform_choice_as_str() {
        use crate::model::PlatformChoice;
        assert_eq!(PlatformChoice::parse(PlatformChoice::Cuda.as_str()), Some(PlatformChoice::Cuda));
    }

    #[test]
    fn token() {
        use crate::model::{AttrType, Token};
        let t = Token::Attr { name: "alpha".into(), ty: AttrType::Float32 };
        assert_eq!(t.to_string(), "attr.alpha:float32");
    }

    #[test]
    fn token_is_input() {
        use crate::model::Token;
        assert!(Token::InOut(None).is_input() && !Token::Ret(None).is_input());
    }

    #[test]
    fn token_is_output() {
        use crate::model::Token;
        assert!(Token::InOut(None).is_output() && !Token::Arg(None).is_output());
    }

    #[test]
    fn token_contract() {
        use crate::model::Token;
        assert!(Token::Arg(None).contract().is_none());
    }

    #[test]
    fn token_is_list() {
        use crate::model::{AttrType, ElementType, TensorType, Token};
        let c = TensorType { dtype: ElementType::Dtype(AttrType::Float32), dims: Some(vec![]) };
        assert!(Token::List(c.clone()).is_list() && !Token::Arg(Some(c)).is_list());
    }

    #[test]
    fn tensor_type() {
        use crate::model::{AttrType, ElementType, Extent, TensorType};
        let t = TensorType {
            dtype: ElementType::Dtype(AttrType::Float32),
            dims: Some(vec![Extent::Named("n".into()), Extent::Fixed(3)]),
        };
        assert_eq!(t.to_string(), "float32[n,3]");
    }

    #[test]
    fn element_type() {
        use crate::model::ElementType;
        assert_eq!(ElementType::Param("T".into()).to_string(), "T");
    }

    #[test]
    fn extent() {
        use crate::model::Extent;
        assert_eq!(Extent::Fixed(4).to_string(), "4");
    }

    #[test]
    fn const_example() {
        use crate::model::{AttrType, Const, ConstKind};
        let block = Const {
            name: "BLOCK".into(),
            py_name: "BLOCK".into(),
            kind: ConstKind::Value(AttrType::Int32),
            values: vec!["128".into(), "256".into()],
        };
        assert_eq!(block.values.len(), 2);
    }

    #[test]
    fn instance() {
        let i = crate::model::Instance {
            values: vec!["float32".into()],
            key: "axpy[T=float32]".into(),
            target: "k.axpy[T=float32]".into(),
            handler: "begen_k_axpy__float32".into(),
            trampoline: "begen_call_k_axpy__float32".into(),
            defines: Vec::new(),
        };
        assert_eq!(i.values[0], "float32");
    }

    #[test]
    fn pointer() {
        let p = crate::model::Pointer { pointee: "float".into(), is_const: true };
        assert!(p.is_const);
    }

    #[test]
    fn half_repr() {
        use crate::model::{AttrType, HalfRepr, Param, Token};
        let alpha = Param {
            name: "alpha".into(),
            py_name: "alpha".into(),
            token: Token::Attr { name: "alpha".into(), ty: AttrType::Float16 },
            half_repr: Some(HalfRepr::CudaHalf),
            pointer: None,
            array: None,
            default: None,
        };
        assert_eq!(alpha.half_repr, Some(HalfRepr::CudaHalf));
    }

    #[test]
    fn param() {
        use crate::model::{Param, Token};
        let x = Param {
            name: "x".into(),
            py_name: "x".into(),
            token: Token::Arg(None),
            half_repr: None,
            pointer: None,
            array: None,
            default: None,
        };
        assert_eq!(x.token.to_string(), "arg");
    }

    #[test]
    fn vmap_method() {
        use crate::model::VmapMethod;
        assert_eq!(VmapMethod::default(), VmapMethod::Sequential);
    }

    #[test]
    fn vmap_method_all() {
        assert_eq!(crate::model::VmapMethod::ALL.len(), 5);
    }

    #[test]
    fn vmap_method_as_str() {
        assert_eq!(crate::model::VmapMethod::BroadcastAll.as_str(), "broadcast_all");
    }

    #[test]
    fn vmap_method_parse() {
        use crate::model::VmapMethod;
        assert_eq!(VmapMethod::parse("expand_dims"), Some(VmapMethod::ExpandDims));
        assert_eq!(VmapMethod::parse("sideways"), None);
    }

    #[test]
    fn function_options() {
        use crate::model::{FunctionOptions, VmapMethod};
        let opts = FunctionOptions::default();
        assert!(!opts.command_buffer && !opts.has_side_effect && opts.vjp.is_none());
        assert_eq!(opts.vmap_method, VmapMethod::Sequential);
    }

    #[test]
    fn algorithm() {
        let a = crate::model::Algorithm {
            name: "add".into(),
            fallback: true,
            implementations: vec![crate::model::Implementation { function: 0, priority: 10 }],
        };
        assert_eq!(a.implementations[0].priority, 10);
    }

    #[test]
    fn implementation() {
        let i = crate::model::Implementation { function: 3, priority: 0 };
        assert_eq!(i.function, 3);
    }

    #[test]
    fn variant() {
        let v = crate::model::Variant { module: "mv_b256".into(), defines: vec![("BLOCK".into(), "256".into())] };
        assert_eq!(v.defines[0].1, "256");
    }
}
