//! The plain C++ ABI between a kernel's source and the binding targets
//! (`build-support/include/begen/abi.h`), which no framework owns: one
//! wrapper translation unit per annotated source (the source, then one
//! `extern "C"` trampoline per kernel instance), compiled once by the
//! source's own compiler, and what a target's handler must hand each
//! trampoline.
//!
//! A trampoline takes `(const begen::TensorArg* t, const void* const* a,
//! int64_t stream)`: the tensors in binding order (inputs, then outputs;
//! an `inout` as its output), every other parameter's value in `a` in
//! signature order ([`slots`]), and the stream. It builds the `BE::Tensor`
//! views, reads the attributes back as their C++ types, calls the kernel
//! in its parameter order and turns a C++ exception into a message. Local
//! names carry the parameter's position (`t0_x`), so they can never clash
//! with each other or with the kernel's own parameter names.
//!
//! A target adds to a wrapper only what must be compiled with the source
//! (the jax target: the handlers of kernels declared with XLA FFI's own
//! types), through [`TargetSection`].

use std::collections::BTreeSet;

use crate::model::{
    AttrType, ConstKind, Container, ElementType, Function, HalfRepr, Instance, Param, Platform, Pointer, RecordType,
    Returns, Role, ScalarKind, TensorType, Token,
};

use super::names::comment_text;

/// One generated wrapper translation unit (one annotated source file): the
/// source, then one trampoline per annotated function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WrapperView {
    /// The source, relative to the root (already safe for a comment).
    pub(crate) source: String,
    /// The validated path written into `#include "..."`.
    pub(crate) include_path: String,
    /// `#define NAME VALUE` before the source (a variant's defines).
    pub(crate) defines: Vec<(String, String)>,
    /// Extra standard/CUDA headers the trampolines need, e.g. `<complex>`.
    pub(crate) includes: Vec<String>,
    /// CUDA sources: the trampolines are host code, so they sit inside
    /// `#if !defined(__CUDA_ARCH__)` and nvcc's per-architecture device
    /// passes skip them.
    pub(crate) host_only: bool,
    /// CUDA sources: `f<float>` for each template instance, named outside
    /// the host-only part so that the device passes instantiate it too.
    pub(crate) instantiations: Vec<String>,
    pub(crate) trampolines: Vec<TrampolineView>,
    /// What the targets add: headers after begen's and code after the
    /// trampolines.
    pub(crate) section: TargetSection,
}

/// What the binding targets add to one wrapper, compiled with the source
/// (the jax target: the handlers of kernels written against XLA FFI's own
/// types, and `begen/native.h`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct TargetSection {
    /// begen headers included after `begen/trampoline.h` (`#include "..."`).
    pub(crate) headers: Vec<String>,
    /// C++ after the trampolines, inside the host-only part.
    pub(crate) code: String,
}

/// One trampoline: `extern "C" const char* <symbol>(<params>) noexcept`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TrampolineView {
    /// The kernel's C++ name (a checked identifier).
    pub(crate) function: String,
    /// The canonical arg_spec, for the comment above it.
    pub(crate) arg_spec: String,
    /// `begen_call_<library>_<function>` (hidden).
    pub(crate) symbol: String,
    /// The parameter list; a parameter the kernel does not use is unnamed.
    pub(crate) params: String,
    /// Statements inside the `try`, before the call: tensor views and
    /// converted attributes.
    pub(crate) prepare: Vec<String>,
    /// The expressions passed to the kernel, in its parameter order.
    pub(crate) call_args: Vec<String>,
    /// The helper of `begen/trampoline.h` that turns the kernel's returned
    /// status into the trampoline's result; `None` for a `void` kernel.
    pub(crate) returned: Option<&'static str>,
    /// Its per-executable state, if it takes one.
    pub(crate) state: Option<TrampolineState>,
}

/// The per-executable state of a `BE::Tensor` kernel (`T& state`), as the
/// kernel's TU sees it: the `make` trampoline runs the `instantiate:`
/// function and hands back the released pointer and its deleter (a target
/// holds it as an opaque pointer: its TU includes no kernel source); each
/// call passes the pointer on, and the kernel's trampoline casts it back
/// to `T&`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TrampolineState {
    /// The author's function that creates it (a checked identifier).
    pub(crate) function: String,
    /// The trampoline in the kernel's TU that runs it (hidden).
    pub(crate) make: String,
    /// The kernel's parameter type `T`, as declared, and the parameter's
    /// name, for the trampoline's `static_assert`.
    pub(crate) ty: String,
    pub(crate) param: String,
}

