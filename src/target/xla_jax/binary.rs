//! The view model of the binaries translation unit
//! (`gen/<library>.binaries.begen.cc`, `templates/binary.cc`): the images
//! of begen.yaml's `binaries:` embedded as byte arrays, one
//! `begen::cuda::Kernel` per kernel, and one XLA FFI handler each that
//! checks its buffers and attributes, computes the launch dimensions, packs
//! the C arguments at their `ParamLayout` offsets and launches on XLA's
//! stream (`begen/cuda_driver.h`, `begen/binary_launch.h`). A cuTile list's
//! elements are the handler's remaining arguments and its words a hidden
//! result, written on the stream before the launch (`begen/list_words.h`).
//!
//! The bindings and the shape/dimension checks are the annotated kernels'
//! (`cpp::param_cpp`, `cpp::dim_statements`), so a tensor, attribute or
//! dimension is decoded and checked the same way whatever the kernel is.

use crate::model::binary::{ArgValue, ArrayRules, BinaryCall};
use crate::model::binary::{Expr, Op};
use crate::model::{AttrType, ElementType, Extent, Function, Library, Param, ScalarKind, Token};

use super::cpp::{self, Binding, Slot};
use crate::emit::abi::{self, Kernel};
use crate::emit::names::comment_text;

/// The binaries TU of a library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BinariesView {
    pub(crate) library: String,
    pub(crate) images: Vec<ImageView>,
    pub(crate) handlers: Vec<BinaryHandlerView>,
}

/// One embedded image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ImageView {
    /// `begen_image_<k>`.
    pub(crate) var: String,
    /// Its file (safe for a comment).
    pub(crate) file: String,
    pub(crate) size: usize,
    /// Lines of `0x..,` bytes.
    pub(crate) lines: Vec<String>,
}

/// One binary kernel's handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BinaryHandlerView {
    pub(crate) function: String,
    pub(crate) arg_spec: String,
    pub(crate) convention: String,
    /// The symbol as a C string literal's contents (checked: printable ASCII).
    pub(crate) symbol: String,
    pub(crate) image_var: String,
    pub(crate) kernel_var: String,
    pub(crate) handler: String,
    pub(crate) impl_name: String,
    pub(crate) impl_params: Vec<String>,
    pub(crate) bindings: Vec<String>,
    /// Statements that return an error or compute values, in order.
    pub(crate) body: Vec<String>,
    pub(crate) traits: String,
}

/// Whether the library has binary kernels (a binaries TU).
pub(crate) fn has_binaries(lib: &Library) -> bool {
    lib.functions.iter().any(|f| f.binary.is_some())
}

/// Resolves the binaries TU.
pub(crate) fn binaries_view(lib: &Library) -> BinariesView {
    let used: std::collections::BTreeSet<usize> =
        lib.functions.iter().filter_map(|f| f.binary.as_ref()).map(|b| b.image).collect();
    let images = used
        .iter()
        .map(|&k| {
            let bytes = &lib.binaries[k].bytes;
            ImageView {
                var: format!("begen_image_{k}"),
                file: comment_text(&lib.binaries[k].file),
                size: bytes.len(),
                lines: bytes
                    .chunks(24)
                    .map(|c| c.iter().map(|b| format!("0x{b:02x},")).collect::<Vec<_>>().join(""))
                    .collect(),
            }
        })
        .collect();
    let handlers = lib
        .functions
        .iter()
        .filter_map(|f| f.binary.as_ref().map(|b| handler_view(f, b, &lib.binaries[b.image].file)))
        .collect();
    BinariesView { library: lib.name.clone(), images, handlers }
}

/// The C++ variable holding a parameter's value in the handler.
fn value_of(i: usize, p: &Param) -> String {
    match &p.token {
        Token::Dim { .. } => format!("a{i}_{}", p.name),
        _ => format!("p{i}_{}", p.name),
    }
}

/// A tensor's data pointer.
fn data_of(i: usize, p: &Param) -> String {
    match &p.token {
        Token::Arg(_) => format!("p{i}_{}.untyped_data()", p.name),
        _ => format!("p{i}_{}->untyped_data()", p.name),
    }
}

