//! View-model unit tests and golden tests of the generated text
//! (`fixtures/emit/<case>/`; `BEGEN_BLESS=1` rewrites the expectations).

// Test code reads its switches (CXX, NVCC, BEGEN_PYTHON) from the
// environment directly (clippy.toml).
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

/// The harness the integration tests' goldens use too.
#[path = "../../../tests/support/golden.rs"]
mod golden;

use super::cpp::{Binding, Passed, handler_view, param_cpp};
use super::python::{PyConversion, PyFunctionView, py_function_view};
use super::*;
use crate::emit::abi::{Kernel, trampoline_param, trampoline_view};
use crate::model::generated::Emitted;
use crate::model::{
    ArrayBinding, AttrType, Container, Function, FunctionOptions, HalfRepr, Library, Module, Param, Platform,
    RecordMember, RecordType, SourceFile, Token, VmapMethod,
};

/// Every file of `lib` with the jax target, its XLA FFI API version `api`.
fn emit(lib: &Library, api: Option<&str>) -> Emitted {
    crate::target::emit(lib, &|_| api.map(String::from))
}

/// What a glue part is.
const GLUE: FileKind = FileKind::TargetUnit { target: JAX, heavy: true };

/// The glue parts of `out`, the first first.
fn glue_parts(out: &Emitted) -> impl Iterator<Item = &GeneratedFile> {
    out.files.iter().filter(|f| f.kind == GLUE)
}

/// One conversion as the module writes it, of value `v`, quoting `w`.
#[derive(Template)]
#[template(
    source = r#"{%- import "python/function.py" as fun -%}{% call fun::conversion(c, v, w) %}{% endcall %}"#,
    ext = "txt",
    escape = "none"
)]
struct ConversionText<'a> {
    c: &'a PyConversion,
    v: &'a str,
    w: &'a str,
}

fn conversion_text(c: &PyConversion, v: &str, w: &str) -> String {
    ConversionText { c, v, w }.render().unwrap()
}

/// One function as the module writes it (its `def`, docstring and body),
/// and its stub signature.
#[derive(Template)]
#[template(
    source = r#"{%- import "python/function.py" as fun -%}
{%- if stub %}{% call fun::params(f.params, true) %}{% endcall %} -> {% call fun::several("jax.Array", f.outputs) %}{% endcall %}
{%- else %}{% call fun::function(f, "") %}{% endcall %}{% endif %}"#,
    ext = "txt",
    escape = "none"
)]
struct FunctionText<'a> {
    f: &'a PyFunctionView,
    stub: bool,
}

fn function_text(f: &PyFunctionView) -> String {
    FunctionText { f, stub: false }.render().unwrap()
}

fn stub_signature(f: &PyFunctionView) -> String {
    FunctionText { f, stub: true }.render().unwrap()
}

fn param(name: &str, token: Token) -> Param {
    Param { name: name.into(), py_name: name.into(), token, half_repr: None, pointer: None, array: None, default: None }
}

fn attr(name: &str, ty: AttrType) -> Param {
    param(name, Token::Attr { name: name.into(), ty })
}

fn function(name: &str, file: &str, root: &Path, platform: Platform, params: Vec<Param>) -> Function {
    Function {
        name: name.into(),
        module: String::new(),
        target: String::new(),
        py_name: name.into(),
        handler: String::new(),
        trampoline: String::new(),
        file: file.into(),
        variant: None,
        path: root.join(file),
        line: 3,
        column: 6,
        platform,
        params,
        options: FunctionOptions::default().into(),
        consts: Vec::new(),
        instances: Vec::new(),
        binary: None,
        returns: crate::model::Returns::Void,
        native: None,
        rets_like: None,
        creators: Vec::new(),
    }
}

