//! The view models of the XLA FFI handlers: `templates/glue.cc` (one TU per
//! library, or several parts) loops over them and prints.
//!
//! The code of one kernel is split in two halves that meet at an
//! `extern "C"` trampoline (see `build-support/include/begen/abi.h`):
//!
//! - the **handler**, here, in the library's glue TU (host C++ compiler,
//!   XLA's FFI headers parsed once per library): binding, dtype/rank/attribute
//!   checks, then the buffers packed into `begen::TensorArg`s and the
//!   attributes' addresses, and the trampoline's message turned into an
//!   `xla::ffi::Error`;
//! - the **trampoline**, in the source's own TU (the target-neutral half,
//!   `emit::abi`).
//!
//! Tensors are passed in binding order (inputs, then outputs), attributes in
//! signature order (`abi::slots`). Local names carry the parameter's
//! position (`p0_x`), so they can never clash with each other or with the
//! kernel's own parameter names.

use std::collections::BTreeSet;

use crate::model::{AttrType, Extent, Library, Param, Platform, RecordType, ScalarKind, TensorType, Token};

use crate::emit::abi::{Kernel, arg_spec_text, passing_order};
use crate::emit::names::comment_text;

/// The per-executable state of a `BE::Tensor` kernel (`T& state`), as the
/// glue holds it. The glue cannot name `T` (its TU includes no kernel
/// source), so it holds the state as an opaque pointer with the deleter of
/// the kernel's TU: its instantiate handler calls the `make` trampoline
/// (`abi::TrampolineState`), and each call passes the pointer on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StateView {
    /// The author's function that creates it (a checked identifier).
    pub(crate) function: String,
    /// The trampoline in the kernel's TU that runs it (hidden).
    pub(crate) make: String,
    /// The glue's opaque state type (its own XLA `TypeId`).
    pub(crate) opaque: String,
    /// The exported instantiate handler and the state type's id and info
    /// functions (`native::state_symbols`).
    pub(crate) instantiate: String,
    pub(crate) type_id: String,
    pub(crate) type_info: String,
}

/// The glue translation unit of a library: every XLA FFI handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GlueView {
    pub(crate) library: String,
    /// Which part of the glue this is, from 1, and of how many: a library
    /// of many kernels gets several glue TUs that compile in parallel.
    pub(crate) part: usize,
    pub(crate) parts: usize,
    /// The exported function that returns the XLA FFI API version the
    /// glue was compiled against (`"0.3"`), read by the Python module's
    /// version gate: [`ffi_api_symbol`].
    pub(crate) api_symbol: String,
    /// begen's copies of the structs of struct attributes, each once.
    pub(crate) structs: Vec<StructView>,
    pub(crate) handlers: Vec<HandlerView>,
}

/// The glue's copy of a kernel's struct: what XLA decodes a struct
/// attribute's dictionary into, member by member. It lives in an anonymous
/// namespace, so the decoding XLA's macro registers for it is the glue's
/// own, never another library's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StructView {
    /// Its name in the glue, e.g. `begen_struct_Affine`.
    pub(crate) mirror: String,
    /// The kernel's struct and where it is defined (safe for a comment).
    pub(crate) comment: String,
    /// `int32_t tag;`, ...
    pub(crate) members: Vec<String>,
    /// The arguments of `XLA_FFI_REGISTER_STRUCT_ATTR_DECODING` after the
    /// type: `xla::ffi::StructMember<int32_t>("tag")`, ...
    pub(crate) decoded: Vec<String>,
}

/// The glue's copy of `ty`.
pub(crate) fn struct_view(ty: &RecordType) -> StructView {
    let members = ty.members.iter().map(|m| format!("{} {};", m.ty.cpp_type(), m.name)).collect();
    let decoded =
        ty.members.iter().map(|m| format!("xla::ffi::StructMember<{}>(\"{}\")", m.ty.cpp_type(), m.name)).collect();
    StructView {
        mirror: ty.mirror.clone(),
        comment: comment_text(&format!("struct {} ({}:{})", ty.name, ty.file, ty.line)),
        members,
        decoded,
    }
}

pub(crate) use crate::model::generated::ffi_api_symbol;

