//! The view model of the Python module and its stub: names, signatures,
//! attribute conversions and every statement's parts, resolved in Rust;
//! `templates/module.py(i)` and the macros of `templates/python/` write
//! them out as Python.

use std::collections::BTreeSet;

use crate::model::{
    Algorithm, AttrType, Const, ConstKind, ElementType, Extent, Function, Library, Param, Platform, RecordType,
    ScalarKind, TensorType, Token, Tuned, TunedAlgorithm, VjpArg,
};

use super::runtime::{self, Section};
use crate::emit::abi::Kernel;
use crate::emit::names::{PyLit, comment_text, py_str};
use crate::emit::tune::{TuneCall, TuneSpec, tune_key};
use crate::model::is_py_keyword;

/// The generated Python module and its stub.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyModuleView {
    pub(crate) name: String,
    /// Source files the module was generated from (safe for a docstring).
    pub(crate) sources: Vec<String>,
    /// `lib<name>.so`, as a Python literal.
    pub(crate) library_file: String,
    /// The import block (runtime::imports).
    pub(crate) imports: String,
    /// The runtime sections the module holds.
    pub(crate) sections: Vec<Section>,
    /// Their text, in order.
    pub(crate) runtime: Vec<&'static str>,
    /// A binary kernel takes a list of arrays (the stub's `Sequence`).
    pub(crate) needs_lists: bool,
    /// Libraries it links, as Python literals (preloaded from pip's
    /// `nvidia` packages when they are there).
    pub(crate) linked: Vec<String>,
    /// The library has several modules: its functions live in `modules`,
    /// one namespace each; else in `functions`, at the top level.
    pub(crate) namespaced: bool,
    pub(crate) modules: Vec<PyNamespaceView>,
    /// `"name", ...` for `__all__`.
    pub(crate) all: Vec<String>,
    /// (function literal, target literal) for `TARGETS`.
    pub(crate) targets: Vec<(String, String)>,
    /// (target literal, symbol literal, platform literal) for `register()`.
    pub(crate) handlers: Vec<(String, String, String)>,
    /// Kernels with per-executable state: (handler symbol, instantiate
    /// handler, state type id function, state type info function) literals.
    pub(crate) states: Vec<(String, String, String, String)>,
    pub(crate) functions: Vec<PyFunctionView>,
    pub(crate) algorithms: Vec<PyAlgorithmView>,
    /// The exported symbol returning the XLA FFI API version the library
    /// was compiled against, as a literal.
    pub(crate) api_symbol: String,
    /// `_BEGEN_WIDE`: the dtypes JAX holds only in x64 mode, as a tuple of
    /// literals ([`py_wide_dtypes`]).
    pub(crate) wide: PyLit,
    /// `_BEGEN_BUILD`: empty in the view; emit writes the hash of the
    /// module's text in its place.
    pub(crate) build: String,
    /// `_BEGEN_TUNE`: the tuned kernels (none: no such dict).
    pub(crate) tune: Vec<TuneSpec>,
    /// The module holds the sharding section: `register()` registers the
    /// partitioner of exported split calls, and the export checks name it.
    pub(crate) sharded: bool,
    /// `_BEGEN_GRADS`: the kernels that declare derivatives (none: no such
    /// dict).
    pub(crate) grads: Vec<PyGradSpec>,
    /// `_BEGEN_RULES`: the `python_vjp:` modules that are files beside
    /// begen.yaml, (module, path, text) as literals (none: no such dict).
    pub(crate) rules: Vec<(String, String, String)>,
}

/// One module of a library of several: a namespace built by a function of
/// its name, holding its own `TARGETS` and typed functions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyNamespaceView {
    pub(crate) py_name: String,
    /// Its name and the library's, for its docstring (safe text).
    pub(crate) module: String,
    pub(crate) library: String,
    /// `__all__` of the namespace, as literals.
    pub(crate) all: Vec<String>,
    /// (function literal, target literal) for its `TARGETS`.
    pub(crate) targets: Vec<(String, String)>,
    pub(crate) functions: Vec<PyFunctionView>,
}

/// One typed Python function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyFunctionView {
    /// The function's name in Python (`_` appended to a Python keyword).
    pub(crate) py_name: String,
    /// Its parameters, e.g. `x, /, *, alpha, out` (annotated in the stub).
    pub(crate) params: Vec<PyParam>,
    /// How many arrays it returns (the stub's return annotation).
    pub(crate) outputs: usize,
    /// What its docstring says.
    pub(crate) doc: PyDoc,
    /// What the body does after `register()`.
    pub(crate) body: PyBody,
    /// Its positional parameters (the inputs), in order.
    pub(crate) inputs: Vec<String>,
    /// Its keyword parameters: (what it is, its Python name), what being an
    /// attribute's name, `const:<NAME>` or `out`.
    pub(crate) keywords: Vec<(String, String)>,
    /// Whether the body calls `register()` first (an algorithm's does not:
    /// its implementations do).
    pub(crate) registers: bool,
}

impl PyFunctionView {
    /// Whether it returns a variadic number of arrays (a native kernel's
    /// variadic outputs, from `out=` or like a list input's arrays): the
    /// stub's `tuple[jax.Array, ...]`.
    pub(crate) fn variadic_out(&self) -> bool {
        let like_each = match &self.body {
            PyBody::Kernel(k) => {
                k.call.results.iter().any(|r| matches!(r, PyResult::LikeEach(_) | PyResult::LikeEachTuple(_)))
            }
            PyBody::Dispatch(_) => false,
        };
        like_each || self.params.iter().any(|p| matches!(p, PyParam::Out { variadic: true, .. }))
    }

    /// The keyword parameters an eager call keys its jit by (everything but
    /// the inputs), as Python names.
    pub(crate) fn static_keywords(&self) -> Vec<&str> {
        self.params
            .iter()
            .filter_map(|p| match p {
                PyParam::Attr { name, .. } | PyParam::Const { name, .. } => Some(name.as_str()),
                PyParam::Out { .. } => Some("out"),
                PyParam::Config { .. } => Some("config"),
                PyParam::Input { .. } | PyParam::Slash | PyParam::Star | PyParam::Kwargs { .. } => None,
            })
            .collect()
    }

    /// The name of its free keywords (`**attrs`), if it takes them.
    pub(crate) fn kwargs(&self) -> Option<&str> {
        self.params.iter().find_map(|p| match p {
            PyParam::Kwargs { name } => Some(name.as_str()),
            _ => None,
        })
    }

    /// A tuned kernel's or algorithm's function: its choice depends on the
    /// tables too.
    pub(crate) fn tuned(&self) -> bool {
        match &self.body {
            PyBody::Kernel(k) => matches!(&k.check, PyCheck::Typed(t) if t.tune.is_some()),
            PyBody::Dispatch(d) => d.tuned,
        }
    }
}

/// What a function's docstring says (its texts safe in a docstring).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PyDoc {
    Kernel(Box<PyKernelDoc>),
    /// An algorithm's: its implementations, (name, priority) per platform
    /// (`cpu`, `cuda`) that has any, whether a refused call falls back, and
    /// whether it is tuned over its implementations.
    Algorithm {
        name: String,
        platforms: Vec<(&'static str, Vec<(String, i64)>)>,
        fallback: bool,
        tuned: bool,
    },
}

/// The docstring of a kernel's function: the kernel (its platform in
/// capitals, its name, file and line) and arg_spec; for a typed one each
/// input (Python name, contract, role), each `ret` (name, contract) and
/// each const (Python name, values, whether the inputs' dtype gives it);
/// side effects, unsupported values (attribute, values), and what the
/// wrappers around its call add: the backward kernel of a `vjp`, a
/// primitive's rules, the axes a kernel run per shard splits along and
/// reduces over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyKernelDoc {
    pub(crate) platform: String,
    pub(crate) name: String,
    pub(crate) file: String,
    pub(crate) line: usize,
    pub(crate) arg_spec: String,
    pub(crate) typed: bool,
    pub(crate) inputs: Vec<(String, String, PyInputRole)>,
    pub(crate) rets: Vec<(String, String)>,
    pub(crate) out_optional: bool,
    pub(crate) consts: Vec<(String, String, bool)>,
    pub(crate) side_effect: bool,
    pub(crate) unsupported: Vec<(String, String)>,
    pub(crate) backward: Option<String>,
    /// Its backward pass's Python function (`python_vjp:`), `module:function`.
    pub(crate) backward_rule: Option<String>,
    pub(crate) rules: Option<Vec<PyRuleDoc>>,
    pub(crate) shards: Option<(Option<String>, Option<String>)>,
}

/// What an input is, for the docstring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PyInputRole {
    Input,
    /// Updated in place and returned.
    InPlace,
    /// A list or tuple of arrays.
    List,
}

/// One rule of a primitive, for the docstring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PyRuleDoc {
    /// Its tangent kernel.
    Tangent(String),
    /// The inputs it is linear in.
    Linear(String),
    /// (the input, its transpose kernel).
    Transpose(String, String),
    /// Its backward kernel (`vjp:` beside `linear:`): reverse mode in the
    /// inputs it is not linear in.
    Backward(String),
    /// The dimension a vmap folds its batch into (`vmap: fold`).
    Fold(String),
}

/// One entry of a function's parameter list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PyParam {
    /// An input array (`list`: a sequence of arrays), positional.
    Input { name: String, list: bool },
    /// `/`: the inputs before it are positional only.
    Slash,
    /// `*`: the parameters after it are keywords only.
    Star,
    /// An attribute, with its stub type and its default literal, if any.
    Attr { name: String, stub: &'static str, default: Option<String> },
    /// A const given as a keyword, with its stub type and its default
    /// literal (where it has only one value).
    Const { name: String, stub: &'static str, default: Option<String> },
    /// `out`: the structs of the `ret` outputs (`optional` where they can
    /// be inferred from the inputs); `variadic`: a sequence of them, the
    /// variadic outputs' after the others'.
    Out { optional: bool, structs: usize, variadic: bool },
    /// `config=None`: a tuned kernel's candidate, by its tuned consts; a
    /// tuned algorithm's implementation too (`implementation`: its stub
    /// type also takes the implementation's name).
    Config { implementation: bool },
    /// `**attrs`: the free keywords of a kernel that takes an
    /// `ffi::Dictionary`, every one an attribute of the call.
    Kwargs { name: String },
}

/// A function's body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PyBody {
    /// A kernel's: its arguments checked and converted, then its XLA call.
    Kernel(Box<PyKernelBody>),
    /// An algorithm's: the call of its best implementation.
    Dispatch(PyDispatch),
}

/// The body of a kernel's function, in the order it runs: planned across
/// devices (`split`), unsupported values refused, attributes converted
/// (`hoisted`), inputs checked, then the call, which `vjp` wraps in a
/// `jax.custom_vjp` and `primitive` binds as a JAX primitive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyKernelBody {
    /// How error messages name the function, as a literal.
    pub(crate) shown: String,
    /// Planned across devices first, where every array is shaped.
    pub(crate) split: Option<PySplit>,
    /// A `jax.custom_vjp` whose primal is the rest of the body.
    pub(crate) vjp: Option<PyVjp>,
    /// The attributes with values the kernel does not support, refused.
    pub(crate) refusals: Vec<PyRefusal>,
    /// The attributes are converted in statements of their own
    /// (`_begen_v<k>`) and the call names the results: a primitive's FFI
    /// call runs later, when it is lowered.
    pub(crate) hoisted: bool,
    /// The inputs, checked.
    pub(crate) check: PyCheck,
    pub(crate) call: PyCall,
    /// The call is a JAX primitive's (`_begen_bind`).
    pub(crate) primitive: Option<PyPrimitive>,
}

