//! Texts of check: inferring arg_specs, parameters, struct and array
//! attributes, typed contracts and constants, the library (names, modules,
//! symbols), algorithms and gradients.

use super::source::hint_attr_types;
use super::{did_you_mean, q, q_list};
use crate::model::AttrType;

// ---- inferring the arg_spec ----

/// Every `BE::Tensor` parameter is const: the arg_spec system's first two
/// lines, then how begen takes an explicit arg_spec (the annotation's
/// tokens, or begen.yaml's `sources:`), not kernix's Python dict.
pub(crate) fn no_output(func: &str) -> String {
    let func = q(func);
    format!(
        "No non-const Tensor output found in '{func}'.\n\
         Mark input Tensors with 'const' to distinguish inputs from outputs,\n\
         or give the arg_spec explicitly: `// @BE {func} arg ret ...`, or in begen.yaml \
         `sources: {{FILE: {{{func}: [arg, ret, ...]}}}}`"
    )
}

/// An explicit arg_spec without any `ret`.
pub(crate) fn no_output_explicit(func: &str) -> String {
    let func = q(func);
    format!("the arg_spec of '{func}' has no 'ret' token: a kernel needs at least one output tensor")
}

pub(crate) fn no_tensors(func: &str) -> String {
    let func = q(func);
    format!("No BE::Tensor parameters found in '{func}': cannot auto-detect its arg_spec")
}

pub(crate) const HINT_NO_TENSORS: &str =
    "inputs are `const BE::Tensor` parameters and outputs are `BE::Tensor` parameters";

// ---- parameters ----

pub(crate) fn unnamed_param(func: &str, index: usize) -> String {
    let func = q(func);
    format!("parameter {index} of '{func}' has no name, so it cannot be an attribute")
}

pub(crate) fn tensor_indirect(func: &str, param: &str) -> String {
    let func = q(func);
    let param = q(param);
    format!("tensor parameter '{param}' of '{func}' is a pointer, an array or an rvalue reference (`&&`)")
}

pub(crate) const HINT_TENSOR: &str = "take tensors as `const BE::Tensor` (inputs) or `BE::Tensor` (outputs)";

pub(crate) fn pointer_attr(func: &str, param: &str, ty: &str) -> String {
    let func = q(func);
    let param = q(param);
    let ty = q(ty);
    format!(
        "parameter '{param}' of '{func}' is a pointer or reference (`{ty}`): \
         pointer and reference types cannot be passed as XLA FFI scalar attributes"
    )
}

pub(crate) const HINT_POINTER: &str = "take the scalar by value, or pass the data as a tensor";

pub(crate) fn not_inferred(func: &str, param: &str, ty: &str) -> String {
    let func = q(func);
    let param = q(param);
    let ty = q(ty);
    format!("cannot infer the attribute type of '{param}' in '{func}': `{ty}` is not auto-inferred")
}

pub(crate) const HINT_STREAM_TYPE: &str =
    "declare the CUDA stream as `int64_t stream` (the arg_spec convention); begen casts it from XLA's stream";

pub(crate) fn hint_explicit(param: &str, ty: &str) -> String {
    let param = q(param);
    let suggestion = match ty {
        "__half" | "half" => "float16".to_string(),
        "__nv_bfloat16" => "bfloat16".to_string(),
        _ => "<type>".to_string(),
    };
    format!("use the explicit form `attr.{param}:{suggestion}` (inline after the name, or in begen.yaml)")
}

pub(crate) fn count_mismatch(func: &str, tokens: usize, params: usize, untokened: &[String]) -> String {
    let func = q(func);
    let which = if untokened.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = untokened.iter().map(|n| format!("'{}'", q(n))).collect();
        format!(": no token for {}", names.join(", "))
    };
    format!("the arg_spec of '{func}' has {tokens} tokens but its signature has {params} parameters{which}")
}

/// The fix of a token count that does not match: `dim.<name>` for the
/// parameters without a token that name a dimension of the contract.
pub(crate) fn hint_count_mismatch(dims: &[String]) -> String {
    if dims.is_empty() {
        return "give one token per parameter, in the signature's order".to_string();
    }
    let tokens: Vec<String> = dims.iter().map(|d| format!("`dim.{}`", q(d))).collect();
    format!("add {} where the parameter stands: it gives the dimension its value", tokens.join(", "))
}

pub(crate) fn token_contradicts(token: &str, param: &str, declared: &str) -> String {
    let token = q(token);
    let param = q(param);
    let declared = q(declared);
    format!("`{token}` contradicts the signature: parameter '{param}' is declared `{declared}`")
}

/// An attribute token whose name is a slip of its parameter's (`attr.alpah`
/// where the signature has `alpha`): `fixed` is the token as meant.
pub(crate) fn attr_misspelled(token: &str, func: &str, param: &str, fixed: &str) -> String {
    let (token, func, param) = (q(token), q(func), q(param));
    let more = did_you_mean(Some(fixed));
    format!("`{token}` names no parameter of '{func}': the parameter in its place is '{param}'{more}")
}

pub(crate) const LABEL_DECLARED_HERE: &str = "declared here";

pub(crate) fn bare_attr_without_signature(func: &str, name: &str) -> String {
    let func = q(func);
    let name = q(name);
    format!("cannot infer the type of `attr.{name}`: the signature of '{func}' is not available")
}

// ---- struct and array attributes ----

pub(crate) fn bad_array_type(token: &str, ty: &str, near: Option<&str>) -> String {
    let token = q(token);
    let ty = q(ty);
    let more = did_you_mean(near);
    format!("`{ty}` in `{token}` is not an array attribute type{more}: an array attribute is 1-D, written `<type>[]`")
}

pub(crate) fn unknown_struct(func: &str, attr: &str, ty: &str, file: &str, near: Option<&str>) -> String {
    let func = q(func);
    let attr = q(attr);
    let ty = q(ty);
    let file = q(file);
    let more = did_you_mean(near);
    format!(
        "`{ty}`, the type of attribute '{attr}' of '{func}', is neither an attribute type nor a struct defined at \
         file scope in `{file}` or a local header it includes{more}"
    )
}

pub(crate) fn hint_unknown_struct() -> String {
    format!(
        "{}; a struct attribute names a struct of scalar members defined in the source or a local header \
         (`struct Affine {{ float scale; float shift; }};`)",
        hint_attr_types()
    )
}

pub(crate) fn label_struct_used(func: &str, attr: &str) -> String {
    let func = q(func);
    let attr = q(attr);
    format!("attribute '{attr}' of '{func}' has this type")
}

pub(crate) fn struct_problem(name: &str, problem: crate::model::decl::StructProblem) -> String {
    let name = q(name);
    use crate::model::decl::StructProblem as P;
    match problem {
        P::Template => format!("struct '{name}' is a class template: a struct attribute takes a plain struct"),
        P::BaseClass => {
            format!("struct '{name}' has a base class: a struct attribute's members must all be its own")
        }
        P::Syntax => format!("begen cannot read the definition of struct '{name}' here"),
        P::Conditional => {
            format!("members of struct '{name}' are inside `#if`/`#ifdef`: begen cannot tell which are compiled")
        }
        P::Anonymous => format!(
            "struct '{name}' has an anonymous struct or union member: a struct attribute's members are named scalars"
        ),
    }
}

pub(crate) fn struct_empty(name: &str) -> String {
    let name = q(name);
    format!("struct '{name}' has no data members: a struct attribute needs at least one")
}

pub(crate) fn member_type(name: &str, member: &str, ty: &str) -> String {
    let name = q(name);
    let member = q(member);
    let ty = q(ty);
    format!("member '{member}' of struct '{name}' has type `{ty}`, which is not a scalar attribute type")
}

pub(crate) const HINT_MEMBER_TYPES: &str = "the members of a struct attribute are scalars: `bool`, `int8_t` ... `int64_t`, \
     `uint8_t` ... `uint64_t`, `float`, `double` (or the C spellings `int`, `unsigned char`, ...), `__half` or \
     `__nv_bfloat16`";

pub(crate) fn member_nested(name: &str, member: &str, ty: &str) -> String {
    let name = q(name);
    let member = q(member);
    let ty = q(ty);
    format!("member '{member}' of struct '{name}' is a struct (`{ty}`): nested structs are not bound as attributes")
}

pub(crate) fn hint_member_nested(name: &str) -> String {
    let name = q(name);
    format!("put the nested struct's members into '{name}' itself, or pass it as an attribute of its own")
}