/// A one-module library as `check` would make it of these functions
/// (names already clear of Python keywords where a test wants that).
fn library(name: &str, mut functions: Vec<Function>) -> Library {
    for f in &mut functions {
        for p in &mut f.params {
            if crate::model::is_py_keyword(&p.name) || &*p.name == "out" {
                p.py_name = format!("{}_", p.name).into();
            }
        }
        f.module = name.into();
        f.target = format!("{name}.{}", f.name);
        f.handler = format!("begen_{name}_{}", f.name);
        f.trampoline = format!("begen_call_{name}_{}", f.name);
    }
    let mut sources: Vec<SourceFile> = functions
        .iter()
        .map(|f| SourceFile {
            file: f.file.clone(),
            path: f.path.clone(),
            platform: f.platform,
            include: Some(f.path.display().to_string()),
            variants: Vec::new(),
        })
        .collect();
    sources.dedup();
    let module = Module { name: name.into(), py_name: name.into(), functions: (0..functions.len()).collect() };
    Library {
        name: name.into(),
        prefix: name.into(),
        functions,
        modules: vec![module],
        namespaced: false,
        sources,
        algorithms: Vec::new(),
        plan: crate::model::plan::Plan::empty(name),
        root: PathBuf::from("/"),
        binaries: Vec::new(),
        tuning: Default::default(),
    }
}

/// A CPU library: two kernels in one file, one in another.
pub(crate) fn cpu_case(root: &Path) -> Library {
    library(
        "cpukernels",
        vec![
            function(
                "scale_by",
                "a.cpp",
                root,
                Platform::Cpu,
                vec![
                    param("x", Token::Arg(None)),
                    param("y", Token::Ret(None)),
                    attr("scale_factor", AttrType::Float32),
                ],
            ),
            function(
                "minmax",
                "a.cpp",
                root,
                Platform::Cpu,
                vec![param("x", Token::Arg(None)), param("lo", Token::Ret(None)), param("hi", Token::Ret(None))],
            ),
            function(
                "mixed_attrs",
                "sub/b.cpp",
                root,
                Platform::Cpu,
                vec![
                    param("x", Token::Arg(None)),
                    param("y", Token::Ret(None)),
                    attr("flag", AttrType::Bool),
                    attr("n", AttrType::Int64),
                    attr("k", AttrType::UInt8),
                    attr("h", AttrType::Float16),
                    attr("b", AttrType::BFloat16),
                    attr("c", AttrType::Complex64),
                    attr("z", AttrType::Complex128),
                    attr("d", AttrType::Float64),
                ],
            ),
        ],
    )
}

/// A CUDA library: stream, command buffer, CUDA half attrs, odd names.
pub(crate) fn cuda_case(root: &Path) -> Library {
    let mut scale = function(
        "vector_scale",
        "k/scale.cu",
        root,
        Platform::Cuda,
        vec![
            param("x", Token::Arg(None)),
            param("out", Token::Ret(None)),
            Param { half_repr: Some(HalfRepr::CudaHalf), ..attr("alpha", AttrType::Float16) },
            Param { half_repr: Some(HalfRepr::CudaBFloat16), ..attr("beta", AttrType::BFloat16) },
            param("stream", Token::Stream),
        ],
    );
    scale.options =
        FunctionOptions { command_buffer: true, vmap_method: VmapMethod::BroadcastAll, ..FunctionOptions::default() }
            .into();
    // Out of the conventional order, with names Python cannot use as is.
    let odd = function(
        "lambda_kernel",
        "k/scale.cu",
        root,
        Platform::Cuda,
        vec![
            param("stream", Token::Stream),
            attr("lambda", AttrType::Int32),
            param("out", Token::Arg(None)),
            param("len", Token::Ret(None)),
        ],
    );
    library("gpukernels", vec![scale, odd])
}

/// Both halves of one parameter: the handler's and the trampoline's.
struct BothHalves {
    bindings: Vec<Binding>,
    passed: Passed,
    locals: Vec<String>,
    prepare: Vec<String>,
    call_arg: String,
}

/// `param_cpp` and `trampoline_param` of a parameter of a plain function
/// named `f`.
fn cpp_of(i: usize, slot: usize, p: &Param) -> BothHalves {
    let f = function("f", "a.cpp", Path::new("/k"), Platform::Cpu, vec![]);
    let kernel = Kernel { f: &f, instance: None };
    let handler = param_cpp(&kernel, i, p);
    let trampoline = trampoline_param(&kernel, i, slot, p);
    BothHalves {
        bindings: handler.bindings,
        passed: handler.passed,
        locals: handler.locals,
        prepare: trampoline.prepare,
        call_arg: trampoline.call_arg,
    }
}