/// An attribute whose values the kernel does not support: its XLA name as
/// a literal, its Python name and the values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyRefusal {
    pub(crate) attr: String,
    pub(crate) py: String,
    pub(crate) values: PyLit,
}

/// How a function checks its inputs before the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PyCheck {
    /// Without contracts: the x64 check (`names`: the inputs' names), and
    /// where `out=` is a tuple (`outs`, not one), its length, with the
    /// message its error gives as a literal. A native kernel's variadic
    /// inputs and outputs: `rest`.
    Untyped { names: PyLit, outs: Option<(usize, String)>, rest: Option<Box<PyRest>> },
    /// With contracts: inputs checked and consts resolved, sizes set by
    /// attributes, outputs checked or inferred.
    Typed(PyTyped),
}

/// The checks of a native kernel's variadic inputs (each a list or tuple
/// of arrays: its parameter, and its name as a literal) and of `out=` where
/// it has variadic outputs (a list or tuple of at least `n` structs, the
/// other outputs' first; the message its error gives as a literal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyRest {
    pub(crate) inputs: Vec<(String, String)>,
    pub(crate) outs: Option<(usize, String)>,
}

/// The checks of a typed function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyTyped {
    /// Some input is a list of arrays (`_begen_list_inputs`).
    pub(crate) lists: bool,
    /// The inputs' contracts (`(name, dtype, dims)`, a list's marked).
    pub(crate) specs: PyLit,
    pub(crate) consts: Vec<PyConstSpec>,
    /// The integer attributes that set a dimension: (its name as a literal,
    /// the Python parameter).
    pub(crate) sizes: Vec<(String, String)>,
    /// The `ret` outputs' contracts, where there are any.
    pub(crate) outputs: Option<PyLit>,
    /// A tuned kernel: its key in `_BEGEN_TUNE` and its tuned consts (their
    /// names as literals and their keywords), chosen after the inputs are
    /// checked.
    pub(crate) tune: Option<PyTune>,
}

/// How a tuned kernel's function chooses its candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyTune {
    pub(crate) key: String,
    pub(crate) given: Vec<(String, String)>,
}

/// A kernel's entry of the module's `_BEGEN_GRADS` (every field a
/// literal): what `begen.testing.check_grads` builds inputs from and what
/// it reports the kernel declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyGradSpec {
    /// The function as its messages name it (`name` or `module.name`).
    pub(crate) key: String,
    /// The function's path from the module (`name` or `module.name`).
    pub(crate) call: String,
    pub(crate) platform: String,
    /// The inputs' contracts, `(name, dtype, dims)` by their begen.yaml
    /// names.
    pub(crate) args: PyLit,
    /// Each type const: its name and values.
    pub(crate) types: Vec<(String, PyLit)>,
    /// Each attribute's keyword and Python type.
    pub(crate) attrs: PyLit,
    /// begen.yaml's derivative declarations: (key, value literal) of
    /// `vjp`, `jvp`, `linear` and `transpose`, those given.
    pub(crate) declares: Vec<(String, String)>,
}

/// A const for `_begen_inputs`: its name, Python name and kind (as
/// literals), the parameter giving it (a keyword const) and its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyConstSpec {
    pub(crate) name: String,
    pub(crate) py: String,
    pub(crate) kind: String,
    pub(crate) given: Option<String>,
    pub(crate) values: PyLit,
    /// A tuned const: its value is the caller's or the default
    /// (`_begen_tv`), until the tables choose.
    pub(crate) tuned: bool,
}

/// The XLA FFI call of a kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyCall {
    /// Called through the runtime's `_begen_ffi_call` with the rule: a
    /// kernel that may be split is partitioned there under auto mesh axes.
    pub(crate) ruled: bool,
    /// A tuned kernel that may be split: its key in `_BEGEN_TUNE` and its
    /// inputs as a tuple, for the candidate chosen again per shard where
    /// the call is partitioned under auto mesh axes (`pick=`).
    pub(crate) retune: Option<(String, String)>,
    pub(crate) key: PyKey,
    /// The structs of its results (one, or a tuple of them).
    pub(crate) results: Vec<PyResult>,
    /// (input, output) index pairs of in-place inputs.
    pub(crate) aliases: Vec<(usize, usize)>,
    /// `vmap_method=`, as a literal.
    pub(crate) vmap: String,
    pub(crate) side_effect: bool,
    /// The array operands, then every list's elements (the handler reads
    /// them as its remaining arguments), list by list.
    pub(crate) arrays: Vec<String>,
    pub(crate) lists: Vec<String>,
    /// The attributes, converted.
    pub(crate) attrs: Vec<PyAttrArg>,
    /// The free keywords of a kernel that takes an `ffi::Dictionary`:
    /// (how errors name the function, as a literal; the parameter).
    pub(crate) kwargs: Option<(String, String)>,
    /// What the function returns of the call's results.
    pub(crate) returns: PyReturn,
}

/// A kernel's key in `TARGETS`: its name as a literal, or an instance's
/// (`_begen_key`, from the consts `_begen_inputs` resolved).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyKey {
    pub(crate) name: String,
    pub(crate) instanced: bool,
}

/// One result struct of an XLA call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PyResult {
    /// `out` as given.
    Out,
    /// `out`, a sequence, as a tuple.
    OutTuple,
    /// The `k`-th struct `_begen_outputs` made.
    Ret(usize),
    /// An in-place input's own.
    Like(String),
    /// `out[k]`, of a sequence.
    OutItem(usize),
    /// `out[k:]`, spread: the variadic outputs' structs.
    OutRest(usize),
    /// One struct like each array of a list input, spread: variadic
    /// outputs stated `ret:like(<list>)`.
    LikeEach(String),
    /// [`PyResult::LikeEach`] as the call's only results, a tuple.
    LikeEachTuple(String),
    /// A list's hidden words result (the list, its word count).
    Words(String, usize),
}

/// What a function returns of its call's results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PyReturn {
    /// All of them.
    All,
    /// The first alone (one real result, then lists' words).
    First,
    /// The first `n` (the real results, then lists' words), as a tuple.
    Prefix(usize),
}

/// An attribute argument of the call: XLA's name (a Python keyword is
/// passed as `**{"name": ...}`, `xla_lit`), and its conversion from the
/// Python parameter `py`, which quotes `label` (a literal, e.g.
/// `"f: attribute 'n' (int8)"`) in its errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyAttrArg {
    pub(crate) xla: String,
    pub(crate) xla_lit: String,
    pub(crate) keyword: bool,
    pub(crate) py: String,
    pub(crate) label: String,
    pub(crate) conversion: PyConversion,
}

/// How an attribute value becomes what the C++ side decodes (the arg_spec
/// system's table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PyConversion {
    /// A scalar.
    Scalar(PyScalar),
    /// A struct given as a dict of its members, packed into the struct's
    /// bytes (a uint8 array of `size`): each leaf (its member path) at its
    /// offset.
    Struct { leaves: Vec<(PyLit, u32, PyScalar)>, size: u32 },
    /// A struct of an annotated kernel, given as a dict, into the dict XLA
    /// decodes: each member (its name and type, as literals) converted.
    Record { members: Vec<(String, String, PyScalar)> },
    /// A sequence or a 1-D array into the 1-D numpy array XLA gets: its
    /// type's name as a literal, the element dtype, each element's
    /// conversion.
    Array { ty: String, wire: &'static str, element: PyScalar },
    /// A `str`, checked to be one, for a string attribute.
    Str,
}

/// A scalar's conversion: the runtime helper of its kind, called with the
/// value, these dtypes, then the label its errors quote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyScalar {
    pub(crate) helper: &'static str,
    pub(crate) dtypes: Vec<&'static str>,
}

/// One argument of a call the module writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PyArg {
    /// A parameter or variable.
    Name(String),
    /// `_begen_ct<k>`: the cotangent of output `k`.
    Cotangent(usize),
    /// `_begen_t<k>`: the tangent of input `k`.
    Tangent(usize),
    /// `name=value`, the value a variable.
    Keyword(String, String),
    /// `out=` the structs of these inputs (`_begen_aval`): one, or a tuple.
    Avals(Vec<String>),
}

/// The plan across devices a fully shaped typed kernel starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PySplit {
    /// `_begen_r`: the kernel's name, its inputs' names, each input's and
    /// output's dimension names, `shard`, `reduce`.
    pub(crate) rule: PyLit,
    /// A kernel that may be split runs per shard by calling itself on each
    /// block with these arguments (`out` is the block's structs); one that
    /// may not only warns where an input is split.
    pub(crate) per_shard: Option<Vec<PyArg>>,
    /// The function takes `out`.
    pub(crate) out: bool,
}

/// A `jax.custom_vjp` whose backward pass calls the backward kernel's
/// function `backward` with the primal inputs, one cotangent per output
/// (`cotangents`) and `args` (its attributes, `out=`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyVjp {
    /// The inputs' names for the x64 check, which runs before
    /// `jax.custom_vjp` converts (and would narrow) them.
    pub(crate) names: PyLit,
    pub(crate) backward: String,
    pub(crate) cotangents: usize,
    pub(crate) args: Vec<PyArg>,
    /// A backward kernel bound by name (it takes residuals): its inputs'
    /// expressions (an input's name, `_begen_o[k]`, `_begen_ct[k]`), the
    /// returned outputs' positions and the number of outputs.
    pub(crate) residual: Option<PyResidualVjp>,
    /// A backward kernel that leaves out the integer inputs' cotangents:
    /// per forward input, its cotangent in the backward's result
    /// (`_begen_g`, `_begen_g[j]`) or `None`.
    pub(crate) spread: Option<Vec<String>>,
    /// The backward kernel is called with the candidate the forward's call
    /// of a tuned kernel runs (`related_value`): the primal, which resolves
    /// and chooses the consts (`_begen_c`, `_begen_tv`, `_begen_tf`) when it
    /// is traced, sets them in the enclosing call (`nonlocal`), where the
    /// backward pass, traced after it, reads them.
    pub(crate) shares: bool,
}

/// The binding of a backward kernel that takes residuals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyResidualVjp {
    /// The runtime function that makes the custom_vjp: `_begen_vjp_res`,
    /// or `_begen_vjp_rule` for a backward pass in Python (`python_vjp:`).
    pub(crate) call: &'static str,
    pub(crate) exprs: Vec<String>,
    pub(crate) public: PyLit,
    pub(crate) outputs: usize,
}

/// A kernel bound as its JAX primitive: its FFI call is a closure
/// (`_begen_raw`), and so is each tangent or transpose kernel's call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyPrimitive {
    pub(crate) jvp: Option<PyRelated>,
    /// (what it transposes: an input's position, or a tuple of a group's;
    /// its closure's number, the first position; the call).
    pub(crate) transposes: Vec<(PyLit, usize, PyRelated)>,
    /// The positions of the inputs it is linear in, each alone (a number)
    /// or together (a tuple of a group's).
    pub(crate) linear: PyLit,
    /// The runtime function that binds it: `_begen_bind`, or
    /// `_begen_bind_joint` for a kernel with groups of inputs linear
    /// together or a backward kernel (section `joint`).
    pub(crate) bind: &'static str,
    /// Its backward kernel's call (`vjp:` beside `linear:`, bound by
    /// position: the inputs, then one cotangent per output), passed to the
    /// bind as `_begen_backward`.
    pub(crate) backward: Option<PyVjp>,
    /// The inputs' names.
    pub(crate) names: PyLit,
    /// Its `vmap: fold`, passed to the bind as `fold=`.
    pub(crate) fold: Option<PyFold>,
}

/// A checked `vmap: fold`: the closure (`_begen_again`) that calls the
/// kernel's own function on folded arrays with its attributes and `out`,
/// the (input position, axis) pairs and each output's axis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyFold {
    pub(crate) again: PyRelated,
    pub(crate) inputs: PyLit,
    pub(crate) outputs: PyLit,
}