pub(crate) fn member_indirect(name: &str, member: &str, declared: &str) -> String {
    let name = q(name);
    let member = q(member);
    let declared = q(declared);
    format!(
        "member '{member}' of struct '{name}' is a pointer, reference or array (`{declared}`): the members of a \
         struct attribute are scalars"
    )
}

pub(crate) const HINT_MEMBER_ARRAY: &str = "pass an array as an attribute of its own (`attr.w:float32[]`, taken as \
     `BE::Span<const float>`), and data as a tensor";

pub(crate) fn member_bitfield(name: &str, member: &str) -> String {
    let name = q(name);
    let member = q(member);
    format!("member '{member}' of struct '{name}' is a bit-field: XLA decodes whole scalars only")
}

pub(crate) fn member_complex(name: &str, member: &str, ty: &str) -> String {
    let name = q(name);
    let member = q(member);
    let ty = q(ty);
    format!("member '{member}' of struct '{name}' is complex (`{ty}`): XLA has no complex scalar attributes")
}

pub(crate) const HINT_MEMBER_COMPLEX: &str =
    "split it into a real and an imaginary member, or pass it as an attribute of its own (`attr.c:complex64`)";

pub(crate) fn member_access(name: &str, member: &str, access: &str) -> String {
    let name = q(name);
    let member = q(member);
    let access = q(access);
    format!(
        "member '{member}' of struct '{name}' is {access}: begen builds the struct from its members (aggregate \
         initialisation), so every member must be public"
    )
}

pub(crate) fn member_name(name: &str, member: &str) -> String {
    let name = q(name);
    let member = q(member);
    format!("member '{member}' of struct '{name}' is not an ASCII identifier, so it cannot be a dictionary key")
}

pub(crate) fn struct_by_mutable_reference(func: &str, param: &str, declared: &str) -> String {
    let func = q(func);
    let param = q(param);
    let declared = q(declared);
    format!("parameter '{param}' of '{func}' takes `{declared}` by non-const reference: an attribute is read-only")
}

pub(crate) fn hint_struct_by_value(ty: &str) -> String {
    let ty = q(ty);
    format!("take it by value (`{ty}`) or by const reference (`const {ty}&`)")
}

pub(crate) fn array_mutable(func: &str, param: &str, declared: &str) -> String {
    let func = q(func);
    let param = q(param);
    let declared = q(declared);
    format!("parameter '{param}' of '{func}' is `{declared}`: an array attribute is read-only")
}

pub(crate) fn hint_array_const(span: &str, element: &str) -> String {
    let span = q(span);
    let element = q(element);
    format!("take `{span}<const {element}>`")
}

pub(crate) fn array_element(func: &str, param: &str, declared: &str, element: &str) -> String {
    let func = q(func);
    let param = q(param);
    let declared = q(declared);
    let element = q(element);
    format!("parameter '{param}' of '{func}' is `{declared}`: `{element}` is not an attribute element type")
}

pub(crate) const HINT_ARRAY_ELEMENTS: &str = "an array attribute's elements are `bool`, `int8_t` ... `int64_t`, `uint8_t` \
     ... `uint64_t`, `float`, `double`, `std::complex<float>`, `std::complex<double>`, `__half` or \
     `__nv_bfloat16` (or the C spellings `int`, `unsigned char`, ...)";

pub(crate) fn array_indirect(func: &str, param: &str, declared: &str) -> String {
    let func = q(func);
    let param = q(param);
    let declared = q(declared);
    format!(
        "parameter '{param}' of '{func}' takes an array attribute by pointer or non-const reference (`{declared}`): \
         an attribute is read-only"
    )
}

pub(crate) const HINT_ARRAY_BY_VALUE: &str = "take a span by value (`BE::Span<const float> w`) or a vector by const \
     reference (`const std::vector<float>& w`)";

pub(crate) fn array_unqualified(func: &str, param: &str, declared: &str) -> String {
    let func = q(func);
    let param = q(param);
    let declared = q(declared);
    format!("parameter '{param}' of '{func}' is `{declared}`: begen cannot tell which `Span` that is")
}

pub(crate) const HINT_ARRAY_SPANS: &str = "write the namespace: `BE::Span<const T>` (begen's `brainevent/common.h`) or \
     `xla::ffi::Span<const T>` (XLA's `xla/ffi/api/ffi.h`)";

pub(crate) fn array_without_signature(func: &str, name: &str, ty: &str) -> String {
    let func = q(func);
    let name = q(name);
    let ty = q(ty);
    format!(
        "`attr.{name}:{ty}[]` needs the signature of '{func}': the kernel may take the array as a span or a \
         vector, and begen cannot see which"
    )
}

// ---- typed tensors, dimensions, constants ----

pub(crate) fn bad_dtype(token: &str, word: &str) -> String {
    let token = q(token);
    let word = q(word);
    format!("`{word}` in `{token}` is neither an element type nor a template parameter name")
}

pub(crate) fn hint_dtypes() -> String {
    let names: Vec<&str> = AttrType::ALL.iter().map(|t| t.as_str()).collect();
    format!("element types are: {}; or a type listed as `const.T=float32,float64`", names.join(", "))
}

/// [`hint_dtypes`] for a mistyped element type `word`, led by the closest
/// element type's name where one is close (`flaot32`: `float32`).
pub(crate) fn hint_dtypes_for(word: &str) -> String {
    match crate::diag::suggest::closest(word, AttrType::ALL.iter().map(|t| t.as_str())) {
        Some(near) => format!("did you mean `{near}`? {}", hint_dtypes()),
        None => hint_dtypes(),
    }
}

pub(crate) fn bad_shape(token: &str, why: &str) -> String {
    let token = q(token);
    let why = q(why);
    format!("the shape in `{token}` does not read: {why}")
}

pub(crate) const HINT_SHAPE: &str = "write a shape as `[n, k]` (names or non-negative integers, `[]` for a 0-d tensor): \
     `arg:float32[n, k]`; `[..., n]` or `[rows..., n]` for any leading dimensions";

pub(crate) fn bad_dim_name(token: &str) -> String {
    let token = q(token);
    format!("`{token}`: a dimension's name must be a C++ identifier")
}

pub(crate) fn bad_dim_type(token: &str, ty: &str, near: Option<&str>) -> String {
    let token = q(token);
    let ty = q(ty);
    let more = did_you_mean(near);
    format!("`{token}`: `{ty}` is not an integer type, so no dimension fits it{more}")
}

pub(crate) fn bad_const(token: &str, why: &str) -> String {
    let token = q(token);
    let why = q(why);
    format!("`{token}` is not a constant: {why}")
}

pub(crate) fn bad_const_value(token: &str, value: &str) -> String {
    let token = q(token);
    let value = q(value);
    format!("`{value}` in `{token}` is not a literal: values are integers, `true`, `false` or element types")
}

pub(crate) fn rank_too_high(func: &str, param: &str) -> String {
    let func = q(func);
    let param = q(param);
    format!("the shape of '{param}' in '{func}' has more than 8 dimensions, the most a tensor view holds")
}

pub(crate) fn rest_ambiguous(func: &str, param: &str, named: &str) -> String {
    let func = q(func);
    let param = q(param);
    let named = q(named);
    format!(
        "the shape of '{param}' in '{func}' starts with `...`, but '{func}' also names its leading dimensions \
         (`{named}...`): which ones `...` means is ambiguous"
    )
}

pub(crate) const HINT_REST_AMBIGUOUS: &str =
    "name every rest of the kernel (`[rows..., n]`), or write `...` alone: one kernel's `...` are one shape";

pub(crate) fn rest_named_like_dim(func: &str, name: &str) -> String {
    let func = q(func);
    let name = q(name);
    format!(
        "'{name}' in '{func}' names both leading dimensions (`{name}...`) and one dimension (`{name}`): \
         one name, one meaning"
    )
}

pub(crate) const HINT_REST_NAMED_LIKE_DIM: &str =
    "rename one of them: `[rows..., n]` names the leading dimensions `rows` and the last `n`";

pub(crate) fn unknown_dim(func: &str, dim: &str, near: Option<&str>) -> String {
    let func = q(func);
    let dim = q(dim);
    let more = did_you_mean(near.map(|n| format!("dim.{n}")).as_deref());
    format!("`dim.{dim}` of '{func}' names a dimension that no tensor of '{func}' has{more}")
}

