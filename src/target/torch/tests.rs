use super::*;

fn library(dir: &str) -> Library {
    crate::driver::run(&crate::driver::Settings::new(dir)).expect("the tree checks").library
}

#[test]
fn typed_tree_ops_and_the_kernels_left_out() {
    let files = emit(&library("tests/e2e/typed"));
    assert_eq!(files.namespace, "e2e_typed");
    let skipped: Vec<(&str, &str)> = files.skipped.iter().map(|s| (s.function.as_str(), s.reason.as_str())).collect();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert!(skipped.iter().any(|(f, r)| *f == "fill" && r.contains("no tensor input")), "{skipped:?}");
    for schema in [
        "axpy(Tensor x, Tensor y, *, float a) -> Tensor",
        "matvec(Tensor A, Tensor x) -> Tensor",
        "scale(Tensor x, *, float s) -> Tensor",
        "repeat(Tensor x, *, int TIMES) -> Tensor",
        "accumulate(Tensor(a!) acc, Tensor x) -> ()",
        "count_small(Tensor x) -> Tensor",
        // Outputs the inputs do not size: the caller's, each its own alias set.
        "tile_out(Tensor x, *, Tensor(a!) out) -> ()",
        "untyped_out(Tensor x, *, float a, Tensor(a!) y) -> ()",
    ] {
        assert!(files.cc.contains(&format!("m.def(\"{schema}\")")), "{schema}\n{}", files.cc);
    }
    assert!(files.py.contains("register_fake(\"e2e_typed::axpy\")"));
    assert!(files.pyi.contains("def accumulate(acc: _torch.Tensor, x: _torch.Tensor, /) -> _torch.Tensor: ..."));
}

#[test]
fn target_version_is_the_floor() {
    assert_eq!(target_version_define(), "-DTORCH_TARGET_VERSION=0x020b000000000000ULL");
}

#[test]
fn a_kernel_whose_backward_pass_is_python_is_left_out_by_name() {
    let files = emit(&library("tests/e2e/solver_rules"));
    let skipped: Vec<(&str, &str)> = files.skipped.iter().map(|s| (s.function.as_str(), s.reason.as_str())).collect();
    for name in ["solve", "solve_wrong"] {
        assert!(
            skipped.iter().any(|(f, r)| *f == name && r.contains("its backward pass is a Python function")),
            "{skipped:?}"
        );
    }
    assert!(skipped.iter().any(|(_, r)| r.contains("`python_vjp: rules:solve_vjp`")), "{skipped:?}");
    assert!(!files.cc.contains("m.def(\"solve("), "{}", files.cc);
}

#[test]
fn an_out_op_checks_what_the_contract_knows_and_reads_the_rest_from_its_outputs() {
    let files = emit(&library("tests/e2e/typed"));
    let tile = files.cc.split("void begen_op_tile_out(").nth(1).expect("tile's op");
    let tile = &tile[..tile.find("\n}\n").expect("its end")];
    for line in [
        "Tensor begen_p_x, Tensor begen_p_out) {",
        "check_tensor(\"tile\", \"out\", begen_p_out, ScalarType::Float, 2, begen::torch_rt::Device::kCpu);",
        "same_device(\"tile\", \"out\", begen_p_out, \"x\", begen_p_x);",
        // n from the input, checked on the output; r from the output.
        "[[maybe_unused]] const int64_t begen_d_r = begen_p_out.size(1);",
        "dim_eq(\"tile\", \"n\", begen_d_n, \"x\", 0, \"out\", begen_p_out, 0);",
    ] {
        assert!(tile.contains(line), "{line}\n{tile}");
    }
    assert!(!tile.contains("alloc("), "{tile}");
    let untyped = files.cc.split("void begen_op_untyped_out(").nth(1).expect("untyped's op");
    let untyped = &untyped[..untyped.find("\n}\n").expect("its end")];
    for line in [
        "check_loose(\"untyped\", \"x\", begen_p_x, ScalarType::Undefined, -1, begen::torch_rt::Device::kCpu);",
        "tensor_arg(begen_p_y, begen::torch_rt::xla_code(begen_p_y.scalar_type()))",
    ] {
        assert!(untyped.contains(line), "{line}\n{untyped}");
    }
    for line in [
        "def untyped(x, *, a, out):",
        "    _begen_out_y, = _begen_outs(\"untyped\", (\"y\",), out, x)",
        "    _ops.untyped_out(x.contiguous(), a=a, y=_begen_out_y)",
        "@_torch.library.register_fake(\"e2e_typed::untyped_out\")\ndef _fake_untyped_out(x, *, a, y):\n    if y.device != x.device:\n",
        "    return None\n",
        "        \"out\": ((\"y\", None, None),),",
        "        \"out\": ((\"out\", \"float32\", (\"n\", \"r\")),),",
    ] {
        assert!(files.py.contains(line), "{line}\n{}", files.py);
    }
    assert!(
        files.pyi.contains("def tile(x: _torch.Tensor, /, *, out: _torch.Tensor | _OutSpec) -> _torch.Tensor: ...")
    );
}