/// A call of a related kernel's function inside a rule's closure, whose
/// parameters are `args` and `out`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyRelated {
    pub(crate) function: String,
    pub(crate) args: Vec<PyArg>,
    /// The keywords passed on (attributes, `out=out`).
    pub(crate) keywords: Vec<PyArg>,
    /// The closure's parameters where they are not `args` (a transpose
    /// kernel called with `args:` named in another order).
    pub(crate) params: Option<Vec<PyArg>>,
}

/// An algorithm's body: `_begen_dispatch` with its name (a literal), its
/// inputs and its keywords, by their literal names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyDispatch {
    pub(crate) name: String,
    pub(crate) keywords: Vec<(String, String)>,
    /// Tuned over its implementations (`_begen_dispatch_tuned`).
    pub(crate) tuned: bool,
}

/// An algorithm of the library: its Python function (top level) and its
/// row of the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyAlgorithmView {
    pub(crate) function: PyFunctionView,
    /// Its name, as a literal.
    pub(crate) name: String,
    pub(crate) fallback: bool,
    /// Best first.
    pub(crate) implementations: Vec<PyImplementation>,
}

/// An implementation of an algorithm (`_BegenImplementation`): the
/// algorithm's and the function's names, the platform (literals), the
/// priority, the unsupported values (by Python name, a literal), the
/// function (its namespace in a library of modules, its Python name), and
/// the keywords it names otherwise
/// (the algorithm's name, its own; literals).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyImplementation {
    pub(crate) algorithm: String,
    pub(crate) function: String,
    pub(crate) platform: String,
    pub(crate) priority: i64,
    pub(crate) unsupported: Vec<(String, PyLit)>,
    pub(crate) namespace: Option<String>,
    pub(crate) py_name: String,
    pub(crate) renames: Vec<(String, String)>,
    /// The (input name, dtype or None) it serves, where the algorithm's
    /// implementations differ by input dtypes; else None: any.
    pub(crate) dtypes: Option<PyLit>,
}

/// The conversion of a scalar attribute to what the C++ side decodes:
/// each kind by its runtime helper, with the row's dtype; a float passed
/// as bits travels as its wire type's bits, a complex number as
/// [real, imag] of its wire type.
pub(crate) fn py_scalar(ty: AttrType) -> PyScalar {
    let s = ty.facts();
    let wire = s.wire.facts().py_dtype;
    let (helper, dtypes) = match s.kind {
        ScalarKind::Bool => ("_begen_bool", vec![]),
        ScalarKind::Int { .. } => ("_begen_int", vec![s.py_dtype]),
        ScalarKind::Float => ("_begen_float", vec![s.py_dtype]),
        ScalarKind::FloatBits => ("_begen_half", vec![s.py_dtype, wire]),
        ScalarKind::Complex => ("_begen_complex", vec![wire]),
    };
    PyScalar { helper, dtypes }
}

/// The conversion of a struct attribute given as a dict of its members:
/// each leaf converted as an attribute of its type, at its offset.
pub(crate) fn py_struct_conversion(ty: &crate::model::binary::StructType) -> PyConversion {
    let leaves = ty.leaves.iter().map(|l| (PyLit::strs(&l.path), l.offset, py_scalar(l.ty))).collect();
    PyConversion::Struct { leaves, size: ty.size }
}

/// The conversion of a struct attribute of an annotated kernel: each
/// member converted as an attribute of its type.
pub(crate) fn py_record_conversion(ty: &RecordType) -> PyConversion {
    let members = ty.members.iter().map(|m| (py_str(&m.name), py_str(m.ty.as_str()), py_scalar(m.ty))).collect();
    PyConversion::Record { members }
}

/// The conversion of an array attribute into the 1-D numpy array XLA gets
/// (of the element type [`super::cpp::array_wire`] names).
pub(crate) fn py_array_conversion(ty: AttrType) -> PyConversion {
    let (wire, _) = ty.facts().array_wire;
    PyConversion::Array { ty: py_str(ty.as_str()), wire: wire.facts().py_dtype, element: py_scalar(ty) }
}

/// The Python type users pass for an attribute, for the stub.
pub(crate) fn py_attr_type(ty: AttrType) -> &'static str {
    ty.kind().py_type()
}

/// The Python type a const takes (`str`: a dtype name), for the stub.
fn py_const_type(k: &Const) -> &'static str {
    match k.kind {
        ConstKind::Type => "str",
        ConstKind::Value(ty) => ty.kind().py_type(),
    }
}

/// What a const is to `_begen_inputs`: `type`, `bool` or `int`.
fn py_const_kind(k: &Const) -> &'static str {
    match k.kind {
        ConstKind::Type => "type",
        ConstKind::Value(ty) => ty.kind().py_type(),
    }
}

/// A contract as the Python helpers read it: `(name, dtype, dims)`, dtype
/// `None`, a dtype name or a 1-tuple naming a type const, dims `None` or a
/// tuple of names and integers, led by `"..."` / `"...rows"` for a rest; a
/// list's is marked with a fourth `True`.
fn py_spec(name: &str, contract: Option<&TensorType>, token: &Token) -> PyLit {
    let none = || PyLit::Raw("None".into());
    let (dtype, dims) = match contract {
        None => (none(), none()),
        Some(c) => (
            match &c.dtype {
                ElementType::Dtype(t) => t.as_str().into(),
                ElementType::Param(k) => PyLit::strs([k]),
            },
            match &c.dims {
                None => none(),
                Some(dims) => PyLit::tuple(dims.iter().map(|d| match d {
                    Extent::Named(n) => PyLit::Str(n.clone()),
                    Extent::Fixed(n) => PyLit::Raw(n.to_string()),
                    Extent::Rest(n) => PyLit::Str(Extent::rest_key(n.as_deref())),
                })),
            },
        ),
    };
    let mut spec = vec![name.into(), dtype, dims];
    // A list's spec is marked: True where it takes at least one array (a
    // binary kernel's), False where it may be empty (`BE::Tensors`).
    match token {
        Token::List(_) => spec.push(PyLit::Raw("True".into())),
        Token::Args | Token::Rets => spec.push(PyLit::Raw("False".into())),
        _ => {}
    }
    PyLit::Tuple(spec)
}

/// Whether a function needs the typed path (contracts, constants, in-place
/// tensors or dimensions); an untyped one keeps the arg_spec system's call.
fn is_typed(f: &Function) -> bool {
    !f.instances.is_empty()
        || f.params
            .iter()
            .any(|p| p.token.contract().is_some() || matches!(p.token, Token::InOut(_) | Token::Dim { .. }))
}

/// Whether a function's module checks its contracts ([`is_typed`]) on the
/// typed path. A native kernel with variadic inputs or outputs checks none
/// there (XLA's binding checks each buffer's): it takes `out=` for every
/// output it does not update in place. A `BE::Tensors` input is a list of
/// the typed path (its elements unchecked); a list of outputs keeps a
/// kernel on the untyped one.
fn takes_typed_path(f: &Function) -> bool {
    let has = |t: Token| f.params.iter().any(|p| p.token == t);
    is_typed(f) && !has(Token::Rets) && (f.native.is_none() || !has(Token::Args))
}

/// A one-line description of a parameter's contract for docstrings.
fn contract_text(c: Option<&TensorType>) -> String {
    c.map_or_else(|| "any dtype and shape".to_string(), |c| c.to_string())
}

/// One keyword attribute of a Python function.
struct PyAttr<'a> {
    /// Its name in XLA's call.
    xla: &'a str,
    /// Its Python name.
    py: &'a str,
    /// Its stub type.
    stub: &'static str,
    /// Its type as error messages show it (`int8`, `float16[]`, a struct's name).
    shown: String,
    conversion: PyConversion,
    /// Its default, a Python literal.
    default: Option<String>,
}

/// What the parts of one function's Python view are built from: its
/// parameters by role, its attributes, and what its signature makes optional.
struct FunctionParts<'a> {
    f: &'a Function,
    /// How error messages name it.
    shown: &'a str,
    inputs: Vec<&'a Param>,
    outputs: Vec<&'a Param>,
    /// The outputs `out=` describes.
    rets: Vec<&'a Param>,
    attrs: Vec<PyAttr<'a>>,
    /// The consts given as keywords (not fixed by an input's dtype).
    keyword_consts: Vec<&'a Const>,
    typed: bool,
    /// Every `ret` can be inferred from the inputs, so `out=` may be left out.
    out_optional: bool,
    /// A kernel that takes an `ffi::Dictionary`: the Python name of its
    /// free keywords (`**attrs`).
    kwargs: Option<String>,
    /// A native kernel's variadic outputs: `out=` is a sequence, the
    /// variadic outputs' structs after the others'.
    variadic_out: bool,
    /// Variadic outputs like each array of this list input (its Python
    /// name): made from it, not from `out=`.
    rets_like: Option<String>,
}

impl<'a> FunctionParts<'a> {
    fn of(f: &'a Function, shown: &'a str) -> FunctionParts<'a> {
        let inputs: Vec<&Param> = f.input_params().collect();
        // XLA binds the variadic outputs after the others: a `BE::Tensors`
        // may be declared anywhere, and its results come last.
        let mut outputs: Vec<&Param> = f.output_params().collect();
        outputs.sort_by_key(|p| p.token == Token::Rets);
        let rets: Vec<&Param> = outputs
            .iter()
            .copied()
            .filter(|p| matches!(p.token, Token::Ret(_)) && aliased_to(f, &p.name).is_none())
            .collect();
        let typed = takes_typed_path(f);
        let out_optional = typed && rets.iter().all(|p| inferable(f, &inputs, p));
        let kwargs = f
            .takes_dictionary()
            .then(|| if inputs.iter().any(|p| &*p.py_name == "attrs") { "attrs_" } else { "attrs" }.to_string());
        // Variadic outputs like a list input's arrays need no `out=`.
        let rets_like = f
            .rets_like
            .as_deref()
            .and_then(|name| f.params.iter().find(|p| &*p.name == name))
            .map(|p| p.py_name.to_string());
        let mut parts = FunctionParts {
            f,
            shown,
            inputs,
            outputs,
            rets,
            attrs: f.params.iter().filter_map(py_attr).collect(),
            keyword_consts: Vec::new(),
            typed,
            out_optional,
            kwargs,
            variadic_out: f.params.iter().any(|p| p.token == Token::Rets) && rets_like.is_none(),
            rets_like,
        };
        parts.keyword_consts = f.consts.iter().filter(|k| !parts.fixed_by_input(&k.name)).collect();
        parts
    }

    /// Whether an input's dtype fixes type const `k`.
    fn fixed_by_input(&self, k: &str) -> bool {
        self.inputs.iter().any(|p| p.token.contract().is_some_and(|c| c.dtype == ElementType::Param(k.to_string())))
    }

    /// The inputs that are lists of arrays, and the others.
    fn lists_and_fixed(&self) -> (Vec<&'a Param>, Vec<&'a Param>) {
        self.inputs.iter().copied().partition(|p| p.token.is_list())
    }

    /// The inputs' Python names.
    fn input_names(&self) -> Vec<String> {
        self.inputs.iter().map(|p| p.py_name.to_string()).collect()
    }
}

/// The input a native kernel's output `name` is updated in place from
/// (`inout` over both), if it is one.
fn aliased_to<'a>(f: &'a Function, name: &str) -> Option<&'a str> {
    let native = f.native.as_ref()?;
    native.aliases.iter().find(|a| a.output_name == name).map(|a| a.input_name.as_str())
}