pub(crate) const HINT_UNKNOWN_DIM: &str =
    "name the dimension in a typed tensor's shape, e.g. `arg:float32[n]` for `dim.n`";

pub(crate) fn dim_param_type(func: &str, param: &str, ty: &str) -> String {
    let func = q(func);
    let param = q(param);
    let ty = q(ty);
    format!("parameter '{param}' of '{func}' receives a dimension, but `{ty}` is not an integer type")
}

pub(crate) fn untyped_pointer(func: &str, param: &str, declared: &str) -> String {
    let func = q(func);
    let param = q(param);
    let declared = q(declared);
    format!(
        "tensor parameter '{param}' of '{func}' is a pointer (`{declared}`), \
         and its token gives no element type for it"
    )
}

pub(crate) fn hint_pointer_scalar(dtype: &str) -> String {
    let dtype = q(dtype);
    format!(
        "take the scalar by value, or bind the data as a typed tensor: `arg:{dtype}[n]` (`ret:`/`inout:` for outputs)"
    )
}

pub(crate) fn hint_pointer_tensor(param: &str, dtype: &str) -> String {
    let param = q(param);
    let dtype = q(dtype);
    format!("give the element type and shape, e.g. `arg:{dtype}[n]` (or `ret:`/`inout:`) for '{param}'")
}

pub(crate) fn pointer_dtype(func: &str, param: &str, declared: &str, dtype: &str) -> String {
    let func = q(func);
    let param = q(param);
    let declared = q(declared);
    let dtype = q(dtype);
    format!("parameter '{param}' of '{func}' is `{declared}`, which does not point to {dtype} elements")
}

pub(crate) fn inout_on_const(func: &str, param: &str) -> String {
    let func = q(func);
    let param = q(param);
    format!("`inout` parameter '{param}' of '{func}' is declared const, so the kernel cannot update it in place")
}

pub(crate) const HINT_INOUT: &str = "drop the `const`, or make the parameter an input (`arg`)";

pub(crate) fn unknown_dtype_param(func: &str, param: &str, name: &str) -> String {
    let func = q(func);
    let param = q(param);
    let name = q(name);
    format!("the element type `{name}` of '{param}' in '{func}' is no `const.{name}=...` type parameter")
}

pub(crate) fn const_not_template(func: &str, name: &str) -> String {
    let func = q(func);
    let name = q(name);
    format!("`const.{name}` is given, but '{func}' is not a template")
}

pub(crate) fn const_unknown(func: &str, name: &str, params: &[String]) -> String {
    let func = q(func);
    let name = q(name);
    format!("`const.{name}`: '{func}' has no template parameter '{name}' (it has {})", q_list(params, "", ", "))
}

pub(crate) fn const_missing(func: &str, name: &str) -> String {
    let func = q(func);
    let name = q(name);
    format!("template parameter '{name}' of '{func}' has no `const.{name}=...` values")
}

pub(crate) fn const_unsupported(func: &str, name: &str) -> String {
    let func = q(func);
    let name = q(name);
    format!(
        "template parameter '{name}' of '{func}' is a pack or a template template parameter: begen cannot instantiate it"
    )
}

pub(crate) fn const_value_type(func: &str, name: &str, value: &str, ty: &str) -> String {
    let func = q(func);
    let name = q(name);
    let value = q(value);
    let ty = q(ty);
    format!("`{value}` is not a value of template parameter '{name}' of '{func}' (declared `{ty}`)")
}

pub(crate) fn const_param_type(func: &str, name: &str, ty: &str) -> String {
    let func = q(func);
    let name = q(name);
    let ty = q(ty);
    format!("template parameter '{name}' of '{func}' has type `{ty}`, which is not an integer or bool type")
}

pub(crate) fn const_type_value(func: &str, name: &str, value: &str) -> String {
    let func = q(func);
    let name = q(name);
    let value = q(value);
    format!("`{value}` is not an element type, but '{name}' of '{func}' is a type parameter")
}

pub(crate) fn const_duplicate(func: &str, name: &str, value: &str) -> String {
    let func = q(func);
    let name = q(name);
    let value = q(value);
    format!("`const.{name}` of '{func}' lists `{value}` twice")
}

pub(crate) fn const_twice(func: &str, name: &str) -> String {
    let func = q(func);
    let name = q(name);
    format!("'{func}' has two `const.{name}` tokens")
}

pub(crate) fn const_name_is_dtype(name: &str) -> String {
    let name = q(name);
    format!("`const.{name}`: a template parameter named like an element type cannot be told apart from it")
}

pub(crate) fn too_many_instances(func: &str, n: usize) -> String {
    let func = q(func);
    format!("the `const.` values of '{func}' make {n} instantiations; begen builds at most 256 per function")
}

pub(crate) fn const_without_signature(func: &str) -> String {
    let func = q(func);
    format!("'{func}' has `const.` tokens, but its signature is not available to instantiate")
}

pub(crate) fn dim_without_signature(func: &str, name: &str) -> String {
    let func = q(func);
    let name = q(name);
    format!("cannot infer the type of `dim.{name}`: the signature of '{func}' is not available")
}

// ---- the library: names, modules, symbols ----

pub(crate) fn duplicate_in_module(name: &str, module: &str) -> String {
    let name = q(name);
    let module = q(module);
    format!("'{name}' is exported twice in module `{module}`")
}

pub(crate) const LABEL_FIRST_EXPORTED: &str = "first exported here";
pub(crate) const LABEL_EXPORTED_AGAIN: &str = "exported again here";

pub(crate) const HINT_DUPLICATE_MODULES: &str = "function names must be unique within a module (they name the FFI targets \
     `<module>.<function>`): rename one, or put the files in different modules (`modules:` in begen.yaml)";

pub(crate) fn bad_module_name(module: &str) -> String {
    let module = q(module);
    format!("module name `{module}` is not usable: module names are C++ identifiers")
}

pub(crate) fn bad_derived_module_name(module: &str, file: &str) -> String {
    let module = q(module);
    let file = q(file);
    format!("`per-file` names the module of `{file}` `{module}`, which is not a C++ identifier")
}

pub(crate) const HINT_MODULE_NAME: &str =
    "give the file a module name under `modules: names:` (letters, digits and `_`, not starting with a digit)";

pub(crate) fn module_collision(module: &str, file: &str, other: &str) -> String {
    let module = q(module);
    let file = q(file);
    let other = q(other);
    format!("`per-file` puts `{file}` in module `{module}`, which `{other}` is in already")
}

pub(crate) const HINT_MODULE_COLLISION: &str =
    "give one of them another name under `modules: names:` (a name given there explicitly may be shared on purpose)";

pub(crate) fn modules_entry_missing(path: &str, near: Option<&str>) -> String {
    let (path, more) = (q(path), did_you_mean(near));
    format!("begen.yaml names a module for `{path}`, which is not a source file or directory under the root{more}")
}

pub(crate) fn bad_library_name(name: &str, from: &str) -> String {
    let name = q(name);
    let from = q(from);
    format!(
        "the library name `{name}` (the {from}) is not usable: it names `lib{name}.so` and the Python module \
         `{name}`, so it must be a C++ identifier and not a Python keyword"
    )
}

pub(crate) fn library_shadows_module(name: &str, from: &str) -> String {
    let name = q(name);
    let from = q(from);
    format!(
        "the library name `{name}` (the {from}) is not usable: the generated Python module `{name}` and the \
         module `{name}` that it or JAX imports (from Python's standard library, or jax, jaxlib, numpy, ml_dtypes, \
         JAX's other dependencies and the modules it looks for at start-up: `jax_plugins`, its GPU and TPU plugins) \
         would hide one another"
    )
}

pub(crate) fn include_dir_missing(dir: &str) -> String {
    let dir = q(dir);
    format!(
        "`include_dirs:` lists `{dir}`, which is not a directory (a relative path is read from the kernel \
         directory, an absolute one as it is)"
    )
}

pub(crate) fn include_option_missing(dir: &str) -> String {
    let dir = q(dir);
    format!(
        "the include directory `-I {dir}` is not a directory (a relative one is read from the folder begen runs in; \
         build.rs: the package's folder)"
    )
}

pub(crate) const HINT_LIBRARY_NAME: &str =
    "pass --name NAME (`.name(\"...\")` in build.rs) or set `name:` in begen.yaml";

pub(crate) fn bad_prefix(prefix: &str) -> String {
    let prefix = q(prefix);
    format!("prefix `{prefix}` must be C++ identifiers joined by dots, e.g. `mylib.ops`")
}