fn expr_cpp(e: &Expr, f: &Function) -> String {
    match e {
        Expr::Int(n) => format!("INT64_C({n})"),
        Expr::Name(n) => {
            let attr =
                f.params.iter().enumerate().find(|(_, p)| matches!(&p.token, Token::Attr { name, .. } if name == n));
            match attr {
                Some((i, p)) => format!("calc.of({})", value_of(i, p)),
                None => format!("dim_{n}"),
            }
        }
        Expr::Bin(op, a, b) => {
            let name = match op {
                Op::Add => "add",
                Op::Sub => "sub",
                Op::Mul => "mul",
                Op::Div => "div",
                Op::Rem => "rem",
                Op::Cdiv => "cdiv",
            };
            format!("calc.{name}({}, {})", expr_cpp(a, f), expr_cpp(b, f))
        }
    }
}

fn lit(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// One binary kernel's handler: its bindings, then the checks of its
/// buffers and attributes, the launch dimensions, the packed arguments and
/// the launch.
fn handler_view(f: &Function, b: &BinaryCall, file: &str) -> BinaryHandlerView {
    let kernel = Kernel { f, instance: None };
    let fname = lit(&f.name);
    let bound = emit_bindings(&kernel, b, &fname);
    let mut body: Vec<String> = bound.iter().flat_map(|(_, _, b)| b.checks.clone()).collect();
    body.extend(list_spans(f, b));
    let (dims, sources) = cpp::resolve_dims(&kernel);
    body.extend(dims);
    // Inputs first: every list element, then the arrays.
    for l in &b.lists {
        body.extend(list_checks(f, l, &sources));
    }
    body.extend(emit_array_checks(f, b));
    body.extend(emit_launch_dims(f, b, &fname));
    body.extend(emit_packed_args(f, b));
    for l in &b.lists {
        body.extend(list_words(f, l));
    }
    let pointers: Vec<String> = b.args.iter().map(|a| format!("args + {}", a.offset)).collect();
    body.push(format!("void* params[{}] = {{{}}};", pointers.len().max(1), pointers.join(", ")));
    let kernel_var = format!("{}_kernel", f.handler);
    body.push(format!(
        "if (std::string e = {kernel_var}.launch(static_cast<begen::cuda::CUstream>(begen_stream), grid, block, \
         shared_bytes, params); !e.empty()) return begen::bin::launch_failed(e);"
    ));
    BinaryHandlerView {
        function: f.name.clone(),
        arg_spec: comment_text(&format!("{} ({})", abi::arg_spec_text(f), comment_text(file))),
        convention: b.convention.name().to_string(),
        symbol: lit(&b.symbol),
        image_var: format!("begen_image_{}", b.image),
        kernel_var,
        handler: f.handler.clone(),
        impl_name: format!("{}_impl", f.handler),
        impl_params: bound.iter().map(|(_, _, b)| b.impl_param.clone()).collect(),
        bindings: bound.iter().map(|(_, _, b)| b.binding.clone()).collect(),
        body,
        traits: super::native::handler_traits(f),
    }
}

/// The handler's bindings in XLA's order (the stream, inputs, outputs,
/// attributes), each with the parameter it serves.
fn emit_bindings(kernel: &Kernel, b: &BinaryCall, fname: &str) -> Vec<(Slot, usize, Binding)> {
    let f = kernel.f;
    // The stream, then the parameters'.
    let mut bound: Vec<(Slot, usize, Binding)> = vec![(
        Slot::Ctx,
        0,
        Binding {
            slot: Slot::Ctx,
            binding: ".Ctx<xla::ffi::PlatformStream<void*>>()".into(),
            impl_param: "void* begen_stream".into(),
            checks: vec![],
        },
    )];
    for (i, p) in f.params.iter().enumerate() {
        match &p.token {
            Token::Struct { name, ty } => {
                let var = format!("p{i}_{name}");
                bound.push((
                    Slot::Attr,
                    i,
                    Binding {
                        slot: Slot::Attr,
                        binding: format!(".Attr<xla::ffi::Span<const uint8_t>>(\"{name}\")"),
                        impl_param: format!("xla::ffi::Span<const uint8_t> {var}"),
                        checks: vec![format!(
                            "if ({var}.size() != {size}) return begen::bin::error(\"{fname}\", \"attribute '{name}' \
                             holds \" + std::to_string({var}.size()) + \" bytes; struct {sname} has {size}\");",
                            size = ty.size,
                            sname = ty.name,
                        )],
                    },
                ));
            }
            // Bound below: XLA's remaining arguments and a hidden result.
            Token::List(_) => {}
            _ => {
                for binding in cpp::param_cpp(kernel, i, p).bindings {
                    bound.push((binding.slot, i, binding));
                }
            }
        }
    }
    // Lists: their elements are XLA's remaining arguments (after the other
    // inputs, list by list), and each has a hidden uint8 result for its
    // words (after the other results), whose size gives the list's length.
    let n = f.params.len();
    if !b.lists.is_empty() {
        bound.push((
            Slot::Input,
            n,
            Binding {
                slot: Slot::Input,
                binding: ".RemainingArgs()".into(),
                impl_param: "xla::ffi::RemainingArgs begen_rest".into(),
                checks: vec![],
            },
        ));
    }
    for (k, l) in b.lists.iter().enumerate() {
        let words = format!("begen::rt::Rank1<xla::ffi::DataType::{}>", AttrType::UInt8.xla_type());
        bound.push((
            Slot::Output,
            n + 1 + k,
            Binding {
                slot: Slot::Output,
                binding: format!(".Ret<{words}>()"),
                impl_param: format!("xla::ffi::Result<{words}> w{}", l.param),
                checks: vec![],
            },
        ));
    }
    bound.sort_by_key(|(slot, i, _)| (*slot, *i));
    bound
}

/// The checks of the cuTile arrays' extents and strides against the
/// kernel's assumptions, each array's values kept for the packing.
fn emit_array_checks(f: &Function, b: &BinaryCall) -> Vec<String> {
    let fname = lit(&f.name);
    let mut out = Vec::new();
    for a in &b.arrays {
        let p = &f.params[a.param];
        let i = a.param;
        let rank = a.axes.len();
        let dims = match &p.token {
            Token::Arg(_) => format!("p{i}_{}.dimensions()", p.name),
            _ => format!("p{i}_{}->dimensions()", p.name),
        };
        let n = rank.max(1);
        out.extend(rules_cpp(a, &format!("ar{i}"), &format!("ax{i}")));
        out.push(format!("int64_t s{i}[{n}] = {{}};"));
        out.push(format!("int64_t st{i}[{n}] = {{}};"));
        out.push(format!(
            "if (std::string e = begen::bin::check_array(\"{}\", {}, {dims}.begin(), {dims}.size(), ar{i}, s{i}, st{i}); \
             !e.empty()) return begen::bin::error(\"{fname}\", e);",
            p.name,
            data_of(i, p),
        ));
    }
    out
}

/// The launch dimensions computed from their expressions and checked
/// against CUDA's limits; an empty grid returns before the launch.
fn emit_launch_dims(f: &Function, b: &BinaryCall, fname: &str) -> Vec<String> {
    let mut body = Vec::new();
    body.push("begen::bin::Calc calc;".into());
    for (k, e) in b.grid.iter().enumerate() {
        body.push(format!("const int64_t grid{k} = {};", expr_cpp(e, f)));
    }
    for (k, e) in b.block.iter().enumerate() {
        body.push(format!("const int64_t block{k} = {};", expr_cpp(e, f)));
    }
    body.push(format!("const int64_t shared = {};", expr_cpp(&b.shared, f)));
    body.push(format!(
        "if (calc.error != nullptr) return begen::bin::error(\"{fname}\", std::string(\"a launch expression \") + calc.error);"
    ));
    body.push("begen::cuda::Dim3 grid, block;".into());
    body.push("unsigned shared_bytes = 0;".into());
    let extents = [
        ("grid0", "INT64_C(2147483647)", "grid.x", "grid x"),
        ("grid1", "INT64_C(65535)", "grid.y", "grid y"),
        ("grid2", "INT64_C(65535)", "grid.z", "grid z"),
        ("block0", "INT64_C(1024)", "block.x", "block x"),
        ("block1", "INT64_C(1024)", "block.y", "block y"),
        ("block2", "INT64_C(64)", "block.z", "block z"),
        ("shared", "INT64_C(4294967295)", "shared_bytes", "shared memory"),
    ];
    for (var, max, out, what) in extents {
        body.push(format!(
            "if (!begen::bin::fits_extent({var}, {max}, &{out})) \
             return begen::bin::error(\"{fname}\", begen::bin::extent({var}, {max}, \"{what}\", &{out}));"
        ));
    }
    body.push(
        "if (block.x == 0 || block.y == 0 || block.z == 0) return begen::bin::error(\"".to_string()
            + fname
            + "\", \"the block has no threads\");",
    );
    // Nothing to launch: an empty grid (a zero-sized input).
    body.push("if (grid.x == 0 || grid.y == 0 || grid.z == 0) return xla::ffi::Error::Success();".into());
    body
}

/// The parameter buffer, each C argument at its offset.
fn emit_packed_args(f: &Function, b: &BinaryCall) -> Vec<String> {
    let mut out = Vec::new();
    let size = b.param_size.max(1);
    out.push(format!("alignas(16) unsigned char args[{size}] = {{}};"));
    for arg in &b.args {
        let i = arg.param;
        let p = &f.params[i];
        let off = arg.offset;
        let stmt = match &arg.value {
            ArgValue::Pointer => {
                format!("begen::bin::put<uint64_t>(args, {off}, reinterpret_cast<uintptr_t>({}));", data_of(i, p))
            }
            ArgValue::Shape(axis, t) => {
                format!("begen::bin::put<{0}>(args, {off}, static_cast<{0}>(s{i}[{axis}]));", t.cpp_type())
            }
            ArgValue::Stride(axis, t) => {
                format!("begen::bin::put<{0}>(args, {off}, static_cast<{0}>(st{i}[{axis}]));", t.cpp_type())
            }
            ArgValue::Scalar(t) => match t.kind() {
                // The pair of parts XLA's attribute holds.
                ScalarKind::Complex => {
                    format!("std::memcpy(args + {off}, {}.begin(), {});", value_of(i, p), arg.size)
                }
                ScalarKind::Bool | ScalarKind::Int { .. } | ScalarKind::Float | ScalarKind::FloatBits => {
                    format!("begen::bin::put<{}>(args, {off}, {});", t.cpp_type(), value_of(i, p))
                }
            },
            ArgValue::Struct => format!("std::memcpy(args + {off}, {}.begin(), {});", value_of(i, p), arg.size),
            ArgValue::ListWords => {
                format!("begen::bin::put<uint64_t>(args, {off}, reinterpret_cast<uintptr_t>(w{i}->untyped_data()));")
            }
            ArgValue::ListLength => format!("begen::bin::put<int32_t>(args, {off}, static_cast<int32_t>(l{i}_len));"),
        };
        out.push(stmt);
    }
    out
}

/// An index type's bounds, as `check_array` takes them (`int64_t`
/// expressions), and its name.
fn index_bounds(index: AttrType) -> (String, String, &'static str) {
    // The handler's extents are `int64_t`: a wider bound is theirs.
    let int64 = |v: i128| match v.clamp(i64::MIN.into(), i64::MAX.into()) as i64 {
        i64::MIN => "INT64_MIN".to_string(),
        i64::MAX => "INT64_MAX".to_string(),
        v => format!("INT64_C({v})"),
    };
    // `check` gives every array an integer index type.
    let (lo, hi) = index.int_range().unwrap_or((0, 0));
    (int64(lo), int64(hi), index.as_str())
}

/// The `static const` rules of a cuTile array (or list element) named
/// `var`, with its axes in `var_axes`.
fn rules_cpp(a: &ArrayRules, var: &str, var_axes: &str) -> Vec<String> {
    let (lo, hi, index) = index_bounds(a.index);
    let axes: Vec<String> = a
        .axes
        .iter()
        .map(|x| {
            format!(
                "{{{}, {}, {}, {}, {}, {}}}",
                x.shape_divisible_by,
                x.stride_divisible_by,
                x.stride_constant.is_some(),
                x.stride_constant.unwrap_or(0),
                x.stride_lower_bound.is_some(),
                x.stride_lower_bound.unwrap_or(0)
            )
        })
        .collect();
    let rank = a.axes.len();
    vec![
        format!("static const begen::bin::AxisRules {var_axes}[{}] = {{{}}};", rank.max(1), axes.join(", ")),
        format!(
            "static const begen::bin::ArrayRules {var} = {{{lo}, {hi}, \"{index}\", {}, {var_axes}, {rank}}};",
            a.base_align
        ),
    ]
}

/// A list's element type as the handler compares it, an `int32_t`.
fn list_dtype(p: &Param) -> String {
    let t = match p.token.contract().map(|c| &c.dtype) {
        Some(ElementType::Dtype(t)) => *t,
        // `check` gives a cuTile list a dtype.
        _ => AttrType::UInt8,
    };
    format!("static_cast<int32_t>(xla::ffi::DataType::{})", t.xla_type())
}

/// Each list's elements among XLA's remaining arguments (`l<i>_at`,
/// `l<i>_len`), and its first element `l<i>_0` (type and rank checked), the
/// dimensions it names read from it: before the dimension statements.
fn list_spans(f: &Function, b: &BinaryCall) -> Vec<String> {
    let fname = lit(&f.name);
    let mut out = Vec::new();
    let mut at = "0".to_string();
    for l in &b.lists {
        let i = l.param;
        let p = &f.params[i];
        let name = &p.name;
        let rank = l.axes.len();
        let words = 1 + 2 * rank;
        out.push(format!("const size_t l{i}_at = {at};"));
        out.push(format!("size_t l{i}_len = 0;"));
        out.push(format!(
            "if (std::string e = begen::bin::list_span(\"{name}\", w{i}->dimensions()[0], {words}, l{i}_at, \
             begen_rest.size(), &l{i}_len); !e.empty()) return begen::bin::error(\"{fname}\", e);"
        ));
        out.push(format!("const auto l{i}_e0 = begen_rest.get<xla::ffi::AnyBuffer>(l{i}_at);"));
        out.push(format!(
            "if (!l{i}_e0.has_value()) return begen::bin::error(\"{fname}\", \"parameter '\" + \
             begen::bin::element_name(\"{name}\", 0) + \"': \" + l{i}_e0.error().message());"
        ));
        out.push(format!("const xla::ffi::AnyBuffer l{i}_0 = l{i}_e0.value();"));
        out.push(format!(
            "if (std::string e = begen::bin::check_element_type(\"{name}\", 0, static_cast<int32_t>(l{i}_0.element_type()), \
             {}, l{i}_0.dimensions().size(), {rank}); !e.empty()) return begen::bin::error(\"{fname}\", e);",
            list_dtype(p)
        ));
        at = format!("l{i}_at + l{i}_len");
    }
    if !b.lists.is_empty() {
        out.push(format!(
            "if (begen_rest.size() != {at}) return begen::bin::error(\"{fname}\", \"XLA passed \" + \
             std::to_string(begen_rest.size()) + \" list elements; the lists hold \" + std::to_string({at}));"
        ));
    }
    out
}

/// Every element of list `l` checked: its type and rank, its extents
/// against the token's (literal extents, named dimensions), cuTile's
/// element assumptions (index overflow first).
fn list_checks(f: &Function, l: &ArrayRules, sources: &[cpp::DimSource]) -> Vec<String> {
    let fname = lit(&f.name);
    let i = l.param;
    let p = &f.params[i];
    let name = &p.name;
    let rank = l.axes.len();
    let n = rank.max(1);
    let mut out = rules_cpp(l, &format!("lr{i}"), &format!("lx{i}"));
    out.push(format!("for (size_t k = 0; k < l{i}_len; ++k) {{"));
    out.push(format!("  const auto e = begen_rest.get<xla::ffi::AnyBuffer>(l{i}_at + k);"));
    out.push(format!(
        "  if (!e.has_value()) return begen::bin::error(\"{fname}\", \"parameter '\" + \
         begen::bin::element_name(\"{name}\", k) + \"': \" + e.error().message());"
    ));
    out.push("  const xla::ffi::AnyBuffer b = e.value();".into());
    out.push(format!(
        "  if (std::string m = begen::bin::check_element_type(\"{name}\", k, static_cast<int32_t>(b.element_type()), {}, \
         b.dimensions().size(), {rank}); !m.empty()) return begen::bin::error(\"{fname}\", m);",
        list_dtype(p)
    ));
    out.push(format!("  int64_t s[{n}] = {{}};"));
    out.push(format!("  int64_t st[{n}] = {{}};"));
    out.push(format!(
        "  if (std::string m = begen::bin::check_element(\"{name}\", k, b.untyped_data(), b.dimensions().begin(), \
         b.dimensions().size(), lr{i}, s, st); !m.empty()) return begen::bin::error(\"{fname}\", m);"
    ));
    let dims = p.token.contract().and_then(|c| c.dims.clone()).unwrap_or_default();
    for (axis, d) in dims.iter().enumerate() {
        match d {
            Extent::Fixed(v) => out.push(format!(
                "  if (s[{axis}] != {v}) return begen::rt::bad_extent(\"{fname}\", \
                 begen::bin::element_name(\"{name}\", k).c_str(), {axis}, {v}, s[{axis}]);"
            )),
            // A binary kernel's contracts have a fixed rank (check refuses a rest).
            Extent::Rest(_) => {}
            Extent::Named(d) => {
                let Some(src) = sources.iter().find(|s| s.dim == *d) else { continue };
                out.push(format!(
                    "  if (s[{axis}] != {var}) return begen::rt::dim_mismatch(\"{fname}\", \"{d}\", \"{from}\", \
                     {from_axis}, {var}, begen::bin::element_name(\"{name}\", k).c_str(), {axis}, s[{axis}]);",
                    var = src.var,
                    from = src.param,
                    from_axis = src.axis,
                ));
            }
        }
    }
    out.push("}".into());
    out
}

/// List `l`'s words written into its hidden result on the launch stream,
/// right before the kernel (`begen/list_words.h`).
fn list_words(f: &Function, l: &ArrayRules) -> Vec<String> {
    let fname = lit(&f.name);
    let i = l.param;
    let name = &f.params[i].name;
    vec![
        "{".into(),
        format!(
            "  begen::cuda::WordWriter writer(begen::cuda::words_kernel(), \
             static_cast<begen::cuda::CUstream>(begen_stream), w{i}->untyped_data());"
        ),
        format!("  for (size_t k = 0; k < l{i}_len; ++k) {{"),
        format!("    const auto e = begen_rest.get<xla::ffi::AnyBuffer>(l{i}_at + k);"),
        "    if (!e.has_value()) break;".into(),
        "    const xla::ffi::AnyBuffer b = e.value();".into(),
        "    writer.put_array(b.untyped_data(), b.dimensions().begin(), b.dimensions().size());".into(),
        "  }".into(),
        format!(
            "  if (std::string e = writer.finish(); !e.empty()) return begen::bin::launch_failed(\
             std::string(\"{fname}: writing the words of list parameter '{name}': \") + e);"
        ),
        "}".into(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_bounds_of_cutiles_index_types() {
        let s = |t| {
            let (lo, hi, name) = index_bounds(t);
            format!("{lo} {hi} {name}")
        };
        assert_eq!(s(AttrType::Int32), "INT64_C(-2147483648) INT64_C(2147483647) int32");
        assert_eq!(s(AttrType::UInt32), "INT64_C(0) INT64_C(4294967295) uint32");
        assert_eq!(s(AttrType::Int64), "INT64_MIN INT64_MAX int64");
        assert_eq!(s(AttrType::UInt64), "INT64_C(0) INT64_MAX uint64");
    }
}
