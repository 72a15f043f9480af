//! The view model of the C++ wrappers: every decision about the generated
//! handlers, made in Rust; `templates/wrapper.cc` loops over it and prints.
//!
//! Local names in a generated handler carry the parameter's position
//! (`p0_x`, `t0_x`), so they can never clash with each other or with the
//! kernel's own parameter names.

use std::collections::BTreeSet;

use crate::model::{AttrType, Function, HalfRepr, Library, Param, Platform, Token};

use super::names::{comment_text, handler_symbol};

/// One generated wrapper translation unit (one annotated source file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrapperView {
    /// The source, relative to the root (already safe for a comment).
    pub source: String,
    /// The validated absolute path written into `#include "..."`.
    pub include_path: String,
    /// Extra standard/CUDA headers the handlers need, e.g. `<complex>`.
    pub includes: Vec<String>,
    /// CUDA sources: the handlers are host code, so they sit inside
    /// `#if !defined(__CUDA_ARCH__)`. nvcc parses a `.cu` file once per GPU
    /// architecture for the device; without the guard each of those passes
    /// would parse XLA's FFI headers too (measured: 12.3 s -> 7.0 s for one
    /// TU built for four architectures).
    pub host_only: bool,
    pub handlers: Vec<HandlerView>,
}

/// One XLA FFI handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandlerView {
    /// The kernel's C++ name (a checked identifier): called, and quoted in
    /// error messages.
    pub function: String,
    /// The canonical arg_spec, for the comment above the handler.
    pub arg_spec: String,
    /// The exported symbol, `begen_<library>_<function>`.
    pub symbol: String,
    /// The static function XLA's binding calls.
    pub impl_name: String,
    /// Parameters of `impl_name`, in binding order.
    pub impl_params: Vec<String>,
    /// `.Ctx<...>()`, `.Arg<...>()`, `.Ret<...>()`, `.Attr<...>("name")`,
    /// in binding order (stream, inputs, outputs, attributes).
    pub bindings: Vec<String>,
    /// Statements before the `try`: validation that returns an error.
    pub checks: Vec<String>,
    /// Statements inside the `try`, before the call: tensor views and
    /// converted attributes.
    pub prepare: Vec<String>,
    /// The expressions passed to the kernel, in its parameter order.
    pub call_args: Vec<String>,
    /// `, {xla::ffi::Traits::kCmdBufferCompatible}` or empty.
    pub traits: String,
}

/// The C++ pieces of one parameter at position `i`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParamCpp {
    /// Binding line, e.g. `.Arg<xla::ffi::AnyBuffer>()`.
    pub binding: String,
    /// The handler parameter that receives it, e.g. `xla::ffi::AnyBuffer p0_x`.
    pub impl_param: String,
    pub checks: Vec<String>,
    pub prepare: Vec<String>,
    /// What the kernel receives, e.g. `t0_x`.
    pub call_arg: String,
}

/// Resolves one parameter (position `i` in the signature of `function`).
pub fn param_cpp(function: &str, i: usize, p: &Param) -> ParamCpp {
    let name = &p.name;
    match &p.token {
        Token::Stream => ParamCpp {
            binding: ".Ctx<xla::ffi::PlatformStream<cudaStream_t>>()".into(),
            impl_param: format!("cudaStream_t p{i}_{name}"),
            checks: vec![],
            prepare: vec![],
            call_arg: format!("begen::rt::stream_handle(p{i}_{name})"),
        },
        Token::Arg | Token::Ret => {
            let is_ret = p.token == Token::Ret;
            let buf = format!("p{i}_{name}");
            // A result is reached through `->`, an argument directly.
            let access = if is_ret { format!("{buf}->") } else { format!("{buf}.") };
            let dtype = format!("d{i}_{name}");
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
                    format!("BE::DType {dtype};"),
                    format!(
                        "if (!begen::rt::dtype_from_xla({access}element_type(), {dtype})) \
                         return begen::rt::unsupported_dtype(\"{function}\", \"{name}\", \
                         {access}element_type());"
                    ),
                    // A view holds at most BE::kMaxDim extents; the
                    // constructor would throw too, but this names the parameter.
                    format!(
                        "if ({access}dimensions().size() > static_cast<size_t>(BE::kMaxDim)) \
                         return begen::rt::rank_too_high(\"{function}\", \"{name}\", \
                         {access}dimensions().size());"
                    ),
                ],
                // Not const even for inputs: a kernel bound by an explicit
                // arg_spec may take `BE::Tensor&` for an input.
                prepare: vec![format!(
                    "BE::Tensor {view}({access}untyped_data(), \
                     {access}dimensions().begin(), \
                     static_cast<int>({access}dimensions().size()), {dtype});"
                )],
                call_arg: view,
            }
        }
        Token::Attr { ty, .. } => attr_cpp(function, i, p, *ty),
    }
}