pub(crate) fn symbol_collision(symbol: &str, name: &str, other: &str) -> String {
    let symbol = q(symbol);
    let name = q(name);
    let other = q(other);
    format!("the generated symbol `{symbol}` of '{name}' is also the symbol of '{other}'")
}

pub(crate) fn label_is_here(name: &str) -> String {
    let name = q(name);
    format!("'{name}' is here")
}

pub(crate) fn py_name_twins(what: &str, name: &str, py: &str, other: &str, within: &str) -> String {
    let (name, py, other, within) = (q(name), q(py), q(other), q(within));
    format!(
        "{what} '{name}' cannot keep its name in Python (a keyword or a name the generated module uses), and the \
         name it would get is {what} '{other}''s own (in '{within}'): begen would call it `{py}`, which no one \
         could tell from '{other}'"
    )
}

pub(crate) const HINT_PY_NAME_TWINS: &str =
    "rename one of the two (the Python name of a C++ name Python cannot use is that name with `_` appended)";

pub(crate) const HINT_SYMBOL_COLLISION: &str = "rename the library, a module or one of the functions";

pub(crate) fn unincludable_path(path: &str, why: &str) -> String {
    let path = q(path);
    let why = q(why);
    format!("`{path}` cannot be #included by the generated wrapper because {why}")
}

pub(crate) const PATH_NOT_UTF8: &str = "it is not valid UTF-8";

pub(crate) fn path_contains(c: char) -> String {
    format!("it contains {c:?}")
}

pub(crate) const HINT_UNINCLUDABLE: &str = "rename the file or a directory above it";

pub(crate) fn skipping_generated(file: &str) -> String {
    let file = q(file);
    format!("skipping `{file}`: it is a wrapper begen generated, not a kernel source")
}

pub(crate) const HINT_GENERATED: &str = "generate into a directory outside the kernel directory, or delete it";

pub(crate) fn skipping_cuda(file: &str, kernels: &[String]) -> String {
    let file = q(file);
    let what = if kernels.is_empty() {
        "it is not compiled".to_string()
    } else {
        format!("its kernels {} are not built", q_list(kernels, "`", ", "))
    };
    format!("skipping CUDA source `{file}` for platform `cpu`: {what}")
}

pub(crate) const HINT_SKIPPING_CUDA: &str = "build with `--platform auto` or `cuda` (needs nvcc) to include it";

pub(crate) const NO_FUNCTIONS: &str = "no annotated function was found: the library has no kernels";

pub(crate) const HINT_NO_FUNCTIONS: &str =
    "annotate each function to export with `// @BE <name>` on the line before it";

// ---- algorithms and gradients ----

pub(crate) fn bad_algorithm_name(name: &str) -> String {
    let name = q(name);
    format!("algorithm name `{name}` is not usable: it must be an ASCII identifier and not a Python keyword")
}

pub(crate) fn algorithm_name_taken(name: &str, what: &str) -> String {
    let name = q(name);
    let what = q(what);
    format!("algorithm `{name}` would hide {what} in the Python module")
}

pub(crate) const HINT_ALGORITHM_NAME: &str =
    "an algorithm is a function at the top of the Python module: give it a name no module or function has there";

pub(crate) fn empty_algorithm(name: &str) -> String {
    let name = q(name);
    format!("algorithm `{name}` has no implementations")
}

pub(crate) fn unknown_implementation(algorithm: &str, function: &str, near: Option<&str>) -> String {
    let algorithm = q(algorithm);
    let function = q(function);
    let more = did_you_mean(near);
    format!("implementation `{function}` of algorithm `{algorithm}` is not an exported function{more}")
}

pub(crate) fn ambiguous_implementation(algorithm: &str, function: &str, modules: &[String]) -> String {
    let algorithm = q(algorithm);
    let function = q(function);
    format!(
        "implementation `{function}` of algorithm `{algorithm}` is in several modules ({}): say which, as `module.{function}`",
        q_list(modules, "`", ", ")
    )
}

pub(crate) fn implementation_twice(algorithm: &str, function: &str) -> String {
    let algorithm = q(algorithm);
    let function = q(function);
    format!("algorithm `{algorithm}` lists `{function}` twice")
}

pub(crate) fn implementations_disagree(algorithm: &str, first: &str, other: &str, difference: &str) -> String {
    let algorithm = q(algorithm);
    let first = q(first);
    let other = q(other);
    let difference = q(difference);
    format!("implementations `{first}` and `{other}` of algorithm `{algorithm}` disagree: {difference}")
}

pub(crate) const LABEL_REFERENCE_IMPLEMENTATION: &str = "compared with this implementation";

pub(crate) const HINT_IMPLEMENTATIONS: &str = "the implementations of an algorithm must have the same inputs, outputs, \
     attributes (names and types), typed contracts, constants, gradient and `shard:`/`reduce:`, so that one Python function calls any of them; \
     implementations whose inputs take other dtypes may differ in element types only, and the call chooses by its inputs' dtypes";

pub(crate) fn algorithm_not_built(name: &str) -> String {
    let name = q(name);
    format!("algorithm `{name}` has no implementation in this build (its kernels are not built for this platform)")
}

pub(crate) fn unknown_vjp(function: &str, vjp: &str, module: &str, near: Option<&str>) -> String {
    let function = q(function);
    let vjp = q(vjp);
    let module = q(module);
    let more = did_you_mean(near);
    format!("the backward kernel `{vjp}` of '{function}' is not an exported function of module `{module}`{more}")
}

pub(crate) const HINT_VJP: &str = "the backward kernel takes the forward's inputs, then one cotangent per forward output, \
     and returns one cotangent per forward input (same shapes and dtypes; an integer input's may be left out); the \
     forward's attributes are passed to it by name";

pub(crate) fn vjp_counts(
    function: &str,
    vjp: &str,
    got: (usize, usize),
    want: (usize, usize),
    integers: &[&str],
) -> String {
    // The integer inputs take no cotangent: the backward may leave them out.
    let or = if integers.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = integers.iter().map(|n| format!("'{}'", q(n))).collect();
        let (s, need) = if integers.len() == 1 { ("", "needs") } else { ("s", "need") };
        format!(", or {} leaving out integer input{s} {}, which {need} none", want.1 - integers.len(), names.join(", "))
    };
    format!(
        "the backward kernel `{vjp}` of '{function}' takes {} input(s) and returns {} output(s); it must take {} \
         (the inputs of '{function}', then one cotangent per output) and return {} (one cotangent per input{or})",
        got.0, got.1, want.0, want.1
    )
}

pub(crate) fn vjp_cotangent_count(function: &str, vjp: &str, got: usize, want: usize, residuals: &[&str]) -> String {
    let (function, vjp) = (q(function), q(vjp));
    let residuals: Vec<String> = residuals.iter().map(|r| format!("'{}'", q(r))).collect();
    let taken =
        if residuals.is_empty() { String::new() } else { format!(" beside the residual(s) {}", residuals.join(", ")) };
    format!(
        "the backward kernel `{vjp}` of '{function}' takes {got} cotangent(s){taken}, but '{function}' returns {want} \
         output(s): bound by name, an input named like an input or output of '{function}' receives it, and every \
         other input is the cotangent of the next returned output"
    )
}

pub(crate) fn residuals_without_vjp(function: &str) -> String {
    let function = q(function);
    format!("`residuals:` of '{function}' keeps outputs for a backward kernel, but '{function}' has no `vjp:`")
}

pub(crate) fn residual_not_output(function: &str, name: &str, rets: &[&str], near: Option<&str>) -> String {
    let (function, name) = (q(function), q(name));
    let rets: Vec<String> = rets.iter().map(|r| format!("'{}'", q(r))).collect();
    let near = near.map(|n| format!(" (did you mean `{}`?)", q(n))).unwrap_or_default();
    format!("residual '{name}' is not an output (`ret`) of '{function}'{near}; its outputs are {}", rets.join(", "))
}

pub(crate) fn residuals_all(function: &str) -> String {
    let function = q(function);
    format!("`residuals:` of '{function}' lists every output: the Python function would return nothing")
}

pub(crate) fn vjp_mismatch(function: &str, vjp: &str, difference: &str) -> String {
    let function = q(function);
    let vjp = q(vjp);
    let difference = q(difference);
    format!("the backward kernel `{vjp}` does not fit '{function}': {difference}")
}