/// One XLA FFI handler (in the glue TU).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HandlerView {
    /// The kernel's C++ name: quoted in error messages.
    pub(crate) function: String,
    /// Its source, relative to the root (safe for a comment).
    pub(crate) source: String,
    /// The canonical arg_spec, for the comment above the handler.
    pub(crate) arg_spec: String,
    /// The exported symbol, `begen_<library>_<function>`.
    pub(crate) symbol: String,
    /// The trampoline it calls, `begen_call_<library>_<function>`.
    pub(crate) trampoline: String,
    /// The static function XLA's binding calls.
    pub(crate) impl_name: String,
    /// Parameters of `impl_name`, in binding order.
    pub(crate) impl_params: Vec<String>,
    /// `.Ctx<...>()`, `.Arg<...>()`, `.Ret<...>()`, `.Attr<...>("name")`,
    /// in binding order (stream, inputs, outputs, attributes).
    pub(crate) bindings: Vec<String>,
    /// Validation that returns an error.
    pub(crate) checks: Vec<String>,
    /// The arrays handed to the trampoline (`tensors`, `attrs`), declared on
    /// the stack.
    pub(crate) packs: Vec<String>,
    /// The trampoline's arguments: tensors, attributes, stream.
    pub(crate) call_args: Vec<String>,
    /// `, {xla::ffi::Traits::kCmdBufferCompatible}` or empty.
    pub(crate) traits: String,
    /// Its per-executable state, if it takes one.
    pub(crate) state: Option<StateView>,
}

/// How a parameter crosses from the handler to the trampoline.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) enum Passed {
    /// An element of the `tensors` array: the handler's expression.
    Tensor(String),
    /// An element of the `attrs` array: the address of the value.
    Attr(String),
    /// The stream argument, as an `int64_t`.
    Stream(String),
    #[default]
    Nothing,
}

/// Where a binding goes in XLA's order: the stream, inputs, outputs, attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) enum Slot {
    #[default]
    Ctx,
    Input,
    /// The variadic inputs: after every other input, as XLA requires.
    Inputs,
    Output,
    /// The variadic outputs: after every other output.
    Outputs,
    Attr,
}

/// One `.Ctx/.Arg/.Ret/.Attr` binding of a handler and the parameter of the
/// handler's function that receives it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Binding {
    pub(crate) slot: Slot,
    /// Binding line, e.g. `.Arg<xla::ffi::AnyBuffer>()`.
    pub(crate) binding: String,
    /// The handler parameter that receives it, e.g. `xla::ffi::AnyBuffer p0_x`.
    pub(crate) impl_param: String,
    /// Handler statements that return an error.
    pub(crate) checks: Vec<String>,
}

/// The handler's half of one parameter at position `i` (the trampoline's
/// is `abi::trampoline_param`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ParamCpp {
    /// Its bindings: none for a `dim.`, two for an `inout` (its input and
    /// its aliased output), one otherwise.
    pub(crate) bindings: Vec<Binding>,
    /// What the handler passes on: a tensor (the output buffer of an
    /// `inout`), an attribute's address, the stream.
    pub(crate) passed: Passed,
    /// Handler statements after the checks, before the trampoline's arrays
    /// are packed (what a struct or array attribute is passed as).
    pub(crate) locals: Vec<String>,
}

/// The XLA buffer type of a tensor: typed (`Buffer<F32, 2>`) when its
/// contract fixes the element type, `AnyBuffer` otherwise.
fn buffer_type(kernel: &Kernel, contract: Option<&TensorType>) -> String {
    match contract.and_then(|c| Some((kernel.dtype(&c.dtype)?, &c.dims))) {
        // An alias without a comma: the binding is a macro argument.
        // A rest (`[..., n]`) leaves the rank open: the handler checks it.
        Some((t, Some(dims))) if !matches!(dims.first(), Some(Extent::Rest(_))) => {
            format!("begen::rt::Rank{}<xla::ffi::DataType::{}>", dims.len(), t.xla_type())
        }
        Some((t, _)) => format!("xla::ffi::Buffer<xla::ffi::DataType::{}>", t.xla_type()),
        None => "xla::ffi::AnyBuffer".to_string(),
    }
}

