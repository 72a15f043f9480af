//! The view models of the generated C++: every decision about the wrappers,
//! made in Rust; `templates/wrapper.cc` (one TU per annotated source) and
//! `templates/glue.cc` (one TU per library) loop over them and print.
//!
//! The code of one kernel is split in two halves that meet at an
//! `extern "C"` trampoline (see `build-support/include/begen/abi.h`):
//!
//! - the **handler**, in the library's glue TU (host C++ compiler, XLA's FFI
//!   headers parsed once per library): binding, dtype/rank/attribute
//!   checks, then the buffers packed into `begen::TensorArg`s and the
//!   attributes' addresses, and the trampoline's message turned into an
//!   `xla::ffi::Error`;
//! - the **trampoline**, in the source's own TU (the source's compiler, no
//!   XLA header): the `BE::Tensor` views, the attributes read back as their
//!   C++ types, the call in the kernel's parameter order, exceptions caught.
//!
//! Tensors are passed in binding order (inputs, then outputs), attributes in
//! signature order. Local names carry the parameter's position (`p0_x`,
//! `t0_x`), so they can never clash with each other or with the kernel's own
//! parameter names.

use std::collections::BTreeSet;

use crate::model::{AttrType, Function, HalfRepr, Library, Param, Platform, Token};

use super::names::comment_text;

/// One generated wrapper translation unit (one annotated source file): the
/// source, then one trampoline per annotated function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrapperView {
    /// The source, relative to the root (already safe for a comment).
    pub source: String,
    /// The validated path written into `#include "..."`.
    pub include_path: String,
    /// `#define NAME VALUE` before the source (a variant's defines).
    pub defines: Vec<(String, String)>,
    /// Extra standard/CUDA headers the trampolines need, e.g. `<complex>`.
    pub includes: Vec<String>,
    /// CUDA sources: the trampolines are host code, so they sit inside
    /// `#if !defined(__CUDA_ARCH__)` and nvcc's per-architecture device
    /// passes skip them.
    pub host_only: bool,
    pub trampolines: Vec<TrampolineView>,
}

/// One trampoline: `extern "C" const char* <symbol>(<params>) noexcept`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrampolineView {
    /// The kernel's C++ name (a checked identifier).
    pub function: String,
    /// The canonical arg_spec, for the comment above it.
    pub arg_spec: String,
    /// `begen_call_<library>_<function>` (hidden).
    pub symbol: String,
    /// The parameter list; a parameter the kernel does not use is unnamed.
    pub params: String,
    /// Statements inside the `try`, before the call: tensor views and
    /// converted attributes.
    pub prepare: Vec<String>,
    /// The expressions passed to the kernel, in its parameter order.
    pub call_args: Vec<String>,
}

/// The glue translation unit of a library: every XLA FFI handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlueView {
    pub library: String,
    pub handlers: Vec<HandlerView>,
}

/// One XLA FFI handler (in the glue TU).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandlerView {
    /// The kernel's C++ name: quoted in error messages.
    pub function: String,
    /// Its source, relative to the root (safe for a comment).
    pub source: String,
    /// The canonical arg_spec, for the comment above the handler.
    pub arg_spec: String,
    /// The exported symbol, `begen_<library>_<function>`.
    pub symbol: String,
    /// The trampoline it calls, `begen_call_<library>_<function>`.
    pub trampoline: String,
    /// The static function XLA's binding calls.
    pub impl_name: String,
    /// Parameters of `impl_name`, in binding order.
    pub impl_params: Vec<String>,
    /// `.Ctx<...>()`, `.Arg<...>()`, `.Ret<...>()`, `.Attr<...>("name")`,
    /// in binding order (stream, inputs, outputs, attributes).
    pub bindings: Vec<String>,
    /// Validation that returns an error.
    pub checks: Vec<String>,
    /// The arrays handed to the trampoline (`tensors`, `attrs`), declared on
    /// the stack.
    pub packs: Vec<String>,
    /// The trampoline's arguments: tensors, attributes, stream.
    pub call_args: Vec<String>,
    /// `, {xla::ffi::Traits::kCmdBufferCompatible}` or empty.
    pub traits: String,
}