#[test]
fn tensor_params_bind_buffers_and_build_views() {
    let arg = cpp_of(0, 0, &param("x", Token::Arg(None)));
    assert_eq!(arg.bindings[0].binding, ".Arg<xla::ffi::AnyBuffer>()");
    assert_eq!(arg.bindings[0].impl_param, "xla::ffi::AnyBuffer p0_x");
    assert_eq!(arg.passed, Passed::Tensor("begen::rt::tensor_arg(p0_x)".into()));
    assert_eq!(arg.prepare, ["BE::Tensor t0_x = begen::tr::view(begen_t[0]);"]);
    assert_eq!(arg.call_arg, "t0_x");
    assert!(arg.bindings[0].checks[0].contains("unsupported_dtype(\"f\", \"x\""));
    assert!(arg.bindings[0].checks[1].contains("rank_too_high(\"f\", \"x\""));

    let ret = cpp_of(1, 3, &param("y", Token::Ret(None)));
    assert_eq!(ret.bindings[0].impl_param, "xla::ffi::Result<xla::ffi::AnyBuffer> p1_y");
    assert_eq!(ret.passed, Passed::Tensor("begen::rt::tensor_arg(*p1_y)".into()));
    assert_eq!(ret.prepare, ["BE::Tensor t1_y = begen::tr::view(begen_t[3]);"]);
}

#[test]
fn struct_attrs_decode_into_the_glue_copy_and_build_the_kernels_struct() {
    let ty = RecordType {
        name: "Affine".into(),
        members: vec![
            RecordMember { name: "scale".into(), ty: AttrType::Float32, half_repr: None },
            RecordMember { name: "h".into(), ty: AttrType::Float16, half_repr: Some(HalfRepr::CudaHalf) },
        ],
        file: "p.h".into(),
        line: 2,
        mirror: "begen_struct_Affine".into(),
    };
    let p = cpp_of(2, 1, &param("p", Token::Record { name: "p".into(), ty: Box::new(ty.clone()) }));
    assert_eq!(p.bindings[0].binding, ".Attr<begen_struct_Affine>(\"p\")");
    assert_eq!(p.bindings[0].impl_param, "begen_struct_Affine p2_p");
    assert_eq!(p.locals, ["const void* const m2_p[] = {&p2_p.scale, &p2_p.h};"]);
    assert_eq!(p.passed, Passed::Attr("m2_p".into()));
    assert_eq!(p.prepare[0], "const void* const* s2_p = static_cast<const void* const*>(begen_a[1]);");
    assert_eq!(p.prepare[2], "r2_p_1.x = begen::tr::attr<uint16_t>(s2_p[1]);");
    assert!(p.prepare[3].starts_with("static_assert(std::is_aggregate<Affine>::value"), "{}", p.prepare[3]);
    assert_eq!(
        p.prepare[4],
        "const Affine v2_p{static_cast<decltype(Affine::scale)>(begen::tr::attr<float>(s2_p[0])), \
         static_cast<decltype(Affine::h)>(__half(r2_p_1))};"
    );
    assert_eq!(p.call_arg, "v2_p");
    let glue = super::cpp::struct_view(&ty);
    assert_eq!(glue.members, ["float scale;", "uint16_t h;"]);
    assert_eq!(glue.decoded, ["xla::ffi::StructMember<float>(\"scale\")", "xla::ffi::StructMember<uint16_t>(\"h\")"]);
    let py = conversion_text(&super::python::py_record_conversion(&ty), "p", "\"f: attribute 'p' (Affine)\"");
    assert!(
        py.starts_with("_begen_record(p, ((\"scale\", \"float32\", lambda x, w: _begen_float(x, _np.float32, w)),"),
        "{py}"
    );
}

