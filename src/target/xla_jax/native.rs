//! The view of a native kernel's handler (a kernel declared with XLA FFI's
//! own types): generated in its source's translation unit, after the
//! source, by `templates/wrapper.cc`. Each parameter is bound as the kernel
//! declares it (`begen::native::param_t`), in signature order, and the
//! kernel is called directly.

use askama::Template;

use crate::emit::abi::TargetSection;
use crate::model::{Function, Native, NativeBind, Returns};

use crate::emit::abi::arg_spec_text;

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
    /// Its per-executable state, if it takes one.
    pub(crate) state: Option<NativeState>,
    /// `, {xla::ffi::Traits::kCmdBufferCompatible}` or empty, as for a
    /// typed kernel's handler.
    pub(crate) traits: String,
}

/// The traits argument of a handler's `XLA_FFI_DEFINE_HANDLER_SYMBOL`:
/// `, {xla::ffi::Traits::kCmdBufferCompatible}` where begen.yaml gives the
/// kernel `command_buffer: true`, else empty. Every kind of handler (typed,
/// binary, native) takes it from here: this module is the one all three see.
pub(crate) fn handler_traits(f: &Function) -> String {
    if f.options.command_buffer { ", {xla::ffi::Traits::kCmdBufferCompatible}".into() } else { String::new() }
}

/// The instantiate stage of a kernel with state: XLA calls the `instantiate`
/// handler once per executable and hands what it returns, the generated
/// holder of the devices' states (`begen::native::DeviceStates`), to every
/// call; the author's function makes each device's `T` on its first call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NativeState {
    /// The author's function that creates a device's state (a checked
    /// identifier).
    pub(crate) function: String,
    /// The exported instantiate handler.
    pub(crate) symbol: String,
    /// The exported functions that return the state type's `TypeId` and
    /// `TypeInfo` (what `jax.ffi.register_ffi_type` takes).
    pub(crate) type_id: String,
    pub(crate) type_info: String,
}

pub(crate) use crate::model::state_symbols;

#[derive(Template)]
#[template(path = "native.cc", escape = "none")]
struct NativeTemplate<'a> {
    natives: &'a [NativeView],
}

/// What the jax target adds to the wrapper of a source's `functions`: the
/// handlers of its native kernels, after the trampolines, and the header
/// they use.
pub(crate) fn wrapper_section(functions: &[&Function]) -> TargetSection {
    let natives: Vec<NativeView> =
        functions.iter().filter_map(|f| f.native.as_ref().map(|n| native_view(f, n))).collect();
    if natives.is_empty() {
        return TargetSection::default();
    }
    let code = NativeTemplate { natives: &natives }
        .render()
        .unwrap_or_else(|e| unreachable!("rendering into a String failed: {e}"));
    TargetSection { headers: vec!["begen/native.h".into()], code }
}

/// The handler of a native kernel `f`.
pub(crate) fn native_view(f: &Function, native: &Native) -> NativeView {
    let binds = &native.params;
    let ns = format!("{}_native", f.handler);
    let mut aliases = Vec::new();
    let mut params = Vec::new();
    let mut bindings = Vec::new();
    // Statements before the call: the state of the call's device.
    let mut prelude = String::new();
    for (i, b) in binds.iter().enumerate() {
        aliases.push(format!("using P{i} = begen::native::param_t<Fn, {i}>;"));
        if let NativeBind::State(..) = b {
            // XLA hands every device's call the one instance of the
            // executable (`states`); the device ordinal picks the kernel's
            // `T*` (`begen::native::DeviceStates`), and the call holds that
            // device's turn.
            params.push(format!("states* p{i}_all"));
            params.push(format!("int32_t p{i}_device"));
            let maker = f.options.instantiate.as_deref().unwrap_or(&f.name);
            prelude.push_str(&format!(
                "xla::ffi::Error p{i}_failure;\n    \
                 states::Device* const p{i}_here = p{i}_all->on(p{i}_device, instantiate, \"{maker}\", &p{i}_failure);\n    \
                 if (p{i}_here == nullptr) return p{i}_failure;\n    \
                 const std::lock_guard<std::mutex> p{i}_turn(p{i}_here->turn);\n    \
                 P{i} p{i} = p{i}_here->state.get();\n    "
            ));
        } else {
            params.push(format!("P{i} p{i}"));
        }
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
            NativeBind::RemainingArgs => ".RemainingArgs()".to_string(),
            NativeBind::RemainingRets => ".RemainingRets()".to_string(),
            NativeBind::CudaStream => format!(".Ctx<xla::ffi::PlatformStream<{ns}::P{i}>>()"),
            NativeBind::State(..) => {
                aliases.push(format!(
                    "static_assert(std::is_same_v<P{i}, S*>, \"the state parameter of {} takes a pointer to what {} creates\");",
                    f.name,
                    f.options.instantiate.as_deref().unwrap_or("its instantiate function")
                ));
                format!(".Ctx<xla::ffi::State<{ns}::states>>()")
            }
        });
        if let NativeBind::State(..) = b {
            bindings.push(".Ctx<xla::ffi::DeviceOrdinal>()".to_string());
        }
    }
    let args: Vec<String> = (0..binds.len()).map(|i| format!("p{i}")).collect();
    let call = format!("{}({})", f.name, args.join(", "));
    let call = match f.returns {
        Returns::Void => format!("{call};\n    return xla::ffi::Error::Success();"),
        Returns::Status => format!("return begen::native::from_status({call});"),
        Returns::FfiError => format!("return {call};"),
        Returns::FfiErrorOr => format!("return begen::native::from_error_or({call});"),
    };
    // An input updated in place reaches the kernel as the same buffer twice
    // (the generated Python passes `input_output_aliases`); a call that did
    // not alias them is refused before the kernel runs. The names are the
    // signature's identifiers.
    let checks: Vec<String> = native
        .aliases
        .iter()
        .filter(|a| [&a.input_name, &a.output_name].iter().all(|n| crate::model::is_identifier(n)))
        .map(|a| {
            format!(
                "if (!begen::native::same_buffer(p{}, p{})) return begen::native::not_aliased(\"{}\", \"{}\", \"{}\");\n    ",
                a.input, a.output, f.name, a.input_name, a.output_name
            )
        })
        .collect();
    let call = format!("{prelude}{}{call}", checks.concat());
    let state =
        f.options.instantiate.as_ref().filter(|_| binds.iter().any(|b| matches!(b, NativeBind::State(..)))).map(
            |function| {
                let (symbol, type_id, type_info) = state_symbols(&f.handler);
                NativeState { function: function.clone(), symbol, type_id, type_info }
            },
        );
    NativeView {
        state,
        function: f.name.clone(),
        arg_spec: arg_spec_text(f),
        symbol: f.handler.clone(),
        ns,
        aliases,
        params,
        call,
        bindings,
        traits: handler_traits(f),
    }
}