/// How a parameter crosses from the handler to the trampoline.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Passed {
    /// An element of the `tensors` array: the handler's expression.
    Tensor(String),
    /// An element of the `attrs` array: the address of the value.
    Attr(String),
    /// The stream argument, as an `int64_t`.
    Stream(String),
    #[default]
    Nothing,
}

/// The C++ pieces of one parameter at position `i`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParamCpp {
    /// Binding line, e.g. `.Arg<xla::ffi::AnyBuffer>()`.
    pub binding: String,
    /// The handler parameter that receives it, e.g. `xla::ffi::AnyBuffer p0_x`.
    pub impl_param: String,
    /// Handler statements that return an error.
    pub checks: Vec<String>,
    /// What the handler passes on.
    pub passed: Passed,
    /// Trampoline statements before the call.
    pub prepare: Vec<String>,
    /// What the kernel receives, e.g. `t0_x`.
    pub call_arg: String,
}

/// Resolves one parameter (position `i` in the signature of `function`);
/// `slot` is its index in the trampoline's `t` (tensors) or `a`
/// (attributes) array.
pub fn param_cpp(function: &str, i: usize, slot: usize, p: &Param) -> ParamCpp {
    let name = &p.name;
    match &p.token {
        Token::Stream => ParamCpp {
            // The glue is host C++ without CUDA headers: the stream is an
            // opaque pointer there, an `int64_t` for the kernel.
            binding: ".Ctx<xla::ffi::PlatformStream<void*>>()".into(),
            impl_param: format!("void* p{i}_{name}"),
            passed: Passed::Stream(format!("begen::rt::stream_handle(p{i}_{name})")),
            call_arg: "begen_stream".into(),
            ..Default::default()
        },
        Token::Arg | Token::Ret => {
            let is_ret = p.token == Token::Ret;
            let buf = format!("p{i}_{name}");
            // A result is reached through `->`, an argument directly.
            let (access, buffer) =
                if is_ret { (format!("{buf}->"), format!("*{buf}")) } else { (format!("{buf}."), buf.clone()) };
            let view = format!("t{i}_{name}");
            ParamCpp {
                binding: if is_ret {
                    ".Ret<xla::ffi::AnyBuffer>()".into()
                } else {
                    ".Arg<xla::ffi::AnyBuffer>()".into()
                },
                impl_param: if is_ret {
                    format!("xla::ffi::Result<xla::ffi::AnyBuffer> {buf}")
                } else {
                    format!("xla::ffi::AnyBuffer {buf}")
                },
                checks: vec![
                    format!(
                        "if (!begen::rt::dtype_supported({access}element_type())) \
                         return begen::rt::unsupported_dtype(\"{function}\", \"{name}\", \
                         {access}element_type());"
                    ),
                    // A view holds at most BE::kMaxDim extents; the
                    // constructor would throw too, but this names the parameter.
                    format!(
                        "if (!begen::rt::rank_fits({buffer})) \
                         return begen::rt::rank_too_high(\"{function}\", \"{name}\", \
                         {access}dimensions().size());"
                    ),
                ],
                passed: Passed::Tensor(format!("begen::rt::tensor_arg({buffer})")),
                // Not const even for inputs: a kernel bound by an explicit
                // arg_spec may take `BE::Tensor&` for an input.
                prepare: vec![format!("BE::Tensor {view} = begen::tr::view(begen_t[{slot}]);")],
                call_arg: view,
            }
        }
        Token::Attr { ty, .. } => attr_cpp(function, i, slot, p, *ty),
    }
}