/// One tensor binding (input or output) of parameter `name` at `i`.
fn tensor_binding(function: &str, slot: Slot, var: &str, name: &str, buffer: &str) -> Binding {
    let is_out = slot == Slot::Output;
    // A result is reached through `->`, an argument directly.
    let (access, value) =
        if is_out { (format!("{var}->"), format!("*{var}")) } else { (format!("{var}."), var.to_string()) };
    let mut checks = Vec::new();
    if buffer == "xla::ffi::AnyBuffer" {
        checks.push(format!(
            "if (!begen::rt::dtype_supported({access}element_type())) \
             return begen::rt::unsupported_dtype(\"{function}\", \"{name}\", {access}element_type());"
        ));
    }
    // A view holds at most BE::kMaxDim extents; the constructor would
    // throw too, but this names the parameter.
    checks.push(format!(
        "if (!begen::rt::rank_fits({value})) \
         return begen::rt::rank_too_high(\"{function}\", \"{name}\", {access}dimensions().size());"
    ));
    Binding {
        slot,
        binding: if is_out { format!(".Ret<{buffer}>()") } else { format!(".Arg<{buffer}>()") },
        impl_param: if is_out { format!("xla::ffi::Result<{buffer}> {var}") } else { format!("{buffer} {var}") },
        checks,
    }
}

/// Resolves the handler's half of one parameter (position `i` in the
/// signature) of `kernel`.
pub(crate) fn param_cpp(kernel: &Kernel, i: usize, p: &Param) -> ParamCpp {
    let function = kernel.f.name.as_str();
    let name = &p.name;
    match &p.token {
        Token::Stream => ParamCpp {
            // The glue is host C++ without CUDA headers: the stream is an
            // opaque pointer there, an `int64_t` for the kernel.
            bindings: vec![Binding {
                slot: Slot::Ctx,
                binding: ".Ctx<xla::ffi::PlatformStream<void*>>()".into(),
                impl_param: format!("void* p{i}_{name}"),
                checks: vec![],
            }],
            passed: Passed::Stream(format!("begen::rt::stream_handle(p{i}_{name})")),
            ..Default::default()
        },
        Token::Arg(contract) | Token::Ret(contract) | Token::InOut(contract) => {
            let buffer = buffer_type(kernel, contract.as_ref());
            let var = format!("p{i}_{name}");
            let mut bindings = Vec::new();
            let output = match &p.token {
                Token::Arg(_) => {
                    bindings.push(tensor_binding(function, Slot::Input, &var, name, &buffer));
                    false
                }
                Token::Ret(_) => {
                    bindings.push(tensor_binding(function, Slot::Output, &var, name, &buffer));
                    true
                }
                _ => {
                    // In place: XLA hands the input and its aliased output;
                    // the kernel gets the output, which must be the input's
                    // memory.
                    let input = format!("q{i}_{name}");
                    let mut b = tensor_binding(function, Slot::Input, &input, name, &buffer);
                    b.checks = vec![];
                    bindings.push(b);
                    let mut out = tensor_binding(function, Slot::Output, &var, name, &buffer);
                    out.checks.push(format!(
                        "if ({input}.untyped_data() != {var}->untyped_data()) \
                         return begen::rt::not_aliased(\"{function}\", \"{name}\");"
                    ));
                    bindings.push(out);
                    true
                }
            };
            let value = if output { format!("*{var}") } else { var.clone() };
            ParamCpp {
                bindings,
                passed: Passed::Tensor(format!("begen::rt::tensor_arg({value})")),
                ..Default::default()
            }
        }
        Token::Dim { .. } => ParamCpp {
            // The value is resolved in the handler (see `dim_statements`).
            passed: Passed::Attr(format!("&a{i}_{name}")),
            ..Default::default()
        },
        Token::Attr { ty, .. } => attr_cpp(function, i, p, *ty),
        Token::Record { ty, .. } => record_cpp(i, p, ty),
        Token::Array { ty, .. } => array_cpp(function, i, p, *ty),
        Token::Str { .. } => str_cpp(i, p),
        Token::Dict => dict_cpp(i, p),
        Token::State { .. } => state_cpp(kernel, i, p),
        Token::Args => list_cpp(kernel, i, p, false),
        Token::Rets => list_cpp(kernel, i, p, true),
        // Only binary kernels take structs as bytes and lists; their handlers are `emit::binary`'s.
        Token::Struct { .. } | Token::List(_) => ParamCpp::default(),
    }
}