fn attr_cpp(function: &str, i: usize, p: &Param, ty: AttrType) -> ParamCpp {
    let name = &p.name;
    let raw = format!("p{i}_{name}");
    match ty {
        AttrType::Complex64 | AttrType::Complex128 => {
            let part = if ty == AttrType::Complex64 { "float" } else { "double" };
            let value = format!("v{i}_{name}");
            ParamCpp {
                binding: format!(".Attr<xla::ffi::Span<const {part}>>(\"{name}\")"),
                impl_param: format!("xla::ffi::Span<const {part}> {raw}"),
                checks: vec![format!(
                    "if ({raw}.size() != 2) \
                     return begen::rt::bad_complex_attr(\"{function}\", \"{name}\", {raw}.size());"
                )],
                prepare: vec![format!(
                    "const std::complex<{part}> {value}({raw}[0], {raw}[1]);"
                )],
                call_arg: value,
            }
        }
        AttrType::Float16 | AttrType::BFloat16 => {
            let binding = format!(".Attr<uint16_t>(\"{name}\")");
            let impl_param = format!("uint16_t {raw}");
            // The kernel may take the CUDA type itself: rebuild it from the
            // bits through CUDA's raw struct (no arithmetic, no aliasing).
            let cuda = match p.half_repr.unwrap_or(HalfRepr::Bits) {
                HalfRepr::Bits => None,
                HalfRepr::CudaHalf => Some(("__half_raw", "__half")),
                HalfRepr::CudaBFloat16 => Some(("__nv_bfloat16_raw", "__nv_bfloat16")),
            };
            match cuda {
                None => ParamCpp { binding, impl_param, call_arg: raw, ..Default::default() },
                Some((raw_ty, cuda_ty)) => {
                    let bits = format!("r{i}_{name}");
                    let value = format!("v{i}_{name}");
                    ParamCpp {
                        binding,
                        impl_param,
                        checks: vec![],
                        prepare: vec![
                            format!("{raw_ty} {bits};"),
                            format!("{bits}.x = {raw};"),
                            format!("const {cuda_ty} {value}({bits});"),
                        ],
                        call_arg: value,
                    }
                }
            }
        }
        _ => ParamCpp {
            binding: format!(".Attr<{}>(\"{name}\")", ty.cpp_type()),
            impl_param: format!("{} {raw}", ty.cpp_type()),
            call_arg: raw,
            ..Default::default()
        },
    }
}

/// Resolves one handler. Binding order is stream, inputs, outputs,
/// attributes (each in signature order); the call follows the signature.
pub fn handler_view(library: &Library, f: &Function) -> HandlerView {
    let params: Vec<(usize, &Param, ParamCpp)> = f
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| (i, p, param_cpp(&f.name, i, p)))
        .collect();
    let rank = |t: &Token| match t {
        Token::Stream => 0,
        Token::Arg => 1,
        Token::Ret => 2,
        Token::Attr { .. } => 3,
    };
    let mut bound: Vec<&(usize, &Param, ParamCpp)> = params.iter().collect();
    bound.sort_by_key(|(i, p, _)| (rank(&p.token), *i));
    HandlerView {
        function: f.name.clone(),
        arg_spec: f.arg_spec().iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", "),
        symbol: handler_symbol(&library.name, &f.name),
        impl_name: format!("begen_impl_{}", f.name),
        impl_params: bound.iter().map(|(_, _, c)| c.impl_param.clone()).collect(),
        bindings: bound.iter().map(|(_, _, c)| c.binding.clone()).collect(),
        checks: bound.iter().flat_map(|(_, _, c)| c.checks.clone()).collect(),
        prepare: bound.iter().flat_map(|(_, _, c)| c.prepare.clone()).collect(),
        call_args: params.iter().map(|(_, _, c)| c.call_arg.clone()).collect(),
        traits: if f.options.command_buffer {
            ", {xla::ffi::Traits::kCmdBufferCompatible}".into()
        } else {
            String::new()
        },
    }
}

/// Resolves the wrapper of one source file; `include_path` is already
/// validated.
pub fn wrapper_view(library: &Library, file: &str, include_path: String, functions: &[&Function]) -> WrapperView {
    let attr_types: BTreeSet<AttrType> =
        functions.iter().flat_map(|f| f.attrs().map(|(_, t)| t)).collect();
    let has_half = |repr: HalfRepr| {
        functions.iter().any(|f| f.params.iter().any(|p| p.half_repr == Some(repr)))
    };
    let mut includes = vec!["<cstdint>".to_string()];
    if attr_types.contains(&AttrType::Complex64) || attr_types.contains(&AttrType::Complex128) {
        includes.push("<complex>".into());
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
        includes,
        host_only: functions.iter().any(|f| f.platform == Platform::Cuda),
        handlers: functions.iter().map(|f| handler_view(library, f)).collect(),
    }
}
