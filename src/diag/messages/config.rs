//! Texts about begen.yaml as a whole: its syntax, options, links, defines.

use super::q;
// ---- begen.yaml ----

pub(crate) fn yaml_error(err: &str) -> String {
    let err = q(err);
    format!("invalid begen.yaml: {err}")
}

pub(crate) const CONFIG_NOT_A_FILE: &str =
    "begen.yaml is not a regular file (a directory, a FIFO or a device); it was not read";

pub(crate) fn yaml_too_deep(limit: usize) -> String {
    format!("invalid begen.yaml: flow collections (`[`, `{{`) nested more than {limit} deep")
}

pub(crate) fn unknown_config_function(name: &str) -> String {
    let name = q(name);
    format!("begen.yaml sets options for '{name}', which is not an exported function")
}

pub(crate) fn bad_vmap_method(value: &str) -> String {
    let value = q(value);
    format!(
        "unknown vmap_method `{value}`: expected sequential, sequential_unrolled, expand_dims, broadcast_all or \
         legacy_vectorized"
    )
}

pub(crate) fn vmap_method_fixed_rank(method: &str, function: &str, param: &str, contract: &str, rank: usize) -> String {
    let (function, param, contract) = (q(function), q(param), q(contract));
    format!(
        "`vmap_method: {method}` cannot batch '{function}': its parameter '{param}' is typed `{contract}`, so its \
         handler decodes rank-{rank} buffers only, and {method} hands it the batch as one more leading dimension \
         (XLA would fail at run time with \"Failed to decode all FFI handler operands\")"
    )
}

pub(crate) const HINT_VMAP_FIXED_RANK: &str = "use `vmap_method: sequential` (the default) or `sequential_unrolled`, \
     which call the kernel once per example; or take the parameter as an untyped `BE::Tensor` (`arg`/`ret`), whose \
     handler takes any rank, and handle the leading batch dimension in the kernel";

pub(crate) fn bad_platform(value: &str) -> String {
    let value = q(value);
    format!("unknown platform `{value}`: expected cpu, cuda or auto")
}

pub(crate) fn bad_jax_min(value: &str) -> String {
    let value = q(value);
    format!("jax_min `{value}` is not a jax release number: write it like 0.10.2 or 0.12.0.1")
}

pub(crate) fn config_source_missing(file: &str) -> String {
    let file = q(file);
    format!("begen.yaml lists `{file}`, which is not a source file under the root")
}

// ---- linking ----

pub(crate) fn bad_link_lib(lib: &str) -> String {
    let lib = q(lib);
    format!("`{lib}` is not a library name: `link: libs:` takes `-l` names such as `cublas` or `m`")
}

pub(crate) const HINT_LINK_LIB: &str = "put the library's directory under `link: dirs:` and its name under `libs:`";

pub(crate) fn link_dir_missing(dir: &str) -> String {
    let dir = q(dir);
    format!(
        "`link: dirs:` lists `{dir}`, which is not a directory (a relative path is read from the kernel \
         directory, an absolute one as it is)"
    )
}

// ---- variants ----

pub(crate) fn bad_define(name: &str) -> String {
    let name = q(name);
    format!("define `{name}` is not usable: names are C++ identifiers, values numbers, booleans or identifiers")
}

pub(crate) const HINT_DEFINE: &str = "write defines as `{BLOCK: 256, USE_FAST: true, MODE: kFast}`";

// ---- building ----

pub(crate) fn launcher_not_found(program: &str, from: &str) -> String {
    let program = q(program);
    format!(
        "the compiler launcher `{program}` (from {from}) was not found: neither a file nor a program on PATH. \
         Install it (`apt-get install ccache`, `cargo install sccache`), give its path, or unset it"
    )
}
