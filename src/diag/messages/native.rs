//! Kernels written against XLA FFI's own types, and what kernels return.

use super::q;

pub(crate) fn unknown_return(func: &str, ty: &str) -> String {
    let (func, ty) = (q(func), q(ty));
    format!("'{func}' returns `{ty}`, which begen does not know: the generated handler would discard it")
}

pub(crate) const HINT_RETURN: &str = "return `void`, `BE::Status` (an error with its code), `xla::ffi::Error` or \
     `xla::ffi::ErrorOr<T>`; a value the caller needs is an output tensor";

pub(crate) fn native_consts(func: &str) -> String {
    let func = q(func);
    format!("'{func}' takes XLA FFI parameter types: a template of them is not instantiated by `const.` tokens")
}

pub(crate) const HINT_NATIVE_CONSTS: &str =
    "annotate a non-template function with XLA FFI parameter types, or take `BE::Tensor`s";

pub(crate) fn state_without_instantiate(func: &str) -> String {
    let func = q(func);
    format!("'{func}' takes per-executable state, but no function creates it")
}

pub(crate) const HINT_INSTANTIATE: &str = "name the function that creates the state in begen.yaml: \
     `functions: {kernel: {instantiate: make_state}}`, where `ffi::ErrorOr<std::unique_ptr<T>> make_state()` \
     and the kernel takes `T*`";

pub(crate) fn bad_instantiate(name: &str) -> String {
    let name = q(name);
    format!("`instantiate: {name}` is not a C++ identifier: it names a function of the kernel's source")
}

pub(crate) fn instantiate_without_state(func: &str, name: &str) -> String {
    let (func, name) = (q(func), q(name));
    format!("`instantiate: {name}` is given for '{func}', which takes no state (a `T*` parameter of XLA FFI types)")
}

pub(crate) fn be_state_without_instantiate(func: &str) -> String {
    let func = q(func);
    format!(
        "'{func}' takes per-executable state (a non-const `T&` parameter), but begen.yaml names no function \
         that creates it"
    )
}

pub(crate) fn be_instantiate_without_state(func: &str, name: &str) -> String {
    let (func, name) = (q(func), q(name));
    format!(
        "`instantiate: {name}` is given for '{func}', which takes no state: the state is a parameter `T& state`, \
         neither by value nor by pointer"
    )
}

pub(crate) fn state_in_command_buffer(func: &str) -> String {
    let func = q(func);
    format!(
        "`command_buffer: true` is given for '{func}', which keeps a state per device: each device's state is made \
         on that device's first call, which a CUDA graph capture cannot run"
    )
}

pub(crate) const HINT_STATE_COMMAND_BUFFER: &str =
    "leave out `command_buffer`: a kernel that keeps a state (`T& state`, a native `T*`) runs outside CUDA graphs";

pub(crate) fn second_state(func: &str, param: &str, declared: &str, state: &str, state_ty: &str) -> String {
    let (func, param, declared, state, state_ty) = (q(func), q(param), q(declared), q(state), q(state_ty));
    format!(
        "parameter '{param}' of '{func}' takes `{declared}` by non-const reference, but '{state}' (`{state_ty}&`) \
         is the kernel's state already: a kernel takes one state"
    )
}

pub(crate) fn hint_second_state(ty: &str, state: &str) -> String {
    let (ty, state) = (q(ty), q(state));
    format!(
        "an attribute is read-only: take it by const reference (`const {ty}&`) or by value (`{ty}`); the state, \
         which begen.yaml's `instantiate:` creates, is the first non-const `T&` ('{state}') alone"
    )
}

pub(crate) const LABEL_THE_STATE: &str = "the kernel's state";

pub(crate) fn native_second_state(func: &str, param: &str, declared: &str, state: &str, state_ty: &str) -> String {
    let (func, param, declared, state, state_ty) = (q(func), q(param), q(declared), q(state), q(state_ty));
    format!(
        "parameter '{param}' of '{func}' takes `{declared}`, but '{state}' (`{state_ty}*`) is the kernel's state \
         already: XLA FFI hands a handler one state"
    )
}

pub(crate) fn hint_native_second_state(state: &str) -> String {
    let state = q(state);
    format!(
        "the state that begen.yaml's `instantiate:` creates is '{state}' alone; pass anything else as a buffer \
         or an attribute (by value or `const&`)"
    )
}

