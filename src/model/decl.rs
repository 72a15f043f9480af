//! The front-end seam: what a front end hands `check`.
//!
//! A front end turns input files into [`Declared`] functions: a name, where
//! it was written, the tokens given for it (if any), and its signature as
//! read (or why it could not be read). Annotated C++/CUDA sources are one
//! front end (`scan` finds the annotations, `parse` reads the signatures);
//! a second one (a manifest of precompiled GPU binaries) produces the same
//! items with another [`Callee`], and `check`, `emit` and `build` stay as
//! they are but for that new kind.

use crate::model::Platform;
use crate::source::{FileId, SourceFile, Span};

/// What the generated handler calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Callee {
    /// A C++ function defined in an annotated source, called by its name
    /// from a translation unit that includes the source.
    Source { file: FileId },
    /// A kernel of a precompiled binary (begen.yaml's `binaries:`): the
    /// index of its entry in the binary front end's `Binaries::kernels`.
    Binary { kernel: usize },
}

/// One function a front end declares, before checking.
#[derive(Debug, Clone)]
pub(crate) struct Declared {
    pub(crate) name: String,
    /// Where the name was written (the annotation, or begen.yaml).
    pub(crate) name_span: Span,
    /// Inline or begen.yaml tokens with where each was written; `None`
    /// means "infer from the signature".
    pub(crate) tokens: Option<Vec<(String, Span)>>,
    pub(crate) signature: Result<Signature, LocateError>,
    pub(crate) platform: Platform,
    pub(crate) callee: Callee,
    /// The innermost block around the annotation from which the generated
    /// wrapper could not call the function by its plain name.
    pub(crate) enclosing: Option<Enclosing>,
    /// The struct definitions its signature or tokens may name (a
    /// parameter's type, the type of `attr.p:S`), found at file scope in
    /// its source or the local headers that source includes.
    pub(crate) structs: Vec<DeclStruct>,
    /// Whether begen.yaml names an `instantiate:` function for it: a
    /// non-const reference to a struct of its source is then its state,
    /// not a mutable struct attribute.
    pub(crate) stateful: bool,
    /// What the source holds of the functions begen.yaml's `instantiate:`
    /// may name for it (empty unless begen.yaml names one for a function
    /// of its name).
    pub(crate) creators: Vec<Creator>,
}

/// A function that may create a kernel's per-executable state
/// (begen.yaml's `instantiate:`), as the kernel's source shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Creator {
    pub(crate) name: String,
    pub(crate) found: CreatorLookup,
}

/// Whether the kernel's source declares a creating function, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CreatorLookup {
    /// Declared at the source's top level (the first declaration that
    /// can be called without arguments, else the first).
    Found {
        /// Its name in the declaration.
        at: Span,
        /// Its return type as written ([`Signature::ret`]).
        ret: String,
        /// How many parameters a call must pass (those without a default
        /// value); `None` where the declaration comes from a macro.
        required: Option<usize>,
        /// The names of structs the source defines that its return type or
        /// the kernel's parameter types write, where the source declares
        /// no type alias (`typedef`, `using A = ...`): each is a type of its
        /// own, no alias of another. Empty where it declares one.
        classes: Vec<String>,
    },
    /// Surely not declared anywhere the kernel's translation unit sees:
    /// the functions the source declares at its top level, for a
    /// suggestion.
    Absent { declared: Vec<String> },
    /// Neither: declared somewhere begen does not read (a header, a
    /// namespace, a macro), or as a template.
    Unknown,
}

/// A struct definition as written, before checking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeclStruct {
    /// The name parameters and tokens use (for `typedef struct { ... } S;`,
    /// the alias).
    pub(crate) name: String,
    /// That name in the definition.
    pub(crate) name_span: Span,
    /// Its member declarations with a declarator, in order (one per name
    /// of `float a, b;`); member functions and type declarations are left
    /// out.
    pub(crate) members: Vec<DeclMember>,
    /// What makes it more than a plain struct of data members, where.
    pub(crate) problems: Vec<(Span, StructProblem)>,
}

/// Something about a struct's definition begen cannot bind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StructProblem {
    /// A class template (`template <...> struct S`).
    Template,
    /// `struct S : Base`.
    BaseClass,
    /// The body does not parse.
    Syntax,
    /// Members inside `#if`/`#ifdef`: which are compiled is not known here.
    Conditional,
    /// An anonymous struct or union member (`union { int i; float f; };`).
    Anonymous,
}

/// One data member declaration of a struct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeclMember {
    pub(crate) name: String,
    /// The type with whitespace normalised, qualifiers removed.
    pub(crate) ty: String,
    pub(crate) is_const: bool,
    /// `static`: not part of a value of the struct.
    pub(crate) is_static: bool,
    pub(crate) indirection: Indirection,
    /// `unsigned f : 3`.
    pub(crate) bitfield: bool,
    /// `public`, or the `private`/`protected` section it is in.
    pub(crate) access: &'static str,
    /// Its type is a struct, class or union: written so (`struct In`), or
    /// the name of one defined in the file or its local headers.
    pub(crate) nested: bool,
    /// The member's declaration.
    pub(crate) span: Span,
}

/// A block that hides a function from the wrapper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Enclosing {
    Namespace(String),
    /// A class, function body or other block.
    Other,
}