/// The state of `kernel`'s kernel, if it takes one and begen.yaml names the
/// function that creates it.
pub(crate) fn trampoline_state(kernel: &Kernel) -> Option<TrampolineState> {
    let f = kernel.f;
    let function = f.options.instantiate.clone()?;
    let (param, ty) = f.params.iter().find_map(|p| match &p.token {
        Token::State { ty, .. } => Some((p.name.clone(), ty.clone())),
        _ => None,
    })?;
    Some(TrampolineState {
        function,
        make: crate::model::make_state_symbol(kernel.trampoline()),
        ty,
        param: param.to_string(),
    })
}

/// A kernel to render: a plain function, or one instantiation of a
/// template kernel.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Kernel<'a> {
    pub(crate) f: &'a Function,
    pub(crate) instance: Option<&'a Instance>,
}

impl<'a> Kernel<'a> {
    /// Every kernel of a function: itself, or each of its instances.
    pub(crate) fn all(f: &'a Function) -> Vec<Kernel<'a>> {
        if f.instances.is_empty() {
            vec![Kernel { f, instance: None }]
        } else {
            f.instances.iter().map(|i| Kernel { f, instance: Some(i) }).collect()
        }
    }

    /// Its key in the Python module's `TARGETS`: the function's name, or
    /// the instance's `name[T=float32]`.
    pub(crate) fn key(&self) -> &'a str {
        self.instance.map_or(&self.f.name, |i| &i.key)
    }

    /// Its XLA FFI target.
    pub(crate) fn target(&self) -> &'a str {
        self.instance.map_or(&self.f.target, |i| &i.target)
    }

    /// Its exported handler symbol.
    pub(crate) fn handler(&self) -> &'a str {
        self.instance.map_or(&self.f.handler, |i| &i.handler)
    }

    /// Its trampoline's symbol.
    pub(crate) fn trampoline(&self) -> &'a str {
        self.instance.map_or(&self.f.trampoline, |i| &i.trampoline)
    }

    /// The value of const `name` in this instance.
    pub(crate) fn value(&self, name: &str) -> Option<&'a str> {
        let k = self.f.consts.iter().position(|k| k.name == name)?;
        self.instance.map(|i| i.values[k].as_str())
    }

    /// A tensor's element type in this instance.
    pub(crate) fn dtype(&self, e: &ElementType) -> Option<AttrType> {
        match e {
            ElementType::Dtype(t) => Some(*t),
            ElementType::Param(name) => self.value(name).and_then(AttrType::parse),
        }
    }

    /// `<float, 4>` for an instance, empty for a plain function.
    pub(crate) fn template_args(&self) -> String {
        let Some(instance) = self.instance.filter(|_| !self.f.consts.is_empty()) else { return String::new() };
        let args: Vec<String> = self
            .f
            .consts
            .iter()
            .zip(&instance.values)
            .map(|(k, v)| match k.kind {
                ConstKind::Type => {
                    AttrType::parse(v).and_then(|t| t.element_cpp(self.f.platform)).unwrap_or("void").to_string()
                }
                ConstKind::Value(ty) => cpp_literal(v, ty),
            })
            .collect();
        format!("<{}>", args.join(", "))
    }
}

/// A checked integer (or bool) literal as C++ source of type `ty`: with
/// the type's suffix; a signed type's least value of 32 bits or more as
/// an expression (its magnitude alone is a literal of a wider type).
fn cpp_literal(v: &str, ty: AttrType) -> String {
    let facts = ty.facts();
    let suffix = facts.literal_suffix;
    match (facts.kind, facts.range) {
        (ScalarKind::Int { signed: true }, Some((lo, _))) if facts.size >= 4 && v == lo.to_string() => {
            format!("({}{suffix} - 1)", lo + 1)
        }
        (
            ScalarKind::Bool | ScalarKind::Int { .. } | ScalarKind::Float | ScalarKind::FloatBits | ScalarKind::Complex,
            _,
        ) => {
            format!("{v}{suffix}")
        }
    }
}

/// The canonical arg_spec, as the generated comments quote it.
pub(crate) fn arg_spec_text(f: &Function) -> String {
    f.spec_tokens().join(", ")
}

