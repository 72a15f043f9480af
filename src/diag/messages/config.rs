//! Texts about begen.yaml as a whole: its syntax, options, links, defines.

use super::{did_you_mean, q};
// ---- begen.yaml ----

/// serde's complaint `err`; `near`: where in it the unknown name ends and
/// the name it is likely a slip of, said right after it.
pub(crate) fn yaml_error(err: &str, near: Option<(usize, &str)>) -> String {
    let (head, tail) = near.map_or((err, ""), |(k, _)| err.split_at(k));
    let (head, tail) = (q(head), q(tail));
    let more = did_you_mean(near.map(|(_, n)| n));
    format!("invalid begen.yaml: {head}{more}{tail}")
}

pub(crate) const CONFIG_NOT_A_FILE: &str =
    "begen.yaml is not a regular file (a directory, a FIFO or a device); it was not read";

pub(crate) fn config_missing(path: &str) -> String {
    let path = q(path);
    format!("the configuration file `{path}` does not exist (named by --config)")
}

pub(crate) fn yaml_too_deep(limit: usize) -> String {
    format!("invalid begen.yaml: flow collections (`[`, `{{`) nested more than {limit} deep")
}

pub(crate) fn unknown_config_function(name: &str, near: Option<&str>) -> String {
    let name = q(name);
    let more = did_you_mean(near);
    format!("begen.yaml sets options for '{name}', which is not an exported function{more}")
}