fn attr_cpp(function: &str, i: usize, slot: usize, p: &Param, ty: AttrType) -> ParamCpp {
    let name = &p.name;
    let raw = format!("p{i}_{name}");
    match ty {
        AttrType::Complex64 | AttrType::Complex128 => {
            let part = if ty == AttrType::Complex64 { "float" } else { "double" };
            let parts = format!("c{i}_{name}");
            let value = format!("v{i}_{name}");
            ParamCpp {
                binding: format!(".Attr<xla::ffi::Span<const {part}>>(\"{name}\")"),
                impl_param: format!("xla::ffi::Span<const {part}> {raw}"),
                checks: vec![format!(
                    "if ({raw}.size() != 2) \
                     return begen::rt::bad_complex_attr(\"{function}\", \"{name}\", {raw}.size());"
                )],
                passed: Passed::Attr(format!("{raw}.begin()")),
                prepare: vec![
                    format!("const {part}* {parts} = static_cast<const {part}*>(begen_a[{slot}]);"),
                    format!("const std::complex<{part}> {value}({parts}[0], {parts}[1]);"),
                ],
                call_arg: value,
            }
        }
        AttrType::Float16 | AttrType::BFloat16 => {
            let binding = format!(".Attr<uint16_t>(\"{name}\")");
            let impl_param = format!("uint16_t {raw}");
            let bits = format!("begen::tr::attr<uint16_t>(begen_a[{slot}])");
            // The kernel may take the CUDA type itself: rebuild it from the
            // bits through CUDA's raw struct (no arithmetic, no aliasing).
            let cuda = match p.half_repr.unwrap_or(HalfRepr::Bits) {
                HalfRepr::Bits => None,
                HalfRepr::CudaHalf => Some(("__half_raw", "__half")),
                HalfRepr::CudaBFloat16 => Some(("__nv_bfloat16_raw", "__nv_bfloat16")),
            };
            let passed = Passed::Attr(format!("&{raw}"));
            match cuda {
                None => ParamCpp { binding, impl_param, passed, call_arg: bits, ..Default::default() },
                Some((raw_ty, cuda_ty)) => {
                    let r = format!("r{i}_{name}");
                    let value = format!("v{i}_{name}");
                    ParamCpp {
                        binding,
                        impl_param,
                        checks: vec![],
                        passed,
                        prepare: vec![
                            format!("{raw_ty} {r};"),
                            format!("{r}.x = {bits};"),
                            format!("const {cuda_ty} {value}({r});"),
                        ],
                        call_arg: value,
                    }
                }
            }
        }
        _ => ParamCpp {
            binding: format!(".Attr<{}>(\"{name}\")", ty.cpp_type()),
            impl_param: format!("{} {raw}", ty.cpp_type()),
            passed: Passed::Attr(format!("&{raw}")),
            call_arg: format!("begen::tr::attr<{}>(begen_a[{slot}])", ty.cpp_type()),
            ..Default::default()
        },
    }
}

/// Binding order: stream, inputs, outputs, attributes.
fn binding_rank(t: &Token) -> u8 {
    match t {
        Token::Stream => 0,
        Token::Arg => 1,
        Token::Ret => 2,
        Token::Attr { .. } => 3,
    }
}

/// Every parameter of `f` resolved, in signature order, with its position.
/// Tensor and attribute slots follow binding order.
fn params_cpp(f: &Function) -> Vec<(usize, &Param, ParamCpp)> {
    let mut order: Vec<(usize, &Param)> = f.params.iter().enumerate().collect();
    order.sort_by_key(|(i, p)| (binding_rank(&p.token), *i));
    let mut slots = vec![0; f.params.len()];
    let (mut tensors, mut attrs) = (0, 0);
    for (i, p) in &order {
        match p.token {
            Token::Arg | Token::Ret => {
                slots[*i] = tensors;
                tensors += 1;
            }
            Token::Attr { .. } => {
                slots[*i] = attrs;
                attrs += 1;
            }
            Token::Stream => {}
        }
    }
    f.params.iter().enumerate().map(|(i, p)| (i, p, param_cpp(&f.name, i, slots[i], p))).collect()
}

fn arg_spec_text(f: &Function) -> String {
    f.arg_spec().iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", ")
}