/// A native kernel's result `name` updated in place from an input: that
/// input's index among the `fixed` inputs, and the result, which takes the
/// input's struct.
fn aliased_result(f: &Function, fixed: &[&Param], name: &str) -> Option<(usize, PyResult)> {
    let input = aliased_to(f, name)?;
    let in_index = fixed.iter().position(|q| &*q.name == input).unwrap_or(0);
    Some((in_index, PyResult::Like(fixed.get(in_index).map_or_else(String::new, |q| q.py_name.to_string()))))
}

/// A parameter's keyword attribute, if it is one.
fn py_attr(p: &Param) -> Option<PyAttr<'_>> {
    let (name, stub, conversion) = match &p.token {
        Token::Attr { name, ty } => (name, py_attr_type(*ty), PyConversion::Scalar(py_scalar(*ty))),
        Token::Struct { name, ty } => (name, "dict", py_struct_conversion(ty)),
        Token::Record { name, ty } => (name, "dict[str, Any]", py_record_conversion(ty)),
        Token::Array { name, ty } => (name, "ArrayLike", py_array_conversion(*ty)),
        Token::Str { name } => (name, "str", PyConversion::Str),
        Token::Arg(_)
        | Token::Ret(_)
        | Token::InOut(_)
        | Token::List(_)
        | Token::Args
        | Token::Rets
        | Token::Stream
        | Token::Dim { .. }
        | Token::Dict
        | Token::State { .. } => return None,
    };
    let shown = match &p.token {
        Token::Struct { ty, .. } => ty.name.clone(),
        other => other.to_string().rsplit(':').next().unwrap_or("").to_string(),
    };
    Some(PyAttr {
        xla: name,
        py: &p.py_name,
        stub,
        shown,
        conversion,
        default: p.default.as_deref().map(str::to_string),
    })
}

/// The dimension names the contracts of `params` use.
fn named_dims<'a>(params: impl Iterator<Item = &'a Param>) -> BTreeSet<&'a str> {
    params
        .filter_map(|p| p.token.contract()?.dims.as_ref())
        .flatten()
        .filter_map(|d| match d {
            Extent::Named(n) => Some(n.as_str()),
            Extent::Fixed(_) | Extent::Rest(_) => None,
        })
        .collect()
}

/// The rests the contracts of `params` use, as the Python helpers key them.
fn rest_keys<'a>(params: impl Iterator<Item = &'a Param>) -> BTreeSet<String> {
    params.filter_map(|p| Some(Extent::rest_key(p.token.contract()?.rest()?))).collect()
}

/// The integer attributes of `f` named like a dimension of its contracts:
/// each gives an output's dimension its value, and is checked against an
/// input's extent (a kernel reading `n` elements must get `n`).
fn size_attrs(f: &Function) -> Vec<&Param> {
    let dims = named_dims(f.input_params().chain(f.output_params()));
    f.attrs().filter(|(p, ty)| ty.is_integer() && dims.contains(&*p.name)).map(|(p, _)| p).collect()
}

/// Whether output `p`'s shape follows from the inputs' and the integer
/// attributes named like its dimensions: XLA cannot be told an untyped
/// `ret`, or one with a dimension nothing gives, without `out=`.
fn inferable(f: &Function, inputs: &[&Param], p: &Param) -> bool {
    let mut input_dims = named_dims(inputs.iter().copied());
    input_dims.extend(size_attrs(f).into_iter().map(|p| &*p.name));
    let input_rests = rest_keys(inputs.iter().copied());
    p.token.contract().is_some_and(|c| {
        c.dims.as_ref().is_some_and(|dims| {
            dims.iter().all(|d| match d {
                Extent::Named(n) => input_dims.contains(n.as_str()),
                Extent::Fixed(_) => true,
                Extent::Rest(n) => input_rests.contains(&Extent::rest_key(n.as_deref())),
            })
        })
    })
}

/// Resolves one typed Python function; `shown` names it in its error
/// messages (`module.function` in a library of several modules). Its key
/// in the `TARGETS` it reads (the module's, or the library's of a
/// one-module library) is its name (`name[T=float32,N=4]` per instance).
pub(crate) fn py_function_view(f: &Function, shown: &str) -> PyFunctionView {
    let parts = FunctionParts::of(f, shown);
    let (check, call) = if parts.typed { emit_typed_body(&parts) } else { emit_untyped_body(&parts) };
    let body = PyKernelBody {
        shown: py_str(shown),
        split: None,
        vjp: None,
        refusals: emit_refusals(f),
        hoisted: f.options.is_primitive(),
        check,
        call,
        primitive: None,
    };
    PyFunctionView {
        py_name: f.py_name.clone(),
        params: emit_params(&parts),
        outputs: parts.outputs.len(),
        doc: emit_doc(&parts),
        body: PyBody::Kernel(Box::new(body)),
        inputs: parts.input_names(),
        keywords: emit_keywords(&parts),
        registers: true,
    }
}

/// A tuned kernel's function: its tuned consts' keywords default to
/// `None` (the tables choose), `config=` fixes them by name, and the
/// consts are chosen after the inputs are checked. A call split across
/// devices passes both on to each block's call.
pub(crate) fn with_tuning(view: &mut PyFunctionView, f: &Function, tuned: &Tuned, shown: &str) {
    let tuned_consts: Vec<&Const> = tuned.consts.iter().map(|&k| &f.consts[k]).collect();
    let is_tuned = |name: &str| tuned_consts.iter().any(|k| k.py_name == name);
    let mut params = Vec::new();
    for p in std::mem::take(&mut view.params) {
        if matches!(p, PyParam::Out { .. }) {
            params.push(PyParam::Config { implementation: false });
        }
        params.push(match p {
            PyParam::Const { name, stub, .. } if is_tuned(&name) => {
                let stub = if stub == "bool" { "bool | None" } else { "int | None" };
                PyParam::Const { name, stub, default: Some("None".into()) }
            }
            other => other,
        });
    }
    if !params.iter().any(|p| matches!(p, PyParam::Config { .. })) {
        params.push(PyParam::Config { implementation: false });
    }
    view.params = params;
    view.keywords.push(("config".into(), "config".into()));
    let PyBody::Kernel(body) = &mut view.body else { return };
    let PyCheck::Typed(t) = &mut body.check else { return };
    for c in &mut t.consts {
        c.tuned = tuned_consts.iter().any(|k| py_str(&k.name) == c.name);
    }
    // A source's defines: after the consts, as each candidate's key holds
    // them; given by `config=` only.
    for (name, values) in tuned.defines.iter().zip(&tuned.define_values) {
        t.consts.push(PyConstSpec {
            name: py_str(name),
            py: py_str(name),
            kind: py_str("int"),
            given: None,
            values: PyLit::strs(values),
            tuned: true,
        });
    }
    if body.call.ruled {
        let inputs = match view.inputs.as_slice() {
            [one] => format!("({one},)"),
            many => format!("({})", many.join(", ")),
        };
        body.call.retune = Some((py_str(shown), inputs));
    }
    t.tune = Some(PyTune {
        key: py_str(shown),
        given: tuned_consts.iter().map(|k| (py_str(&k.name), k.py_name.clone())).collect(),
    });
}

/// A tuned kernel's `_BEGEN_TUNE` entry, with what `begen tune` calls.
fn py_tune_spec(library: &Library, f: &Function, tuned: &Tuned, shown: &str) -> TuneSpec {
    let types = f
        .consts
        .iter()
        .filter(|c| c.kind == ConstKind::Type)
        .map(|c| (py_str(&c.name), PyLit::strs(&c.values)))
        .collect();
    let attrs = PyLit::tuple(f.attrs().map(|(p, ty)| PyLit::strs([&*p.py_name, ty.kind().py_type()])));
    let call = match library.modules.iter().find(|m| m.name == f.module) {
        Some(m) if library.namespaced => format!("{}.{}", m.py_name, f.py_name),
        _ => f.py_name.clone(),
    };
    let mut spec = TuneSpec::new(f, tuned, shown);
    spec.call = Some(TuneCall {
        call: py_str(&call),
        args: PyLit::tuple(f.input_params().map(|p| py_spec(&p.py_name, p.token.contract(), &p.token))),
        types,
        attrs,
        inputs: tuned.inputs.as_deref().map_or_else(|| "None".to_string(), py_str),
    });
    spec
}

/// A tuned algorithm's function and its `_BEGEN_TUNE` entry: the function
/// takes `config=` (`{"implementation": NAME}` picks one) and dispatches
/// through the tables; the entry's one tuned parameter is `implementation`
/// (its values the implementations, the default the highest-priority one),
/// and what `begen tune` feeds it is the highest-priority implementation's
/// (whose signature the function has).
fn py_tuned_algorithm(library: &Library, t: &TunedAlgorithm, view: &mut PyAlgorithmView) -> TuneSpec {
    let a = &library.algorithms[t.algorithm];
    let first = &library.functions[a.implementations[0].function];
    let names: Vec<String> =
        a.implementations.iter().map(|i| shown_name(library, &library.functions[i.function])).collect();
    let per_platform: Vec<String> = [Platform::Cpu, Platform::Cuda]
        .into_iter()
        .filter_map(|p| {
            let listed: Vec<String> = a
                .implementations
                .iter()
                .map(|i| &library.functions[i.function])
                .filter(|f| f.platform == p)
                .map(|f| shown_name(library, f))
                .collect();
            (!listed.is_empty()).then(|| format!("{}: {}", py_str(p.as_str()), PyLit::strs(&listed)))
        })
        .collect();
    let tuned = Tuned {
        function: a.implementations[0].function,
        consts: Vec::new(),
        default: Vec::new(),
        key: t.key.clone(),
        key_at: t.key_at.clone(),
        inputs: t.inputs.clone(),
        hash: t.hash.clone(),
        defines: Vec::new(),
        combos: Vec::new(),
        define_default: Vec::new(),
        define_values: Vec::new(),
    };
    let mut spec = py_tune_spec(library, first, &tuned, &a.name);
    spec.target = py_str(&format!("algorithm:{}.{}", library.prefix, a.name));
    spec.platform = "None".into();
    spec.consts = vec![(
        py_str("implementation"),
        PyLit::tuple(["implementation".into(), PyLit::strs(&names), names[0].as_str().into()]),
    )];
    if let Some(c) = &mut spec.call {
        c.call = py_str(&a.name);
    }
    spec.implementations = Some(format!("{{{}}}", per_platform.join(", ")));
    let f = &mut view.function;
    match f.params.iter().position(|p| matches!(p, PyParam::Config { .. })) {
        Some(k) => f.params[k] = PyParam::Config { implementation: true },
        None => {
            let at = f.params.iter().position(|p| matches!(p, PyParam::Out { .. } | PyParam::Kwargs { .. }));
            f.params.insert(at.unwrap_or(f.params.len()), PyParam::Config { implementation: true });
            f.keywords.push(("config".into(), "config".into()));
        }
    }
    if let PyDoc::Algorithm { tuned, .. } = &mut f.doc {
        *tuned = true;
    }
    if let PyBody::Dispatch(d) = &mut f.body {
        d.tuned = true;
        if !d.keywords.iter().any(|(_, py)| py == "config") {
            d.keywords.push((py_str("config"), "config".into()));
        }
    }
    spec
}