pub(crate) fn hint_state_pointer(ty: &str, param: &str) -> String {
    let (ty, param) = (q(ty), q(param));
    format!(
        "per-executable state (begen.yaml's `instantiate:`) is taken as a reference, `{ty}& {param}`; data is \
         a tensor"
    )
}

pub(crate) const HINT_BE_STATE: &str = "name the function that creates the state in begen.yaml: \
     `functions: {kernel: {instantiate: make_state}}`, where `std::unique_ptr<T> make_state()` is in the kernel's \
     source and the kernel takes `T& state` (a struct attribute is taken by value or const reference)";

pub(crate) fn native_token_count(func: &str, tokens: usize, params: &[String]) -> String {
    let func = q(func);
    let names: Vec<String> = params.iter().map(|n| format!("'{}'", q(n))).collect();
    format!("'{func}' has {tokens} token(s) but {} parameter(s) with a role: {}", params.len(), names.join(", "))
}

pub(crate) const HINT_NATIVE_TOKEN_COUNT: &str = "give one token per input, output, attribute and stream, in the \
     signature's order (an `ffi::Dictionary` takes none), or write `// @BE name` alone to read every role from the types";

pub(crate) fn native_token_mismatch(func: &str, token: &str, param: &str, ty: &str) -> String {
    let (func, token, param, ty) = (q(func), q(token), q(param), q(ty));
    format!("token `{token}` does not fit parameter '{param}' of '{func}', of type `{ty}`")
}

pub(crate) const HINT_NATIVE_TOKEN_MISMATCH: &str = "a token agrees with the role the XLA FFI type gives \
     (`arg` a buffer or `ffi::RemainingArgs`, `ret` a result or `ffi::RemainingRets`, `attr.<its name>` an \
     attribute, `stream` a stream, `inout` a buffer or a result updated in place); only `arg` over a \
     `Result<...>` changes one: that result is bound as an input";

pub(crate) fn native_ret_of_buffer(func: &str, param: &str, ty: &str) -> String {
    let (func, param, ty) = (q(func), q(param), q(ty));
    format!("parameter '{param}' of '{func}' is an input buffer `{ty}`: it cannot be bound as an output (`ret`)")
}

pub(crate) const HINT_NATIVE_RET_OF_BUFFER: &str =
    "XLA hands an output as `ffi::Result<...>` (or `ffi::ResultBuffer<...>`): declare it so, or make the token `arg`";

pub(crate) fn native_mixed(func: &str, param: &str) -> String {
    let (func, param) = (q(func), q(param));
    format!(
        "parameter '{param}' of '{func}' is a `BE::Tensor`, but other parameters are XLA FFI buffers: \
         one kernel takes one kind"
    )
}

pub(crate) const HINT_NATIVE_MIXED: &str = "take `xla::ffi::AnyBuffer` (inputs) and `xla::ffi::Result<xla::ffi::AnyBuffer>` (outputs), or `BE::Tensor` throughout";

pub(crate) fn native_unknown(func: &str, param: &str, ty: &str) -> String {
    let (func, param, ty) = (q(func), q(param), q(ty));
    format!(
        "parameter '{param}' of '{func}' has type `{ty}`, which is no XLA FFI argument, result, attribute or context"
    )
}

pub(crate) const HINT_NATIVE_TYPES: &str = "XLA FFI kernels take `ffi::Buffer<ffi::F32, R>`, `ffi::AnyBuffer`, \
     `ffi::Result<...>`/`ffi::ResultBuffer<...>`, scalar attributes (`float`, `int64_t`, `bool`, ...), \
     `ffi::Span<const T>`, `std::string_view`, `ffi::Dictionary`, `cudaStream_t`/`ffi::PlatformStream<T>`";

pub(crate) fn native_unsupported(func: &str, param: &str, ty: &str, why: &str) -> String {
    let (func, param, ty) = (q(func), q(param), q(ty));
    format!("parameter '{param}' of '{func}' has type `{ty}`: {why}")
}

pub(crate) fn native_indirect(func: &str, param: &str, ty: &str) -> String {
    let (func, param, ty) = (q(func), q(param), q(ty));
    format!(
        "parameter '{param}' of '{func}' takes `{ty}` by pointer or non-const reference: XLA FFI passes it by value"
    )
}

pub(crate) const HINT_NATIVE_INDIRECT: &str = "take it by value (or `const&`), as a hand-written XLA FFI handler does";

pub(crate) fn native_unnamed(func: &str, index: usize) -> String {
    let func = q(func);
    format!("parameter {index} of '{func}' is an attribute without a name: XLA FFI attributes are found by name")
}