#[test]
fn array_attrs_decode_a_span_and_build_the_kernels_container() {
    let array = |ty: AttrType, container: Container, element: &str| Param {
        array: Some(Box::new(ArrayBinding { container, element: element.into() })),
        ..param("w", Token::Array { name: "w".into(), ty })
    };
    let w = cpp_of(3, 0, &array(AttrType::Float32, Container::BeSpan, "float"));
    assert_eq!(w.bindings[0].binding, ".Attr<xla::ffi::Span<const float>>(\"w\")");
    assert_eq!(w.locals, ["const begen::ArrayArg a3_w = begen::rt::array_arg(p3_w, 1);"]);
    assert_eq!(w.passed, Passed::Attr("&a3_w".into()));
    assert_eq!(w.prepare[3], "const BE::Span<const float> v3_w(e3_w, static_cast<size_t>(x3_w.size));");
    let c = cpp_of(0, 2, &array(AttrType::Complex64, Container::Vector, "std::complex<float>"));
    assert_eq!(c.bindings[0].binding, ".Attr<xla::ffi::Span<const float>>(\"w\")");
    assert!(c.bindings[0].checks[0].contains("% 2 != 0) return begen::rt::bad_complex_array(\"f\", \"w\""));
    assert_eq!(c.locals, ["const begen::ArrayArg a0_w = begen::rt::array_arg(p0_w, 2);"]);
    assert_eq!(c.prepare[2], "const std::complex<float>* e0_w = static_cast<const std::complex<float>*>(x0_w.data);");
    assert_eq!(
        c.prepare[3],
        "const std::vector<std::complex<float>> v0_w(e0_w, e0_w + static_cast<size_t>(x0_w.size));"
    );
    let b = cpp_of(0, 0, &array(AttrType::Bool, Container::XlaSpan, "bool"));
    assert_eq!(b.bindings[0].binding, ".Attr<xla::ffi::Span<const uint8_t>>(\"w\")");
    assert!(b.bindings[0].checks[0].contains("begen::rt::all_bools(p0_w)"));
    assert_eq!(b.prepare[3], "const xla::ffi::Span<const bool> v0_w(e0_w, static_cast<size_t>(x0_w.size));");
    let py = conversion_text(
        &super::python::py_array_conversion(AttrType::Float16),
        "w",
        "\"f: attribute 'w' (float16[])\"",
    );
    assert_eq!(
        py,
        "_begen_array(w, \"float16\", _np.uint16, lambda x, w: _begen_half(x, _np.float16, _np.uint16, w), \"f: attribute 'w' (float16[])\")"
    );
}

#[test]
fn attrs_bind_by_type_and_pass_by_address() {
    let f32 = cpp_of(2, 0, &attr("s", AttrType::Float32));
    assert_eq!(f32.bindings[0].binding, ".Attr<float>(\"s\")");
    assert_eq!(f32.passed, Passed::Attr("&p2_s".into()));
    assert_eq!(f32.call_arg, "begen::tr::attr<float>(begen_a[0])");

    let c = cpp_of(0, 1, &attr("c", AttrType::Complex128));
    assert_eq!(c.bindings[0].binding, ".Attr<xla::ffi::Span<const double>>(\"c\")");
    assert_eq!(c.passed, Passed::Attr("p0_c.begin()".into()));
    assert_eq!(
        c.prepare,
        [
            "const double* c0_c = static_cast<const double*>(begen_a[1]);",
            "const std::complex<double> v0_c(c0_c[0], c0_c[1]);"
        ]
    );
    assert!(c.bindings[0].checks[0].contains("bad_complex_attr(\"f\", \"c\""));

    let bits = cpp_of(0, 0, &attr("h", AttrType::Float16));
    assert_eq!(bits.bindings[0].binding, ".Attr<uint16_t>(\"h\")");
    assert_eq!(bits.call_arg, "begen::tr::attr<uint16_t>(begen_a[0])");

    let half = Param { half_repr: Some(HalfRepr::CudaHalf), ..attr("h", AttrType::Float16) };
    let half = cpp_of(0, 2, &half);
    assert_eq!(half.call_arg, "v0_h");
    assert_eq!(half.prepare[1], "r0_h.x = begen::tr::attr<uint16_t>(begen_a[2]);");
    assert_eq!(half.prepare[2], "const __half v0_h(r0_h);");

    let stream = cpp_of(3, 0, &param("stream", Token::Stream));
    assert_eq!(stream.bindings[0].binding, ".Ctx<xla::ffi::PlatformStream<void*>>()");
    assert_eq!(stream.passed, Passed::Stream("begen::rt::stream_handle(p3_stream)".into()));
    assert_eq!(stream.call_arg, "begen_stream");
}