/// The `_BEGEN_GRADS` entry of `f` (shown as `shown`), when it declares a
/// derivative.
fn py_grad_spec(library: &Library, f: &Function, shown: &str) -> Option<PyGradSpec> {
    let o = &f.options;
    let mut declares = Vec::new();
    if let Some(k) = &o.vjp {
        declares.push((py_str("vjp"), py_str(k)));
    }
    if let Some(k) = &o.jvp {
        declares.push((py_str("jvp"), py_str(k)));
    }
    if let Some(r) = &o.python_vjp {
        declares.push((py_str("python_vjp"), py_str(&r.spec())));
    }
    if !o.linear.is_empty() || !o.groups.is_empty() {
        let groups = o.groups.iter().map(PyLit::strs);
        let linear = PyLit::tuple(o.linear.iter().map(|p| PyLit::Str(p.clone())).chain(groups));
        declares.push((py_str("linear"), linear.to_string()));
    }
    if !o.transpose.is_empty() {
        let pairs: Vec<String> = o.transpose.iter().map(|(p, k)| format!("{}: {}", py_str(p), py_str(k))).collect();
        declares.push((py_str("transpose"), format!("{{{}}}", pairs.join(", "))));
    }
    if declares.is_empty() {
        return None;
    }
    let call = match library.modules.iter().find(|m| m.name == f.module) {
        Some(m) if library.namespaced => format!("{}.{}", m.py_name, f.py_name),
        _ => f.py_name.clone(),
    };
    Some(PyGradSpec {
        key: py_str(shown),
        call: py_str(&call),
        platform: py_str(f.platform.as_str()),
        args: PyLit::tuple(f.input_params().map(|p| py_spec(&p.name, p.token.contract(), &p.token))),
        types: f
            .consts
            .iter()
            .filter(|c| c.kind == ConstKind::Type)
            .map(|c| (py_str(&c.name), PyLit::strs(&c.values)))
            .collect(),
        attrs: PyLit::tuple(f.attrs().map(|(p, ty)| PyLit::strs([&*p.py_name, ty.kind().py_type()]))),
        declares,
    })
}

/// The parameter list: the inputs (positional only), then the attributes,
/// the keyword consts and `out`.
fn emit_params(parts: &FunctionParts) -> Vec<PyParam> {
    let mut params: Vec<PyParam> =
        parts.inputs.iter().map(|p| PyParam::Input { name: p.py_name.to_string(), list: p.token.is_list() }).collect();
    if !parts.inputs.is_empty() {
        params.push(PyParam::Slash);
    }
    if !parts.attrs.is_empty() || !parts.rets.is_empty() || !parts.keyword_consts.is_empty() || parts.variadic_out {
        params.push(PyParam::Star);
    }
    params.extend(parts.attrs.iter().map(|a| PyParam::Attr {
        name: a.py.to_string(),
        stub: a.stub,
        default: a.default.clone(),
    }));
    params.extend(parts.keyword_consts.iter().map(|k| PyParam::Const {
        name: k.py_name.clone(),
        stub: py_const_type(k),
        default: match k.values.as_slice() {
            [only] => Some(py_const_value(k, only)),
            _ => None,
        },
    }));
    if !parts.rets.is_empty() || parts.variadic_out {
        params.push(PyParam::Out {
            optional: parts.out_optional,
            structs: parts.rets.len(),
            variadic: parts.variadic_out,
        });
    }
    if let Some(name) = &parts.kwargs {
        params.push(PyParam::Kwargs { name: name.clone() });
    }
    params
}

/// Each attribute as XLA gets it, converted; its errors say which it is.
fn emit_attr_args(parts: &FunctionParts) -> Vec<PyAttrArg> {
    parts
        .attrs
        .iter()
        .map(|a| PyAttrArg {
            xla: a.xla.to_string(),
            xla_lit: py_str(a.xla),
            keyword: !is_py_keyword(a.xla),
            py: a.py.to_string(),
            label: py_str(&format!("{}: attribute '{}' ({})", parts.shown, a.py, a.shown)),
            conversion: a.conversion.clone(),
        })
        .collect()
}

/// The call's parts both bodies share: its operands (the arrays, then the
/// lists), its attributes, `vmap_method=` and side effects.
fn emit_call(parts: &FunctionParts, key: PyKey, results: Vec<PyResult>) -> PyCall {
    let f = parts.f;
    let (lists, fixed) = parts.lists_and_fixed();
    PyCall {
        ruled: false,
        retune: None,
        key,
        results,
        aliases: Vec::new(),
        vmap: py_str(f.options.vmap_method.as_str()),
        side_effect: f.options.has_side_effect,
        arrays: fixed.iter().map(|p| p.py_name.to_string()).collect(),
        lists: lists.iter().map(|p| p.py_name.to_string()).collect(),
        attrs: emit_attr_args(parts),
        kwargs: parts.kwargs.as_ref().map(|k| (py_str(parts.shown), k.clone())),
        returns: PyReturn::All,
    }
}

/// The attributes with values the kernel does not support, refused before
/// the call.
fn emit_refusals(f: &Function) -> Vec<PyRefusal> {
    unsupported(f)
        .map(|(attr, py, values)| PyRefusal {
            attr: py_str(attr),
            py: py.to_string(),
            values: PyLit::tuple(values.iter().cloned().map(PyLit::Raw)),
        })
        .collect()
}

/// A function without contracts: the x64 check and the arg_spec system's
/// call, `out=` as given.
fn emit_untyped_body(parts: &FunctionParts) -> (PyCheck, PyCall) {
    let (f, shown) = (parts.f, parts.shown);
    let n = parts.rets.len();
    let aliased = parts.outputs.iter().any(|p| aliased_to(f, &p.name).is_some());
    if !aliased && !parts.variadic_out && !parts.inputs.iter().any(|p| p.token == Token::Args) {
        let outs = (n != 1)
            .then(|| (n, py_str(&format!("{shown}: out= takes a tuple of {n} jax.ShapeDtypeStruct, one per output"))));
        let result = if n == 1 { PyResult::Out } else { PyResult::OutTuple };
        let check = PyCheck::Untyped { names: PyLit::strs(parts.input_names()), outs, rest: None };
        return (check, emit_call(parts, PyKey { name: py_str(&f.name), instanced: false }, vec![result]));
    }
    // A native kernel's outputs in XLA's order: an input updated in place
    // has its input's struct, a result its struct of `out=` (one alone is
    // `out` itself, several or variadic ones a sequence), the variadic
    // outputs the rest of `out=`.
    let (_, fixed) = parts.lists_and_fixed();
    let mut results = Vec::new();
    let mut aliases = Vec::new();
    let mut k = 0;
    for (out_index, p) in parts.outputs.iter().enumerate() {
        if let Some((in_index, like)) = aliased_result(f, &fixed, &p.name) {
            aliases.push((in_index, out_index));
            results.push(like);
        } else if let (Token::Rets, Some(list)) = (&p.token, &parts.rets_like) {
            results.push(PyResult::LikeEach(list.clone()));
        } else if p.token == Token::Rets {
            results.push(PyResult::OutRest(k));
        } else {
            results.push(if n == 1 && !parts.variadic_out { PyResult::Out } else { PyResult::OutItem(k) });
            k += 1;
        }
    }
    // The variadic outputs alone: `out=` as a tuple.
    if results == [PyResult::OutRest(0)] {
        results = vec![PyResult::OutTuple];
    }
    if let [PyResult::LikeEach(list)] = results.as_slice() {
        results = vec![PyResult::LikeEachTuple(list.clone())];
    }
    let outs = if parts.variadic_out {
        None
    } else {
        (n > 1)
            .then(|| (n, py_str(&format!("{shown}: out= takes a tuple of {n} jax.ShapeDtypeStruct, one per output"))))
    };
    let rest_outs = parts.variadic_out.then(|| {
        let what = match n {
            0 => "one per output".to_string(),
            _ => format!("{n} for the fixed outputs, then one per variadic output"),
        };
        (n, py_str(&format!("{shown}: out= takes a list or tuple of jax.ShapeDtypeStruct: {what}")))
    });
    let rest = PyRest {
        inputs: parts
            .inputs
            .iter()
            .filter(|p| p.token == Token::Args)
            .map(|p| (p.py_name.to_string(), py_str(&p.py_name)))
            .collect(),
        outs: rest_outs,
    };
    let names = PyLit::strs(fixed.iter().map(|p| &*p.py_name));
    let check = PyCheck::Untyped { names, outs, rest: Some(Box::new(rest)) };
    let mut call = emit_call(parts, PyKey { name: py_str(&f.name), instanced: false }, results);
    call.aliases = aliases;
    (check, call)
}

/// A typed function: inputs checked and consts resolved, outputs checked
/// or inferred, in-place inputs aliased, each list's hidden words result
/// dropped.
fn emit_typed_body(parts: &FunctionParts) -> (PyCheck, PyCall) {
    let f = parts.f;
    let (lists, fixed) = parts.lists_and_fixed();
    let check = PyTyped {
        lists: !lists.is_empty(),
        specs: PyLit::tuple(parts.inputs.iter().map(|p| py_spec(&p.py_name, p.token.contract(), &p.token))),
        consts: emit_const_specs(parts),
        sizes: size_attrs(f).into_iter().map(|p| (py_str(&p.name), p.py_name.to_string())).collect(),
        outputs: (!parts.rets.is_empty())
            .then(|| PyLit::tuple(parts.rets.iter().map(|p| py_spec(&p.name, p.token.contract(), &Token::Ret(None))))),
        tune: None,
    };
    let mut results = Vec::new();
    let mut aliases = Vec::new();
    let mut ret_k = 0;
    for (out_index, p) in parts.outputs.iter().enumerate() {
        if let Some((in_index, like)) = aliased_result(f, &fixed, &p.name) {
            aliases.push((in_index, out_index));
            results.push(like);
            continue;
        }
        match p.token {
            Token::InOut(_) => {
                let in_index = fixed.iter().position(|q| q.name == p.name).unwrap_or(0);
                aliases.push((in_index, out_index));
                results.push(PyResult::Like(p.py_name.to_string()));
            }
            _ => {
                results.push(PyResult::Ret(ret_k));
                ret_k += 1;
            }
        }
    }
    // Each binary list's words: a hidden result the handler fills, dropped here.
    let real = results.len();
    let lists: Vec<&Param> = lists.into_iter().filter(|p| matches!(p.token, Token::List(_))).collect();
    for p in &lists {
        let rank = p.token.contract().and_then(|c| c.dims.as_ref()).map_or(0, Vec::len);
        results.push(PyResult::Words(p.py_name.to_string(), 1 + 2 * rank));
    }
    let mut call = emit_call(parts, target_key(f), results);
    call.aliases = aliases;
    // A kernel that may be split calls through the runtime's
    // `_begen_ffi_call`: under auto mesh axes it is partitioned there.
    call.ruled = f.options.is_sharded();
    call.returns = match (lists.is_empty(), real) {
        (true, _) => PyReturn::All,
        (false, 1) => PyReturn::First,
        (false, n) => PyReturn::Prefix(n),
    };
    (PyCheck::Typed(check), call)
}

/// A typed function's key in `TARGETS` (an instance's, from the consts
/// `_begen_inputs` resolved).
fn target_key(f: &Function) -> PyKey {
    PyKey { name: py_str(&f.name), instanced: !f.instances.is_empty() }
}

/// The consts for `_begen_inputs`: `(name, Python name, kind, the given
/// value or None, the instantiated values)`.
fn emit_const_specs(parts: &FunctionParts) -> Vec<PyConstSpec> {
    parts
        .f
        .consts
        .iter()
        .map(|k| PyConstSpec {
            name: py_str(&k.name),
            py: py_str(&k.py_name),
            kind: py_str(py_const_kind(k)),
            given: parts.keyword_consts.iter().any(|g| g.name == k.name).then(|| k.py_name.clone()),
            values: PyLit::strs(&k.values),
            tuned: false,
        })
        .collect()
}

