//! The diagnostic texts of begen.yaml's `structs:` and `binaries:`
//! (precompiled kernels) and of `src/binary`'s typed errors: part of the
//! catalogue (`messages`).

use super::{q, q_list};
pub(crate) const HINT_CONVENTION: &str = "`cutile_python_v1` (cuTile's exported kernels: parameters from the mangled \
                                   symbol) or `c` (the kernel's C parameters in order: plain CUDA, Rust-CUDA)";

pub(crate) fn bad_convention(c: &str) -> String {
    let c = q(c);
    format!("unknown calling convention `{c}`")
}

pub(crate) const HINT_BINARY_PATH: &str = "a binary is a `.cubin`, `.fatbin` or `.ptx` file under the kernel directory, \
                                    written relative to it";

pub(crate) fn bad_binary_path(file: &str) -> String {
    let file = q(file);
    format!("binary `{file}` is not a `.cubin`, `.fatbin` or `.ptx` file under the root")
}

pub(crate) fn unreadable_binary(file: &str, why: &str) -> String {
    let file = q(file);
    let why = q(why);
    format!("cannot read binary `{file}`: {why}")
}

pub(crate) fn bad_struct_name(name: &str) -> String {
    let name = q(name);
    format!("struct name `{name}` is not an identifier")
}

pub(crate) fn bad_member(strukt: &str, member: &str) -> String {
    let strukt = q(strukt);
    let member = q(member);
    format!("struct `{strukt}`: member `{member}` is not `<name>:<type>`")
}

pub(crate) fn bad_member_type(strukt: &str, member: &str, ty: &str, near: Option<&str>) -> String {
    let strukt = q(strukt);
    let member = q(member);
    let ty = q(ty);
    let more = super::did_you_mean(near);
    format!("struct `{strukt}`: member `{member}` has unknown type `{ty}`{more}")
}

pub(crate) fn bad_struct(why: &str) -> String {
    why.to_string()
}

pub(crate) fn struct_cycle(name: &str) -> String {
    let name = q(name);
    format!("struct `{name}` contains itself (through its members)")
}

pub(crate) fn bad_kernel_name(name: &str) -> String {
    let name = q(name);
    format!("binary kernel name `{name}` is not an identifier (it names the Python function and the FFI target)")
}

pub(crate) fn rest_in_binary(token: &str) -> String {
    let token = q(token);
    format!("`{token}`: a binary kernel's tensors have a fixed rank; write each dimension (`[n, k]`), not `...`")
}

pub(crate) const STREAM_IN_BINARY: &str =
    "a binary kernel takes no `stream` token: begen launches it on XLA's stream itself";

pub(crate) const CONST_IN_BINARY: &str =
    "`const.` tokens instantiate C++ templates; a binary kernel is compiled already (export one per value)";

pub(crate) const ARRAY_IN_BINARY: &str = "array attributes (`attr.<name>:<type>[]`) are bound for annotated C++ kernels only: \
     a binary kernel takes scalars, structs of `structs:` and tensors";

pub(crate) fn symbol_missing(symbol: &str, file: &str) -> String {
    let symbol = q(symbol);
    let file = q(file);
    format!("`{file}` has no kernel `{symbol}`")
}

pub(crate) fn known_symbols(known: &[String]) -> String {
    if known.is_empty() { "it has no kernels".to_string() } else { format!("its kernels: {}", q_list(known, "", ", ")) }
}

pub(crate) fn fatbin_unchecked(symbol: &str, file: &str) -> String {
    let symbol = q(symbol);
    let file = q(file);
    format!(
        "`{symbol}` is in none of the images begen could read in fatbin `{file}`: it and its parameters are \
         not checked (the driver reports a missing symbol at the first call)"
    )
}

pub(crate) fn fatbin_unread(unread: &[String]) -> String {
    format!("images not read: {}", q_list(unread, "", "; "))
}

pub(crate) fn cutile_unbound(why: &str) -> String {
    let why = q(why);
    format!("cannot bind this cuTile kernel: {why}")
}

pub(crate) fn cutile_count(name: &str, expected: usize, got: usize) -> String {
    let name = q(name);
    format!(
        "`{name}`: the cuTile symbol has {expected} run-time parameter(s) (constants left out), the manifest lists {got}"
    )
}