/// The kernel's pointer argument for a typed tensor: the data cast to the
/// declared element type (the template argument's type for `T*`), whose
/// size is asserted at compile time.
fn pointer_arg(
    kernel: &Kernel,
    i: usize,
    slot: usize,
    p: &Param,
    ptr: &Pointer,
    contract: Option<&TensorType>,
) -> (Vec<String>, String) {
    let pointee = match kernel.value(&ptr.pointee).and_then(AttrType::parse) {
        Some(t) => t.element_cpp(kernel.f.platform).unwrap_or("void").to_string(),
        None => ptr.pointee.clone(),
    };
    let constness = if ptr.is_const { "const " } else { "" };
    let var = format!("d{i}_{}", p.name);
    let mut prepare = Vec::new();
    if let Some(t) = contract.and_then(|c| kernel.dtype(&c.dtype))
        && pointee != "void"
    {
        prepare.push(format!(
            "static_assert(sizeof({pointee}) == {}, \"{}: parameter '{}' points to {} elements of {} bytes\");",
            t.byte_width(),
            kernel.f.name,
            p.name,
            t,
            t.byte_width()
        ));
    }
    prepare.push(format!("{constness}{pointee}* {var} = static_cast<{constness}{pointee}*>(begen_t[{slot}].data);"));
    (prepare, var)
}

/// Where the kernel takes a float passed as bits (`ty`) as CUDA's own type
/// (`repr`): the statements that rebuild it from the `bits` expression
/// through CUDA's raw struct `r` (no arithmetic, no aliasing), and the
/// type. `None` where it takes the bits.
fn from_bits(ty: AttrType, repr: Option<HalfRepr>, bits: &str, r: &str) -> Option<(Vec<String>, &'static str)> {
    match repr? {
        HalfRepr::Bits => None,
        HalfRepr::CudaHalf | HalfRepr::CudaBFloat16 => {
            let cuda = ty.facts().cuda?;
            Some((vec![format!("{} {r};", cuda.raw), format!("{r}.x = {bits};")], cuda.spellings[0]))
        }
    }
}

/// Resolves the trampoline of one kernel: views and attributes built in
/// binding order, the call in signature order.
pub(crate) fn trampoline_view(kernel: &Kernel) -> TrampolineView {
    let f = kernel.f;
    let slots = slots(f);
    let mut params: Vec<(usize, &Param, TrampolineParam)> =
        passing_order(f).into_iter().map(|(i, p)| (i, p, trampoline_param(kernel, i, slots[i], p))).collect();
    let mut prepare: Vec<String> = params.iter().flat_map(|(_, _, c)| c.prepare.clone()).collect();
    if f.options.zero_outputs {
        for (i, p, _) in &params {
            if matches!(p.token, Token::Ret(_)) {
                prepare.push(format!("begen::tr::zero_output(begen_t[{}], begen_stream);", slots[*i]));
            }
        }
    }
    params.sort_by_key(|(i, _, _)| *i);
    let uses = |want: fn(&Token) -> bool| f.params.iter().any(|p| want(&p.token));
    let named = |used: bool, decl: &str, name: &str| {
        if used { format!("{decl} {name}") } else { decl.to_string() }
    };
    let params_text = [
        named(
            uses(|t| matches!(t, Token::Arg(_) | Token::Ret(_) | Token::InOut(_))),
            "const begen::TensorArg*",
            "begen_t",
        ),
        named(
            uses(|t| {
                matches!(
                    t,
                    Token::Attr { .. }
                        | Token::Dim { .. }
                        | Token::Record { .. }
                        | Token::Array { .. }
                        | Token::Str { .. }
                        | Token::Dict
                        | Token::State { .. }
                        | Token::Args
                        | Token::Rets
                )
            }),
            "const void* const*",
            "begen_a",
        ),
        named(uses(|t| matches!(t, Token::Stream)) || f.options.zero_outputs, "int64_t", "begen_stream"),
    ]
    .join(", ");
    TrampolineView {
        function: format!("{}{}", f.name, kernel.template_args()),
        arg_spec: arg_spec_text(f),
        symbol: kernel.trampoline().to_string(),
        params: params_text,
        prepare,
        call_args: params.iter().map(|(_, _, c)| c.call_arg.clone()).collect(),
        returned: match f.returns {
            Returns::Void => None,
            Returns::Status => Some("returned_status"),
            Returns::FfiError => Some("returned_error"),
            Returns::FfiErrorOr => Some("returned_error_or"),
        },
        state: trampoline_state(kernel),
    }
}