/// The docstring: its first line, then the arg_spec, each input's and
/// output's contract and each const (typed functions), side effects and
/// unsupported values.
fn emit_doc(parts: &FunctionParts) -> PyDoc {
    let f = parts.f;
    let contract = |p: &Param| comment_text(&contract_text(p.token.contract()));
    PyDoc::Kernel(Box::new(PyKernelDoc {
        platform: f.platform.as_str().to_uppercase(),
        name: f.name.clone(),
        file: comment_text(&f.file),
        line: f.line,
        arg_spec: comment_text(&f.spec_tokens().join(", ")),
        typed: parts.typed,
        inputs: parts
            .inputs
            .iter()
            .map(|p| {
                let in_place = f.native.iter().flat_map(|n| &n.aliases).any(|a| *a.input_name == *p.name);
                let role = match p.token {
                    Token::InOut(_) => PyInputRole::InPlace,
                    _ if in_place => PyInputRole::InPlace,
                    Token::List(_) | Token::Args => PyInputRole::List,
                    _ => PyInputRole::Input,
                };
                (p.py_name.to_string(), contract(p), role)
            })
            .collect(),
        rets: parts.rets.iter().map(|p| (p.name.to_string(), contract(p))).collect(),
        out_optional: parts.out_optional,
        consts: f
            .consts
            .iter()
            .map(|k| (k.py_name.clone(), comment_text(&k.values.join(", ")), parts.fixed_by_input(&k.name)))
            .collect(),
        side_effect: f.options.has_side_effect,
        unsupported: f
            .options
            .unsupported
            .iter()
            .map(|(attr, values)| (attr.clone(), comment_text(&values.join(", "))))
            .collect(),
        backward: None,
        backward_rule: None,
        rules: None,
        shards: None,
    }))
}

/// The keyword parameters: (what it is, its Python name), what being an
/// attribute's XLA name, `const:<NAME>` or `out`.
fn emit_keywords(parts: &FunctionParts) -> Vec<(String, String)> {
    let mut keywords: Vec<(String, String)> =
        parts.attrs.iter().map(|a| (a.xla.to_string(), a.py.to_string())).collect();
    keywords.extend(parts.keyword_consts.iter().map(|k| (format!("const:{}", k.name), k.py_name.clone())));
    if !parts.rets.is_empty() {
        keywords.push(("out".into(), "out".into()));
    }
    keywords
}

/// Each attribute with values the kernel does not support: (its XLA name,
/// its Python name, the values as Python literals).
fn unsupported(f: &Function) -> impl Iterator<Item = (&str, &str, &Vec<String>)> {
    f.options.unsupported.iter().map(|(attr, values)| {
        let py = f.params.iter().find(|p| *p.name == **attr).map_or(attr.as_str(), |p| &*p.py_name);
        (attr.as_str(), py, values)
    })
}

/// The values a kernel does not support, for the registry: by the
/// attributes' Python names (literals).
fn unsupported_values(f: &Function) -> Vec<(String, PyLit)> {
    unsupported(f).map(|(_, py, values)| (py_str(py), PyLit::tuple(values.iter().cloned().map(PyLit::Raw)))).collect()
}

/// Makes `view` (of `f`) a `jax.custom_vjp` whose backward pass calls
/// `bwd`'s Python function: the body becomes the primal, a nested
/// function; the backward gets the primal inputs, one cotangent per output,
/// the attributes `bwd` declares (by name) and `out=` the inputs' structs.
pub(crate) fn with_vjp(view: &mut PyFunctionView, f: &Function, bwd: &Function, bwd_view: &PyFunctionView) {
    if !matches!(view.body, PyBody::Kernel(_)) {
        return;
    }
    let mut args = Vec::new();
    let mut shares = false;
    let candidate = forward_candidate(f, bwd);
    for (what, py) in &bwd_view.keywords {
        if what == "out" {
            continue;
        }
        if let Some((_, fwd_py)) = view.keywords.iter().find(|(w, _)| w == what) {
            // The backward kernel sees the call's resolved consts: a
            // primitive's backward closure has them in scope; a custom_vjp's
            // primal sets them for the enclosing call (`PyVjp::shares`).
            let value = match &candidate {
                Some(candidate) if what == "config" => candidate.clone(),
                _ => related_value(view, bwd_view, what, fwd_py),
            };
            shares |= !f.options.is_primitive() && value != *fwd_py;
            args.push(PyArg::Keyword(py.clone(), value));
        }
    }
    // The backward's outputs are the cotangents of the forward's inputs,
    // in order; `out=` describes its `ret`s.
    // A backward that leaves out the integer inputs' cotangents returns
    // those of the inputs `vjp_grads` lists.
    let grads = &f.options.vjp_grads;
    let mut structs = Vec::new();
    for (k, p) in bwd.params.iter().filter(|p| p.token.is_output()).enumerate() {
        if matches!(p.token, Token::Ret(_))
            && let Some(x) = view.inputs.get(grads.get(k).copied().unwrap_or(k))
        {
            structs.push(x.clone());
        }
    }
    if bwd_view.keywords.iter().any(|(w, _)| w == "out") {
        args.push(PyArg::Avals(structs));
    }
    let PyBody::Kernel(body) = &mut view.body else { return };
    let names = PyLit::strs(&view.inputs);
    let outputs: Vec<&Param> = f.output_params().collect();
    let residual = (!f.options.vjp_bind.is_empty()).then(|| PyResidualVjp {
        call: "_begen_vjp_res",
        exprs: f
            .options
            .vjp_bind
            .iter()
            .map(|a| match *a {
                VjpArg::Input(k) => view.inputs[k].clone(),
                VjpArg::Output(k) => format!("_begen_o[{k}]"),
                VjpArg::Cotangent(k) => format!("_begen_ct[{k}]"),
            })
            .collect(),
        public: PyLit::tuple(
            outputs
                .iter()
                .enumerate()
                .filter(|(_, p)| !f.options.residuals.iter().any(|r| *r == *p.name))
                .map(|(k, _)| PyLit::Raw(k.to_string())),
        ),
        outputs: outputs.len(),
    });
    // Such a backward's result spread to one entry per input, None (no
    // cotangent) for an integer one.
    let spread = (!grads.is_empty()).then(|| {
        (0..view.inputs.len())
            .map(|k| match grads.iter().position(|&g| g == k) {
                Some(_) if grads.len() == 1 => "_begen_g".to_string(),
                Some(j) => format!("_begen_g[{j}]"),
                None => "None".to_string(),
            })
            .collect()
    });
    body.vjp = Some(PyVjp {
        names,
        backward: bwd_view.py_name.clone(),
        cotangents: f.outputs(),
        args,
        residual,
        spread,
        shares,
    });
    // The residuals are the backward kernel's only.
    view.outputs -= f.options.residuals.len();
    if let PyDoc::Kernel(doc) = &mut view.doc {
        doc.backward = Some(bwd.name.clone());
        for (name, contract) in &mut doc.rets {
            if f.options.residuals.contains(name) {
                contract.push_str(&format!(", a residual for `{}`, not returned", bwd.name));
            }
        }
    }
}

/// Makes `view` (of `f`, shown as `shown`) a `jax.custom_vjp` whose
/// backward pass calls the Python function `rule` names
/// (`_begen_python_rule`): the residual path's shape (`_begen_vjp_rule`),
/// with every output kept for it and the outputs the function returns
/// (all but `residuals:`) public. The rule gets the module, the inputs, every output and one
/// cotangent per returned output; the runtime checks what it returns.
pub(crate) fn with_python_vjp(view: &mut PyFunctionView, f: &Function, rule: &crate::model::PythonRule, shown: &str) {
    let PyBody::Kernel(body) = &mut view.body else { return };
    let outputs: Vec<&Param> = f.output_params().collect();
    let public: Vec<usize> = (outputs.iter().enumerate())
        .filter(|(_, p)| !f.options.residuals.iter().any(|r| *r == *p.name))
        .map(|(k, _)| k)
        .collect();
    let mut exprs = vec![py_str(&rule.spec()), py_str(shown), PyLit::strs(&view.inputs).to_string()];
    exprs.extend(view.inputs.iter().cloned());
    exprs.extend(["_begen_o".to_string(), "_begen_ct".to_string()]);
    body.vjp = Some(PyVjp {
        names: PyLit::strs(&view.inputs),
        backward: "_begen_python_rule".into(),
        cotangents: public.len(),
        args: Vec::new(),
        residual: Some(PyResidualVjp {
            call: "_begen_vjp_rule",
            exprs,
            public: PyLit::tuple(public.iter().map(|k| PyLit::Raw(k.to_string()))),
            outputs: outputs.len(),
        }),
        spread: None,
        shares: false,
    });
    view.outputs -= outputs.len() - public.len();
    if let PyDoc::Kernel(doc) = &mut view.doc {
        doc.backward_rule = Some(rule.spec());
        for (name, contract) in &mut doc.rets {
            if f.options.residuals.contains(name) {
                contract.push_str(&format!(", a residual for `{}`, not returned", rule.spec()));
            }
        }
    }
}

/// The call of a related kernel's Python function (`g`, a tangent or
/// transpose kernel of the kernel `view` shows) inside a rule's closure:
/// `args` first, then the attributes `g` declares (by name, from the
/// kernel's own keywords) and `out=out`.
fn related_call(view: &PyFunctionView, g: &PyFunctionView, args: Vec<PyArg>) -> PyRelated {
    let mut keywords = Vec::new();
    for (what, py) in &g.keywords {
        if what == "out" {
            keywords.push(PyArg::Keyword("out".into(), "out".into()));
        } else if let Some((_, own)) = view.keywords.iter().find(|(w, _)| w == what) {
            keywords.push(PyArg::Keyword(py.clone(), related_value(view, g, what, own)));
        }
    }
    PyRelated { function: g.py_name.clone(), args, keywords, params: None }
}

/// The tuned const of `view`'s kernel named `name` (its literal): the
/// tune key's literal, where `view` is tuned and tunes that const.
fn tuned_const<'a>(view: &'a PyFunctionView, name: &str) -> Option<&'a str> {
    let PyBody::Kernel(k) = &view.body else { return None };
    let PyCheck::Typed(t) = &k.check else { return None };
    let tune = t.tune.as_ref()?;
    t.consts.iter().any(|c| c.tuned && c.name == name).then_some(tune.key.as_str())
}

/// What a rule's closure passes for keyword `what` (`own`, the kernel's
/// parameter) to a related kernel `g` (a tangent, transpose or backward
/// kernel) inside the kernel's primitive, where the kernel's resolved
/// consts (`_begen_c`) are in scope. A const the kernel tunes goes on as
/// the candidate its call runs (the tables', `config=`'s, the keyword's or
/// the default), unless `g` tunes it too: then `g` chooses for its own
/// shapes, and only a value the caller fixed (keyword or `config=`) is
/// passed on.
/// The `config=` that runs a backward kernel of the forward's source
/// tuned over its defines with the forward call's candidate (`_begen_c`, as
/// the primal chose it): a candidate is one compilation of the whole
/// source, and what the forward saved for the backward is that candidate's.
/// None where `bwd` is tuned over other defines or none.
fn forward_candidate(f: &Function, bwd: &Function) -> Option<String> {
    let theirs = bwd.tuned_defines();
    if theirs.is_empty() || bwd.define_not_in(f).is_some() {
        return None;
    }
    let items: Vec<String> = theirs.iter().map(|d| format!("{0}: int(_begen_c[{0}])", py_str(d))).collect();
    Some(format!("{{{}}}", items.join(", ")))
}

fn related_value(view: &PyFunctionView, g: &PyFunctionView, what: &str, own: &str) -> String {
    let Some(name) = what.strip_prefix("const:").map(py_str) else { return own.to_string() };
    let Some(key) = tuned_const(view, &name) else { return own.to_string() };
    if tuned_const(g, &name).is_some() {
        format!("_begen_tv[{name}] if {name} in _begen_tf else None")
    } else {
        format!("_begen_tune_chosen({key}, _begen_c, {name})")
    }
}