/// A variadic list (`BE::Tensors`): XLA hands the handler the inputs or
/// outputs after the others (`RemainingArgs`, `RemainingRets`), which it
/// checks one by one and packs as TensorArgs; the list goes on in the
/// attributes array, and the trampoline hands the kernel a `BE::Tensors`
/// over it.
fn list_cpp(kernel: &Kernel, i: usize, p: &Param, output: bool) -> ParamCpp {
    let function = &kernel.f.name;
    let name = &p.name;
    let raw = format!("p{i}_{name}");
    let items = format!("v{i}_{name}");
    let list = format!("l{i}_{name}");
    let (slot_of, binding, remaining) = if output {
        (Slot::Outputs, ".RemainingRets()", "xla::ffi::RemainingRets")
    } else {
        (Slot::Inputs, ".RemainingArgs()", "xla::ffi::RemainingArgs")
    };
    ParamCpp {
        bindings: vec![Binding {
            slot: slot_of,
            binding: binding.into(),
            impl_param: format!("{remaining} {raw}"),
            checks: vec![],
        }],
        passed: Passed::Attr(format!("&{list}")),
        locals: vec![
            format!("std::vector<begen::TensorArg> {items};"),
            format!(
                "if (xla::ffi::Error e = begen::rt::list_args({raw}, \"{function}\", \"{name}\", {items}); e.failure()) return e;"
            ),
            format!("const begen::TensorList {list}{{{items}.data(), static_cast<int64_t>({items}.size())}};"),
        ],
    }
}

/// A struct attribute: XLA decodes the dictionary into begen's copy of the
/// struct (the glue's [`StructView`]); the handler passes the members'
/// addresses, and the trampoline builds the kernel's struct from them.
fn record_cpp(i: usize, p: &Param, ty: &RecordType) -> ParamCpp {
    let name = &p.name;
    let raw = format!("p{i}_{name}");
    let members = format!("m{i}_{name}");
    let addresses: Vec<String> = ty.members.iter().map(|m| format!("&{raw}.{}", m.name)).collect();
    ParamCpp {
        bindings: attr_binding(format!(".Attr<{}>(\"{name}\")", ty.mirror), format!("{} {raw}", ty.mirror), vec![]),
        passed: Passed::Attr(members.clone()),
        locals: vec![format!("const void* const {members}[] = {{{}}};", addresses.join(", "))],
    }
}

/// The element type XLA decodes an array attribute of `ty` as (a bool as a
/// byte, a 16-bit float as its bits, a complex number as two reals), and
/// how many of them make one element.
pub(crate) fn array_wire(ty: AttrType) -> (&'static str, usize) {
    let (wire, per) = ty.facts().array_wire;
    (wire.cpp_type(), per)
}

/// An array attribute: XLA decodes it as a `Span`; the handler passes its
/// data and length (`begen::ArrayArg`), and the trampoline builds the
/// kernel's container over or from the elements.
fn array_cpp(function: &str, i: usize, p: &Param, ty: AttrType) -> ParamCpp {
    let name = &p.name;
    let raw = format!("p{i}_{name}");
    let (wire, per) = array_wire(ty);
    let span = format!("xla::ffi::Span<const {wire}>");
    let mut checks = Vec::new();
    if per > 1 {
        checks.push(format!(
            "if ({raw}.size() % {per} != 0) return begen::rt::bad_complex_array(\"{function}\", \"{name}\", {raw}.size());"
        ));
    }
    if ty.kind() == ScalarKind::Bool {
        checks.push(format!(
            "if (!begen::rt::all_bools({raw})) return begen::rt::bad_bool_array(\"{function}\", \"{name}\");"
        ));
    }
    let arg = format!("a{i}_{name}");
    ParamCpp {
        bindings: attr_binding(format!(".Attr<{span}>(\"{name}\")"), format!("{span} {raw}"), checks),
        passed: Passed::Attr(format!("&{arg}")),
        locals: vec![format!("const begen::ArrayArg {arg} = begen::rt::array_arg({raw}, {per});")],
    }
}

/// A string attribute: XLA decodes it as a `std::string_view` (its UTF-8
/// bytes, valid for the call); the handler passes their address and
/// number as a `begen::ArrayArg`, and the trampoline hands the kernel a
/// `std::string_view` over them.
fn str_cpp(i: usize, p: &Param) -> ParamCpp {
    let name = &p.name;
    let raw = format!("p{i}_{name}");
    let arg = format!("a{i}_{name}");
    ParamCpp {
        bindings: attr_binding(
            format!(".Attr<std::string_view>(\"{name}\")"),
            format!("std::string_view {raw}"),
            vec![],
        ),
        passed: Passed::Attr(format!("&{arg}")),
        locals: vec![format!("const begen::ArrayArg {arg} = {{{raw}.data(), static_cast<int64_t>({raw}.size())}};")],
    }
}