#[test]
fn handler_binds_in_canonical_order_and_trampoline_calls_in_signature_order() {
    let lib = cuda_case(Path::new("/k"));
    let kernel = |f| Kernel { f, instance: None };
    let h = handler_view(&kernel(&lib.functions[1]));
    assert_eq!(h.symbol, "begen_gpukernels_lambda_kernel");
    assert_eq!(h.trampoline, "begen_call_gpukernels_lambda_kernel");
    assert_eq!(
        h.bindings,
        [
            ".Ctx<xla::ffi::PlatformStream<void*>>()",
            ".Arg<xla::ffi::AnyBuffer>()",
            ".Ret<xla::ffi::AnyBuffer>()",
            ".Attr<int32_t>(\"lambda\")",
        ]
    );
    assert_eq!(
        h.packs,
        [
            "const begen::TensorArg tensors[] = {begen::rt::tensor_arg(p2_out), begen::rt::tensor_arg(*p3_len)};",
            "const void* const attrs[] = {&p1_lambda};",
        ]
    );
    assert_eq!(h.call_args, ["tensors", "attrs", "begen::rt::stream_handle(p0_stream)"]);
    assert_eq!(h.traits, "");
    assert!(handler_view(&kernel(&lib.functions[0])).traits.contains("kCmdBufferCompatible"));

    let t = trampoline_view(&kernel(&lib.functions[1]));
    assert_eq!(t.symbol, "begen_call_gpukernels_lambda_kernel");
    assert_eq!(t.params, "const begen::TensorArg* begen_t, const void* const* begen_a, int64_t begen_stream");
    assert_eq!(t.call_args, ["begen_stream", "begen::tr::attr<int32_t>(begen_a[0])", "t2_out", "t3_len"]);

    // Nothing to pass: nullptr, and the trampoline leaves the parameter unnamed.
    let cpu = cpu_case(Path::new("/k"));
    let minmax = handler_view(&kernel(&cpu.functions[1]));
    assert_eq!(minmax.call_args, ["tensors", "nullptr", "0"]);
    assert_eq!(
        trampoline_view(&kernel(&cpu.functions[1])).params,
        "const begen::TensorArg* begen_t, const void* const*, int64_t"
    );
}

#[test]
fn python_function_signature_and_conversions() {
    let lib = cpu_case(Path::new("/k"));
    let f = function_text(&py_function_view(&lib.functions[2], "mixed_attrs"));
    assert!(f.contains("def mixed_attrs(x, /, *, flag, n, k, h, b, c, z, d, out):"), "{f}");
    let call = f.lines().last().unwrap();
    for conversion in [
        "h=_begen_half(h, _np.float16, _np.uint16, \"mixed_attrs: attribute 'h' (float16)\")",
        "b=_begen_half(b, _ml_dtypes.bfloat16, _np.uint16, \"mixed_attrs: attribute 'b' (bfloat16)\")",
        "z=_begen_complex(z, _np.float64, \"mixed_attrs: attribute 'z' (complex128)\")",
        "n=_begen_int(n, _np.int64, \"mixed_attrs: attribute 'n' (int64)\")",
        "c=_begen_complex(c, _np.float32, \"mixed_attrs: attribute 'c' (complex64)\")",
        "k=_begen_int(k, _np.uint8, \"mixed_attrs: attribute 'k' (uint8)\")",
        "flag=_begen_bool(flag, \"mixed_attrs: attribute 'flag' (bool)\")",
        "d=_begen_float(d, _np.float64, \"mixed_attrs: attribute 'd' (float64)\")",
    ] {
        assert!(call.contains(conversion), "{conversion} not in {call}");
    }

    let two = py_function_view(&lib.functions[1], "minmax");
    assert!(function_text(&two).lines().last().unwrap().contains("tuple(out)"));
    assert!(stub_signature(&two).ends_with(" -> tuple[jax.Array, jax.Array]"), "{}", stub_signature(&two));

    let gpu = cuda_case(Path::new("/k"));
    let odd = function_text(&py_function_view(&gpu.functions[1], "lambda_kernel"));
    assert!(odd.contains("def lambda_kernel(out_, /, *, lambda_, out):"), "{odd}");
    assert!(odd.lines().last().unwrap().ends_with(
        "(out_, **{\"lambda\": _begen_int(lambda_, _np.int32, \"lambda_kernel: attribute 'lambda_' (int32)\")})"
    ));
    assert!(
        function_text(&py_function_view(&gpu.functions[0], "vector_scale"))
            .lines()
            .last()
            .unwrap()
            .contains("vmap_method=\"broadcast_all\"")
    );
}