/// Makes `view` (of `f`, a typed kernel with `linear:` or `jvp:`, without
/// lists or in-place tensors: checked) bind the kernel's JAX primitive: its
/// FFI call becomes a closure (`_begen_raw`), and so does each tangent or
/// transpose kernel's call (`out` is the structs the rule passes).
pub(crate) fn with_primitive(
    view: &mut PyFunctionView,
    f: &Function,
    functions: &[Function],
    views: &[PyFunctionView],
) {
    let inputs: Vec<PyArg> = view.inputs.iter().cloned().map(PyArg::Name).collect();
    let find = |name: &str| functions.iter().position(|g| g.module == f.module && g.name == name);
    let mut doc = Vec::new();
    let jvp = f.options.jvp.as_deref().and_then(&find).map(|k| {
        let mut args = inputs.clone();
        args.extend(
            f.input_params()
                .enumerate()
                .filter(|(_, p)| f.float_inputs().any(|q| q.name == p.name))
                .map(|(i, _)| PyArg::Tangent(i)),
        );
        doc.push(PyRuleDoc::Tangent(functions[k].name.clone()));
        related_call(view, &views[k], args)
    });
    let index = |name: &str| f.input_params().position(|p| &*p.name == name);
    let number = |i: usize| PyLit::Raw(i.to_string());
    let groups = &f.options.groups;
    let group = |g: &[String]| PyLit::tuple(g.iter().filter_map(|p| index(p)).map(number));
    let linear = f.options.linear.iter().filter_map(|p| index(p)).map(number);
    let linear = PyLit::tuple(linear.chain(groups.iter().map(|g| group(g))));
    let mut shown: Vec<String> = f.options.linear.clone();
    shown.extend(groups.iter().map(|g| format!("[{}] together", g.join(", "))));
    if !shown.is_empty() {
        doc.push(PyRuleDoc::Linear(comment_text(&shown.join(", "))));
    }
    let mut transposes = Vec::new();
    for (param, kernel) in &f.options.transpose {
        let names = crate::model::group_key(param).unwrap_or_else(|| vec![param.clone()]);
        let at: Vec<usize> = names.iter().filter_map(|p| index(p)).collect();
        let (Some(&i), Some(k)) = (at.first(), find(kernel)) else { continue };
        let inside = |j: &usize| at.contains(j);
        let named = f.options.transpose_bind.iter().find(|b| b.param == *param).and_then(|b| b.args.as_ref());
        // What the rule passes: the other inputs in order, then the cotangents.
        let mut params: Vec<PyArg> =
            inputs.iter().enumerate().filter(|(j, _)| !inside(j)).map(|(_, x)| x.clone()).collect();
        params.extend((0..f.outputs()).map(PyArg::Cotangent));
        let args: Vec<PyArg> = match named {
            // Checked: each an input or a cotangent (`ct`, `ct<k>`).
            Some(names) => names
                .iter()
                .filter_map(|n| match index(n) {
                    Some(j) => Some(inputs[j].clone()),
                    None => n.strip_prefix("ct").map(|k| PyArg::Cotangent(k.parse().unwrap_or(0))),
                })
                .collect(),
            None => params.clone(),
        };
        let key = if at.len() > 1 { PyLit::tuple(at.iter().copied().map(number)) } else { number(i) };
        let mut call = related_call(view, &views[k], args);
        call.params = named.is_some().then_some(params);
        transposes.push((key, i, call));
        doc.push(PyRuleDoc::Transpose(comment_text(param), functions[k].name.clone()));
    }
    let fold = f.options.fold_plan.as_ref().and_then(|plan| {
        let own = find(&f.name)?;
        let pair = |&(k, axis): &(usize, usize)| PyLit::tuple([number(k), number(axis)]);
        doc.push(PyRuleDoc::Fold(comment_text(&plan.dim)));
        Some(PyFold {
            again: related_call(view, &views[own], inputs.clone()),
            inputs: PyLit::tuple(plan.inputs.iter().map(pair)),
            outputs: PyLit::tuple(plan.outputs.iter().copied().map(number)),
        })
    });
    let names = PyLit::strs(f.input_params().map(|p| &p.name));
    let PyBody::Kernel(body) = &mut view.body else { return };
    // A backward kernel beside `linear:` (checked: bound by position) runs
    // in the primitive's rules instead of a jax.custom_vjp.
    let backward = body.vjp.take();
    if let Some(b) = &f.options.vjp
        && backward.is_some()
    {
        doc.push(PyRuleDoc::Backward(b.clone()));
    }
    let bind = if groups.is_empty() && backward.is_none() { "_begen_bind" } else { "_begen_bind_joint" };
    body.primitive = Some(PyPrimitive { jvp, transposes, linear, bind, backward, names, fold });
    if let PyDoc::Kernel(kernel) = &mut view.doc {
        kernel.rules = Some(doc);
        kernel.backward = None;
    }
}

/// Makes `view` (of `f`, shown as `shown`) plan its call across devices
/// first: `_begen_r` is the kernel's rule (its name, its inputs' names,
/// each input's and output's dimension names, `shard`, `reduce`). A kernel
/// that may be split runs per shard under explicit mesh axes by calling
/// itself on each block (`_begen_shard_map`); one that may not only warns
/// where an input is split (it is gathered). Without shapes for every
/// array, nothing can be named: the body stays as it is. Returns whether
/// it planned.
pub(crate) fn with_sharding(view: &mut PyFunctionView, f: &Function, shown: &str) -> bool {
    if !is_typed(f) || !f.is_fully_shaped() {
        return false;
    }
    let PyBody::Kernel(body) = &mut view.body else { return false };
    // A rest is written `"rows..."` (`"..."` when anonymous): the runtime
    // gives its leading extents a name each once it sees the ranks.
    let dims = |p: &Param| {
        let extents = p.token.contract().and_then(|c| c.dims.as_deref()).unwrap_or_default();
        PyLit::tuple(extents.iter().map(|d| match d {
            Extent::Named(n) => PyLit::from(n.as_str()),
            Extent::Fixed(_) => PyLit::Raw("None".into()),
            Extent::Rest(name) => PyLit::Str(format!("{}...", name.as_deref().unwrap_or(""))),
        }))
    };
    let mut rule = vec![
        shown.into(),
        PyLit::strs(f.input_params().map(|p| &p.name)),
        PyLit::tuple(f.input_params().map(dims)),
        PyLit::tuple(f.output_params().map(dims)),
        PyLit::strs(&f.options.shard),
        PyLit::strs(&f.options.reduce),
    ];
    // `sum:` (per output, the `shard` dimensions it is a sum over): a
    // seventh entry, only where one is declared.
    let summed = |p: &Param| f.options.sum.iter().find(|(o, _)| *o == *p.name).map_or(&[][..], |(_, ds)| &ds[..]);
    if !f.options.sum.is_empty() {
        rule.push(PyLit::tuple(f.output_params().map(|p| PyLit::strs(summed(p)))));
    }
    let rule = PyLit::tuple(rule);
    let per_shard = f.options.is_sharded().then(|| {
        let mut call: Vec<PyArg> = view.inputs.iter().cloned().map(PyArg::Name).collect();
        call.extend(view.keywords.iter().map(|(_, py)| {
            let value = if py == "out" { "_begen_out" } else { py };
            PyArg::Keyword(py.clone(), value.to_string())
        }));
        call
    });
    let out = view.keywords.iter().any(|(what, _)| what == "out");
    body.split = Some(PySplit { rule, per_shard, out });
    if f.options.is_sharded()
        && let PyDoc::Kernel(doc) = &mut view.doc
    {
        let said = |axes: &[String]| (!axes.is_empty()).then(|| comment_text(&axes.join(", ")));
        let mut sums: Vec<String> = f.options.reduce.clone();
        sums.extend(f.options.sum.iter().map(|(o, ds)| format!("{} (of {o})", ds.join(", "))));
        doc.shards = Some((said(&f.options.shard), said(&sums)));
    }
    true
}

/// The Python function and registry row of an algorithm. Its signature is
/// its first implementation's; each implementation is called with its own
/// keyword names (they differ only where a name had to be changed).
fn py_algorithm_view(
    library: &Library,
    a: &Algorithm,
    views: &[(usize, PyFunctionView, Option<String>)],
) -> PyAlgorithmView {
    let view_of = |k: usize| views.iter().find(|(i, _, _)| *i == k).expect("every function has a view");
    let (_, first, _) = view_of(a.implementations[0].function);
    let mut implementations = Vec::new();
    let platforms = [Platform::Cpu, Platform::Cuda]
        .into_iter()
        .map(|platform| {
            let listed: Vec<(String, i64)> = a
                .implementations
                .iter()
                .filter(|i| library.functions[i.function].platform == platform)
                .map(|i| (comment_text(&library.functions[i.function].name), i.priority))
                .collect();
            (platform.as_str(), listed)
        })
        .filter(|(_, listed)| !listed.is_empty())
        .collect();
    // Implementations that take other input dtypes: the call chooses by them.
    let dtypes_of = |k: usize| library.functions[k].input_dtypes();
    let by_dtype = a.implementations.iter().any(|i| dtypes_of(i.function) != dtypes_of(a.implementations[0].function));
    for i in &a.implementations {
        let f = &library.functions[i.function];
        let (_, view, namespace) = view_of(i.function);
        let dtypes = by_dtype.then(|| {
            let names = first.inputs.iter();
            PyLit::tuple(names.zip(dtypes_of(i.function)).map(|(name, t)| {
                let t = t.map_or_else(|| PyLit::Raw("None".into()), |t| PyLit::Str(t.to_string()));
                PyLit::tuple([PyLit::Str(name.clone()), t])
            }))
        });
        let renames: Vec<(String, String)> = first
            .keywords
            .iter()
            .filter_map(|(what, alg_py)| {
                let (_, own) = view.keywords.iter().find(|(w, _)| w == what)?;
                (own != alg_py).then(|| (py_str(alg_py), py_str(own)))
            })
            .collect();
        implementations.push(PyImplementation {
            algorithm: py_str(&a.name),
            function: py_str(&shown_name(library, f)),
            platform: py_str(f.platform.as_str()),
            priority: i.priority,
            unsupported: unsupported_values(f),
            namespace: namespace.clone(),
            py_name: view.py_name.clone(),
            renames,
            dtypes,
        });
    }
    let mut keywords: Vec<(String, String)> = first.keywords.iter().map(|(_, py)| (py_str(py), py.clone())).collect();
    keywords.dedup();
    let function = PyFunctionView {
        py_name: a.name.clone(),
        params: first.params.clone(),
        outputs: first.outputs,
        doc: PyDoc::Algorithm { name: a.name.clone(), platforms, fallback: a.fallback, tuned: false },
        body: PyBody::Dispatch(PyDispatch { name: py_str(&a.name), keywords, tuned: false }),
        inputs: first.inputs.clone(),
        keywords: first.keywords.clone(),
        registers: false,
    };
    PyAlgorithmView { function, name: py_str(&a.name), fallback: a.fallback, implementations }
}
/// A function as the registry names it: `module.name` in a library of
/// modules, else its name.
fn shown_name(library: &Library, f: &Function) -> String {
    if library.namespaced { format!("{}.{}", f.module, f.name) } else { f.name.clone() }
}

/// A const value as a Python default: a number, `True`/`False`, a dtype name.
fn py_const_value(k: &Const, v: &str) -> String {
    match (k.kind, v) {
        (ConstKind::Type, _) => py_str(v),
        (_, "true") => "True".into(),
        (_, "false") => "False".into(),
        _ => v.to_string(),
    }
}

/// The platform name `jax.ffi.register_ffi_target` expects.
pub(crate) fn jax_platform(p: Platform) -> &'static str {
    match p {
        Platform::Cpu => "cpu",
        Platform::Cuda => "CUDA",
    }
}