/// Every attribute as one dictionary: XLA decodes them as an
/// `ffi::Dictionary`; the handler passes it with the glue's reader
/// (`begen::DictArg`), and the trampoline hands the kernel a `BE::Attrs`
/// over it, whose getters read by key through the glue.
fn dict_cpp(i: usize, p: &Param) -> ParamCpp {
    let name = &p.name;
    let raw = format!("p{i}_{name}");
    let arg = format!("a{i}_{name}");
    ParamCpp {
        bindings: attr_binding(".Attrs()".into(), format!("xla::ffi::Dictionary {raw}"), vec![]),
        passed: Passed::Attr(format!("&{arg}")),
        locals: vec![format!("const begen::DictArg {arg} = begen::rt::dict_arg({raw});")],
    }
}

/// The per-executable state (`T& state`): XLA hands the handler the glue's
/// opaque state (`Ctx<State<...>>`) and the ordinal of the device the call
/// runs on (`Ctx<DeviceOrdinal>`); the state of that device, made on its
/// first call, goes on in the attributes array, and the trampoline casts it
/// back to the kernel's `T`.
fn state_cpp(kernel: &Kernel, i: usize, p: &Param) -> ParamCpp {
    let name = &p.name;
    let raw = format!("p{i}_{name}");
    let opaque = state_opaque(kernel);
    // The instantiate: function, for a failure to make a device's state.
    let maker = crate::emit::abi::trampoline_state(kernel).map_or_else(|| kernel.f.name.clone(), |t| t.function);
    ParamCpp {
        bindings: vec![
            Binding {
                slot: Slot::Ctx,
                binding: format!(".Ctx<xla::ffi::State<{opaque}>>()"),
                impl_param: format!("{opaque}* {raw}"),
                checks: vec![],
            },
            Binding {
                slot: Slot::Ctx,
                binding: ".Ctx<xla::ffi::DeviceOrdinal>()".into(),
                impl_param: format!("int32_t {raw}_device"),
                checks: vec![],
            },
        ],
        passed: Passed::Attr(format!("{raw}_here->ptr")),
        locals: vec![
            format!("const char* {raw}_failure = nullptr;"),
            format!("{opaque}::Device* const {raw}_here = {raw}->on({raw}_device, &{raw}_failure);"),
            format!("if ({raw}_here == nullptr) return begen::rt::kernel_failed(\"{maker}\", {raw}_failure);"),
            // Calls on one device (threads calling one executable) take
            // turns; each device has a state of its own.
            format!("const std::lock_guard<std::mutex> {raw}_turn({raw}_here->turn);"),
        ],
    }
}

/// The glue's opaque state type of `kernel`'s handler.
fn state_opaque(kernel: &Kernel) -> String {
    format!("{}_state", kernel.handler())
}

/// The state of `kernel`, if its kernel takes one and begen.yaml names the
/// function that creates it.
fn state_view(kernel: &Kernel) -> Option<StateView> {
    let t = crate::emit::abi::trampoline_state(kernel)?;
    let (instantiate, type_id, type_info) = super::native::state_symbols(kernel.handler());
    Some(StateView {
        function: t.function,
        make: t.make,
        opaque: state_opaque(kernel),
        instantiate,
        type_id,
        type_info,
    })
}

fn attr_binding(binding: String, impl_param: String, checks: Vec<String>) -> Vec<Binding> {
    vec![Binding { slot: Slot::Attr, binding, impl_param, checks }]
}

