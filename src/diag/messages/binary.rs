//! The diagnostic texts of begen.yaml's `structs:` and `binaries:`
//! (precompiled kernels) and of `src/binary`'s typed errors: part of the
//! catalogue (`messages`).

use super::{q, q_list};
pub const HINT_CONVENTION: &str = "`cutile_python_v1` (cuTile's exported kernels: parameters from the mangled \
                                   symbol) or `c` (the kernel's C parameters in order: plain CUDA, Rust-CUDA)";

pub fn bad_convention(c: &str) -> String {
    let c = q(c);
    format!("unknown calling convention `{c}`")
}

pub const HINT_BINARY_PATH: &str = "a binary is a `.cubin`, `.fatbin` or `.ptx` file under the kernel directory, \
                                    written relative to it";

pub fn bad_binary_path(file: &str) -> String {
    let file = q(file);
    format!("binary `{file}` is not a `.cubin`, `.fatbin` or `.ptx` file under the root")
}

pub fn unreadable_binary(file: &str, why: &str) -> String {
    let file = q(file);
    let why = q(why);
    format!("cannot read binary `{file}`: {why}")
}

pub fn bad_struct_name(name: &str) -> String {
    let name = q(name);
    format!("struct name `{name}` is not an identifier")
}

pub fn bad_member(strukt: &str, member: &str) -> String {
    let strukt = q(strukt);
    let member = q(member);
    format!("struct `{strukt}`: member `{member}` is not `<name>:<type>`")
}

pub fn bad_member_type(strukt: &str, member: &str, ty: &str) -> String {
    let strukt = q(strukt);
    let member = q(member);
    let ty = q(ty);
    format!("struct `{strukt}`: member `{member}` has unknown type `{ty}`")
}

pub fn bad_struct(why: &str) -> String {
    why.to_string()
}

pub fn struct_cycle(name: &str) -> String {
    let name = q(name);
    format!("struct `{name}` contains itself (through its members)")
}

pub fn bad_kernel_name(name: &str) -> String {
    let name = q(name);
    format!("binary kernel name `{name}` is not an identifier (it names the Python function and the FFI target)")
}

pub const STREAM_IN_BINARY: &str = "a binary kernel takes no `stream` token: begen launches it on XLA's stream itself";

pub const CONST_IN_BINARY: &str =
    "`const.` tokens instantiate C++ templates; a binary kernel is compiled already (export one per value)";

pub const ARRAY_IN_BINARY: &str = "array attributes (`attr.<name>:<type>[]`) are bound for annotated C++ kernels only: \
     a binary kernel takes scalars, structs of `structs:` and tensors";

pub fn symbol_missing(symbol: &str, file: &str) -> String {
    let symbol = q(symbol);
    let file = q(file);
    format!("`{file}` has no kernel `{symbol}`")
}

pub fn known_symbols(known: &[String]) -> String {
    if known.is_empty() { "it has no kernels".to_string() } else { format!("its kernels: {}", q_list(known, "", ", ")) }
}

pub fn fatbin_unchecked(symbol: &str, file: &str) -> String {
    let symbol = q(symbol);
    let file = q(file);
    format!(
        "`{symbol}` is in none of the images begen could read in fatbin `{file}`: it and its parameters are \
         not checked (the driver reports a missing symbol at the first call)"
    )
}

pub fn fatbin_unread(unread: &[String]) -> String {
    format!("images not read: {}", q_list(unread, "", "; "))
}

pub fn cutile_unbound(why: &str) -> String {
    let why = q(why);
    format!("cannot bind this cuTile kernel: {why}")
}

pub fn cutile_count(name: &str, expected: usize, got: usize) -> String {
    let name = q(name);
    format!(
        "`{name}`: the cuTile symbol has {expected} run-time parameter(s) (constants left out), the manifest lists {got}"
    )
}

pub fn cutile_expected(list: &str) -> String {
    let list = q(list);
    format!("the symbol's parameters, in order: {list}")
}

pub fn cutile_dtype(token: &str, code: &str) -> String {
    let token = q(token);
    let code = q(code);
    format!("`{token}`: the kernel's parameter has cuTile dtype `{code}`, which begen cannot pass")
}

pub fn cutile_untyped(token: &str, dtype: &str, ndim: usize, list: bool) -> String {
    let dims: Vec<String> = (0..ndim).map(|k| format!("d{k}")).collect();
    let word = token.trim_end_matches("...");
    let word = q(word.split(':').next().unwrap_or(word));
    let token = q(token);
    let dtype = q(dtype);
    format!(
        "`{token}`: a cuTile array needs its dtype and shape, e.g. `{word}:{dtype}[{}]{}`",
        dims.join(","),
        if list { "..." } else { "" }
    )
}

/// `the kernel's array`, or for a list `each array of the kernel's list`.
fn array_noun(list: bool) -> &'static str {
    if list { "each array of the kernel's list" } else { "the kernel's array" }
}

pub fn cutile_array_dtype(token: &str, want: &str, got: &str, list: bool) -> String {
    let token = q(token);
    let want = q(want);
    let got = q(got);
    format!("`{token}`: {} is {want}, the manifest says {got}", array_noun(list))
}

pub fn cutile_rank(token: &str, want: usize, got: usize, list: bool) -> String {
    let token = q(token);
    format!("`{token}`: {} has rank {want}, the manifest gives {got} dimension(s)", array_noun(list))
}

