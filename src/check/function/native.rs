//! Kernels written against XLA FFI's own types (`ffi::Buffer<ffi::F32, 2>`,
//! `ffi::Result<ffi::AnyBuffer>`, `float eps`, ...): each parameter's role
//! read from its type, and what any kernel returns.

use crate::diag::{Diagnostic, messages as msg};
use crate::model::decl::{DeclParam, Declared, Indirection, Signature};
use crate::model::{
    ArrayBinding, AttrType, Container, ElementType, Extent, Native, NativeAlias, NativeBind, NativeRank, Param,
    Returns, TensorType, Token,
};
use crate::source::Span;

use super::infer;
use super::tokens::SpecToken;

/// `ty` without a leading `::`, `xla::ffi::` or `ffi::`.
fn unqualified(ty: &str) -> &str {
    let ty = ty.strip_prefix("::").unwrap_or(ty);
    let ty = ty.strip_prefix("xla::").unwrap_or(ty);
    ty.strip_prefix("ffi::").unwrap_or(ty)
}

/// What a kernel returns, by the return type as written; `None` for a type
/// begen does not know (reported).
pub(in crate::check) fn returns(c: &Declared, sig: &Signature, diags: &mut Vec<Diagnostic>) -> Option<Returns> {
    let ty = sig.ret.as_str();
    let bare = ty.strip_prefix("::").unwrap_or(ty);
    let known = match bare {
        "" | "void" => Some(Returns::Void),
        "BE::Status" => Some(Returns::Status),
        _ if ty.starts_with("xla::") || ty.starts_with("::xla::") || ty.starts_with("ffi::") => match unqualified(ty) {
            "Error" => Some(Returns::FfiError),
            t if t.starts_with("ErrorOr<") => Some(Returns::FfiErrorOr),
            _ => None,
        },
        _ => None,
    };
    if known.is_none() {
        diags.push(Diagnostic::error(sig.name_span, msg::unknown_return(&c.name, ty)).hint(msg::HINT_RETURN));
    }
    known
}

/// One parameter's type read as XLA FFI's.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// An input buffer, with the contract its type fixes.
    Buffer(Option<TensorType>),
    /// An output, `Result<...>` of a buffer.
    Result(Option<TensorType>),
    RemainingArgs,
    RemainingRets,
    Dictionary,
    StringView,
    /// `ffi::Span<const T>` of an attribute type.
    Span(AttrType, String),
    CudaStream,
    PlatformStream,
    State,
}