fn attr_cpp(function: &str, i: usize, p: &Param, ty: AttrType) -> ParamCpp {
    let name = &p.name;
    let raw = format!("p{i}_{name}");
    match ty.kind() {
        ScalarKind::Complex => {
            // XLA's attributes have no complex scalars: a pair of its parts.
            let part = ty.facts().wire.cpp_type();
            ParamCpp {
                bindings: attr_binding(
                    format!(".Attr<xla::ffi::Span<const {part}>>(\"{name}\")"),
                    format!("xla::ffi::Span<const {part}> {raw}"),
                    vec![format!(
                        "if ({raw}.size() != 2) \
                         return begen::rt::bad_complex_attr(\"{function}\", \"{name}\", {raw}.size());"
                    )],
                ),
                passed: Passed::Attr(format!("{raw}.begin()")),
                locals: vec![],
            }
        }
        ScalarKind::FloatBits => {
            let carrier = ty.cpp_type();
            ParamCpp {
                bindings: attr_binding(format!(".Attr<{carrier}>(\"{name}\")"), format!("{carrier} {raw}"), vec![]),
                passed: Passed::Attr(format!("&{raw}")),
                locals: vec![],
            }
        }
        ScalarKind::Bool | ScalarKind::Int { .. } | ScalarKind::Float => ParamCpp {
            bindings: attr_binding(
                format!(".Attr<{}>(\"{name}\")", ty.cpp_type()),
                format!("{} {raw}", ty.cpp_type()),
                vec![],
            ),
            passed: Passed::Attr(format!("&{raw}")),
            ..Default::default()
        },
    }
}

/// Every parameter of `kernel` resolved, in passing order (`abi::passing_order`):
/// the stream and state, inputs, outputs, attributes.
fn params_cpp<'a>(kernel: &Kernel<'a>) -> Vec<(usize, &'a Param, ParamCpp)> {
    passing_order(kernel.f).into_iter().map(|(i, p)| (i, p, param_cpp(kernel, i, p))).collect()
}

/// The handler statements that check the typed tensors' extents against
/// their contracts (literal extents, one value per named dimension) and
/// compute the `dim.` parameters' values, range-checked for their types.
pub(super) fn dim_statements(kernel: &Kernel) -> Vec<String> {
    resolve_dims(kernel).0
}

/// Where a named dimension's value is read: its variable in the handler,
/// the parameter (as messages name it) and the axis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct DimSource {
    pub(crate) dim: String,
    pub(crate) var: String,
    pub(crate) param: String,
    /// The axis: a number, or an expression where a rest comes first.
    pub(crate) axis: String,
}

/// Where a rest's leading extents are read: the variables of their span
/// and count, the product's variable, and the parameter.
struct RestSource {
    key: String,
    span: String,
    count: String,
    size: String,
    param: String,
}

