//! Texts of the C++/CUDA front end: reading the kernel directory, the
//! `// @BE` annotations and their tokens, finding the annotated signature
//! (scan and parse).

use super::{q, q_list};
use crate::model::AttrType;

// ---- annotations and tokens ----

pub(crate) const ANNOTATION_IN_IF0: &str = "annotation inside `#if 0` is ignored";

pub(crate) const ANNOTATION_WITHOUT_NAME: &str = "`// @BE` must be followed by the name of the function it exports";

pub(crate) fn lookalike(word: &str) -> String {
    let word = q(word);
    format!("`{word}` is not an annotation: `@BE` must be followed by a space and a function name")
}

pub(crate) fn annotation_in_header(name: &str) -> String {
    let name = q(name);
    format!("annotation of '{name}' in a header is ignored: only sources (.cu, .cpp, .cc, .cxx) are exported")
}

pub(crate) fn annotation_in_ignored(name: &str, file: &str) -> String {
    let name = q(name);
    let file = q(file);
    format!("annotation of '{name}' in `{file}` is ignored: begen reads `.cu`, `.cpp`, `.cc` and `.cxx` sources only")
}

pub(crate) const HINT_EXTENSIONS: &str = "extensions are case-sensitive, and C (`.c`) is not compiled: rename the file";

pub(crate) const HINT_HEADER: &str = "move the annotation next to the function's definition in a source file";

pub(crate) fn invalid_function_name(name: &str) -> String {
    let name = q(name);
    format!("'{name}' is not a valid C++ identifier, so it cannot be exported")
}

pub(crate) fn invalid_param_name(func: &str, name: &str) -> String {
    let func = q(func);
    let name = q(name);
    format!("parameter '{name}' of '{func}' is not an ASCII C++ identifier, so it cannot be bound")
}

pub(crate) fn invalid_attr_name(name: &str) -> String {
    let name = q(name);
    format!("attribute name '{name}' is not a valid C++ identifier")
}

pub(crate) const HINT_IDENTIFIER: &str =
    "names are ASCII letters, digits and `_`, do not start with a digit and are not C++ keywords";

pub(crate) fn unknown_token(token: &str, near: Option<&str>) -> String {
    let token = q(token);
    let more = super::did_you_mean(near);
    format!("unknown arg_spec token `{token}`{more}")
}

pub(crate) const HINT_TOKENS: &str = "tokens are `arg`, `ret`, `stream`, `attr.<name>[:<type>]` (a type, a struct's name or \
     `<type>[]`), typed tensors \
     `arg:<dtype>[<dims>]`, `ret:...`, `inout[:...]`, `dim.<name>` and `const.<NAME>=<values>` \
     (kernix aliases `args`, `rets`, `ctx.stream`, `attrs.<name>` are accepted)";

pub(crate) fn bad_attr_type(token: &str, ty: &str) -> String {
    let empty = ty.is_empty();
    let token = q(token);
    let ty = q(ty);
    if empty {
        format!("`{token}` has no type after `:`")
    } else {
        format!("`{ty}` in `{token}` is not an attribute type")
    }
}

pub(crate) fn hint_attr_types() -> String {
    let names: Vec<&str> = AttrType::ALL.iter().map(|t| t.as_str()).collect();
    format!("attribute types are: {}", names.join(", "))
}

pub(crate) fn duplicate_stream(func: &str) -> String {
    let func = q(func);
    format!("'{func}' has more than one `stream`")
}

pub(crate) fn duplicate_attr(func: &str, name: &str) -> String {
    let func = q(func);
    let name = q(name);
    format!("'{func}' has two attributes named '{name}'")
}

pub(crate) fn stream_in_cpu(func: &str) -> String {
    let func = q(func);
    format!("'{func}' takes a CUDA stream but is in a CPU source")
}

pub(crate) const HINT_STREAM_CPU: &str =
    "move the kernel into a `.cu` file, or rename the parameter if it is an integer attribute";

pub(crate) fn duplicate_function(name: &str) -> String {
    let name = q(name);
    format!("'{name}' is exported twice")
}

pub(crate) const HINT_DUPLICATE: &str = "function names must be unique across the library (they name the FFI targets)";

pub(crate) fn no_inputs(func: &str, outputs: usize, names: &[&str]) -> String {
    let func = q(func);
    let shown: Vec<String> = names.iter().map(|n| format!("'{}'", q(n))).collect();
    let what = if names.len() == 1 {
        "is probably an input that lacks `const` (it would be handed over uninitialised)"
    } else {
        "are probably inputs that lack `const` (they would be handed over uninitialised)"
    };
    format!(
        "'{func}' has {outputs} outputs and no inputs: every `BE::Tensor` parameter is non-const; {} {what}",
        shown.join(", ")
    )
}

pub(crate) fn hint_no_inputs(func: &str, first: &str, outputs: usize) -> String {
    let (func, first) = (q(func), q(first));
    let rets = vec!["ret"; outputs].join(" ");
    format!(
        "declare an input const: `const BE::Tensor {first}`; a kernel that really has no inputs says so with its \
         tokens (`// @BE {func} {rets}`)"
    )
}

pub(crate) fn bad_attr_default(func: &str, attr: &str, value: &str, ty: &str) -> String {
    let (func, attr, value) = (q(func), q(attr), q(value));
    format!("default `{value}` of attribute '{attr}' of '{func}' is not a {ty} value")
}

pub(crate) fn attr_default_not_scalar(func: &str, attr: &str) -> String {
    let (func, attr) = (q(func), q(attr));
    format!("attribute '{attr}' of '{func}' takes no default: only scalar attributes have one")
}