pub(crate) fn unsupported_not_an_attribute(function: &str, attr: &str, near: Option<&str>) -> String {
    let function = q(function);
    let attr = q(attr);
    let more = did_you_mean(near);
    format!("`unsupported:` of '{function}' names `{attr}`, which is not one of its attributes{more}")
}

pub(crate) fn unsupported_not_scalar(function: &str, attr: &str, ty: &str) -> String {
    let function = q(function);
    let attr = q(attr);
    let ty = q(ty);
    format!("`unsupported:` of '{function}' names `{attr}`, a `{ty}` attribute: only scalar attributes list values")
}

pub(crate) fn bad_unsupported_value(function: &str, attr: &str, ty: AttrType, value: &str) -> String {
    let function = q(function);
    let attr = q(attr);
    let value = q(value);
    format!("`unsupported:` value {value} of attribute '{attr}' of '{function}' does not fit its type, {ty}")
}

// How two implementations of an algorithm, or a kernel and its backward
// kernel, differ (the `difference` of `implementations_disagree` and
// `vjp_mismatch`).

pub(crate) fn contract_text(contract: Option<&str>) -> String {
    contract.map_or_else(|| "untyped".to_string(), |c| format!("`{}`", q(c)))
}

pub(crate) fn consts_text(consts: &[(&str, &[String])]) -> String {
    if consts.is_empty() {
        return "none".into();
    }
    consts.iter().map(|(name, values)| format!("{}={}", q(name), q(&values.join(",")))).collect::<Vec<_>>().join(" ")
}

/// What a parameter's token makes it, as a difference names it.
pub(crate) fn role(token: &crate::model::Token) -> &'static str {
    use crate::model::Role;
    match token.role() {
        Role::InOut => "updated in place",
        Role::Input => "an input",
        Role::InputList => "a list of inputs",
        Role::OutputList => "a list of outputs",
        Role::Output => "an output",
        Role::Attribute | Role::Dim | Role::Dict | Role::Stream | Role::State => "not a tensor",
    }
}

pub(crate) fn impl_inputs(a: &str, an: usize, b: &str, bn: usize) -> String {
    let (a, b) = (q(a), q(b));
    format!("`{a}` takes {an} input(s), `{b}` {bn}")
}

pub(crate) fn impl_outputs(a: &str, an: usize, b: &str, bn: usize) -> String {
    let (a, b) = (q(a), q(b));
    format!("`{a}` returns {an} output(s), `{b}` {bn}")
}

/// `input 0 is <this> in `a` ('x') but <that> in `b` ('y')`: each side is
/// (what it is, the function, the parameter).
pub(crate) fn impl_param_differs(what: &str, k: usize, a: (&str, &str, &str), b: (&str, &str, &str)) -> String {
    let (this, af, ap) = (a.0, q(a.1), q(a.2));
    let (that, bf, bp) = (b.0, q(b.1), q(b.2));
    format!("{what} {k} is {this} in `{af}` ('{ap}') but {that} in `{bf}` ('{bp}')")
}

pub(crate) fn impl_attr_missing(attr: &str, a: &str, b: &str) -> String {
    let (attr, a, b) = (q(attr), q(a), q(b));
    format!("attribute '{attr}' of `{a}` is missing from `{b}`")
}

pub(crate) fn impl_attr_default(attr: &str, this: &str, a: &str, that: &str, b: &str) -> String {
    let (attr, this, a, that, b) = (q(attr), q(this), q(a), q(that), q(b));
    format!("attribute '{attr}' defaults to {this} in `{a}` but to {that} in `{b}`")
}

pub(crate) fn impl_attr_type(attr: &str, ty: &str, a: &str, other: &str, b: &str) -> String {
    let (attr, a, b) = (q(attr), q(a), q(b));
    format!("attribute '{attr}' is {ty} in `{a}` but {other} in `{b}`")
}

pub(crate) fn impl_consts(a: &str, at: &str, b: &str, bt: &str) -> String {
    let (a, b) = (q(a), q(b));
    format!("their constants differ (`{a}`: {at}; `{b}`: {bt})")
}

pub(crate) fn impl_gradient(with: &str, vjp: &str, without: &str) -> String {
    let (with, vjp, without) = (q(with), q(vjp), q(without));
    format!("`{with}` has a gradient (`{vjp}`), `{without}` has none")
}

pub(crate) fn vjp_platform(fwd: &str, fp: &str, bwd: &str, bp: &str) -> String {
    let (fwd, bwd) = (q(fwd), q(bwd));
    format!("'{fwd}' is a {fp} kernel and `{bwd}` a {bp} one; a gradient runs where its forward does")
}

pub(crate) fn vjp_inout(param: &str) -> String {
    let param = q(param);
    format!("it updates '{param}' in place; a backward kernel returns its cotangents")
}

pub(crate) fn vjp_list(func: &str, param: &str) -> String {
    let (func, param) = (q(func), q(param));
    format!("'{func}' takes a list of arrays ('{param}'); gradients through lists are not supported yet")
}

pub(crate) fn vjp_input(k: usize) -> String {
    format!("input {k}")
}

pub(crate) fn vjp_cotangent(of: &str, k: usize) -> String {
    format!("the cotangent of {of} {k}")
}

/// `<what> is <this> ('p' of 'fwd') but <that> ('q' of `bwd`)`: each side is
/// (its contract, the parameter, the function).
pub(crate) fn vjp_contract(what: &str, f: (&str, &str, &str), b: (&str, &str, &str)) -> String {
    let (this, fp, ff) = (f.0, q(f.1), q(f.2));
    let (that, bp, bf) = (b.0, q(b.1), q(b.2));
    format!("{what} is {this} ('{fp}' of '{ff}') but {that} ('{bp}' of `{bf}`)")
}

pub(crate) fn related_output(k: usize) -> String {
    format!("output {k}")
}

/// `<what> ('p' of 'f') is bound to 'q' of `g`, which is named like <named> of 'f'`.
pub(crate) fn related_misnamed(what: &str, fp: &str, f: &str, gp: &str, g: &str, named: &str) -> String {
    let (fp, f, gp, g) = (q(fp), q(f), q(gp), q(g));
    format!(
        "{what} ('{fp}' of '{f}') is bound to '{gp}' of `{g}`, which is named like {named} of '{f}' (parameters \
         are bound by position, not by name)"
    )
}

pub(crate) fn vjp_attr_missing(attr: &str, fwd: &str) -> String {
    let (attr, fwd) = (q(attr), q(fwd));
    format!("its attribute '{attr}' is not an attribute of '{fwd}' (attributes are passed by name)")
}

pub(crate) fn vjp_attr_type(attr: &str, t: &str, fwd: &str, ty: &str, bwd: &str) -> String {
    let (attr, fwd, bwd) = (q(attr), q(fwd), q(bwd));
    format!("attribute '{attr}' is {t} in '{fwd}' but {ty} in `{bwd}`")
}

pub(crate) fn vjp_consts(fwd: &str, ft: &str, bwd: &str, bt: &str) -> String {
    let (fwd, bwd) = (q(fwd), q(bwd));
    format!("their constants differ ('{fwd}': {ft}; `{bwd}`: {bt})")
}

// Kernels as JAX primitives (begen.yaml's `linear:`, `transpose:`, `jvp:`).

pub(crate) fn primitive_and_vjp(function: &str, key: &str) -> String {
    let (function, key) = (q(function), q(key));
    format!(
        "'{function}' has both `vjp` and `{key}`: a kernel is either reverse-only (`vjp`) or a JAX primitive (`jvp`, `linear`)"
    )
}

pub(crate) const HINT_PRIMITIVE_VJP: &str = "keep `vjp` for a kernel differentiated in reverse mode only; with `jvp` or \
     `linear` (and `transpose`), forward and reverse mode both work";

pub(crate) fn primitive_residuals(function: &str) -> String {
    let function = q(function);
    format!(
        "'{function}' has `vjp` and `linear` with `residuals`: beside `linear`, the backward kernel is bound by \
         position (the inputs, then one cotangent per output), so it takes no residuals"
    )
}

pub(crate) fn jvp_and_linear(function: &str, key: &str) -> String {
    let (function, key) = (q(function), q(key));
    format!(
        "'{function}' has both `jvp` and `{key}`: with a tangent kernel, JAX differentiates through it and never \
         through `linear`/`transpose`, so reverse mode would need the tangent kernel's own transposes"
    )
}