#[test]
fn emit_lists_wrappers_then_python_then_manifest() {
    let lib = cpu_case(Path::new("/k"));
    let out = emit(&lib, Some("0.3"));
    let paths: Vec<&str> = out.files.iter().map(|f| f.rel_path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "gen/a.cpp.begen.cc",
            "gen/sub__b.cpp.begen.cc",
            "gen/cpukernels.begen.cc",
            "cpukernels.py",
            "cpukernels.pyi",
            "cpukernels.yaml"
        ]
    );
    assert_eq!(out.wrappers().count(), 2);
    assert_eq!(glue_parts(&out).next().map(|g| g.rel_path.as_str()), Some("gen/cpukernels.begen.cc"));
    assert_eq!(out.translation_units().count(), 3);
    assert_eq!(out, emit(&lib, Some("0.3")), "deterministic");
}

/// A library of more kernels than one glue TU takes gets its handlers in
/// parts of `HANDLERS_PER_GLUE`, each handler in exactly one part, the FFI
/// API version symbol in the first only; every part is compiled.
#[test]
fn many_handlers_split_the_glue_into_parts() {
    let root = Path::new("/k");
    let n = 2 * super::cpp::HANDLERS_PER_GLUE + 5;
    let fs = (0..n)
        .map(|i| {
            let x = param("x", Token::Arg(None));
            let y = param("y", Token::Ret(None));
            function(&format!("k{i}"), "a.cpp", root, Platform::Cpu, vec![x, y])
        })
        .collect();
    let lib = library("many", fs);
    let out = emit(&lib, Some("0.3"));
    let parts: Vec<&GeneratedFile> = glue_parts(&out).collect();
    let paths: Vec<&str> = parts.iter().map(|g| g.rel_path.as_str()).collect();
    assert_eq!(paths, ["gen/many.begen.cc", "gen/many.part2.begen.cc", "gen/many.part3.begen.cc"]);
    for i in 0..n {
        let defined = format!("XLA_FFI_DEFINE_HANDLER_SYMBOL(begen_many_k{i},");
        let count: usize = parts.iter().map(|g| g.contents.matches(&defined).count()).sum();
        assert_eq!(count, 1, "k{i} is defined once");
    }
    let api = |g: &GeneratedFile| g.contents.contains(&super::cpp::ffi_api_symbol("many"));
    assert_eq!(parts.iter().map(|g| api(g)).collect::<Vec<_>>(), [true, false, false]);
    assert!(parts[2].contents.contains("part\n// 3 of 3"), "{}", &parts[2].contents[..400]);
    assert_eq!(out.translation_units().filter(|f| f.kind == GLUE).count(), 3);
}

#[test]
fn manifest_round_trips_as_yaml() {
    let lib = cuda_case(Path::new("/k"));
    let text = manifest::emit_manifest(&lib, Some("0.3"));
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap();
    assert_eq!(doc["platform"].as_str(), Some("cuda"));
    assert_eq!(doc["functions"][0]["target"].as_str(), Some("gpukernels.vector_scale"));
    assert_eq!(doc["functions"][0]["arg_spec"][2].as_str(), Some("attr.alpha:float16"));
    assert_eq!(doc["xla_ffi_api_version"].as_str(), Some("0.3"));
}

// ---- golden files ---------------------------------------------------------

/// The root the golden cases pretend their sources live under, so the
/// expected `#include` lines do not depend on the checkout's location.
const GOLDEN_ROOT: &str = "/begen-fixture";

fn check_golden(case: &str, lib: &Library) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/emit").join(case);
    let mut goldens = golden::Goldens::new("cargo test --lib target::xla_jax::tests::golden");
    for f in &emit(lib, Some("0.3")).files {
        goldens.check(&dir.join(&f.rel_path), &f.contents);
    }
    goldens.finish();
}

#[test]
fn golden_cpu() {
    check_golden("cpu", &cpu_case(Path::new(GOLDEN_ROOT)));
}

#[test]
fn golden_cuda() {
    check_golden("cuda", &cuda_case(Path::new(GOLDEN_ROOT)));
}

// ---- compile what we generate ---------------------------------------------