/// The top-level template arguments of `X<a,b<c,d>>`: `["a", "b<c,d>"]`.
fn template_args(ty: &str) -> Option<(&str, Vec<&str>)> {
    let open = ty.find('<')?;
    let inner = ty[open + 1..].strip_suffix('>')?;
    let (mut depth, mut start, mut out) = (0i32, 0, Vec::new());
    for (i, b) in inner.bytes().enumerate() {
        match b {
            b'<' => depth += 1,
            b'>' => depth -= 1,
            b',' if depth == 0 => {
                out.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(inner[start..].trim());
    Some((&ty[..open], out))
}

/// An XLA `DataType` enumerator as written (`ffi::F32`,
/// `xla::ffi::DataType::F32`), as begen's type.
fn dtype(text: &str) -> Option<AttrType> {
    let t = unqualified(text);
    let t = t.strip_prefix("DataType::").unwrap_or(t);
    AttrType::ALL.into_iter().find(|a| a.xla_type() == t)
}

/// The contract of a buffer type: its element type (when written as a
/// literal enumerator) and, for rank 0, its (empty) shape.
fn buffer_contract(ty: &str) -> Option<Option<TensorType>> {
    if ty == "AnyBuffer" {
        return Some(None);
    }
    let (head, args) = template_args(ty)?;
    let rank = match head {
        "Buffer" => match args.get(1) {
            Some(r) => Some(r.parse::<u32>().ok()),
            None => Some(None),
        },
        "BufferR0" => Some(Some(0)),
        "BufferR1" => Some(Some(1)),
        "BufferR2" => Some(Some(2)),
        "BufferR3" => Some(Some(3)),
        "BufferR4" => Some(Some(4)),
        _ => None,
    }?;
    let Some(t) = args.first().and_then(|a| dtype(a)) else { return Some(None) };
    let dims = (rank == Some(0)).then(Vec::<Extent>::new);
    Some(Some(TensorType { dtype: ElementType::Dtype(t), dims }))
}

/// The rank a buffer or result type fixes (`ffi::Buffer<ffi::F32, 2>`,
/// `ffi::BufferR1<T>`, `ffi::Result<ffi::Buffer<T, 3>>`,
/// `ffi::ResultBufferR2<T>`); `None` for a dynamic rank (`ffi::Buffer<T>`,
/// `ffi::AnyBuffer`) or a rank begen cannot read (a macro). XLA's decoder
/// refuses a buffer of any other rank at run time.
fn buffer_rank(ty: &str) -> Option<u32> {
    let (head, args) = template_args(unqualified(ty))?;
    let head = match head {
        "Result" => return buffer_rank(args.first()?),
        h => h.strip_prefix("Result").unwrap_or(h),
    };
    match head {
        "Buffer" => args.get(1)?.parse().ok(),
        r => r.strip_prefix("BufferR")?.parse().ok(),
    }
}

/// `ty` read as an XLA FFI type; `None` for anything else.
fn kind(ty: &str) -> Option<Kind> {
    if matches!(ty, "cudaStream_t" | "CUstream" | "hipStream_t") {
        return Some(Kind::CudaStream);
    }
    if matches!(ty, "std::string_view" | "::std::string_view") {
        return Some(Kind::StringView);
    }
    let ty = unqualified(ty);
    if let Some(c) = buffer_contract(ty) {
        return Some(Kind::Buffer(c));
    }
    match ty {
        "RemainingArgs" => return Some(Kind::RemainingArgs),
        "RemainingRets" => return Some(Kind::RemainingRets),
        "Dictionary" => return Some(Kind::Dictionary),
        _ => {}
    }
    let (head, args) = template_args(ty)?;
    match head {
        "Result" => buffer_contract(unqualified(args.first()?)).map(Kind::Result),
        "ResultBuffer" | "ResultBufferR0" | "ResultBufferR1" | "ResultBufferR2" | "ResultBufferR3"
        | "ResultBufferR4" => {
            let inner = format!("{}<{}>", head.strip_prefix("Result").unwrap_or(head), args.join(","));
            buffer_contract(&inner).map(Kind::Result)
        }
        "Span" => {
            let elem = args.first()?.strip_prefix("const ")?;
            infer::scalar_type(elem).map(|t| Kind::Span(t, elem.to_string()))
        }
        "PlatformStream" => Some(Kind::PlatformStream),
        "State" => Some(Kind::State),
        _ => None,
    }
}

/// Whether the signature is written against XLA FFI's types: some
/// parameter is a buffer, a result, a list of either, a dictionary or a
/// context (a span, a string or a `cudaStream_t` alone does not tell:
/// `BE::Tensor` kernels take them too).
pub(in crate::check) fn is_native(sig: &Signature) -> bool {
    sig.params.iter().any(|p| {
        matches!(
            kind(&p.ty),
            Some(
                Kind::Buffer(_)
                    | Kind::Result(_)
                    | Kind::RemainingArgs
                    | Kind::RemainingRets
                    | Kind::Dictionary
                    | Kind::PlatformStream
                    | Kind::State
            )
        )
    })
}

/// A native kernel's parameters as read from its types: the parameters the
/// Python function sees (tensors, attributes, the stream), how each C++
/// parameter is bound, and the C++ parameter (its index in the signature)
/// of each Python-visible one.
pub(in crate::check) struct Inferred {
    pub(in crate::check) params: Vec<Param>,
    pub(in crate::check) native: Native,
    pub(in crate::check) at: Vec<usize>,
}

/// Every parameter of a native kernel (see [`Inferred`]). `None` when one
/// cannot be bound (reported).
pub(in crate::check) fn infer_native(c: &Declared, sig: &Signature, diags: &mut Vec<Diagnostic>) -> Option<Inferred> {
    let before = diags.len();
    let mut r = Reading::default();
    for (i, p) in sig.params.iter().enumerate() {
        let seen = r.params.len();
        r.param(c, i, p, diags);
        if r.params.len() > seen {
            r.at.push(i);
        }
    }
    if let Some(at) = r.dictionary.filter(|_| r.named_attrs) {
        diags.push(Diagnostic::error(at, msg::native_dictionary_mixed(&c.name)).hint(msg::HINT_NATIVE_DICTIONARY));
    }
    if diags[before..].iter().any(Diagnostic::is_error) {
        return None;
    }
    let Reading { params, binds, at, ranks, .. } = r;
    Some(Inferred { params, native: Native { params: binds, aliases: Vec::new(), ranks }, at })
}

/// A native kernel's parameters read so far, in order (see [`Inferred`]),
/// with what later ones are checked against.
#[derive(Default)]
struct Reading {
    params: Vec<Param>,
    binds: Vec<NativeBind>,
    at: Vec<usize>,
    ranks: Vec<NativeRank>,
    /// Whether an attribute is bound by name (which a dictionary of all
    /// attributes excludes).
    named_attrs: bool,
    /// Where the dictionary of all attributes is taken.
    dictionary: Option<Span>,
    /// The parameters that take the remaining inputs and outputs: XLA binds
    /// each once, and no input (output) after it.
    rest_args: Option<String>,
    rest_rets: Option<String>,
    /// The state parameter met so far: where, its name and its type.
    state: Option<(Span, String, String)>,
}

/// The Python-visible parameter `name` of a native kernel.
fn native_param(name: &str, token: Token) -> Param {
    Param {
        name: name.into(),
        py_name: Box::default(),
        token,
        half_repr: None,
        pointer: None,
        array: None,
        default: None,
    }
}

impl Reading {
    /// The `i`th parameter `p`: refused when it is a BE tensor or taken by
    /// reference, else the state or bound by its type.
    fn param(&mut self, c: &Declared, i: usize, p: &DeclParam, diags: &mut Vec<Diagnostic>) {
        let name = p.name.clone().unwrap_or_else(|| format!("param{i}"));
        if infer::is_tensor_type(&p.ty) {
            diags.push(Diagnostic::error(p.span, msg::native_mixed(&c.name, &name)).hint(msg::HINT_NATIVE_MIXED));
            return;
        }
        let by_value = p.indirection == Indirection::Value || (p.indirection == Indirection::Reference && p.is_const);
        // A pointer to a type of the sources' own (`State* state`): the
        // per-executable state, as XLA decodes `Ctx<State<T>>`.
        if p.indirection == Indirection::Pointer && !p.is_const && is_state_type(&p.ty) {
            self.state(c, p, name, diags);
            return;
        }
        if !by_value {
            diags.push(
                Diagnostic::error(p.span, msg::native_indirect(&c.name, &name, &p.to_string()))
                    .hint(msg::HINT_NATIVE_INDIRECT),
            );
            return;
        }
        self.by_type(c, i, p, &name, diags);
    }

    /// The per-executable state (`State* state`), once per kernel.
    fn state(&mut self, c: &Declared, p: &DeclParam, name: String, diags: &mut Vec<Diagnostic>) {
        let ty = p.ty.strip_prefix("struct ").unwrap_or(&p.ty).to_string();
        // XLA FFI decodes one `Ctx<State<T>>` per handler: a second
        // would be the same object cast to its own type.
        if let Some((at, state, state_ty)) = &self.state {
            diags.push(
                Diagnostic::error(p.span, msg::native_second_state(&c.name, &name, &p.to_string(), state, state_ty))
                    .with(*at, msg::LABEL_THE_STATE)
                    .hint(msg::hint_native_second_state(state)),
            );
            return;
        }
        self.state = Some((p.span, name, ty.clone()));
        self.binds.push(NativeBind::State(p.span, ty));
    }

    /// A parameter taken by value, bound by its type's [`Kind`].
    fn by_type(&mut self, c: &Declared, i: usize, p: &DeclParam, name: &str, diags: &mut Vec<Diagnostic>) {
        let unsupported = |why: &str| Diagnostic::error(p.span, msg::native_unsupported(&c.name, name, &p.ty, why));
        let after = |rest: &Option<String>, what: &str| {
            rest.as_ref().map(|r| {
                Diagnostic::error(p.span, msg::native_after_remaining(&c.name, name, what, r))
                    .hint(msg::HINT_NATIVE_REMAINING)
            })
        };
        match kind(&p.ty) {
            Some(Kind::Buffer(ct)) => {
                if let Some(d) = after(&self.rest_args, "input") {
                    diags.push(d);
                    return;
                }
                self.params.push(native_param(name, Token::Arg(ct)));
                self.binds.push(NativeBind::Arg);
                self.ranks.extend(fixed_rank(name, &p.ty));
            }
            Some(Kind::Result(ct)) => {
                if let Some(d) = after(&self.rest_rets, "output") {
                    diags.push(d);
                    return;
                }
                self.params.push(native_param(name, Token::Ret(ct)));
                self.binds.push(NativeBind::Ret);
                self.ranks.extend(fixed_rank(name, &p.ty));
            }
            Some(Kind::RemainingArgs) => self.remaining(c, p, name, true, diags),
            Some(Kind::RemainingRets) => self.remaining(c, p, name, false, diags),
            Some(Kind::CudaStream) => {
                self.params.push(native_param(name, Token::Stream));
                self.binds.push(NativeBind::CudaStream);
            }
            Some(Kind::PlatformStream) => {
                self.params.push(native_param(name, Token::Stream));
                self.binds.push(NativeBind::Ctx);
            }
            Some(Kind::Dictionary) => {
                self.dictionary = Some(p.span);
                self.binds.push(NativeBind::Attrs);
            }
            Some(Kind::Span(ty, element)) => {
                let Some(n) = named(c, p, i, diags) else { return };
                let mut a = native_param(name, Token::Array { name: n.clone(), ty });
                a.array = Some(Box::new(ArrayBinding { container: Container::XlaSpan, element }));
                self.named_attr(a, n);
            }
            Some(Kind::StringView) => {
                let Some(n) = named(c, p, i, diags) else { return };
                self.named_attr(native_param(name, Token::Str { name: n.clone() }), n);
            }
            Some(Kind::State) => diags.push(
                unsupported("XLA hands per-executable state to the kernel as a pointer")
                    .hint("take it as `T* state` (what XLA decodes `Ctx<ffi::State<T>>` to)"),
            ),
            // Integer spellings beyond the table's (`size_t`, `long`) are
            // bound as the kernel declares them.
            None => match infer::scalar_type(&p.ty).or_else(|| infer::dim_type(&p.ty)) {
                Some(ty) if p.indirection == Indirection::Value => {
                    let Some(n) = named(c, p, i, diags) else { return };
                    self.named_attr(native_param(name, Token::Attr { name: n.clone(), ty }), n);
                }
                _ => diags.push(
                    Diagnostic::error(p.span, msg::native_unknown(&c.name, name, &p.ty)).hint(msg::HINT_NATIVE_TYPES),
                ),
            },
        }
    }

    /// The parameter that takes the remaining inputs (`args`) or outputs,
    /// once per kernel.
    fn remaining(&mut self, c: &Declared, p: &DeclParam, name: &str, args: bool, diags: &mut Vec<Diagnostic>) {
        let (rest, what, token, bind) = if args {
            (&mut self.rest_args, "inputs", Token::Args, NativeBind::RemainingArgs)
        } else {
            (&mut self.rest_rets, "outputs", Token::Rets, NativeBind::RemainingRets)
        };
        if rest.is_some() {
            diags.push(
                Diagnostic::error(p.span, msg::native_remaining_twice(&c.name, name, what))
                    .hint(msg::HINT_NATIVE_REMAINING),
            );
            return;
        }
        *rest = Some(name.to_string());
        self.params.push(native_param(name, token));
        self.binds.push(bind);
    }

    /// An attribute XLA binds by its name `n`.
    fn named_attr(&mut self, param: Param, n: String) {
        self.params.push(param);
        self.binds.push(NativeBind::Attr(n));
        self.named_attrs = true;
    }
}

/// A buffer parameter whose type fixes its rank, for the batching check.
fn fixed_rank(name: &str, ty: &str) -> Option<NativeRank> {
    buffer_rank(ty).map(|rank| NativeRank { name: name.into(), ty: ty.into(), rank })
}

/// The roles an author states in tokens over a native kernel: one token
/// per parameter the Python function sees (inputs, outputs, attributes, the
/// stream; a dictionary takes none), each agreeing with the role its type
/// gives, but for `arg` over a `Result<T>`: that parameter is bound as an
/// input (`.Arg<T>()`), as a hand-written binding may bind it (XLA makes
/// the `Result<T>` from the `T`). `arg` over `ffi::RemainingArgs` and `ret`
/// over `ffi::RemainingRets` state the variadic inputs and outputs. An
/// input updated in place is two parameters, the buffer and the result
/// XLA aliases to it: `inout` over both pairs them (the k-th input with the
/// k-th result).
pub(in crate::check) fn apply_tokens(
    c: &Declared,
    sig: &Signature,
    tokens: &[(SpecToken, Span)],
    inferred: &mut Inferred,
    diags: &mut Vec<Diagnostic>,
) {
    let Inferred { params, native, at } = inferred;
    if tokens.len() != params.len() {
        let names: Vec<String> = params.iter().map(|p| p.name.to_string()).collect();
        diags.push(
            Diagnostic::error(c.name_span, msg::native_token_count(&c.name, tokens.len(), &names))
                .hint(msg::HINT_NATIVE_TOKEN_COUNT),
        );
        return;
    }
    let fits = |given: &Option<TensorType>, have: &Option<TensorType>| given.is_none() || given == have;
    // The `inout` halves, in order: (C++ index, parameter, its contract, the token).
    type Half = (usize, String, Option<TensorType>, Span);
    let (mut inout_in, mut inout_out): (Vec<Half>, Vec<Half>) = (Vec::new(), Vec::new());
    let rest_args = native.params.iter().position(|b| *b == NativeBind::RemainingArgs);
    let before = diags.len();
    for ((t, span), (p, &i)) in tokens.iter().zip(params.iter_mut().zip(at.iter())) {
        let decl = &sig.params[i];
        let ok = match (t, &p.token) {
            (SpecToken::Arg(g), Token::Arg(h)) | (SpecToken::Ret(g), Token::Ret(h)) => fits(g, h),
            (SpecToken::Arg(None), Token::Args) | (SpecToken::Ret(None), Token::Rets) => true,
            (SpecToken::InOut(g), Token::Arg(h)) if fits(g, h) => {
                inout_in.push((i, p.name.to_string(), h.clone(), *span));
                true
            }
            (SpecToken::InOut(g), Token::Ret(h)) if fits(g, h) => {
                inout_out.push((i, p.name.to_string(), h.clone(), *span));
                true
            }
            (SpecToken::Arg(g), Token::Ret(h)) if fits(g, h) => {
                // An input after the remaining inputs: XLA binds none there.
                if let Some(r) = rest_args.filter(|&r| r < i) {
                    let rest = sig.params[r].name.clone().unwrap_or_else(|| format!("param{r}"));
                    diags.push(
                        Diagnostic::error(*span, msg::native_after_remaining(&c.name, &p.name, "input", &rest))
                            .with(decl.span, msg::LABEL_DECLARED_HERE)
                            .hint(msg::HINT_NATIVE_REMAINING),
                    );
                    continue;
                }
                p.token = Token::Arg(h.clone());
                native.params[i] = NativeBind::ArgResult;
                true
            }
            (SpecToken::Ret(_), Token::Arg(_)) => {
                diags.push(
                    Diagnostic::error(*span, msg::native_ret_of_buffer(&c.name, &p.name, &decl.ty))
                        .with(decl.span, msg::LABEL_DECLARED_HERE)
                        .hint(msg::HINT_NATIVE_RET_OF_BUFFER),
                );
                continue;
            }
            (SpecToken::Stream, Token::Stream) => true,
            (SpecToken::Attr { name, ty }, Token::Attr { name: n, ty: have }) => {
                name == n && ty.is_none_or(|t| t == *have)
            }
            (SpecToken::Array { name, ty }, Token::Array { name: n, ty: have }) => name == n && ty == have,
            (SpecToken::Attr { name, ty: None }, Token::Str { name: n }) => name == n,
            (SpecToken::Struct { name, ty }, Token::Str { name: n }) => name == n && ty == super::attrs::STR,
            _ => false,
        };
        // An attribute token whose name is a slip of the attribute's.
        let slip = match t {
            SpecToken::Attr { name, .. } | SpecToken::Array { name, .. } if p.token.attr_name().is_some() => {
                crate::diag::suggest::closest(name, p.token.attr_name())
                    .map(|near| t.to_string().replacen(&format!("attr.{name}"), &format!("attr.{near}"), 1))
            }
            _ => None,
        };
        if !ok && let Some(fixed) = &slip {
            diags.push(
                Diagnostic::error(*span, msg::attr_misspelled(&t.to_string(), &c.name, &p.name, fixed))
                    .with(decl.span, msg::LABEL_DECLARED_HERE),
            );
        } else if !ok {
            diags.push(
                Diagnostic::error(*span, msg::native_token_mismatch(&c.name, &t.to_string(), &p.name, &decl.ty))
                    .with(decl.span, msg::LABEL_DECLARED_HERE)
                    .hint(msg::HINT_NATIVE_TOKEN_MISMATCH),
            );
        }
    }
    // Pairs are read once every token fits.
    if !diags[before..].iter().any(Diagnostic::is_error) {
        pair_inout(c, inout_in, inout_out, native, diags);
    }
}

/// Pairs the `inout` inputs with the `inout` results, in order: each such
/// result is XLA's alias of its input. One left over is an error at its
/// token, and so is a pair whose types give two dtypes.
fn pair_inout(
    c: &Declared,
    inputs: Vec<(usize, String, Option<TensorType>, Span)>,
    outputs: Vec<(usize, String, Option<TensorType>, Span)>,
    native: &mut Native,
    diags: &mut Vec<Diagnostic>,
) {
    let n = inputs.len().min(outputs.len());
    for (name, span) in inputs.iter().skip(n).map(|h| (&h.1, h.3)) {
        diags.push(
            Diagnostic::error(span, msg::native_inout_unpaired(&c.name, name, "input", "a result"))
                .hint(msg::HINT_NATIVE_INOUT),
        );
    }
    for (name, span) in outputs.iter().skip(n).map(|h| (&h.1, h.3)) {
        diags.push(
            Diagnostic::error(span, msg::native_inout_unpaired(&c.name, name, "result", "an input"))
                .hint(msg::HINT_NATIVE_INOUT),
        );
    }
    for ((i, input, a, _), (o, output, b, span)) in inputs.into_iter().zip(outputs) {
        if let (Some(a), Some(b)) = (&a, &b)
            && a.dtype != b.dtype
        {
            diags.push(
                Diagnostic::error(span, msg::native_inout_dtypes(&c.name, &input, &output))
                    .hint(msg::HINT_NATIVE_INOUT),
            );
            continue;
        }
        native.aliases.push(NativeAlias { input: i, output: o, input_name: input, output_name: output });
    }
}

/// Whether `T` of a `T*` parameter can be a state type: a (qualified)
/// identifier that is no XLA FFI type and no scalar.
fn is_state_type(ty: &str) -> bool {
    kind(ty).is_none()
        && infer::scalar_type(ty).is_none()
        && infer::dim_type(ty).is_none()
        && !matches!(ty, "void" | "char" | "BE::Tensor")
        && ty.split("::").all(crate::model::is_identifier)
}

/// An attribute's name (XLA finds attributes by name).
fn named(c: &Declared, p: &DeclParam, i: usize, diags: &mut Vec<Diagnostic>) -> Option<String> {
    if p.name.is_none() {
        diags.push(Diagnostic::error(p.span, msg::native_unnamed(&c.name, i + 1)));
    }
    p.name.clone()
}

/// `ret:like(<xs>)` as written: its token's index, the text, and where.
pub(in crate::check) type Like = (usize, String, Span);

/// The tokens with each `ret:like(<xs>)` read as `ret`, and those tokens
/// (what they say is checked once the roles are known, [`apply_likes`]).
pub(in crate::check) fn split_likes(tokens: Option<Vec<(String, Span)>>) -> (Option<Vec<(String, Span)>>, Vec<Like>) {
    let Some(mut tokens) = tokens else { return (None, Vec::new()) };
    let mut likes = Vec::new();
    for (i, (text, span)) in tokens.iter_mut().enumerate() {
        let head = text.strip_prefix("ret:like(").or_else(|| text.strip_prefix("rets:like("));
        if head.is_some_and(|h| h.ends_with(')')) {
            likes.push((i, std::mem::replace(text, "ret".to_string()), *span));
        }
    }
    (Some(tokens), likes)
}

/// Each `ret:like(<xs>)`: over the variadic outputs (`BE::Tensors`,
/// `ffi::RemainingRets`), naming the kernel's variadic input; the outputs
/// are then one per element of that list, each shaped and typed like it.
/// `params` are the kernel's, one per token (what it returns: the input).
pub(in crate::check) fn apply_likes(
    c: &Declared,
    likes: &[Like],
    params: &[Param],
    diags: &mut Vec<Diagnostic>,
) -> Option<String> {
    let mut like = None;
    for (i, text, span) in likes {
        let name = text.split_once('(').map(|(_, r)| r.trim_end_matches(')')).unwrap_or_default().trim();
        let Some(p) = params.get(*i) else { continue };
        if p.token != Token::Rets {
            diags.push(
                Diagnostic::error(*span, msg::rets_like_not_rets(&c.name, text, &p.name)).hint(msg::HINT_RETS_LIKE),
            );
            continue;
        }
        let lists: Vec<&str> = params.iter().filter(|q| q.token == Token::Args).map(|q| &*q.name).collect();
        if !lists.contains(&name) {
            let near = crate::diag::suggest::closest(name, lists.iter().copied());
            diags.push(
                Diagnostic::error(*span, msg::rets_like_unknown(&c.name, text, name, near)).hint(msg::HINT_RETS_LIKE),
            );
            continue;
        }
        like = Some(name.to_string());
    }
    like
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_xla_types() {
        let f32 = |dims: Option<Vec<Extent>>| Some(TensorType { dtype: ElementType::Dtype(AttrType::Float32), dims });
        assert_eq!(kind("ffi::AnyBuffer"), Some(Kind::Buffer(None)));
        assert_eq!(kind("xla::ffi::Buffer<xla::ffi::DataType::F32,2>"), Some(Kind::Buffer(f32(None))));
        assert_eq!(kind("ffi::Buffer<ffi::F32>"), Some(Kind::Buffer(f32(None))));
        assert_eq!(kind("ffi::BufferR0<ffi::F32>"), Some(Kind::Buffer(f32(Some(vec![])))));
        assert_eq!(kind("ffi::Result<ffi::AnyBuffer>"), Some(Kind::Result(None)));
        assert_eq!(kind("ffi::ResultBufferR0<ffi::F32>"), Some(Kind::Result(f32(Some(vec![])))));
        assert_eq!(kind("ffi::ResultBuffer<ffi::F32,1>"), Some(Kind::Result(f32(None))));
        assert_eq!(kind("ffi::Result<ffi::Buffer<ffi::F32,0>>"), Some(Kind::Result(f32(Some(vec![])))));
        assert_eq!(kind("ffi::Buffer<T>"), Some(Kind::Buffer(None)));
        assert_eq!(buffer_rank("xla::ffi::Buffer<xla::ffi::DataType::F32,2>"), Some(2));
        assert_eq!(buffer_rank("ffi::Buffer<T>"), None);
        assert_eq!(buffer_rank("ffi::AnyBuffer"), None);
        assert_eq!(buffer_rank("ffi::BufferR1<ffi::F64>"), Some(1));
        assert_eq!(buffer_rank("ffi::Result<ffi::Buffer<ffi::C128,3>>"), Some(3));
        assert_eq!(buffer_rank("ffi::ResultBufferR0<ffi::F32>"), Some(0));
        assert_eq!(buffer_rank("ffi::ResultBuffer<ffi::F32,N>"), None);
        assert_eq!(kind("ffi::Span<const int32_t>"), Some(Kind::Span(AttrType::Int32, "int32_t".into())));
        assert_eq!(kind("cudaStream_t"), Some(Kind::CudaStream));
        assert_eq!(kind("ffi::PlatformStream<cudaStream_t>"), Some(Kind::PlatformStream));
        assert_eq!(kind("ffi::Dictionary"), Some(Kind::Dictionary));
        assert_eq!(kind("float"), None);
        assert_eq!(kind("BE::Tensor"), None);
    }
}