/// Resolves the Python module.
pub(crate) fn py_module_view(library: &Library) -> PyModuleView {
    let sources: BTreeSet<String> = library.functions.iter().map(|f| comment_text(&f.file)).collect();
    let fs = &library.functions;
    // Every function's view, with the namespace that holds it in a library
    // of modules (for the algorithms' registry).
    let py_module = |f: &Function| library.modules.iter().find(|m| m.name == f.module).map(|m| m.py_name.clone());
    let mut views: Vec<(usize, PyFunctionView, Option<String>)> = fs
        .iter()
        .enumerate()
        .map(|(k, f)| {
            if library.namespaced {
                let m = py_module(f).unwrap_or_default();
                (k, py_function_view(f, &format!("{}.{}", f.module, f.name)), Some(m))
            } else {
                (k, py_function_view(f, &f.name), None)
            }
        })
        .collect();
    let mut tune = Vec::new();
    for (k, view, _) in views.iter_mut() {
        if let Some(tuned) = library.tuning.of(*k) {
            let f = &fs[*k];
            let shown = tune_key(library, f);
            with_tuning(view, f, tuned, &shown);
            tune.push(py_tune_spec(library, f, tuned, &shown));
        }
    }
    let grads = fs
        .iter()
        .filter_map(|f| {
            let shown = if library.namespaced { format!("{}.{}", f.module, f.name) } else { f.name.clone() };
            py_grad_spec(library, f, &shown)
        })
        .collect();
    let plain: Vec<PyFunctionView> = views.iter().map(|(_, v, _)| v.clone()).collect();
    let mut has_vjp = false;
    for (k, view, _) in views.iter_mut() {
        let f = &fs[*k];
        if let Some(rule) = &f.options.python_vjp {
            let shown = if library.namespaced { format!("{}.{}", f.module, f.name) } else { f.name.clone() };
            with_python_vjp(view, f, rule, &shown);
            has_vjp = true;
            continue;
        }
        let Some(bwd_name) = &f.options.vjp else { continue };
        if let Some(b) = fs.iter().position(|g| g.module == f.module && g.name == *bwd_name) {
            with_vjp(view, f, &fs[b], &plain[b]);
            has_vjp = true;
        }
    }
    let mut has_primitive = false;
    for (k, view, _) in views.iter_mut() {
        if fs[*k].options.is_primitive() {
            with_primitive(view, &fs[*k], fs, &plain);
            has_primitive = true;
        }
    }
    let mut has_sharding = false;
    for (k, view, _) in views.iter_mut() {
        let f = &fs[*k];
        let shown = if library.namespaced { format!("{}.{}", f.module, f.name) } else { f.name.clone() };
        has_sharding |= with_sharding(view, f, &shown);
    }
    let mut algorithms: Vec<PyAlgorithmView> =
        library.algorithms.iter().map(|a| py_algorithm_view(library, a, &views)).collect();
    for t in &library.tuning.algorithms {
        tune.push(py_tuned_algorithm(library, t, &mut algorithms[t.algorithm]));
    }
    let (functions, modules) = if library.namespaced {
        let modules: Vec<PyNamespaceView> = library
            .modules
            .iter()
            .map(|m| {
                let functions: Vec<PyFunctionView> = m.functions.iter().map(|&k| views[k].1.clone()).collect();
                PyNamespaceView {
                    py_name: m.py_name.clone(),
                    module: comment_text(&m.name),
                    library: comment_text(&library.name),
                    all: all(functions.iter().map(|f| f.py_name.as_str())),
                    targets: m
                        .functions
                        .iter()
                        .flat_map(|&k| targets(&fs[k]))
                        .map(|(key, target)| (py_str(&key), py_str(&target)))
                        .collect(),
                    functions,
                }
            })
            .collect();
        (Vec::new(), modules)
    } else {
        (views.into_iter().map(|(_, v, _)| v).collect(), Vec::new())
    };
    let names = functions
        .iter()
        .map(|f: &PyFunctionView| f.py_name.as_str())
        .chain(modules.iter().map(|m| m.py_name.as_str()))
        .chain(algorithms.iter().map(|a| a.function.py_name.as_str()));
    let mut wanted = module_sections(library, has_vjp, has_primitive, has_sharding);
    if !tune.is_empty() {
        wanted.push(Section::Tuning);
    }
    if !library.tuning.algorithms.is_empty() {
        wanted.push(Section::TuneAlgorithms);
    }
    let sections = runtime::sections(wanted);
    PyModuleView {
        name: library.name.clone(),
        sources: sources.into_iter().collect(),
        library_file: py_str(&library.plan.outputs.library),
        imports: runtime::imports(&sections, needs_ml_dtypes(library)),
        runtime: sections.iter().map(|s| s.body()).collect(),
        sharded: sections.contains(&Section::Sharding),
        sections,
        needs_lists: any_param(library, |t| t.is_list()),
        namespaced: library.namespaced,
        linked: library.plan.link.preload.iter().map(|l| py_str(l)).collect(),
        all: all_top(names),
        targets: fs
            .iter()
            .flat_map(|f| {
                targets(f).into_iter().map(move |(key, target)| {
                    let key = if library.namespaced { format!("{}.{key}", f.module) } else { key };
                    (key, target)
                })
            })
            .map(|(key, target)| (py_str(&key), py_str(&target)))
            .collect(),
        handlers: fs
            .iter()
            .flat_map(|f| {
                handlers(f)
                    .into_iter()
                    .map(move |(target, handler)| (py_str(&target), py_str(&handler), py_str(jax_platform(f.platform))))
            })
            .collect(),
        states: fs
            .iter()
            .filter(|f| f.takes_state() && f.options.instantiate.is_some())
            .flat_map(|f| {
                // A `BE::Tensor` kernel's handler per instance; a native
                // kernel has one.
                let handlers = if f.native.is_some() { vec![f.handler.clone()] } else { handlers_of(f) };
                handlers.into_iter().map(|h| {
                    let (i, id, info) = super::native::state_symbols(&h);
                    (py_str(&h), py_str(&i), py_str(&id), py_str(&info))
                })
            })
            .collect(),
        functions,
        modules,
        algorithms,
        api_symbol: py_str(&super::cpp::ffi_api_symbol(&library.name)),
        wide: py_wide_dtypes(),
        build: String::new(),
        tune,
        grads,
        rules: python_rule_files(fs),
    }
}

/// Each `python_vjp:` module that is a file beside begen.yaml once:
/// (module, path, text) as literals, for `_BEGEN_RULES`.
fn python_rule_files(fs: &[Function]) -> Vec<(String, String, String)> {
    let mut files = std::collections::BTreeMap::new();
    for r in fs.iter().filter_map(|f| f.options.python_vjp.as_ref()) {
        if let Some((path, text)) = &r.file {
            files.entry(r.module.clone()).or_insert((path, text));
        }
    }
    files.into_iter().map(|(m, (path, text))| (py_str(&m), py_str(path), py_str(text))).collect()
}

/// The dtypes JAX holds only with `jax_enable_x64` (the rows' `x64`), as a
/// Python tuple of their names: a numpy input of one is refused when x64
/// is off (`_begen_honest`).
pub(crate) fn py_wide_dtypes() -> PyLit {
    PyLit::strs(AttrType::ALL.into_iter().filter(|t| t.facts().x64).map(|t| t.as_str()))
}

/// Whether a parameter of a function of `library` has a token `pred` holds for.
fn any_param(library: &Library, pred: impl Fn(&Token) -> bool) -> bool {
    library.functions.iter().any(|f| f.params.iter().any(|p| pred(&p.token)))
}

/// The runtime sections the functions' bodies, the algorithms' table and
/// the template call into (`Core` and what these require come with them).
fn module_sections(library: &Library, has_vjp: bool, has_primitive: bool, has_sharding: bool) -> Vec<Section> {
    let algorithms = !library.algorithms.is_empty();
    let wanted = [
        (
            Section::Scalars,
            any_param(library, |t| {
                matches!(t, Token::Attr { .. } | Token::Struct { .. } | Token::Record { .. } | Token::Array { .. })
            }),
        ),
        (Section::Structs, any_param(library, |t| matches!(t, Token::Struct { .. }))),
        (Section::Records, any_param(library, |t| matches!(t, Token::Record { .. }))),
        (Section::Arrays, any_param(library, |t| matches!(t, Token::Array { .. }))),
        (
            Section::Contracts,
            // `_begen_like` makes the structs of outputs like a list's arrays.
            library.functions.iter().any(|f| is_typed(f) || f.rets_like.is_some()),
        ),
        (
            Section::Lists,
            any_param(library, |t| matches!(t, Token::List(_)))
                || library
                    .functions
                    .iter()
                    .any(|f| takes_typed_path(f) && f.params.iter().any(|p| p.token == Token::Args)),
        ),
        (Section::Unsupported, algorithms || library.functions.iter().any(|f| !f.options.unsupported.is_empty())),
        (Section::Vjp, has_vjp),
        (Section::PythonRules, library.functions.iter().any(|f| f.options.python_vjp.is_some())),
        (Section::Primitives, has_primitive),
        (
            Section::Joint,
            (library.functions.iter())
                .any(|f| !f.options.groups.is_empty() || (f.options.is_primitive() && f.options.vjp.is_some())),
        ),
        (Section::Sharding, has_sharding),
        (Section::Algorithms, algorithms),
        (Section::Registry, true),
        (Section::Linked, !library.plan.link.preload.is_empty()),
        (Section::Modules, library.namespaced),
        (
            Section::Natives,
            library.functions.iter().any(|f| f.takes_dictionary() || f.options.instantiate.is_some())
                || any_param(library, |t| matches!(t, Token::Str { .. })),
        ),
        (Section::Variadic, any_param(library, |t| matches!(t, Token::Args | Token::Rets))),
    ];
    wanted.into_iter().filter(|(_, used)| *used).map(|(s, _)| s).collect()
}

/// A conversion names `ml_dtypes` (an attribute, member or element of a
/// type whose dtype, or whose wire type's, is one of ml_dtypes').
fn needs_ml_dtypes(library: &Library) -> bool {
    let names = |ty: &AttrType| [*ty, ty.facts().wire].iter().any(|t| t.facts().py_dtype.starts_with("_ml_dtypes."));
    any_param(library, |t| match t {
        Token::Attr { ty, .. } | Token::Array { ty, .. } => names(ty),
        Token::Struct { ty, .. } => ty.leaves.iter().any(|l| names(&l.ty)),
        Token::Record { ty, .. } => ty.members.iter().any(|m| names(&m.ty)),
        Token::Arg(_)
        | Token::Ret(_)
        | Token::InOut(_)
        | Token::List(_)
        | Token::Args
        | Token::Rets
        | Token::Stream
        | Token::Dim { .. }
        | Token::Str { .. }
        | Token::Dict
        | Token::State { .. } => false,
    })
}

/// A function's `TARGETS` entries: its name, or one key per instance.
fn targets(f: &Function) -> Vec<(String, String)> {
    Kernel::all(f).iter().map(|u| (u.key().to_string(), u.target().to_string())).collect()
}

/// A function's handler symbols, one per instance.
fn handlers_of(f: &Function) -> Vec<String> {
    Kernel::all(f).iter().map(|u| u.handler().to_string()).collect()
}

/// A function's (target, handler symbol) pairs.
fn handlers(f: &Function) -> Vec<(String, String)> {
    Kernel::all(f).iter().map(|u| (u.target().to_string(), u.handler().to_string())).collect()
}

/// `__all__` of a module namespace: its own names, then `names`, as literals.
fn all<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    ["register", "TARGETS", "LIBRARY", "export_safety_checks"].into_iter().chain(names).map(py_str).collect()
}

/// `__all__` of the library's module: `all`, with the registry and
/// `deserialize`.
fn all_top<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    all(["registry", "deserialize"].into_iter().chain(names))
}