/// How a parameter's declarator wraps its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Indirection {
    Value,
    Pointer,
    Reference,
    /// `&&`: the wrapper passes lvalues, so it cannot bind one.
    RvalueReference,
    Array,
    /// A function or function pointer.
    Function,
}

/// One parameter as written (no inference yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeclParam {
    pub(crate) name: Option<String>,
    /// The type with whitespace normalised (`unsigned long long`,
    /// `BE::Tensor`, `std::complex<float>`), qualifiers removed.
    pub(crate) ty: String,
    pub(crate) is_const: bool,
    pub(crate) indirection: Indirection,
    /// The parameter (for one generated by a macro: the invocation).
    pub(crate) span: Span,
}

/// The parameter's declared type as messages show it: `const float*`,
/// `BE::Tensor&`, `int[]` (qualifier, type, declarator; no name).
impl std::fmt::Display for DeclParam {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = if self.is_const { "const " } else { "" };
        let ind = match self.indirection {
            Indirection::Value => "",
            Indirection::Pointer => "*",
            Indirection::Reference => "&",
            Indirection::RvalueReference => "&&",
            Indirection::Array => "[]",
            Indirection::Function => "(*)(...)",
        };
        write!(f, "{c}{}{ind}", self.ty)
    }
}

/// Where a signature's text came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Written out in the file.
    Direct,
    /// Generated by expanding the macro `name`, defined at `defined_at`.
    Macro { name: String, defined_at: String },
}

/// The signature of a declared function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Signature {
    pub(crate) name: String,
    pub(crate) name_span: Span,
    pub(crate) params: Vec<DeclParam>,
    pub(crate) origin: Origin,
    /// The parameters of the `template <...>` around the declaration;
    /// `None` for a plain function.
    pub(crate) template: Option<Vec<TemplateParam>>,
    pub(crate) variadic: bool,
    /// The return type as written (see `parse::signature::ParsedSig::ret`).
    pub(crate) ret: String,
    /// `__global__` or `__device__` (without `__host__`): not callable from
    /// the host wrapper.
    pub(crate) device_only: Option<&'static str>,
}

/// One parameter of a template declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TemplateParam {
    pub(crate) name: Option<String>,
    pub(crate) kind: TemplateKind,
}

/// What a template parameter takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TemplateKind {
    /// `typename T` / `class T`.
    Type,
    /// A value of this (normalised) type: `int N`.
    Value(String),
    /// A pack, a template template parameter: nothing begen can instantiate.
    Other,
}

/// Why no signature could be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LocateError {
    /// The annotation is the last thing in the file.
    NothingFollows,
    /// What follows is not a function declaration.
    NotAFunction { at: Span },
    /// The parameter list does not parse.
    Syntax { at: Span },
    /// `NAME(...)` follows but `NAME` is not a macro this file can see.
    UnknownMacro { name: String, at: Span },
    /// The macro's expansion defines no function of the wanted name.
    MacroMismatch { name: String, defined_at: String, found: Vec<String>, at: Span },
    /// The macro's expansion hit one of the expander's limits before it
    /// produced the function: begen cannot read it as the preprocessor would.
    MacroLimit { name: String, limit: Limit, at: Span },
    /// The next function has another name.
    NameMismatch { found: String, at: Span },
    /// (begen.yaml lookup) no definition of the name in the file.
    NotFound,
}

/// Why a macro expansion is not what the preprocessor would make: the
/// expander's limit it hit (`parse` stops there; `diag` words it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    /// Macros nested deeper than this many levels.
    Depth(usize),
    /// More tokens than this.
    Tokens(usize),
}

/// Between the annotated-source front end's two stages: what `scan` found
/// in one source for `parse` to read.
#[derive(Debug, Clone)]
pub(crate) struct Scanned {
    pub(crate) file: FileId,
    pub(crate) platform: Platform,
    /// The lexer's code view of the file: comments and literal contents
    /// blanked, byte for byte.
    pub(crate) code: Vec<u8>,
    pub(crate) annotations: Vec<Annotation>,
}

/// A source file on its way to `parse`: read and scanned by whichever
/// worker takes it (`scan::Pending` implements it, `parse::declare` calls
/// it), so the scan runs file by file inside the parse.
pub(crate) trait ToScan: Send {
    /// Its entry in the source map.
    fn file(&self) -> FileId;
    /// Reads the file into its entry (`slot`) and finds its annotations;
    /// `None` when there is nothing to parse.
    fn scan(&mut self, slot: &mut SourceFile) -> Option<Scanned>;
}

/// One `// @BE name tokens...`.
#[derive(Debug, Clone)]
pub(crate) struct Annotation {
    pub(crate) name: String,
    pub(crate) name_span: Span,
    pub(crate) tokens: Vec<(String, Span)>,
    /// The end of the comment: the annotated item follows.
    pub(crate) end: usize,
}

/// A function begen.yaml's `sources:` names in a file (the arg_spec system's explicit
/// dict and list forms), for the front end to find.
#[derive(Debug, Clone)]
pub(crate) struct Listed {
    pub(crate) name: String,
    /// The dict form's tokens; `None` for the list form (inferred).
    pub(crate) tokens: Option<Vec<String>>,
    /// Where begen.yaml writes the name.
    pub(crate) span: Span,
}