pub(crate) const HINT_JVP_LINEAR: &str = "a kernel linear in its inputs needs no tangent kernel: keep `linear` and \
     `transpose` and drop `jvp`; a nonlinear kernel keeps `jvp`, and its tangent kernel gets `linear` and `transpose` \
     (docs/primitives.md)";

pub(crate) fn transpose_not_linear(function: &str, param: &str, near: Option<&str>) -> String {
    let (function, param, more) = (q(function), q(param), did_you_mean(near));
    format!("`transpose:` of '{function}' names '{param}', which its `linear:` does not list{more}")
}

pub(crate) fn linear_unknown(function: &str, param: &str, near: Option<&str>) -> String {
    let (function, param, more) = (q(function), q(param), did_you_mean(near));
    format!("`linear:` of '{function}' names '{param}', which is not one of its parameters{more}")
}

pub(crate) fn linear_group_unknown(function: &str, param: &str, group: &str, near: Option<&str>) -> String {
    let (function, param, group) = (q(function), q(param), q(group));
    format!(
        "`linear:` of '{function}' names '{param}' in the group [{group}], which is not one of its parameters{}",
        did_you_mean(near)
    )
}

pub(crate) fn linear_group_small(function: &str, group: &str) -> String {
    let (function, group) = (q(function), q(group));
    format!(
        "`linear:` of '{function}' has the group [{group}]: a group of inputs linear together names two or more \
         (list an input linear on its own without brackets)"
    )
}

pub(crate) fn linear_twice(function: &str, param: &str) -> String {
    let (function, param) = (q(function), q(param));
    format!(
        "`linear:` of '{function}' lists '{param}' twice: an input is linear either on its own or in one group of \
         inputs linear together"
    )
}

pub(crate) fn transpose_not_group(function: &str, key: &str, near: Option<&str>) -> String {
    let (function, key) = (q(function), q(key));
    format!(
        "`transpose:` of '{function}' names the group '{key}', which its `linear:` does not declare as a group (a \
         nested list of the same inputs in the same order){}",
        did_you_mean(near)
    )
}

pub(crate) fn linear_not_input(function: &str, param: &str) -> String {
    let (function, param) = (q(function), q(param));
    format!("`linear:` of '{function}' names '{param}', which is not an input tensor (`arg`)")
}

pub(crate) fn linear_not_float(function: &str, param: &str, contract: &str) -> String {
    let (function, param) = (q(function), q(param));
    format!(
        "`linear:` of '{function}' names '{param}', a {contract} input: only a float input has a tangent (an integer \
         input gets none)"
    )
}

pub(crate) fn primitive_untyped(function: &str, param: &str) -> String {
    let (function, param) = (q(function), q(param));
    format!(
        "'{function}' is a JAX primitive (`jvp`, `linear`) but its input '{param}' has no dtype: its tangents and \
         cotangents need typed inputs (`arg:<dtype>[<dims>]`)"
    )
}

pub(crate) fn primitive_not_plain(function: &str, param: &str) -> String {
    let (function, param) = (q(function), q(param));
    format!(
        "'{function}' is a JAX primitive (`jvp`, `linear`) or its tangent or transpose kernel, and '{param}' is \
         updated in place or a list of arrays: not supported there"
    )
}

pub(crate) fn primitive_side_effect(function: &str) -> String {
    let function = q(function);
    format!("'{function}' is a JAX primitive (`jvp`, `linear`) and has `has_side_effect`: not supported together")
}

/// The subject of the messages about a tangent kernel (`transpose_of`
/// None) or a transpose kernel: `the tangent kernel `k` of 'f'`, `the
/// transpose kernel `k` of 'f' for 'p'`.
pub(crate) fn related_kernel(function: &str, kernel: &str, transpose_of: Option<&str>) -> String {
    let (function, kernel) = (q(function), q(kernel));
    match transpose_of {
        None => format!("the tangent kernel `{kernel}` of '{function}'"),
        Some(p) => format!("the transpose kernel `{kernel}` of '{function}' for '{}'", q(p)),
    }
}

pub(crate) fn unknown_related(subject: &str, module: &str, near: Option<&str>) -> String {
    format!("{subject} is not an exported function of module `{}`{}", q(module), did_you_mean(near))
}

pub(crate) fn related_counts(
    subject: &str,
    function: &str,
    tangent: bool,
    got: (usize, usize),
    want: (usize, usize),
) -> String {
    let function = q(function);
    let (takes, returns) = if tangent {
        (format!("the inputs of '{function}', then one tangent per float input"), "one tangent per output")
    } else if want.1 > 1 {
        (
            format!("the inputs of '{function}' other than the group's, then one cotangent per output"),
            "one cotangent per input of the group",
        )
    } else {
        (format!("the other inputs of '{function}', then one cotangent per output"), "the input's cotangent")
    };
    format!(
        "{subject} takes {} input(s) and returns {} output(s); it must take {} ({takes}) and return {} ({returns})",
        got.0, got.1, want.0, want.1
    )
}

pub(crate) fn related_mismatch(subject: &str, difference: &str) -> String {
    format!("{subject} does not fit: {}", q(difference))
}

pub(crate) fn tangent_of_input(k: usize) -> String {
    format!("the tangent of input {k}")
}

pub(crate) const HINT_JVP: &str = "the tangent kernel takes the kernel's inputs, then one tangent per float input, and \
     returns one tangent per output (same shapes and dtypes); attributes are passed to it by name";

pub(crate) const HINT_TRANSPOSE_GROUP: &str = "a group's transpose kernel takes the kernel's inputs other than the \
     group's (in order), then one cotangent per output, and returns one cotangent per input of the group (in the \
     group's order); attributes are passed to it by name";

pub(crate) const HINT_TRANSPOSE: &str = "a transpose kernel takes the kernel's inputs other than the linear one (in \
     order), then one cotangent per output, and returns that input's cotangent; attributes are passed to it by name";

pub(crate) fn tangent_of_output(k: usize) -> String {
    format!("the tangent of output {k}")
}

// Sharding across devices (begen.yaml's `shard:` and `reduce:`).

pub(crate) fn shard_untyped(function: &str, key: &str, param: &str) -> String {
    let (function, key, param) = (q(function), q(key), q(param));
    format!(
        "`{key}:` of '{function}' needs a typed contract, but its parameter '{param}' has no shape (`arg:<dtype>[<dims>]`): \
         the dimensions a call may be split along are named there"
    )
}

pub(crate) fn shard_not_plain(function: &str, key: &str, param: &str) -> String {
    let (function, key, param) = (q(function), q(key), q(param));
    format!(
        "`{key}:` of '{function}': its parameter '{param}' is a list of arrays, which cannot be split across devices"
    )
}

pub(crate) fn shard_unknown_dim(function: &str, key: &str, dim: &str, dims: &[String]) -> String {
    let more = did_you_mean(crate::diag::suggest::closest(dim, dims.iter().map(String::as_str)));
    let (function, key, dim) = (q(function), q(key), q(dim));
    let known = if dims.is_empty() {
        "none".to_string()
    } else {
        dims.iter().map(|d| format!("'{}'", q(d))).collect::<Vec<_>>().join(", ")
    };
    format!(
        "`{key}:` of '{function}' names '{dim}', which is not a dimension of its typed contract \
         (its dimensions: {known}){more}"
    )
}

pub(crate) fn shard_not_in_input(function: &str, dim: &str) -> String {
    let (function, dim) = (q(function), q(dim));
    format!("`shard:` of '{function}' names '{dim}', which no input has: only an input's dimension can be split")
}

pub(crate) fn shard_not_in_output(function: &str, dim: &str, output: &str) -> String {
    let (function, dim, output) = (q(function), q(dim), q(output));
    format!(
        "`shard:` of '{function}' names '{dim}', but its output '{output}' has no dimension '{dim}': split along it, each \
         device would compute a different '{output}'"
    )
}

pub(crate) const HINT_SHARD_RAGGED: &str = "each device computes its block of every output from its blocks of the \
     inputs, so a split dimension must be an input's too; a ragged operand has no such blocks: a CSR matrix's rows \
     (`indptr` has rows + 1 entries, `indices` and `data` one per non-zero) cannot be split. Store the matrix as row \
     blocks (`data[b, z]`, `indices[b, z]`, `indptr[b, r1]`: each block its own CSR matrix, padded to z non-zeros) and \
     declare `shard: [b]` (docs/sharding.md, \"Ragged operands\")";