pub(crate) const HINT_ATTR_DEFAULT: &str = "a default follows the attribute: `attr.eps=1e-5`, `attr.n:int32=3`, \
     `attr.on:bool=true` (a number of the attribute's type, or true/false)";

pub(crate) fn out_of_order(func: &str) -> String {
    let func = q(func);
    format!(
        "parameters of '{func}' are not in the conventional order \
         (inputs, outputs, attributes, stream); the binding follows the signature"
    )
}

// ---- finding the signature ----

pub(crate) fn nothing_follows(name: &str) -> String {
    let name = q(name);
    format!("the annotation of '{name}' is not followed by a function")
}

pub(crate) fn not_a_function(name: &str) -> String {
    let name = q(name);
    format!("the annotation of '{name}' is not followed by a function declaration")
}

pub(crate) fn syntax_error(name: &str) -> String {
    let name = q(name);
    format!("cannot parse the parameter list of '{name}'")
}

pub(crate) fn name_mismatch(name: &str, found: &str) -> String {
    let name = q(name);
    let found = q(found);
    format!("the annotation names '{name}' but the function that follows is '{found}'")
}

pub(crate) fn unknown_macro(name: &str, mac: &str) -> String {
    let name = q(name);
    let mac = q(mac);
    format!(
        "'{name}' is generated by `{mac}(...)`, but `{mac}` is not defined in this file or a local header it includes"
    )
}

pub(crate) fn hint_unknown_macro(name: &str) -> String {
    let name = q(name);
    format!(
        "define the macro in this file or in a header included with `#include \"...\"`, or give the arg_spec inline: `// @BE {name} arg ret ...`"
    )
}

pub(crate) fn macro_mismatch(name: &str, mac: &str, defined_at: &str, found: &[String]) -> String {
    let name = q(name);
    let mac = q(mac);
    let defined_at = q(defined_at);
    let found = if found.is_empty() { "no function".to_string() } else { q_list(found, "'", ", ") };
    format!("`{mac}` (defined at {defined_at}) expands to {found}, not '{name}'")
}

pub(crate) fn macro_limit(name: &str, mac: &str, limit: crate::model::decl::Limit) -> String {
    let name = q(name);
    let mac = q(mac);
    match limit {
        crate::model::decl::Limit::Depth(n) => format!(
            "`{mac}` nests macros more than {n} levels deep, where begen stops expanding: \
             the signature of '{name}' cannot be read"
        ),
        crate::model::decl::Limit::Tokens(n) => format!(
            "the expansion of `{mac}` grows past {n} tokens, where begen stops expanding: \
             the signature of '{name}' cannot be read"
        ),
    }
}

pub(crate) fn hint_explicit_tokens(name: &str) -> String {
    let name = q(name);
    format!("give the arg_spec inline (`// @BE {name} arg ret ...`), or write the function out without the macro")
}

pub(crate) fn device_only(name: &str, keyword: &str) -> String {
    let name = q(name);
    let keyword = q(keyword);
    format!("'{name}' is a `{keyword}` function: the host-side FFI wrapper cannot call it")
}

pub(crate) const HINT_DEVICE_ONLY: &str = "annotate the host function that launches the kernel";

pub(crate) fn template_function(name: &str) -> String {
    let name = q(name);
    format!("'{name}' is a template, and the arg_spec lists no `const.` values to instantiate it with")
}

pub(crate) fn hint_template(params: &[String]) -> String {
    let example: Vec<String> = params.iter().map(|p| format!("`const.{}=<v1>,<v2>`", q(p))).collect();
    format!(
        "add {} to the annotation (a type parameter takes dtypes: `const.T=float32,float64`), \
         or export a concrete function that calls it",
        example.join(" ")
    )
}

pub(crate) fn variadic(name: &str) -> String {
    let name = q(name);
    format!("'{name}' takes a variable number of arguments (`...`), which cannot be bound")
}

pub(crate) fn in_namespace(name: &str, ns: &str) -> String {
    let name = q(name);
    let ns = q(ns);
    format!("'{name}' is inside namespace `{ns}`: the generated wrapper calls exported functions at global scope")
}

pub(crate) fn not_at_file_scope(name: &str) -> String {
    let name = q(name);
    format!(
        "the annotation of '{name}' is inside a class or function body: only functions at file scope can be exported"
    )
}

pub(crate) const HINT_GLOBAL_SCOPE: &str = "move the function (or a forwarding function) out to the global namespace";

pub(crate) fn not_found(name: &str) -> String {
    let name = q(name);
    format!("'{name}' is listed in begen.yaml but its definition was not found in this file")
}

// ---- files and configuration ----

pub(crate) fn unreadable(err: &str) -> String {
    let err = q(err);
    format!("cannot read this file: {err}")
}

pub(crate) fn untracked_dependency(path: &str) -> String {
    let path = q(path);
    format!(
        "begen: warning: dependency `{path}` is not a regular file (a FIFO or a device); its contents are not tracked"
    )
}

pub(crate) fn include_not_regular(include: &str, path: &str) -> String {
    let (include, path) = (q(include), q(path));
    format!(
        "`#include \"{include}\"` names `{path}`, which is not a regular file (a FIFO or a device): \
         compiling would block reading it"
    )
}

pub(crate) const NOT_UTF8: &str = "file is not valid UTF-8; it was scanned with invalid bytes replaced";
pub(crate) const BINARY: &str = "file looks binary (it contains NUL bytes); it was not scanned";
pub(crate) const EMPTY: &str = "source file is empty";

pub(crate) fn symlink_loop(target: &str) -> String {
    let target = q(target);
    format!("symbolic link loop back to `{target}`; not followed")
}

pub(crate) fn walk_error(err: &str) -> String {
    let err = q(err);
    format!("cannot walk this path: {err}")
}