pub(crate) fn native_dictionary_mixed(func: &str) -> String {
    let func = q(func);
    format!(
        "'{func}' takes an `ffi::Dictionary` of all its attributes and named attributes besides, \
         which XLA does not mix"
    )
}

pub(crate) const HINT_NATIVE_DICTIONARY: &str =
    "read every attribute from the dictionary (`attrs.get<float>(\"eps\")`), or take each one as a parameter";

pub(crate) fn native_remaining_twice(func: &str, param: &str, what: &str) -> String {
    let (func, param) = (q(func), q(param));
    format!("parameter '{param}' of '{func}' takes the remaining {what} a second time: XLA binds them just once")
}

pub(crate) fn native_after_remaining(func: &str, param: &str, noun: &str, rest: &str) -> String {
    let (func, param, rest) = (q(func), q(param), q(rest));
    format!(
        "parameter '{param}' of '{func}' is an {noun} after '{rest}', which takes the remaining {noun}s: \
         XLA binds no {noun} after them"
    )
}

pub(crate) const HINT_NATIVE_REMAINING: &str = "declare `ffi::RemainingArgs` after every input buffer and \
     `ffi::RemainingRets` after every result (attributes and contexts may come anywhere), as XLA's `Bind()` requires";

pub(crate) fn native_inout_unpaired(func: &str, param: &str, side: &str, other: &str) -> String {
    let (func, param) = (q(func), q(param));
    format!("`inout` over {side} '{param}' of '{func}' has no `inout` over {other} to pair with")
}

pub(crate) const HINT_NATIVE_INOUT: &str = "an input updated in place is two parameters of a kernel with XLA \
     FFI types, the buffer and the result XLA aliases to it: write `inout` over both (the k-th input with the \
     k-th result), e.g. `// @BE Aliasing inout inout` for `(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y)`";

pub(crate) fn native_inout_dtypes(func: &str, input: &str, output: &str) -> String {
    let (func, input, output) = (q(func), q(input), q(output));
    format!(
        "'{output}' of '{func}' is aliased to '{input}' (`inout`), but their types give different dtypes: \
         XLA aliases buffers of one dtype and shape"
    )
}

// ---- `ret:like(<xs>)`: variadic outputs shaped like variadic inputs ----

pub(crate) fn rets_like_not_rets(func: &str, token: &str, param: &str) -> String {
    let (func, token, param) = (q(func), q(token), q(param));
    format!(
        "`{token}` is written over '{param}' of '{func}', which is not a list of outputs \
         (`BE::Tensors`, `ffi::RemainingRets`)"
    )
}

pub(crate) fn rets_like_unknown(func: &str, token: &str, name: &str, near: Option<&str>) -> String {
    let (func, token, name, more) = (q(func), q(token), q(name), super::did_you_mean(near));
    format!(
        "`{token}` names '{name}', which is not a list of inputs (`const BE::Tensors`, `ffi::RemainingArgs`) \
         of '{func}'{more}"
    )
}

pub(crate) const HINT_RETS_LIKE: &str = "write `ret:like(<xs>)` over a list of outputs (`BE::Tensors`, \
     `ffi::RemainingRets`), `<xs>` the kernel's list of inputs: one output per element of that list, each shaped \
     and typed like it";

pub(crate) fn instantiate_missing(func: &str, name: &str, near: Option<&str>) -> String {
    let (func, name) = (q(func), q(name));
    let near = super::did_you_mean(near);
    format!("`instantiate: {name}` names no function of the source of '{func}'{near}")
}

pub(crate) fn instantiate_takes_params(func: &str, name: &str, required: usize) -> String {
    let (func, name) = (q(func), q(name));
    let params = if required == 1 { "a parameter".to_string() } else { format!("{required} parameters") };
    format!("`{name}` cannot create the state of '{func}': it takes {params}, and is called without arguments")
}

pub(crate) fn instantiate_wrong_return(func: &str, name: &str, ret: &str, want: &str) -> String {
    let (func, name, ret, want) = (q(func), q(name), q(ret), q(want));
    format!("`{name}` cannot create the state of '{func}': it returns `{ret}`, where the state is made as `{want}`")
}

pub(crate) const LABEL_CREATOR: &str = "declared here";

/// The declaration a creating function needs: `ret` is what it returns.
pub(crate) fn hint_creator(ret: &str, name: &str) -> String {
    let (ret, name) = (q(ret), q(name));
    format!("declare it `{ret} {name}()` in the kernel's source (or a header it includes)")
}