pub fn cutile_scalar_type(token: &str, want: &str) -> String {
    let token = q(token);
    let want = q(want);
    format!("`{token}`: the kernel's scalar is {want}")
}

pub fn cutile_list_expected(token: &str, dtype: &str, ndim: usize) -> String {
    let token = q(token);
    let dtype = q(dtype);
    let dims: Vec<String> = (0..ndim).map(|k| format!("d{k}")).collect();
    format!(
        "`{token}` does not match the kernel's parameter: a list of {dtype} arrays of rank {ndim} \
         (cuTile `ListConstraint`), written `arg:{dtype}[{}]...`",
        dims.join(",")
    )
}

pub fn cutile_not_list(token: &str, what: &str) -> String {
    let token = q(token);
    let what = q(what);
    format!("`{token}` is a list of arrays (`...`), but the kernel's parameter is {what}")
}

pub fn list_role(token: &str, output: bool) -> String {
    let token = q(token);
    if output {
        format!(
            "`{token}`: only lists of input arrays are bound (`arg:<dtype>[<dims>]...`); lists of outputs are not \
             supported yet"
        )
    } else {
        format!(
            "`{token}`: `...` makes a list of input arrays (`arg:<dtype>[<dims>]...`), not of attributes or dimensions"
        )
    }
}

pub fn c_list(token: &str) -> String {
    let token = q(token);
    format!(
        "`{token}`: a list of arrays (`...`) is a cuTile `ListConstraint` parameter; a `c` kernel takes its tensors \
         one pointer each"
    )
}

pub fn cutile_kind(token: &str, what: &str) -> String {
    let token = q(token);
    let what = q(what);
    format!("`{token}` does not match the kernel's parameter: {what}")
}

pub fn table_mismatch(symbol: &str, table: &[(u32, u32)], ours: &[(u32, u32)]) -> String {
    let show = |v: &[(u32, u32)]| v.iter().map(|(o, s)| format!("{s}@{o}")).collect::<Vec<_>>().join(" ");
    format!(
        "the cubin's parameter table of `{symbol}` (size@offset: {}) differs from the parameters the manifest implies ({})",
        show(table),
        show(ours)
    )
}

pub fn c_dtype_param(token: &str, p: &str) -> String {
    let token = q(token);
    let p = q(p);
    format!("`{token}`: `{p}` is a template parameter; a binary kernel's tensors take a dtype")
}

pub fn c_needs_type(token: &str) -> String {
    let token = q(token);
    format!("`{token}`: a `c` kernel's attribute or dimension needs its C type (`attr.x:float32`, `dim.n:uint64`)")
}

pub fn c_mismatch(symbol: &str, why: &str) -> String {
    let symbol = q(symbol);
    let why = q(why);
    format!("the PTX of `{symbol}` differs from the manifest's parameters: {why}")
}

pub fn duplicate_param(name: &str) -> String {
    let name = q(name);
    format!("two parameters are named `{name}`")
}

pub fn dim_unknown(name: &str) -> String {
    let name = q(name);
    format!("`dim.{name}`: no tensor of this kernel has a dimension `{name}`")
}

pub fn no_output(name: &str) -> String {
    let name = q(name);
    format!("binary kernel `{name}` has no `ret` or `inout` tensor: XLA needs at least one output")
}

pub fn negative_launch(what: &str) -> String {
    let what = q(what);
    format!("`{what}`: a launch dimension cannot be negative")
}

pub fn bad_expr(what: &str, text: &str, why: &str) -> String {
    let what = q(what);
    let text = q(text);
    let why = q(why);
    format!("`{what}`: `{text}` is not an expression ({why})")
}

pub fn unknown_name(what: &str, name: &str) -> String {
    let what = q(what);
    let name = q(name);
    format!("`{what}` uses `{name}`, which is neither a dimension of the kernel's tensors nor an integer attribute")
}

pub const HINT_EXPR_NAMES: &str = "launch expressions combine integers, dimensions (`n` of `arg:float32[n]`) and \
                                   integer attributes with `+ - * / %`, parentheses and `cdiv(a, b)`";

pub fn launch_len(what: &str, n: usize) -> String {
    let what = q(what);
    format!("`{what}` takes 1 to 3 entries (x, y, z), not {n}")
}

pub fn block_fixed(file: &str, r: [u32; 3]) -> String {
    let file = q(file);
    format!("`{file}` fixes the kernel's block at [{}, {}, {}]; leave `block` out or give that", r[0], r[1], r[2])
}

pub fn cutile_block_unknown(file: &str) -> String {
    let file = q(file);
    format!(
        "cuTile kernels run with the block size their cubin requires, and `{file}` does not state one: give `block:`"
    )
}

pub fn c_block_missing() -> String {
    "a `c` kernel needs `block:` (threads per block, 1 to 3 entries)".to_string()
}

pub fn bad_symbol(symbol: &str) -> String {
    let symbol = q(symbol);
    format!("symbol `{symbol}` is not a kernel symbol (letters, digits, `_`, `$`, `.`)")
}

pub fn skipping_binaries(kernels: &[String]) -> String {
    format!("platform `cpu`: the precompiled GPU kernels are left out ({})", q_list(kernels, "", ", "))
}
