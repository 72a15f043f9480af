//! The view of a native kernel's handler (a kernel declared with XLA FFI's
//! own types): generated in its source's translation unit, after the
//! source, by `templates/wrapper.cc`. Each parameter is bound as the kernel
//! declares it (`begen::native::param_t`), in signature order, and the
//! kernel is called directly.

use crate::model::{Function, NativeBind, Returns};

use super::cpp::arg_spec_text;

/// One native kernel's handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NativeView {
    /// The kernel's C++ name (a checked identifier).
    pub(crate) function: String,
    /// The canonical arg_spec, for the comment above it.
    pub(crate) arg_spec: String,
    /// The exported handler symbol.
    pub(crate) symbol: String,
    /// The namespace that holds its parameter types and call.
    pub(crate) ns: String,
    /// `using P0 = ...;` per parameter (and `R<i>` for an output).
    pub(crate) aliases: Vec<String>,
    /// The call's parameters, `P0 p0`, ...
    pub(crate) params: Vec<String>,
    /// The statement that calls the kernel and returns XLA's error.
    pub(crate) call: String,
    /// `.Arg<P0>()`, `.Attr<P1>("eps")`, ... in signature order.
    pub(crate) bindings: Vec<String>,
}

/// The handler of a native kernel `f`.
pub(crate) fn native_view(f: &Function, binds: &[NativeBind]) -> NativeView {
    let ns = format!("{}_native", f.handler);
    let mut aliases = Vec::new();
    let mut params = Vec::new();
    let mut bindings = Vec::new();
    for (i, b) in binds.iter().enumerate() {
        aliases.push(format!("using P{i} = begen::native::param_t<Fn, {i}>;"));
        params.push(format!("P{i} p{i}"));
        bindings.push(match b {
            NativeBind::Arg => format!(".Arg<{ns}::P{i}>()"),
            NativeBind::Ret => {
                aliases.push(format!("using R{i} = begen::native::result_t<P{i}>;"));
                format!(".Ret<{ns}::R{i}>()")
            }
            NativeBind::ArgResult => {
                aliases.push(format!("using R{i} = begen::native::result_t<P{i}>;"));
                format!(".Arg<{ns}::R{i}>()")
            }
            NativeBind::Attr(name) => format!(".Attr<{ns}::P{i}>(\"{name}\")"),
            NativeBind::Attrs => ".Attrs()".to_string(),
            NativeBind::Ctx => format!(".Ctx<{ns}::P{i}>()"),
            NativeBind::CudaStream => format!(".Ctx<xla::ffi::PlatformStream<{ns}::P{i}>>()"),
        });
    }
    let args: Vec<String> = (0..binds.len()).map(|i| format!("p{i}")).collect();
    let call = format!("{}({})", f.name, args.join(", "));
    let call = match f.returns {
        Returns::Void => format!("{call};\n    return xla::ffi::Error::Success();"),
        Returns::Status => format!("return begen::native::from_status({call});"),
        Returns::FfiError => format!("return {call};"),
        Returns::FfiErrorOr => format!("return begen::native::from_error_or({call});"),
    };
    NativeView {
        function: f.name.clone(),
        arg_spec: arg_spec_text(f),
        symbol: f.handler.clone(),
        ns,
        aliases,
        params,
        call,
        bindings,
    }
}