/// [`dim_statements`] and where each named dimension is read: from the
/// first input naming it (a list's first element, `l<i>_0`, which a binary
/// handler binds before these statements), else the first output.
pub(super) fn resolve_dims(kernel: &Kernel) -> (Vec<String>, Vec<DimSource>) {
    let f = kernel.f;
    let function = &f.name;
    let mut out = Vec::new();
    let mut known: Vec<DimSource> = Vec::new();
    // (inputs first, position, parameter, access prefix, name in messages).
    let mut tensors: Vec<(u8, usize, &Param, String, String)> = Vec::new();
    for (i, p) in f.params.iter().enumerate() {
        let var = format!("p{i}_{}", p.name);
        let name = p.name.to_string();
        match &p.token {
            Token::Arg(_) => tensors.push((0, i, p, format!("{var}."), name)),
            Token::InOut(_) => tensors.push((0, i, p, format!("q{i}_{}.", p.name), name)),
            Token::List(_) => tensors.push((0, i, p, format!("l{i}_0."), format!("{name}[0]"))),
            Token::Ret(_) => tensors.push((1, i, p, format!("{var}->"), name)),
            Token::Stream
            | Token::Args
            | Token::Rets
            | Token::Attr { .. }
            | Token::Dim { .. }
            | Token::Struct { .. }
            | Token::Record { .. }
            | Token::Array { .. }
            | Token::Str { .. }
            | Token::Dict
            | Token::State { .. } => {}
        }
    }
    tensors.sort_by_key(|(rank, i, ..)| (*rank, *i));
    let mut rests: Vec<RestSource> = Vec::new();
    for (_, _, p, access, shown) in &tensors {
        let Some(dims) = p.token.contract().and_then(|c| c.dims.as_ref()) else { continue };
        // A rest: the trailing extents are counted from the end, the leading
        // ones are one shape per rest across the tensors.
        let (dims, lead) = match dims.split_first() {
            Some((Extent::Rest(name), trailing)) => {
                let k = trailing.len();
                let size = format!("{access}dimensions().size()");
                if k > 0 {
                    out.push(format!(
                        "if ({size} < {k}) return begen::rt::rank_too_low(\"{function}\", \"{shown}\", {k}, {size});"
                    ));
                }
                let key = Extent::rest_key(name.as_deref());
                let count = if k == 0 { size.clone() } else { format!("({size} - {k})") };
                match rests.iter().find(|r| r.key == key) {
                    None => {
                        let n = rests.len();
                        let r = RestSource {
                            key,
                            span: format!("rest{n}"),
                            count: format!("rest{n}_count"),
                            size: format!("rest{n}_size"),
                            param: shown.clone(),
                        };
                        out.push(format!("const auto {} = {access}dimensions();", r.span));
                        out.push(format!("const size_t {} = {count};", r.count));
                        out.push(format!(
                            "[[maybe_unused]] const int64_t {} = begen::rt::leading_size({}, {});",
                            r.size, r.span, r.count
                        ));
                        rests.push(r);
                    }
                    Some(r) => out.push(format!(
                        "if (!begen::rt::same_leading({span}, {n}, {access}dimensions(), {count})) \
                         return begen::rt::rest_mismatch(\"{function}\", \"{text}\", \"{first}\", {span}, {n}, \
                         \"{shown}\", {access}dimensions(), {count});",
                        span = r.span,
                        n = r.count,
                        text = Extent::Rest(name.clone()),
                        first = r.param,
                    )),
                }
                (trailing, Some(count))
            }
            _ => (dims.as_slice(), None),
        };
        for (axis, d) in dims.iter().enumerate() {
            let axis = match &lead {
                Some(count) => format!("{count} + {axis}"),
                None => axis.to_string(),
            };
            let got = format!("{access}dimensions()[{axis}]");
            match d {
                Extent::Fixed(n) => out.push(format!(
                    "if ({got} != {n}) return begen::rt::bad_extent(\"{function}\", \"{shown}\", {axis}, {n}, {got});"
                )),
                Extent::Named(n) => match known.iter().find(|k| k.dim == *n) {
                    None => {
                        let var = format!("dim_{n}");
                        out.push(format!("[[maybe_unused]] const int64_t {var} = {got};"));
                        known.push(DimSource { dim: n.clone(), var, param: shown.clone(), axis: axis.clone() });
                    }
                    Some(k) => out.push(format!(
                        "if ({got} != {var}) return begen::rt::dim_mismatch(\"{function}\", \"{n}\", \
                         \"{from}\", {from_axis}, {var}, \"{shown}\", {axis}, {got});",
                        var = k.var,
                        from = k.param,
                        from_axis = k.axis,
                    )),
                },
                Extent::Rest(_) => {}
            }
        }
    }
    for (i, p) in f.params.iter().enumerate() {
        if let Token::Dim { name, ty } = &p.token {
            let cpp = ty.cpp_type();
            let rest = Extent::rest_key(Some(name));
            let var = known
                .iter()
                .find(|k| k.dim == *name)
                .map(|k| k.var.clone())
                .or_else(|| rests.iter().find(|r| r.key == rest).map(|r| r.size.clone()))
                .unwrap_or_else(|| "0".to_string());
            out.push(format!(
                "if (!begen::rt::fits<{cpp}>({var})) \
                 return begen::rt::dim_overflow(\"{function}\", \"{name}\", \"{}\", \"{cpp}\", {var});",
                p.name
            ));
            out.push(format!("const {cpp} a{i}_{} = static_cast<{cpp}>({var});", p.name));
        }
    }
    (out, known)
}

/// Resolves one handler of the glue TU. Binding order is stream, inputs,
/// outputs, attributes (each in signature order).
pub(crate) fn handler_view(kernel: &Kernel) -> HandlerView {
    let f = kernel.f;
    let params = params_cpp(kernel);
    let mut bound: Vec<Binding> = sorted_bindings(&params).into_iter().cloned().collect();
    let (packs, mut call_args) = emit_packs(&params);
    // Zeroing a CUDA kernel's outputs needs XLA's stream, also where the
    // kernel takes none.
    if f.options.zero_outputs && f.platform == Platform::Cuda && !f.params.iter().any(|p| p.token == Token::Stream) {
        bound.insert(
            0,
            Binding {
                slot: Slot::Ctx,
                binding: ".Ctx<xla::ffi::PlatformStream<void*>>()".into(),
                impl_param: "void* begen_zero_stream".into(),
                checks: Vec::new(),
            },
        );
        if let Some(last) = call_args.last_mut() {
            *last = "begen::rt::stream_handle(begen_zero_stream)".into();
        }
    }
    let mut checks: Vec<String> = bound.iter().flat_map(|b| b.checks.clone()).collect();
    checks.extend(dim_statements(kernel));
    checks.extend(params.iter().flat_map(|(_, _, c)| c.locals.clone()));
    let symbol = kernel.handler().to_string();
    HandlerView {
        function: f.name.clone(),
        source: comment_text(&f.file),
        arg_spec: arg_spec_text(f),
        // The handler symbol is unique in the library; function names are
        // unique only within a module.
        impl_name: format!("{symbol}_impl"),
        symbol,
        trampoline: kernel.trampoline().to_string(),
        impl_params: bound.iter().map(|b| b.impl_param.clone()).collect(),
        bindings: bound.iter().map(|b| b.binding.clone()).collect(),
        checks,
        packs,
        call_args,
        traits: super::native::handler_traits(f),
        state: state_view(kernel),
    }
}