pub(crate) const HINT_SHARD_OUTPUT: &str = "declare a dimension the output sums over in `reduce:` instead (or, when \
     only some outputs sum over it, in `sum: {OUTPUT: [DIM]}` beside `shard:`); a dimension in neither list is \
     gathered on every device before the call (always right)";

pub(crate) fn shard_sized_by_attr(function: &str, key: &str, dim: &str) -> String {
    let (function, key, dim) = (q(function), q(key), q(dim));
    format!(
        "`{key}:` of '{function}' names '{dim}', which the integer attribute '{dim}' also gives: split along it, each \
         device holds a block of '{dim}' but the attribute still says the whole extent, so the kernel would read or \
         write past its block"
    )
}

pub(crate) const HINT_SHARD_SIZED: &str = "a kernel that takes the extent from its array's shape (a `BE::Tensor`'s \
     dims) instead of an attribute can be split along it; otherwise leave the dimension out of `shard:` and `reduce:` \
     (a dimension in neither list is gathered on every device before the call)";

pub(crate) fn reduce_in_output(function: &str, dim: &str, output: &str) -> String {
    let (function, dim, output) = (q(function), q(dim), q(output));
    format!(
        "`reduce:` of '{function}' names '{dim}', but its output '{output}' has that dimension: an output that is a sum \
         over '{dim}' cannot have it"
    )
}

pub(crate) fn sum_unknown_output(function: &str, output: &str, outputs: &[&str]) -> String {
    let more = did_you_mean(crate::diag::suggest::closest(output, outputs.iter().copied()));
    let (function, output) = (q(function), q(output));
    let known = outputs.iter().map(|o| format!("'{}'", q(o))).collect::<Vec<_>>().join(", ");
    format!(
        "`sum:` of '{function}' names '{output}', which is not an output of the kernel (its outputs: {known}){more}"
    )
}

pub(crate) fn sum_in_output(function: &str, dim: &str, output: &str) -> String {
    let (function, dim, output) = (q(function), q(dim), q(output));
    format!(
        "`sum:` of '{function}' says its output '{output}' is a sum over '{dim}', but '{output}' has that dimension: \
         an output that is a sum over '{dim}' cannot have it (an output split along it needs only `shard:`)"
    )
}

pub(crate) fn sum_not_shard(function: &str, dim: &str, output: &str) -> String {
    let (function, dim, output) = (q(function), q(dim), q(output));
    format!(
        "`sum:` of '{function}' says its output '{output}' is a sum over '{dim}', which `shard:` does not name: only a \
         dimension the call is split along has partial sums to add up"
    )
}

pub(crate) const HINT_SUM_SHARD: &str = "add the dimension to `shard:` (the outputs that have it keep the split, \
     those that sum over it are added up across devices), or to `reduce:` when every output is a sum over it";

pub(crate) fn sum_not_numeric(function: &str, output: &str, dtype: &str) -> String {
    let (function, output, dtype) = (q(function), q(output), q(dtype));
    format!(
        "`sum:` of '{function}': its output '{output}' is {dtype}, which cannot be a sum: each device computes a \
         partial output and `sum:` adds them up"
    )
}

pub(crate) fn reduce_not_numeric(function: &str, output: &str, dtype: &str) -> String {
    let (function, output, dtype) = (q(function), q(output), q(dtype));
    format!(
        "`reduce:` of '{function}': its output '{output}' is {dtype}, which cannot be a sum: each device computes a \
         partial output and `reduce:` adds them up"
    )
}

pub(crate) const HINT_REDUCE_NUMERIC: &str = "return a number (an int32 count, a float) and compare it after the call, \
     or leave the dimension out of `reduce:` (a dimension in neither list is gathered on every device before the call)";

pub(crate) fn shard_and_reduce(function: &str, dim: &str) -> String {
    let (function, dim) = (q(function), q(dim));
    format!("'{function}' names '{dim}' in both `shard:` and `reduce:`: a dimension is one or the other")
}

pub(crate) fn shard_repeated(function: &str, key: &str, dim: &str, param: &str) -> String {
    let (function, key, dim, param) = (q(function), q(key), q(dim), q(param));
    format!(
        "`{key}:` of '{function}' names '{dim}', which its parameter '{param}' has twice: one array cannot be split twice \
         along the same mesh axes"
    )
}

pub(crate) fn impl_sharding(key: &str, a: &str, av: &str, b: &str, bv: &str) -> String {
    let (key, a, b) = (q(key), q(a), q(b));
    format!("their `{key}:` differ ('{a}': [{av}]; '{b}': [{bv}]): an algorithm splits its call one way")
}

pub(crate) fn string_indirect(func: &str, param: &str, declared: &str) -> String {
    let func = q(func);
    let param = q(param);
    let declared = q(declared);
    format!(
        "parameter '{param}' of '{func}' takes a string attribute by pointer or non-const reference (`{declared}`): \
         XLA hands the kernel a view of the string's bytes"
    )
}

pub(crate) fn string_owned(func: &str, param: &str, declared: &str) -> String {
    let func = q(func);
    let param = q(param);
    let declared = q(declared);
    format!(
        "parameter '{param}' of '{func}' takes a `std::string` (`{declared}`): a string attribute reaches the \
         kernel as a view of XLA's bytes, valid during the call"
    )
}

pub(crate) fn hint_string_view(param: &str) -> String {
    let param = q(param);
    format!(
        "take it as `std::string_view {param}` (copy it into a `std::string` in the kernel where it must outlive the call)"
    )
}

pub(crate) fn hint_char_pointer(param: &str) -> String {
    let param = q(param);
    format!(
        "a string attribute is `std::string_view {param}` (a Python `str` keyword; XLA's bytes are not \
         NUL-terminated, so no `const char*`); bytes read as data are a typed tensor, `arg:int8[n]`"
    )
}

pub(crate) fn dict_mixed(func: &str, param: &str, attr: &str) -> String {
    let (func, param, attr) = (q(func), q(param), q(attr));
    format!(
        "parameter '{param}' of '{func}' takes every attribute as `BE::Attrs`, and '{attr}' is a named attribute \
         besides: XLA does not mix the two"
    )
}

pub(crate) const HINT_DICT_MIXED: &str =
    "read every attribute from the dictionary (`attrs.get<float>(\"eps\")`), or take each one as a parameter";

pub(crate) fn dict_twice(func: &str, param: &str) -> String {
    let (func, param) = (q(func), q(param));
    format!("parameter '{param}' of '{func}' takes the attributes a second time: XLA hands one dictionary")
}

pub(crate) fn dict_indirect(func: &str, param: &str, declared: &str) -> String {
    let (func, param, declared) = (q(func), q(param), q(declared));
    format!(
        "parameter '{param}' of '{func}' takes `BE::Attrs` by pointer or non-const reference (`{declared}`): \
         the dictionary is read-only"
    )
}

pub(crate) fn hint_dict_by_value(param: &str) -> String {
    let param = q(param);
    format!("take it by value, `BE::Attrs {param}` (a view of XLA's attributes, valid during the call)")
}

pub(crate) const HINT_DICT_TWICE: &str = "take one `BE::Attrs` and read every attribute from it";

// ---- named contracts (`contracts:`, `contract=<name>`) ----

pub(crate) fn unknown_contract(func: &str, name: &str, near: Option<&str>) -> String {
    let (func, more) = (q(func), super::did_you_mean(near));
    let name = q(name);
    format!("'{func}' uses contract '{name}', which begen.yaml's `contracts:` does not declare{more}")
}

pub(crate) const HINT_UNKNOWN_CONTRACT: &str =
    "declare it in begen.yaml: `contracts: {<name>: \"arg:float32[n] ret:float32[n]\"}`, then write `contract=<name>`";

pub(crate) fn bad_contract_ref(token: &str) -> String {
    let token = q(token);
    format!("`{token}` does not name a contract: `contract=` takes the name of one of begen.yaml's `contracts:`")
}

pub(crate) fn contract_bad_name(name: &str) -> String {
    let name = q(name);
    format!("contract name '{name}' is not an identifier")
}

pub(crate) fn contract_nested(name: &str) -> String {
    let name = q(name);
    format!("contract '{name}' uses another contract; a contract's tokens are written out in full")
}

pub(crate) fn contract_empty(name: &str) -> String {
    let name = q(name);
    format!("contract '{name}' has no tokens")
}

pub(crate) fn contract_token_again(func: &str, token: &str, name: &str, what: &str) -> String {
    let (func, token, name) = (q(func), q(token), q(name));
    format!(
        "'{func}' writes `{token}` beside contract '{name}', which gives {what} already; \
         it is unclear which one is meant"
    )
}