pub(crate) fn cutile_expected(list: &str) -> String {
    let list = q(list);
    format!("the symbol's parameters, in order: {list}")
}

pub(crate) fn cutile_dtype(token: &str, code: &str) -> String {
    let token = q(token);
    let code = q(code);
    format!("`{token}`: the kernel's parameter has cuTile dtype `{code}`, which begen cannot pass")
}

pub(crate) fn cutile_untyped(token: &str, dtype: &str, ndim: usize, list: bool) -> String {
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

pub(crate) fn cutile_array_dtype(token: &str, want: &str, got: &str, list: bool) -> String {
    let token = q(token);
    let want = q(want);
    let got = q(got);
    format!("`{token}`: {} is {want}, the manifest says {got}", array_noun(list))
}

pub(crate) fn cutile_rank(token: &str, want: usize, got: usize, list: bool) -> String {
    let token = q(token);
    format!("`{token}`: {} has rank {want}, the manifest gives {got} dimension(s)", array_noun(list))
}

pub(crate) fn cutile_scalar_type(token: &str, want: &str) -> String {
    let token = q(token);
    let want = q(want);
    format!("`{token}`: the kernel's scalar is {want}")
}

pub(crate) fn cutile_list_expected(token: &str, dtype: &str, ndim: usize) -> String {
    let token = q(token);
    let dtype = q(dtype);
    let dims: Vec<String> = (0..ndim).map(|k| format!("d{k}")).collect();
    format!(
        "`{token}` does not match the kernel's parameter: a list of {dtype} arrays of rank {ndim} \
         (cuTile `ListConstraint`), written `arg:{dtype}[{}]...`",
        dims.join(",")
    )
}

pub(crate) fn cutile_not_list(token: &str, what: &str) -> String {
    let token = q(token);
    let what = q(what);
    format!("`{token}` is a list of arrays (`...`), but the kernel's parameter is {what}")
}

pub(crate) fn list_role(token: &str, output: bool) -> String {
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

pub(crate) fn c_list(token: &str) -> String {
    let token = q(token);
    format!(
        "`{token}`: a list of arrays (`...`) is a cuTile `ListConstraint` parameter; a `c` kernel takes its tensors \
         one pointer each"
    )
}

pub(crate) fn cutile_array_of_rank(ndim: usize) -> String {
    format!("an array (rank {ndim})")
}

pub(crate) fn cutile_list_of_rank(ndim: usize) -> String {
    format!("a list of arrays (rank {ndim})")
}

pub(crate) fn cutile_scalar(code: &str) -> String {
    format!("a `{code}` scalar")
}

pub(crate) const CUTILE_NOT_BINDABLE: &str = "not bindable";

pub(crate) fn cutile_kind(token: &str, what: &str) -> String {
    let token = q(token);
    let what = q(what);
    format!("`{token}` does not match the kernel's parameter: {what}")
}

pub(crate) fn table_mismatch(symbol: &str, table: &[(u32, u32)], ours: &[(u32, u32)]) -> String {
    let show = |v: &[(u32, u32)]| v.iter().map(|(o, s)| format!("{s}@{o}")).collect::<Vec<_>>().join(" ");
    format!(
        "the cubin's parameter table of `{symbol}` (size@offset: {}) differs from the parameters the manifest implies ({})",
        show(table),
        show(ours)
    )
}

pub(crate) fn c_dtype_param(token: &str, p: &str) -> String {
    let token = q(token);
    let p = q(p);
    format!("`{token}`: `{p}` is a template parameter; a binary kernel's tensors take a dtype")
}

pub(crate) fn c_needs_type(token: &str) -> String {
    let token = q(token);
    format!("`{token}`: a `c` kernel's attribute or dimension needs its C type (`attr.x:float32`, `dim.n:uint64`)")
}

pub(crate) fn c_mismatch(symbol: &str, why: &str) -> String {
    let symbol = q(symbol);
    let why = q(why);
    format!("the PTX of `{symbol}` differs from the manifest's parameters: {why}")
}

pub(crate) fn duplicate_param(name: &str) -> String {
    let name = q(name);
    format!("two parameters are named `{name}`")
}

pub(crate) fn dim_unknown(name: &str) -> String {
    let name = q(name);
    format!("`dim.{name}`: no tensor of this kernel has a dimension `{name}`")
}

pub(crate) fn no_output(name: &str) -> String {
    let name = q(name);
    format!("binary kernel `{name}` has no `ret` or `inout` tensor: XLA needs at least one output")
}

pub(crate) fn negative_launch(what: &str) -> String {
    let what = q(what);
    format!("`{what}`: a launch dimension cannot be negative")
}

pub(crate) fn bad_expr(what: &str, text: &str, why: &str) -> String {
    let what = q(what);
    let text = q(text);
    let why = q(why);
    format!("`{what}`: `{text}` is not an expression ({why})")
}

pub(crate) fn unknown_name(what: &str, name: &str) -> String {
    let what = q(what);
    let name = q(name);
    format!("`{what}` uses `{name}`, which is neither a dimension of the kernel's tensors nor an integer attribute")
}

pub(crate) const HINT_EXPR_NAMES: &str = "launch expressions combine integers, dimensions (`n` of `arg:float32[n]`) and \
                                   integer attributes with `+ - * / %`, parentheses and `cdiv(a, b)`";

pub(crate) fn launch_len(what: &str, n: usize) -> String {
    let what = q(what);
    format!("`{what}` takes 1 to 3 entries (x, y, z), not {n}")
}

pub(crate) fn block_fixed(file: &str, r: [u32; 3]) -> String {
    let file = q(file);
    format!("`{file}` fixes the kernel's block at [{}, {}, {}]; leave `block` out or give that", r[0], r[1], r[2])
}

pub(crate) fn cutile_block_unknown(file: &str) -> String {
    let file = q(file);
    format!(
        "cuTile kernels run with the block size their cubin requires, and `{file}` does not state one: give `block:`"
    )
}

pub(crate) fn c_block_missing() -> String {
    "a `c` kernel needs `block:` (threads per block, 1 to 3 entries)".to_string()
}

pub(crate) fn bad_symbol(symbol: &str) -> String {
    let symbol = q(symbol);
    format!("symbol `{symbol}` is not a kernel symbol (letters, digits, `_`, `$`, `.`)")
}

pub(crate) fn skipping_binaries(kernels: &[String]) -> String {
    format!("platform `cpu`: the precompiled GPU kernels are left out ({})", q_list(kernels, "", ", "))
}

pub(crate) fn member_types(types: &[&str]) -> String {
    format!("a member's type is one of {} or a struct declared under `structs:`", types.join(", "))
}

// ---- what src/binary's readers say: their typed errors carry data, these are their texts ----

// A cubin (`elf::ElfError`).

pub(crate) fn not_a_cubin(why: &str) -> String {
    format!("not a readable cubin: {why}")
}

pub(crate) const ELF_NO_MAGIC: &str = "no ELF magic";
pub(crate) const ELF_NOT_64: &str = "not a 64-bit little-endian ELF";
pub(crate) const ELF_NO_SECTION_NAMES: &str = "no section name table";
pub(crate) const ELF_TRUNCATED_INFO: &str = "truncated .nv.info";

pub(crate) fn truncated_at(at: usize) -> String {
    format!("truncated at byte {at}")
}

pub(crate) fn elf_machine(machine: u16, cuda: u16) -> String {
    format!("machine {machine} is not CUDA ({cuda})")
}

pub(crate) fn elf_section_out_of_file(at: usize, len: usize) -> String {
    format!("section at {at}+{len} out of file")
}

pub(crate) fn elf_symbol_size(size: u64, least: u64) -> String {
    format!("symbol table entries of {size} bytes (an ELF64 symbol takes {least})")
}

pub(crate) fn elf_section_header_size(size: u16, least: u16) -> String {
    format!("section headers of {size} bytes (an ELF64 section header takes {least})")
}

pub(crate) fn elf_info_format(format: u8, kernel: &str) -> String {
    let kernel = q(kernel);
    format!("unknown .nv.info record format {format} in `{kernel}`")
}

// A fatbin (`fatbin::FatbinError`, `fatbin::Unread`).

pub(crate) fn not_a_fatbin(why: &str) -> String {
    format!("not a readable fatbin: {why}")
}

pub(crate) fn fatbin_magic(magic: u32) -> String {
    format!("no fatbin magic ({magic:#010x})")
}

pub(crate) fn fatbin_short(size: u64) -> String {
    format!("its header says {size} bytes of images; the file is shorter")
}

pub(crate) fn fatbin_entry_header(at: usize, header: usize) -> String {
    format!("entry at byte {at}: a header of {header} bytes")
}

pub(crate) fn fatbin_entry_past(at: usize, payload: u64) -> String {
    format!("entry at byte {at}: {payload} bytes run past the container")
}

pub(crate) const IMAGE_COMPRESSED: &str = "its payload is compressed";

pub(crate) fn image_kind(kind: u16) -> String {
    format!("an image of unknown kind {kind}")
}

pub(crate) fn unread_image(sm: u32, why: &str) -> String {
    format!("sm_{sm}: {why}")
}

// PTX text (`ptx::PtxError`, `ptx::ParamMismatch`).

pub(crate) const PTX_NOT_UTF8: &str = "PTX must be UTF-8 text";
pub(crate) const PTX_NUL: &str = "PTX text must not contain NUL bytes";

pub(crate) fn ptx_at(offset: usize, why: &str) -> String {
    format!("PTX at byte {offset}: {why}")
}

pub(crate) const PTX_ENTRY_WITHOUT_NAME: &str = "`.entry` without a name";
pub(crate) const PTX_UNCLOSED: &str = "unclosed parameter list";
pub(crate) const PTX_UNFINISHED_PARAM: &str = "unfinished `.param`";
pub(crate) const PTX_ALIGN_WITHOUT_NUMBER: &str = "`.align` without a number";

pub(crate) fn ptx_unexpected(token: &str) -> String {
    let token = q(token);
    format!("unexpected `{token}` in a parameter list")
}

pub(crate) fn ptx_unknown_type(ty: &str) -> String {
    let ty = q(ty);
    format!("unknown parameter type `{ty}`")
}

pub(crate) fn ptx_untyped(name: &str) -> String {
    let name = q(name);
    format!("parameter `{name}` has no type")
}

pub(crate) fn ptx_bad_name(name: &str) -> String {
    let name = q(name);
    format!("unexpected `{name}` for a parameter name")
}

pub(crate) fn ptx_bad_count(name: &str) -> String {
    let name = q(name);
    format!("parameter `{name}`: malformed `[N]`")
}

pub(crate) fn ptx_count(ptx: usize, expected: usize) -> String {
    format!("the kernel takes {ptx} parameters, the manifest gives {expected}")
}

pub(crate) fn ptx_param(index: usize, ptx: (u32, u32), expected: (u32, u32)) -> String {
    format!(
        "parameter {index} is {} bytes aligned to {} in the kernel, {} bytes aligned to {} in the manifest",
        ptx.0, ptx.1, expected.0, expected.1
    )
}

// Launch expressions (`launch::ExprError`).

pub(crate) fn expr_at(offset: usize, why: &str) -> String {
    format!("at offset {offset}: {why}")
}

pub(crate) const EXPR_OPERATOR_OR_END: &str = "expected an operator or the end";
pub(crate) const EXPR_TOO_DEEP: &str = "expected an expression nested less deeply";
pub(crate) const EXPR_CLOSE: &str = "expected `)`";
pub(crate) const EXPR_CDIV_COMMA: &str = "expected `,` between cdiv's two operands";
pub(crate) const EXPR_ATOM: &str = "expected a number, a name, `(` or `cdiv(`";
pub(crate) const EXPR_TOO_LARGE: &str = "an integer below 2**63";
pub(crate) const EXPR_TOO_LONG: &str = "an expression of at most 256 operators";

// C layout (`layout::LayoutError`, `layout::PackError`).

pub(crate) fn struct_twice(name: &str) -> String {
    let name = q(name);
    format!("struct `{name}` is declared twice")
}

pub(crate) fn struct_no_members(name: &str) -> String {
    let name = q(name);
    format!("struct `{name}` has no members")
}

pub(crate) fn struct_member_failed(name: &str, inner: &str) -> String {
    let (name, inner) = (q(name), q(inner));
    format!("struct `{name}` contains struct `{inner}`, which has an error")
}

pub(crate) fn struct_too_large(name: &str, size: u64, limit: u64) -> String {
    let name = q(name);
    format!(
        "struct `{name}` is {size} bytes or more: a CUDA kernel's parameters hold at most {limit} bytes, so no \
         parameter can be larger"
    )
}

pub(crate) fn member_twice(strukt: &str, member: &str) -> String {
    let strukt = q(strukt);
    let member = q(member);
    format!("struct `{strukt}` has two members named `{member}`")
}

pub(crate) fn struct_align(strukt: &str, align: u32, natural: u32) -> String {
    let strukt = q(strukt);
    format!("struct `{strukt}`: alignment {align} must be a power of two and at least its natural alignment {natural}")
}

pub(crate) fn member_struct_unknown(strukt: &str, member: &str) -> String {
    let strukt = q(strukt);
    let member = q(member);
    format!("struct `{strukt}`: member `{member}` names a struct not declared before it")
}

// cuTile symbols (`cutile::DemangleError`, `ArgsError`).

pub(crate) fn bad_cutile_symbol(symbol: &str, offset: usize, near: &str, why: &str) -> String {
    let nowhere = near.is_empty();
    let symbol = q(symbol);
    let near = q(near);
    if nowhere {
        format!("`{symbol}` is not a valid cuTile kernel symbol: at offset {offset}: {why}")
    } else {
        format!("`{symbol}` is not a valid cuTile kernel symbol: at offset {offset} (near `{near}`): {why}")
    }
}

pub(crate) const DEMANGLE_NOT_MANGLED: &str = "no `_K` separates the function name from the signature";
pub(crate) const DEMANGLE_ZERO_MASK: &str = "an axis mask of zero";
pub(crate) const DEMANGLE_DIVISIBILITY: &str = "a divisibility must be greater than 1";
pub(crate) const DEMANGLE_LIST_ELEMENT: &str = "a list's element must be an array (`A...`)";
pub(crate) const DEMANGLE_OUT_OF_RANGE: &str = "a number too large for begen";

pub(crate) fn demangle_expected(what: &str) -> String {
    format!("expected {what}")
}

pub(crate) fn demangle_unknown(what: &str, code: &str) -> String {
    let code = q(code);
    format!("unknown {what} code `{code}`")
}

pub(crate) fn demangle_mask(mask: &str, ndim: usize) -> String {
    let mask = q(mask);
    format!("axis mask `{mask}` names an axis beyond the array's {ndim}")
}

pub(crate) fn demangle_repeated(what: &str, axis: usize) -> String {
    format!("{what} given twice for axis {axis}")
}

pub(crate) fn demangle_with_static_stride(what: &str, axis: usize) -> String {
    format!("{what} given together with a constant stride for axis {axis}")
}

pub(crate) fn demangle_shape_divisible(axis: usize) -> String {
    format!("the constant shape of axis {axis} is not divisible by its shape divisibility")
}

pub(crate) fn demangle_alias(why: &str) -> String {
    format!("alias groups: {why}")
}

pub(crate) fn demangle_alias_once(group: u32) -> String {
    format!("alias group {group} is mentioned by one parameter only")
}

pub(crate) fn demangle_alias_mixed(group: u32) -> String {
    format!("alias group {group} is shared by an array and a list")
}

pub(crate) fn demangle_too_deep(limit: usize) -> String {
    format!("lists and tuples nested more than {limit} deep")
}

pub(crate) fn demangle_convention(what: &str, convention: &str) -> String {
    format!("{what} are not allowed in {convention}")
}

pub(crate) fn args_convention(convention: &str) -> String {
    format!("begen binds cutile_python_v1 kernels, not {convention}")
}

pub(crate) fn args_scalar(param: usize, code: &str) -> String {
    format!("parameter {param} is a `{code}` scalar, which begen cannot pass")
}