#[test]
fn string_and_array_attributes_are_in_the_schema_and_reach_the_kernel_as_elements() {
    let files = emit(&library("tests/e2e/structs"));
    assert!(files.cc.contains("m.def(\"poly_out(Tensor x, *, float[] c, Tensor(a!) y) -> ()\")"), "{}", files.cc);
    assert!(files.cc.contains("m.def(\"gather_out(Tensor x, *, int[] idx, Tensor(a!) y) -> ()\")"), "{}", files.cc);
    for line in [
        "const std::vector<int32_t> begen_v_idx = begen::torch_rt::attr_array<int32_t>(\"gather\", \"idx\", begen_p_idx);",
        "const begen::ArrayArg begen_a_idx{begen_v_idx.data(), static_cast<int64_t>(begen_v_idx.size())};",
    ] {
        assert!(files.cc.contains(line), "{line}\n{}", files.cc);
    }
    // A 16-bit float array has no schema type: left out by name.
    assert!(files.skipped.iter().any(|s| s.function == "arrays" && s.reason == "array attributes of type float16[]"));
    let vocab = emit(&library("tests/e2e/vocab"));
    assert!(vocab.cc.contains("m.def(\"AddLength(Tensor x, *, str word, float scale) -> Tensor\")"), "{}", vocab.cc);
    assert!(vocab.cc.contains(
        "const begen::ArrayArg begen_a_word{begen_p_word.data(), static_cast<int64_t>(begen_p_word.size())};"
    ));
    // An op that writes a tensor: `mode` is functionalization's own keyword,
    // `mode_` in the schema and the fake, `mode` in the typed function.
    assert!(vocab.cc.contains("m.def(\"Apply_out(Tensor x, *, str mode_, Tensor(a!) y) -> ()\")"), "{}", vocab.cc);
    assert!(vocab.py.contains("def _fake_Apply_out(x, *, mode_, y):"), "{}", vocab.py);
    assert!(vocab.py.contains("def Apply(x, *, mode, out):"), "{}", vocab.py);
    assert!(vocab.py.contains("_ops.Apply_out(x.contiguous(), mode_=mode, y=_begen_out_y)"), "{}", vocab.py);
}

#[test]
fn a_library_of_modules_has_one_namespace_per_module() {
    let files = emit(&library("tests/e2e/modules"));
    for line in [
        "def jit_coo__scale(x, *, alpha, out):",
        "def jit_csr__scale(x, *, alpha, out):",
        "_begen_module_jit_coo = _types.SimpleNamespace(scale=jit_coo__scale)",
        "jit_coo = _begen_module_jit_coo",
        "\"call\": \"jit_csr_b5.scale\",",
    ] {
        assert!(files.py.contains(line), "{line}\n{}", files.py);
    }
    assert!(files.pyi.contains("class ops:\n    add = staticmethod(ops__add)\n"), "{}", files.pyi);
}

#[test]
fn an_algorithm_dispatches_over_its_implementations_ops() {
    let files = emit(&library("tests/e2e/algo"));
    for line in [
        "_BegenTorchImplementation(\"add_fast\", \"cpu\", 10, {\"alpha\": (0.0, -1.0,)}, add_fast, {}, ()),",
        "def add(x, y, *, alpha):",
        "    return _begen_algorithm(\"add\", (x, y), {\"alpha\": alpha}, None)",
        "    \"strict\": (False, False, (",
    ] {
        assert!(files.py.contains(line), "{line}\n{}", files.py);
    }
    let tuned = emit(&library("tests/e2e/tune_algo"));
    assert!(tuned.py.contains("def axpy(x, y, *, alpha, config=None):"), "{}", tuned.py);
    assert!(tuned.py.contains("\"target\": \"algorithm:tune_algo.axpy\""), "{}", tuned.py);
}

#[test]
fn the_backward_pass_of_a_source_tuned_over_its_defines_is_passed_the_forward_calls_candidate() {
    let mut lib = library("tests/e2e/tune_defines");
    let files = emit(&lib);
    assert!(files.skipped.is_empty(), "{:?}", files.skipped.iter().map(|s| &s.reason).collect::<Vec<_>>());
    for line in [
        "    ctx._begen_def_TILE = keyword_only_inputs[\"TILE\"]",
        "    _begen_g = _torch.ops.tune_defines.scale_by_tile_bwd(grads[0].contiguous(), \
         TILE=ctx._begen_def_TILE, UNROLL=ctx._begen_def_UNROLL)",
        "_torch.library.register_autograd(\"tune_defines::scale_by_tile\", _backward_scale_by_tile, \
         setup_context=_setup_scale_by_tile)",
    ] {
        assert!(files.py.contains(line), "{line}\n{}", files.py);
    }
    // A forward that is not tuned over TILE has no value of it to pass.
    let f = lib.functions.iter_mut().find(|f| f.name == "scale_by_tile").expect("the forward");
    f.instances.clear();
    let files = emit(&lib);
    let skipped: Vec<(&str, &str)> = files.skipped.iter().map(|s| (s.function.as_str(), s.reason.as_str())).collect();
    assert_eq!(
        skipped,
        [(
            "scale_by_tile",
            "its backward kernel 'scale_by_tile_bwd' is tuned over the define 'TILE', which the forward is not"
        )]
    );
}