/// Resolves one handler of the glue TU. Binding order is stream, inputs,
/// outputs, attributes (each in signature order).
pub fn handler_view(f: &Function) -> HandlerView {
    let params = params_cpp(f);
    let mut bound: Vec<&(usize, &Param, ParamCpp)> = params.iter().collect();
    bound.sort_by_key(|(i, p, _)| (binding_rank(&p.token), *i));
    let mut tensors = Vec::new();
    let mut attrs = Vec::new();
    let mut stream = "0".to_string();
    for (_, _, c) in &bound {
        match &c.passed {
            Passed::Tensor(e) => tensors.push(e.clone()),
            Passed::Attr(e) => attrs.push(e.clone()),
            Passed::Stream(e) => stream = e.clone(),
            Passed::Nothing => {}
        }
    }
    let mut packs = Vec::new();
    let mut call_args = Vec::new();
    if tensors.is_empty() {
        call_args.push("nullptr".to_string());
    } else {
        packs.push(format!("const begen::TensorArg tensors[] = {{{}}};", tensors.join(", ")));
        call_args.push("tensors".to_string());
    }
    if attrs.is_empty() {
        call_args.push("nullptr".to_string());
    } else {
        packs.push(format!("const void* const attrs[] = {{{}}};", attrs.join(", ")));
        call_args.push("attrs".to_string());
    }
    call_args.push(stream);
    HandlerView {
        function: f.name.clone(),
        source: comment_text(&f.file),
        arg_spec: arg_spec_text(f),
        symbol: f.handler.clone(),
        trampoline: f.trampoline.clone(),
        // The handler symbol is unique in the library; function names are
        // unique only within a module.
        impl_name: format!("{}_impl", f.handler),
        impl_params: bound.iter().map(|(_, _, c)| c.impl_param.clone()).collect(),
        bindings: bound.iter().map(|(_, _, c)| c.binding.clone()).collect(),
        checks: bound.iter().flat_map(|(_, _, c)| c.checks.clone()).collect(),
        packs,
        call_args,
        traits: if f.options.command_buffer {
            ", {xla::ffi::Traits::kCmdBufferCompatible}".into()
        } else {
            String::new()
        },
    }
}

/// Resolves the trampoline of one kernel: views and attributes built in
/// binding order, the call in signature order.
pub fn trampoline_view(f: &Function) -> TrampolineView {
    let params = params_cpp(f);
    let mut bound: Vec<&(usize, &Param, ParamCpp)> = params.iter().collect();
    bound.sort_by_key(|(i, p, _)| (binding_rank(&p.token), *i));
    let uses = |want: fn(&Token) -> bool| f.params.iter().any(|p| want(&p.token));
    let named = |used: bool, decl: &str, name: &str| {
        if used { format!("{decl} {name}") } else { decl.to_string() }
    };
    let params_text = [
        named(uses(|t| matches!(t, Token::Arg | Token::Ret)), "const begen::TensorArg*", "begen_t"),
        named(uses(|t| matches!(t, Token::Attr { .. })), "const void* const*", "begen_a"),
        named(uses(|t| matches!(t, Token::Stream)), "int64_t", "begen_stream"),
    ]
    .join(", ");
    TrampolineView {
        function: f.name.clone(),
        arg_spec: arg_spec_text(f),
        symbol: f.trampoline.clone(),
        params: params_text,
        prepare: bound.iter().flat_map(|(_, _, c)| c.prepare.clone()).collect(),
        call_args: params.iter().map(|(_, _, c)| c.call_arg.clone()).collect(),
    }
}

/// Resolves the wrapper of one source file; `include_path` is already
/// validated.
pub fn wrapper_view(
    file: &str,
    include_path: String,
    defines: Vec<(String, String)>,
    functions: &[&Function],
) -> WrapperView {
    let attr_types: BTreeSet<AttrType> = functions.iter().flat_map(|f| f.attrs().map(|(_, t)| t)).collect();
    let has_half = |repr: HalfRepr| functions.iter().any(|f| f.params.iter().any(|p| p.half_repr == Some(repr)));
    let mut includes = Vec::new();
    if attr_types.contains(&AttrType::Complex64) || attr_types.contains(&AttrType::Complex128) {
        includes.push("<complex>".to_string());
    }
    includes.push("<exception>".into());
    if has_half(HalfRepr::CudaHalf) {
        includes.push("<cuda_fp16.h>".into());
    }
    if has_half(HalfRepr::CudaBFloat16) {
        includes.push("<cuda_bf16.h>".into());
    }
    WrapperView {
        source: comment_text(file),
        include_path,
        defines,
        includes,
        host_only: functions.iter().any(|f| f.platform == Platform::Cuda),
        trampolines: functions.iter().map(|f| trampoline_view(f)).collect(),
    }
}

/// Resolves the glue TU of a library: one handler per function, in the
/// library's order.
pub fn glue_view(library: &Library) -> GlueView {
    GlueView { library: library.name.clone(), handlers: library.functions.iter().map(handler_view).collect() }
}