/// Resolves the wrapper of one source file; `include_path` is already
/// validated.
pub(crate) fn wrapper_view(
    file: &str,
    include_path: String,
    defines: Vec<(String, String)>,
    functions: &[&Function],
    section: TargetSection,
) -> WrapperView {
    let mut attr_types: BTreeSet<AttrType> = functions.iter().flat_map(|f| f.attrs().map(|(_, t)| t)).collect();
    let params = || functions.iter().flat_map(|f| f.params.iter());
    attr_types.extend(params().filter_map(|p| match p.token {
        Token::Array { ty, .. } => Some(ty),
        _ => None,
    }));
    let member_half = |repr: HalfRepr| {
        params().any(
            |p| matches!(&p.token, Token::Record { ty, .. } if ty.members.iter().any(|m| m.half_repr == Some(repr))),
        )
    };
    // A template instantiated over a 16-bit float names CUDA's type (in a
    // CUDA source) or begen's (`BE::half`, `BE::bfloat16`: a CPU source).
    let instantiated_on = |t: AttrType, platform: Platform| {
        functions.iter().any(|f| {
            f.platform == platform
                && f.consts.iter().any(|k| k.kind == ConstKind::Type && k.values.iter().any(|v| v == t.as_str()))
        })
    };
    let instantiated = |t: AttrType| instantiated_on(t, Platform::Cuda);
    // CUDA's own types the trampolines name, in the table's order.
    let cuda_headers = AttrType::ALL.into_iter().filter_map(|t| {
        let cuda = t.facts().cuda?;
        let named = params().any(|p| p.half_repr == Some(cuda.repr)) || member_half(cuda.repr) || instantiated(t);
        named.then_some(cuda.header)
    });
    let mut includes: Vec<String> = Vec::new();
    for header in attr_types.iter().filter_map(|t| t.facts().cpp_header) {
        if !includes.iter().any(|h| h == header) {
            includes.push(header.to_string());
        }
    }
    includes.push("<exception>".into());
    let state = params().any(|p| matches!(p.token, Token::State { .. }));
    if state {
        includes.push("<memory>".into());
    }
    if state || params().any(|p| matches!(p.token, Token::Record { .. })) {
        includes.push("<type_traits>".into());
    }
    if params().any(|p| p.array.as_ref().is_some_and(|a| a.container == Container::Vector)) {
        includes.push("<vector>".into());
    }
    includes.extend(cuda_headers.map(String::from));
    if [AttrType::Float16, AttrType::BFloat16].into_iter().any(|t| instantiated_on(t, Platform::Cpu)) {
        includes.push("\"brainevent/float16.h\"".into());
    }
    WrapperView {
        source: comment_text(file),
        include_path,
        defines,
        includes,
        host_only: functions.iter().any(|f| f.platform == Platform::Cuda),
        instantiations: functions
            .iter()
            .filter(|f| f.platform == Platform::Cuda)
            .flat_map(|f| Kernel::all(f))
            .filter(|u| u.instance.is_some() && !u.f.consts.is_empty())
            .map(|u| format!("{}{}", u.f.name, u.template_args()))
            .collect(),
        trampolines: functions
            .iter()
            .filter(|f| f.native.is_none())
            .flat_map(|f| Kernel::all(f))
            .map(|u| trampoline_view(&u))
            .collect(),
        section,
    }
}

/// The rank of a parameter in the order values are passed: the stream and
/// state, inputs, outputs, then attributes.
pub(crate) fn pass_rank(t: &Token) -> u8 {
    match t.role() {
        Role::Stream | Role::State => 0,
        Role::Input | Role::InputList => 1,
        Role::Output | Role::InOut | Role::OutputList => 2,
        Role::Attribute | Role::Dim | Role::Dict => 3,
    }
}

/// The parameters of `f` with their positions, in the order values are
/// passed ([`pass_rank`], then signature order).
pub(crate) fn passing_order(f: &Function) -> Vec<(usize, &Param)> {
    let mut order: Vec<(usize, &Param)> = f.params.iter().enumerate().collect();
    order.sort_by_key(|(i, p)| (pass_rank(&p.token), *i));
    order
}