pub(crate) fn bad_vmap_method(value: &str, near: Option<&str>) -> String {
    let value = q(value);
    let more = did_you_mean(near);
    format!(
        "unknown vmap_method `{value}`{more}: expected sequential, sequential_unrolled, expand_dims, broadcast_all or \
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

/// The fix for a native kernel's fixed-rank buffer under a batching
/// `vmap_method`: a type without a rank, or the sequential methods.
pub(crate) fn hint_vmap_native_rank(ty: &str, rank: u32) -> String {
    let ty = q(ty);
    format!(
        "`{ty}` fixes rank {rank}, and the batched buffer has rank {}; take it as a buffer without a rank \
         (`ffi::Buffer<T>` or `ffi::AnyBuffer`) and handle the leading batch dimension in the kernel, or use \
         `vmap_method: sequential` (the default) or `sequential_unrolled`, which call the kernel once per example",
        rank + 1
    )
}

pub(crate) fn bad_platform(value: &str, near: Option<&str>) -> String {
    let value = q(value);
    let more = did_you_mean(near);
    format!("unknown platform `{value}`{more}: expected cpu, cuda or auto")
}

pub(crate) fn bad_jax_min(value: &str) -> String {
    let value = q(value);
    format!("jax_min `{value}` is not a jax release number: write it like 0.10.2 or 0.12.0.1")
}

pub(crate) fn unsupported_jax_min(value: &str, oldest: &str, beyond: &str) -> String {
    let value = q(value);
    format!(
        "jax_min `{value}` is not a jax release begen supports: it builds for jax {oldest} and newer releases \
         below {beyond}"
    )
}

pub(crate) fn config_source_missing(file: &str, near: Option<&str>) -> String {
    let (file, more) = (q(file), super::did_you_mean(near));
    format!("begen.yaml lists `{file}`, which is not a source file under the root{more}")
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

/// A program-and-arguments value (`CXX`, a compiler launcher) that needs a
/// shell to mean anything.
pub(crate) fn command_value_unsplittable(from: &str, value: &str, column: usize, what: &str) -> String {
    let value = q(value);
    format!(
        "{from} = `{value}` cannot be split into a program and its arguments: at character {column}, {what}. \
         begen runs the program itself, without a shell: write the words as a shell would pass them on, \
         quoting a blank, quote or `\\` that belongs to a word (`CXX=\"g++ '-DMSG=a b'\"`)"
    )
}

/// OUT's path has bytes that are not UTF-8.
pub(crate) fn out_not_utf8(out: &str) -> String {
    format!(
        "the output directory `{}` has a path that is not valid UTF-8 (shown with U+FFFD), which the linker's \
         arguments cannot carry; build into a directory whose path is UTF-8",
        q(out)
    )
}

// ---- tuning ----

/// `near` as in [`yaml_error`].
pub(crate) fn bad_tune_entry(key: &str, err: &str, near: Option<(usize, &str)>) -> String {
    let (head, tail) = near.map_or((err, ""), |(k, _)| err.split_at(k));
    let (key, head, tail) = (q(key), q(head), q(tail));
    let more = did_you_mean(near.map(|(_, n)| n));
    format!("`tune: {key}` cannot be read: {head}{more}{tail}")
}

pub(crate) fn tune_unknown_kernel(key: &str, near: Option<&str>) -> String {
    let more = did_you_mean(near);
    let key = q(key);
    format!("`tune:` names `{key}`, which is not a kernel of this library{more}")
}

pub(crate) fn tune_ambiguous_kernel(key: &str, named: &[String]) -> String {
    let (key, named) = (q(key), named.iter().map(|n| format!("`{}`", q(n))).collect::<Vec<_>>().join(", "));
    format!("`tune:` names `{key}`, which several modules have: write one of {named}")
}

pub(crate) fn tune_no_consts(key: &str) -> String {
    let key = q(key);
    format!("`tune: {key}` lists no `consts:`: its candidates are the instances of the consts it names")
}

pub(crate) const HINT_TUNE_CONSTS: &str = "declare the candidates as template values in the annotation \
     (`const.BLOCK=64,128,256`) and name them: `tune: {kernel: {consts: [BLOCK], key: [n]}}`";

pub(crate) fn tune_unknown_const(key: &str, name: &str, near: Option<&str>) -> String {
    let more = did_you_mean(near);
    let (key, name) = (q(key), q(name));
    format!("`tune: {key}` names const '{name}', which '{key}' does not have{more}")
}

pub(crate) fn tune_const_not_value(key: &str, name: &str) -> String {
    let (key, name) = (q(key), q(name));
    format!(
        "`tune: {key}` names const '{name}', which is not an integer or bool value: a type const is decided by the \
         inputs' dtypes, not tuned"
    )
}

pub(crate) fn tune_repeated(key: &str, name: &str) -> String {
    let (key, name) = (q(key), q(name));
    format!("`tune: {key}` lists `{name}` twice")
}

pub(crate) fn tune_bad_default(key: &str, name: &str, value: &str, values: &[String]) -> String {
    let (key, name, value) = (q(key), q(name), q(value));
    let values = values.iter().map(|v| q(v).to_string()).collect::<Vec<_>>().join(", ");
    format!("`tune: {key}` defaults {name} to `{value}`, which is not a built candidate: {name} is one of {values}")
}

pub(crate) fn tune_default_not_tuned(key: &str, name: &str) -> String {
    let (key, name) = (q(key), q(name));
    format!("`tune: {key}` gives a default for `{name}`, which is not under its `consts:`")
}

pub(crate) fn tune_unknown_key(key: &str, dim: &str, near: Option<&str>) -> String {
    let more = did_you_mean(near);
    let (key, dim) = (q(key), q(dim));
    format!("`tune: {key}` keys on dimension `{dim}`, which no input of '{key}' has{more}")
}

pub(crate) const HINT_TUNE_KEY: &str = "a key dimension is a named dimension of an input's typed contract \
     (`arg:float32[n, m]` has `n` and `m`)";

pub(crate) fn tune_bad_key_at(key: &str, dim: &str, at: &str) -> String {
    let (key, dim, at) = (q(key), q(dim), q(at));
    format!("`tune: {key}` reads key dimension `{dim}` from `{at}`, which is not `INPUT[AXIS]`")
}

pub(crate) const HINT_TUNE_KEY_AT: &str = "a key dimension of a kernel without typed contracts is an input's \
     extent along an axis: `key: {n_pre: \"vector[0]\", nnz: \"indices[0]\"}`";

pub(crate) fn tune_key_at_unknown(key: &str, dim: &str, input: &str, near: Option<&str>) -> String {
    let more = did_you_mean(near);
    let (key, dim, input) = (q(key), q(dim), q(input));
    format!("`tune: {key}` reads key dimension `{dim}` from input `{input}`, which no kernel of '{key}' has{more}")
}

pub(crate) fn tune_bad_inputs(key: &str, inputs: &str) -> String {
    let (key, inputs) = (q(key), q(inputs));
    format!("`tune: {key}`'s `inputs: {inputs}` is not `module:function` (Python identifiers, the module dotted)")
}

pub(crate) fn tune_not_a_source(key: &str, near: Option<&str>) -> String {
    let more = did_you_mean(near);
    let key = q(key);
    format!("`tune: {key}` declares `defines:`, but `{key}` is not a source of this library{more}")
}

pub(crate) fn tune_source_no_defines(key: &str) -> String {
    let key = q(key);
    format!("`tune: {key}` names a source but lists no `defines:`: its candidates are combinations of define values")
}

pub(crate) const HINT_TUNE_SOURCE: &str = "write `tune: {path/to/src.cu: {defines: {BLOCK: [128, 256]}, where: \
     \"BLOCK >= 128\", default: {BLOCK: 256}, key: [n]}}`";

pub(crate) fn tune_bad_define(key: &str, name: &str) -> String {
    let (key, name) = (q(key), q(name));
    format!(
        "`tune: {key}` defines `{name}`, which must be a C++ identifier with a non-empty list of distinct integers \
         (`{name}: [128, 256]`)"
    )
}

pub(crate) fn tune_where(key: &str, why: &str, near: Option<&str>) -> String {
    let more = did_you_mean(near);
    let (key, why) = (q(key), q(why));
    format!("`tune: {key}`'s `where:` cannot be read: {why}{more}")
}

pub(crate) fn tune_where_failed(key: &str, combo: &str, why: &str) -> String {
    let (key, combo, why) = (q(key), q(combo), q(why));
    format!("`tune: {key}`'s `where:` cannot be evaluated for {combo}: {why}")
}

pub(crate) fn tune_where_none(key: &str) -> String {
    let key = q(key);
    format!("`tune: {key}`'s `where:` allows no combination of the defines' values: nothing would be built")
}

pub(crate) fn tune_too_many(key: &str, count: u128, max: usize) -> String {
    let key = q(key);
    format!("`tune: {key}` declares {count} combinations of defines, over the {max} a library may build")
}

pub(crate) fn tune_define_default_unknown(key: &str, name: &str, near: Option<&str>) -> String {
    let more = did_you_mean(near);
    let (key, name) = (q(key), q(name));
    format!("`tune: {key}` gives a default for `{name}`, which is not under its `defines:`{more}")
}

pub(crate) fn tune_define_default_excluded(key: &str, combo: &str) -> String {
    let (key, combo) = (q(key), q(combo));
    format!("`tune: {key}`'s default {combo} is not a built candidate: `where:` does not allow it")
}

pub(crate) const HINT_TUNE_DEFAULT: &str =
    "give `default:` one value per define, a combination `where:` allows (else each define's first value is taken)";

pub(crate) fn tune_source_no_kernels(key: &str) -> String {
    let key = q(key);
    format!("`tune: {key}` names a source with no annotated kernel: there is nothing to tune")
}

pub(crate) fn tune_twice(kernel: &str, source: &str) -> String {
    let (kernel, source) = (q(kernel), q(source));
    format!("kernel `{kernel}` is tuned by its own `tune:` entry and by its source's `{source}`: keep one")
}

pub(crate) fn tune_list_kernel(kernel: &str, list: &str, source: &str) -> String {
    let (kernel, list, source) = (q(kernel), q(list), q(source));
    format!(
        "`tune: {source}` would tune kernel `{kernel}`, which takes a list of tensors ('{list}'): no list kernel is tuned"
    )
}

pub(crate) const HINT_TUNE_LIST: &str = "leave the kernel untuned (in a source of its own where its source is \
     tuned), or take fixed tensors in place of the list";

pub(crate) fn tune_not_an_algorithm(key: &str, near: Option<&str>) -> String {
    let more = did_you_mean(near);
    let key = q(key);
    format!("`tune: {key}` has `implementations: true`, but `{key}` is not an algorithm of this library{more}")
}

pub(crate) const HINT_TUNE_ALGORITHM: &str = "`implementations: true` measures the implementations of an \
     algorithm declared under `algorithms:`; a kernel is tuned over its consts (`consts: [BLOCK]`)";

pub(crate) fn tune_implementations_not_true(key: &str) -> String {
    let key = q(key);
    format!("`tune: {key}` has `implementations: false`: the key takes `true` only (leave it out to tune a kernel)")
}

pub(crate) fn tune_algorithm_extra(key: &str, what: &str) -> String {
    let (key, what) = (q(key), q(what));
    format!(
        "`tune: {key}` measures an algorithm's implementations, which takes no `{what}:` (the default is the \
         priority order: the best implementation that supports the call)"
    )
}

pub(crate) fn tune_source_implementations(key: &str) -> String {
    let key = q(key);
    format!("`tune: {key}` names a source: `implementations: true` belongs to an algorithm's entry")
}

pub(crate) fn tune_nothing_to_choose(key: &str, platforms: &str) -> String {
    let (key, platforms) = (q(key), q(platforms));
    format!(
        "`tune: {key}` has nothing to choose: this build holds one implementation of it per platform ({platforms}); \
         the tuning is ignored"
    )
}

pub(crate) const TUNE_TABLE_NOT_A_PATH: &str = "`tune: table:` takes a path relative to the root";

pub(crate) fn tune_bad_table(path: &str, why: &str) -> String {
    let (path, why) = (q(path), q(why));
    format!("`tune: table: {path}` is not a begen tuning table: {why}")
}