/// The Python with jax: `BEGEN_PYTHON`, else `python3`.
fn python() -> String {
    std::env::var("BEGEN_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn run(cmd: &mut std::process::Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    text
}

/// Generates the CPU case for its real sources, compiles the wrappers and the glue with
/// `-Wall -Wextra -Werror` into a shared library and calls every kernel from
/// JAX (fixtures/emit/cpu/check.py). Needs g++ and a Python with jax:
/// `BEGEN_PYTHON=/path/to/python cargo test -- --ignored target::xla_jax`.
#[test]
#[ignore = "needs g++ and a Python with jax (BEGEN_PYTHON)"]
fn cpu_wrappers_compile_and_run_from_jax() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/emit/cpu");
    let lib = cpu_case(&fixture.join("src"));
    let out = emit(&lib, None);
    let dir = std::env::temp_dir().join(format!("begen-emit-cpu-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for f in &out.files {
        let path = dir.join(&f.rel_path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &f.contents).unwrap();
    }
    let xla = run(std::process::Command::new(python()).args(["-c", "import jax.ffi; print(jax.ffi.include_dir())"]));
    let support = Path::new(env!("CARGO_MANIFEST_DIR")).join("build-support/include");
    let mut cxx = std::process::Command::new(std::env::var("CXX").unwrap_or_else(|_| "g++".into()));
    cxx.args(["-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared"])
        .arg("-I")
        .arg(&support)
        // XLA's headers warn under -Wextra: include them as system headers.
        .arg("-isystem")
        .arg(xla.trim())
        .arg("-o")
        .arg(dir.join("libcpukernels.so"));
    for f in out.translation_units() {
        cxx.arg(dir.join(&f.rel_path));
    }
    run(&mut cxx);
    // Exported: the handlers; hidden: the trampolines and begen's helpers
    // (a thread-local message buffer among them).
    let exported =
        run(std::process::Command::new("nm").args(["-D", "--defined-only"]).arg(dir.join("libcpukernels.so")));
    assert!(exported.contains(" begen_cpukernels_mixed_attrs\n"), "{exported}");
    for hidden in ["begen_call_", "5begen2tr", "5begen2rt"] {
        assert!(!exported.contains(hidden), "{hidden} exported:\n{exported}");
    }
    let text = run(std::process::Command::new(python()).arg(fixture.join("check.py")).arg(&dir));
    assert!(text.contains("all checks passed"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Generates the CUDA case for its real sources and compiles its wrapper
/// with nvcc and its glue with the host compiler (`-c` only: no GPU
/// needed), warnings as errors. Needs
/// `NVCC` and a Python with jax (`BEGEN_PYTHON`) for the XLA headers.
#[test]
#[ignore = "needs nvcc (NVCC) and a Python with jax (BEGEN_PYTHON)"]
fn cuda_wrappers_compile_with_nvcc() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/emit/cuda");
    let lib = cuda_case(&fixture.join("src"));
    let out = emit(&lib, None);
    let dir = std::env::temp_dir().join(format!("begen-emit-cuda-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let xla = run(std::process::Command::new(python()).args(["-c", "import jax.ffi; print(jax.ffi.include_dir())"]));
    let support = Path::new(env!("CARGO_MANIFEST_DIR")).join("build-support/include");
    for (f, platform) in out.wrappers() {
        assert_eq!(platform, Platform::Cuda);
        let path = dir.join(&f.rel_path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &f.contents).unwrap();
        let mut nvcc = std::process::Command::new(std::env::var("NVCC").unwrap_or_else(|_| "nvcc".into()));
        nvcc.args(["-std=c++17", "-arch=sm_90", "-c", "-Xcompiler", "-fPIC,-Wall,-Wextra,-Werror"])
            .arg("-I")
            .arg(&support)
            .arg("-isystem")
            .arg(xla.trim())
            .arg("-o")
            .arg(path.with_extension("o"))
            .arg(&path);
        run(&mut nvcc);
    }
    // The glue: host C++ only, no CUDA header on the path.
    let glue = glue_parts(&out).next().unwrap();
    let path = dir.join(&glue.rel_path);
    std::fs::write(&path, &glue.contents).unwrap();
    run(std::process::Command::new(std::env::var("CXX").unwrap_or_else(|_| "g++".into()))
        .args(["-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-fPIC", "-c", "-I"])
        .arg(&support)
        .arg("-isystem")
        .arg(xla.trim())
        .arg("-o")
        .arg(path.with_extension("o"))
        .arg(&path));
    // The support headers alone, in both of nvcc's passes.
    std::fs::create_dir_all(&dir).unwrap();
    run(std::process::Command::new(std::env::var("NVCC").unwrap_or_else(|_| "nvcc".into()))
        .args(["-std=c++17", "-arch=sm_90", "-c", "-Xcompiler", "-Wall,-Wextra,-Wshadow,-Werror", "-I"])
        .arg(&support)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/emit/headers/device_test.cu"))
        .arg("-o")
        .arg(dir.join("device_test.o")));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Compiles fixtures/emit/headers/headers_test.cpp against the support
/// headers as plain C++17 (no CUDA) with warnings as errors, and runs it.
#[test]
#[ignore = "needs a C++17 compiler (CXX, default g++)"]
fn support_headers_compile_without_cuda_and_behave() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let exe = std::env::temp_dir().join(format!("begen-headers-{}", std::process::id()));
    run(std::process::Command::new(std::env::var("CXX").unwrap_or_else(|_| "g++".into()))
        .args(["-std=c++17", "-Wall", "-Wextra", "-Wpedantic", "-Wshadow", "-Werror", "-I"])
        .arg(root.join("build-support/include"))
        .arg(root.join("fixtures/emit/headers/headers_test.cpp"))
        .arg("-o")
        .arg(&exe));
    let text = run(&mut std::process::Command::new(&exe));
    assert!(text.contains("all checks passed"), "{text}");
    let _ = std::fs::remove_file(&exe);
}

/// Every type's attribute conversion, stub type and array element dtype,
/// as the type table gives them (a new row gets its kind's helper).
#[test]
fn every_scalar_type_converts_by_its_kind_and_dtypes() {
    use super::python::{py_array_conversion, py_attr_type, py_scalar};
    let py_attr_conversion = |ty, v, w| conversion_text(&PyConversion::Scalar(py_scalar(ty)), v, w);
    let want = [
        (AttrType::Bool, "_begen_bool(v, W)", "bool", "_np.uint8"),
        (AttrType::Int8, "_begen_int(v, _np.int8, W)", "int", "_np.int8"),
        (AttrType::UInt8, "_begen_int(v, _np.uint8, W)", "int", "_np.uint8"),
        (AttrType::Int16, "_begen_int(v, _np.int16, W)", "int", "_np.int16"),
        (AttrType::UInt16, "_begen_int(v, _np.uint16, W)", "int", "_np.uint16"),
        (AttrType::Int32, "_begen_int(v, _np.int32, W)", "int", "_np.int32"),
        (AttrType::UInt32, "_begen_int(v, _np.uint32, W)", "int", "_np.uint32"),
        (AttrType::Int64, "_begen_int(v, _np.int64, W)", "int", "_np.int64"),
        (AttrType::UInt64, "_begen_int(v, _np.uint64, W)", "int", "_np.uint64"),
        (AttrType::Float32, "_begen_float(v, _np.float32, W)", "float", "_np.float32"),
        (AttrType::Float64, "_begen_float(v, _np.float64, W)", "float", "_np.float64"),
        (AttrType::Complex64, "_begen_complex(v, _np.float32, W)", "complex", "_np.float32"),
        (AttrType::Complex128, "_begen_complex(v, _np.float64, W)", "complex", "_np.float64"),
        (AttrType::Float16, "_begen_half(v, _np.float16, _np.uint16, W)", "float", "_np.uint16"),
        (AttrType::BFloat16, "_begen_half(v, _ml_dtypes.bfloat16, _np.uint16, W)", "float", "_np.uint16"),
    ];
    assert_eq!(want.map(|(t, ..)| t), AttrType::ALL);
    for (ty, conversion, stub, array) in want {
        assert_eq!(py_attr_conversion(ty, "v", "W"), conversion, "{ty}");
        assert_eq!(py_attr_type(ty), stub, "{ty}");
        let element = py_attr_conversion(ty, "x", "w");
        assert_eq!(
            conversion_text(&py_array_conversion(ty), "v", "W"),
            format!("_begen_array(v, \"{ty}\", {array}, lambda x, w: {element}, W)"),
            "{ty}"
        );
    }
}