/// Each parameter's index in the trampoline's tensors array (a tensor:
/// inputs, then outputs, an `inout` as its output) or attributes array
/// (attributes, dimensions, lists, the state, in passing order); 0 for the
/// stream and a binary kernel's list, which are neither.
pub(crate) fn slots(f: &Function) -> Vec<usize> {
    let mut slots = vec![0; f.params.len()];
    let (mut tensors, mut attrs) = (0, 0);
    for (i, p) in passing_order(f) {
        match p.token {
            Token::Arg(_) | Token::Ret(_) | Token::InOut(_) => {
                slots[i] = tensors;
                tensors += 1;
            }
            Token::Attr { .. }
            | Token::Dim { .. }
            | Token::Struct { .. }
            | Token::Record { .. }
            | Token::Array { .. }
            | Token::Str { .. }
            | Token::Dict
            | Token::State { .. }
            | Token::Args
            | Token::Rets => {
                slots[i] = attrs;
                attrs += 1;
            }
            Token::Stream | Token::List(_) => {}
        }
    }
    slots
}

/// The trampoline's half of one parameter: its statements before the call
/// and the expression the kernel receives.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct TrampolineParam {
    /// Trampoline statements before the call.
    pub(crate) prepare: Vec<String>,
    /// What the kernel receives, e.g. `t0_x`.
    pub(crate) call_arg: String,
}

/// Resolves the trampoline's half of parameter `p` (position `i` in the
/// signature) of `kernel`; `slot` is its index in `begen_t` (tensors) or
/// `begen_a` (attributes). What the handler must put there is said per
/// kind: a tensor's `begen::TensorArg`; a scalar attribute's or dimension's
/// address (a complex one: its two parts'); a struct's array of its
/// members' addresses; an array's or string's `begen::ArrayArg`; the
/// dictionary's `begen::DictArg`; a list's `begen::TensorList`; the
/// state's pointer.
pub(crate) fn trampoline_param(kernel: &Kernel, i: usize, slot: usize, p: &Param) -> TrampolineParam {
    let name = &p.name;
    let one = |prepare: Vec<String>, call_arg: String| TrampolineParam { prepare, call_arg };
    match &p.token {
        Token::Stream => one(vec![], "begen_stream".into()),
        Token::Arg(contract) | Token::Ret(contract) | Token::InOut(contract) => match &p.pointer {
            None => {
                let view = format!("t{i}_{name}");
                // Not const even for inputs: a kernel bound by an explicit
                // arg_spec may take `BE::Tensor&` for an input.
                one(vec![format!("BE::Tensor {view} = begen::tr::view(begen_t[{slot}]);")], view)
            }
            Some(ptr) => {
                let (prepare, call_arg) = pointer_arg(kernel, i, slot, p, ptr, contract.as_ref());
                one(prepare, call_arg)
            }
        },
        Token::Dim { ty, .. } => one(vec![], format!("begen::tr::attr<{}>(begen_a[{slot}])", ty.cpp_type())),
        Token::Attr { ty, .. } => attr_param(i, slot, p, *ty),
        Token::Record { ty, .. } => record_param(i, slot, p, ty),
        Token::Array { ty, .. } => array_param(kernel.f.name.as_str(), i, slot, p, *ty),
        Token::Str { .. } => {
            let read = format!("x{i}_{name}");
            one(
                vec![format!("const begen::ArrayArg& {read} = *static_cast<const begen::ArrayArg*>(begen_a[{slot}]);")],
                format!("std::string_view(static_cast<const char*>({read}.data), static_cast<size_t>({read}.size))"),
            )
        }
        Token::Dict => {
            let value = format!("v{i}_{name}");
            one(vec![format!("const BE::Attrs {value}(*static_cast<const begen::DictArg*>(begen_a[{slot}]));")], value)
        }
        Token::State { ty, .. } => {
            let value = format!("v{i}_{name}");
            one(vec![format!("{ty}& {value} = *static_cast<{ty}*>(const_cast<void*>(begen_a[{slot}]));")], value)
        }
        Token::Args | Token::Rets => {
            let view = format!("t{i}_{name}");
            let read = format!("*static_cast<const begen::TensorList*>(begen_a[{slot}])");
            let mut prepare = vec![format!("BE::Tensors {view}({read});")];
            if matches!(p.token, Token::Rets) && kernel.f.options.zero_outputs {
                prepare.push(format!("begen::tr::zero_outputs({read}, begen_stream);"));
            }
            one(prepare, view)
        }
        // Only binary kernels take structs as bytes and lists; they have no trampoline.
        Token::Struct { .. } | Token::List(_) => TrampolineParam::default(),
    }
}