/// Every parameter's bindings in XLA's order: by slot (stream, inputs,
/// outputs, attributes), then signature order.
fn sorted_bindings<'a>(params: &'a [(usize, &Param, ParamCpp)]) -> Vec<&'a Binding> {
    let mut bound: Vec<(Slot, usize, &Binding)> =
        params.iter().flat_map(|(i, _, c)| c.bindings.iter().map(move |b| (b.slot, *i, b))).collect();
    bound.sort_by_key(|(slot, i, _)| (*slot, *i));
    bound.into_iter().map(|(_, _, b)| b).collect()
}

/// The arrays the handler hands the trampoline (`tensors`, `attrs`, each
/// declared only when not empty) and the trampoline's arguments: the
/// arrays (or `nullptr`) and the stream.
fn emit_packs(params: &[(usize, &Param, ParamCpp)]) -> (Vec<String>, Vec<String>) {
    let mut tensors = Vec::new();
    let mut attrs = Vec::new();
    let mut stream = "0".to_string();
    for (_, _, c) in params {
        match &c.passed {
            Passed::Tensor(e) => tensors.push(e.clone()),
            Passed::Attr(e) => attrs.push(e.clone()),
            Passed::Stream(e) => stream = e.clone(),
            Passed::Nothing => {}
        }
    }
    let mut packs = Vec::new();
    let mut call_args = Vec::new();
    for (items, decl, var) in
        [(tensors, "const begen::TensorArg tensors[]", "tensors"), (attrs, "const void* const attrs[]", "attrs")]
    {
        if items.is_empty() {
            call_args.push("nullptr".to_string());
        } else {
            packs.push(format!("{decl} = {{{}}};", items.join(", ")));
            call_args.push(var.to_string());
        }
    }
    call_args.push(stream);
    (packs, call_args)
}

/// Handlers per glue TU. XLA's FFI binding templates make each handler
/// costly to compile, so a library of hundreds in one TU would take longer
/// than any kernel source; in parts of this size they compile in parallel
/// (each part pays for parsing XLA's headers once).
pub(crate) const HANDLERS_PER_GLUE: usize = 64;

/// Resolves the glue TUs of a library: one handler per function (and
/// template instance), in the library's order, [`HANDLERS_PER_GLUE`] to a
/// part; each part has the structs its handlers decode. At least one part
/// (the first also defines the FFI API version symbol).
pub(crate) fn glue_views(library: &Library) -> Vec<GlueView> {
    // A native kernel's handler is in its source's TU.
    let kernels: Vec<Kernel> =
        library.functions.iter().filter(|f| f.binary.is_none() && f.native.is_none()).flat_map(Kernel::all).collect();
    let chunks: Vec<&[Kernel]> =
        if kernels.is_empty() { vec![&[]] } else { kernels.chunks(HANDLERS_PER_GLUE).collect() };
    let parts = chunks.len();
    chunks
        .into_iter()
        .enumerate()
        .map(|(k, chunk)| {
            let mut structs: Vec<StructView> = Vec::new();
            let mut seen = BTreeSet::new();
            for u in chunk {
                for p in &u.f.params {
                    if let Token::Record { ty, .. } = &p.token
                        && seen.insert(ty.mirror.as_str())
                    {
                        structs.push(struct_view(ty));
                    }
                }
            }
            GlueView {
                library: library.name.clone(),
                part: k + 1,
                parts,
                api_symbol: ffi_api_symbol(&library.name),
                structs,
                handlers: chunk.iter().map(handler_view).collect(),
            }
        })
        .collect()
}