pub(crate) const HINT_CONTRACT_BESIDE: &str = "tokens beside `contract=<name>` stand for the parameters before or \
     after the contract's, in the order written; to change one of the contract's tokens, \
     declare another contract or write the tokens in full";

pub(crate) fn label_contract_defined(name: &str) -> String {
    let name = q(name);
    format!("contract '{name}' is defined here")
}

// ---- `BE::Tensors`: variadic inputs and outputs ----

pub(crate) const HINT_TENSOR_LIST: &str =
    "take a list of tensors by value, `const BE::Tensors xs` (inputs) or `BE::Tensors outs` (outputs)";

pub(crate) fn list_contract(func: &str, param: &str, token: &str) -> String {
    let (func, param, token) = (q(func), q(param), q(token));
    format!(
        "`{token}` gives '{param}' of '{func}' a shape contract, and '{param}' is a list of tensors \
         (`BE::Tensors`): each of its arrays has a shape and element type of its own"
    )
}

pub(crate) fn hint_list_contract(plain: &str) -> String {
    format!("write `{plain}` alone over a list; the kernel reads each element's shape and dtype from its BE::Tensor")
}

pub(crate) fn list_inout(func: &str, param: &str) -> String {
    let (func, param) = (q(func), q(param));
    format!("`inout` is written over '{param}' of '{func}', a list of tensors (`BE::Tensors`)")
}

pub(crate) const HINT_LIST_INOUT: &str = "a list cannot be updated in place: take the inputs as \
     `const BE::Tensors` (`arg`) and the results as `BE::Tensors` (`ret`)";

pub(crate) fn list_twice(func: &str, first: &str, again: &str, what: &str) -> String {
    let (func, first, again) = (q(func), q(first), q(again));
    format!(
        "'{func}' takes two lists of {what}, '{first}' and '{again}'; XLA hands a call's variadic {what} as one list"
    )
}

pub(crate) fn hint_list_twice(what: &str) -> String {
    format!("take one `BE::Tensors` for the variadic {what} and tell its parts apart by position or by an attribute")
}

pub(crate) fn list_in_template(func: &str, param: &str) -> String {
    let (func, param) = (q(func), q(param));
    format!(
        "'{func}' is a template (`const.`) and takes a list of outputs, '{param}': a template kernel takes no \
         list of outputs"
    )
}

pub(crate) const LABEL_TEMPLATE_CONSTS: &str = "the template's values";

pub(crate) const HINT_LIST_IN_TEMPLATE: &str = "declare one kernel per element type (each a plain function over \
     `BE::Tensors`), or read the element type of each tensor in the kernel (`ys[k].dtype()`); a list of inputs \
     beside a template's typed inputs is fine";

// `vmap: {fold: {input: dim}}`

pub(crate) fn fold_unknown_input(function: &str, name: &str, near: Option<&str>) -> String {
    let (function, name) = (q(function), q(name));
    let more = did_you_mean(near);
    format!("`vmap: fold` of '{function}' names '{name}', which is not one of its inputs{more}")
}

pub(crate) fn fold_untyped(function: &str, param: &str) -> String {
    let (function, param) = (q(function), q(param));
    format!(
        "`vmap: fold` of '{function}' needs a typed contract with named dimensions, but its parameter '{param}' has \
         none (`arg:<dtype>[<dims>]`; a shape led by a rest, `[..., n]`, has no fixed axis to fold into)"
    )
}

pub(crate) fn fold_unknown_dim(function: &str, param: &str, dim: &str, contract: &str, near: Option<&str>) -> String {
    let (function, param, dim, contract) = (q(function), q(param), q(dim), q(contract));
    let more = did_you_mean(near);
    format!(
        "`vmap: fold` of '{function}' folds '{param}' into dimension '{dim}', which its contract `{contract}` does \
         not have{more}"
    )
}

pub(crate) fn fold_two_dims(function: &str, first: &str, second: &str) -> String {
    let (function, first, second) = (q(function), q(first), q(second));
    format!(
        "`vmap: fold` of '{function}' folds into two dimensions, '{first}' and '{second}': the outputs unfold one \
         dimension, so every input folds into the same one"
    )
}

pub(crate) fn fold_dim_twice(function: &str, param: &str, dim: &str) -> String {
    let (function, param, dim) = (q(function), q(param), q(dim));
    format!("`vmap: fold` of '{function}': dimension '{dim}' appears twice in '{param}', so the fold has no one axis")
}

pub(crate) fn fold_input_unlisted(function: &str, param: &str, dim: &str) -> String {
    let (function, param, dim) = (q(function), q(param), q(dim));
    format!(
        "`vmap: fold` of '{function}' folds the batch into '{dim}', which input '{param}' has too but the fold does \
         not list: its '{dim}' would no longer match"
    )
}

pub(crate) fn fold_output_without(function: &str, param: &str, dim: &str) -> String {
    let (function, param, dim) = (q(function), q(param), q(dim));
    format!(
        "`vmap: fold` of '{function}' folds the batch into '{dim}', but output '{param}' has no dimension '{dim}' \
         (or has it twice) to unfold the batch from"
    )
}

pub(crate) fn fold_attribute_dim(function: &str, dim: &str) -> String {
    let (function, dim) = (q(function), q(dim));
    format!(
        "`vmap: fold` of '{function}' folds into '{dim}', whose size is the attribute '{dim}': a folded call would \
         need the attribute changed with it"
    )
}

pub(crate) fn fold_not_plain(function: &str, what: &str) -> String {
    let (function, what) = (q(function), q(what));
    format!("`vmap: fold` of '{function}' cannot be combined with {what}")
}

pub(crate) const HINT_FOLD: &str = "write `vmap: {fold: {<input>: <dimension>}}`: each listed input's batch axis \
     joins that dimension of its typed contract, and every output's same dimension gives the batch back";

// `transpose: {x: {kernel: k, args: [...]}}`

pub(crate) fn transpose_arg(subject: &str, arg: &str, why: &str) -> String {
    let arg = q(arg);
    format!("{subject}: its argument '{arg}' {why}")
}

pub(crate) fn transpose_arg_transposed(arg: &str) -> String {
    let arg = q(arg);
    format!("is the input transposed, whose value the transpose does not have (pass '{arg}''s cotangent as `ct`)")
}

pub(crate) fn transpose_arg_unknown(names: &str, near: Option<&str>) -> String {
    let more = did_you_mean(near);
    format!("is neither an input nor a cotangent{more}: `args:` takes {names}")
}

pub(crate) fn transpose_args_count(subject: &str, given: usize, kernel: &str, takes: usize) -> String {
    let kernel = q(kernel);
    format!("{subject}: `args:` names {given} argument(s), but `{kernel}` takes {takes} input(s)")
}

pub(crate) const TRANSPOSE_BIND_NOTE: &str = "where binding by position is meant, say `by_position: true` \
     (`transpose: {p: {kernel: k, by_position: true}}`); to call the kernel with other arguments, name them with \
     `args: [...]`";

// ---- python_vjp: derivative rules in Python ----

pub(crate) fn python_rule_form(spec: &str) -> String {
    let spec = q(spec);
    format!(
        "`python_vjp: {spec}` is not `module:function`: a module (Python identifiers joined by `.`) and a function \
         (a Python identifier), neither a Python keyword"
    )
}

pub(crate) const HINT_PYTHON_RULE: &str = "name a function of a `.py` file beside begen.yaml (`python_vjp: \
     rules:solve_vjp` for `def solve_vjp` in rules.py) or of a module Python imports";

pub(crate) fn python_rule_beside(function: &str, key: &str) -> String {
    let (function, key) = (q(function), q(key));
    format!(
        "'{function}' has both `python_vjp` and `{key}`: its derivative is either a Python function of the module's \
         functions (`python_vjp`) or declared by kernels (`{key}`), not both"
    )
}

pub(crate) fn python_rule_missing(spec: &str, file: &str, function: &str, near: Option<&str>) -> String {
    let (spec, file, function) = (q(spec), q(file), q(function));
    let more = did_you_mean(near);
    format!("`python_vjp: {spec}`: {file} defines no top-level function '{function}'{more}")
}

pub(crate) fn python_rule_unreadable(file: &str, why: &str) -> String {
    let (file, why) = (q(file), q(why));
    format!("`python_vjp` names {file}, which cannot be read as UTF-8 Python source: {why}")
}