/// A scalar attribute: read as its C++ type (a complex one from its two
/// parts, a 16-bit float from its bits, as CUDA's type where the kernel
/// takes that).
fn attr_param(i: usize, slot: usize, p: &Param, ty: AttrType) -> TrampolineParam {
    let name = &p.name;
    match ty.kind() {
        ScalarKind::Complex => {
            let part = ty.facts().wire.cpp_type();
            let parts = format!("c{i}_{name}");
            let value = format!("v{i}_{name}");
            TrampolineParam {
                prepare: vec![
                    format!("const {part}* {parts} = static_cast<const {part}*>(begen_a[{slot}]);"),
                    format!("const std::complex<{part}> {value}({parts}[0], {parts}[1]);"),
                ],
                call_arg: value,
            }
        }
        ScalarKind::FloatBits => {
            let carrier = ty.cpp_type();
            let bits = format!("begen::tr::attr<{carrier}>(begen_a[{slot}])");
            let r = format!("r{i}_{name}");
            match from_bits(ty, p.half_repr, &bits, &r) {
                None => TrampolineParam { prepare: vec![], call_arg: bits },
                Some((mut prepare, cuda)) => {
                    let value = format!("v{i}_{name}");
                    prepare.push(format!("const {cuda} {value}({r});"));
                    TrampolineParam { prepare, call_arg: value }
                }
            }
        }
        ScalarKind::Bool | ScalarKind::Int { .. } | ScalarKind::Float => TrampolineParam {
            prepare: vec![],
            call_arg: format!("begen::tr::attr<{}>(begen_a[{slot}])", ty.cpp_type()),
        },
    }
}

/// A struct attribute: the kernel's struct built from its members'
/// addresses by aggregate initialisation, each member cast to its declared
/// type.
fn record_param(i: usize, slot: usize, p: &Param, ty: &RecordType) -> TrampolineParam {
    let name = &p.name;
    let read = format!("s{i}_{name}");
    let mut prepare = vec![format!("const void* const* {read} = static_cast<const void* const*>(begen_a[{slot}]);")];
    let mut values = Vec::new();
    for (k, m) in ty.members.iter().enumerate() {
        let bits = format!("begen::tr::attr<{}>({read}[{k}])", m.ty.cpp_type());
        let value = match from_bits(m.ty, m.half_repr, &bits, &format!("r{i}_{name}_{k}")) {
            Some((rebuild, cuda)) => {
                prepare.extend(rebuild);
                format!("{cuda}(r{i}_{name}_{k})")
            }
            None => bits,
        };
        values.push(format!("static_cast<decltype({}::{})>({value})", ty.name, m.name));
    }
    prepare.push(format!(
        "static_assert(std::is_aggregate<{0}>::value, \"struct {0} must be an aggregate (no constructors, base \
         classes or private members): begen builds it from its members\");",
        ty.name
    ));
    let value = format!("v{i}_{name}");
    prepare.push(format!("const {} {value}{{{}}};", ty.name, values.join(", ")));
    TrampolineParam { prepare, call_arg: value }
}

/// An array attribute: the kernel's container built over (a span) or from
/// (a vector) the elements of the `begen::ArrayArg`, read as the element
/// type the kernel declares (asserted to have the size).
fn array_param(function: &str, i: usize, slot: usize, p: &Param, ty: AttrType) -> TrampolineParam {
    let name = &p.name;
    // `check` gives every array attribute its binding.
    let binding = p
        .array
        .as_deref()
        .cloned()
        .unwrap_or(crate::model::ArrayBinding { container: Container::Vector, element: ty.cpp_type().into() });
    let element = &binding.element;
    let read = format!("x{i}_{name}");
    let data = format!("e{i}_{name}");
    let value = format!("v{i}_{name}");
    let size = format!("static_cast<size_t>({read}.size)");
    let build = match binding.container {
        Container::XlaSpan | Container::BeSpan => format!("const {} {value}({data}, {size});", binding.cpp_type()),
        Container::Vector => format!("const {} {value}({data}, {data} + {size});", binding.cpp_type()),
    };
    TrampolineParam {
        prepare: vec![
            format!(
                "static_assert(sizeof({element}) == {}, \"{function}: attribute '{name}' holds {ty} elements of {} bytes\");",
                ty.byte_width(),
                ty.byte_width()
            ),
            format!("const begen::ArrayArg& {read} = *static_cast<const begen::ArrayArg*>(begen_a[{slot}]);"),
            format!("const {element}* {data} = static_cast<const {element}*>({read}.data);"),
            build,
        ],
        call_arg: value,
    }
}
