//! Compiles and links a hand-built `Library` (no scanning): the back half
//! on its own. Needs a C++ compiler and the XLA FFI headers (from
//! `XLA_FFI_INCLUDE_DIR` or a Python with jax); skipped without them unless
//! `CI=true`.

mod support;

use begen::build::{self, Env, Options, PlatformChoice, StderrReporter};
use begen::config::Config;
use begen::model::{
    AttrType, Function, FunctionOptions, Library, Param, Platform, SourceFile, Token,
};

fn param(name: &str, token: Token) -> Param {
    Param {
        name: name.into(),
        token,
        half_repr: None,
        line: 1,
    }
}

fn function(name: &str, file: &str, params: Vec<Param>) -> Function {
    Function {
        name: name.into(),
        file: file.into(),
        path: support::repo().join("tests/e2e/cpu").join(file),
        line: 1,
        column: 1,
        platform: Platform::Cpu,
        params,
        options: FunctionOptions::default(),
    }
}

fn library() -> Library {
    let root = support::repo().join("tests/e2e/cpu");
    let scale = function(
        "scale",
        "basic.cpp",
        vec![
            param("x", Token::Arg),
            param("y", Token::Ret),
            param(
                "alpha",
                Token::Attr {
                    name: "alpha".into(),
                    ty: AttrType::Float32,
                },
            ),
        ],
    );
    let add = function(
        "add",
        "basic.cpp",
        vec![
            param("a", Token::Arg),
            param("b", Token::Arg),
            param("out", Token::Ret),
        ],
    );
    let fill = function(
        "fill_answer",
        "uses_helper.cpp",
        vec![param("out", Token::Ret)],
    );
    let sources = ["basic.cpp", "helper.cpp", "uses_helper.cpp"]
        .into_iter()
        .map(|f| SourceFile {
            file: f.into(),
            path: root.join(f),
            platform: Platform::Cpu,
        })
        .collect();
    Library {
        name: "handbuilt".into(),
        prefix: "handbuilt".into(),
        functions: vec![add, scale, fill],
        sources,
    }
}

#[test]
fn hand_built_library_links_and_exports_handlers() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let out = support::scratch("handbuilt");
    let opts = Options::new(support::repo().join("tests/e2e/cpu"), &out);
    let env = Env::new().with("BEGEN_PYTHON", &python.display().to_string());
    let built = build::build_library(
        &library(),
        &Config::default(),
        PlatformChoice::Cpu,
        &opts,
        &env,
        &mut StderrReporter::default(),
    )
    .unwrap_or_else(|e| panic!("build failed: {e}"));
    assert_eq!(built.library_path, out.join("libhandbuilt.so"));
    let exported = support::exported_symbols(&built.library_path);
    for f in ["add", "scale", "fill_answer"] {
        let symbol = format!("begen_handbuilt_{f}");
        assert!(
            exported.contains(&symbol),
            "{symbol} not exported: {exported:?}"
        );
    }
    support::run_python(
        &python,
        &out,
        "import numpy as np, jax, jax.numpy as jnp, handbuilt as m\n\
         x = jnp.arange(4, dtype=jnp.float32)\n\
         s = jax.ShapeDtypeStruct(x.shape, x.dtype)\n\
         np.testing.assert_allclose(m.scale(x, alpha=2.0, out=s), 2 * np.arange(4))\n\
         np.testing.assert_allclose(m.add(x, x, out=s), 2 * np.arange(4))\n\
         np.testing.assert_allclose(m.fill_answer(out=s), [42] * 4)\n\
         print('ok')\n",
    );
}

fn cuda_function(name: &str, file: &str, params: Vec<Param>) -> Function {
    let platform = if file.ends_with(".cu") {
        Platform::Cuda
    } else {
        Platform::Cpu
    };
    Function {
        path: support::repo().join("tests/e2e/cuda").join(file),
        platform,
        ..function(name, file, params)
    }
}

#[test]
fn hand_built_cuda_library_compiles_with_nvcc() {
    let Some(python) = support::python_with_jax() else {
        return;
    };
    let Some(_) = support::nvcc(&python) else {
        return;
    };
    let root = support::repo().join("tests/e2e/cuda");
    let attr = |name: &str, ty| {
        param(
            name,
            Token::Attr {
                name: name.into(),
                ty,
            },
        )
    };
    let mut half = attr("alpha", AttrType::Float16);
    half.half_repr = Some(begen::model::HalfRepr::Bits);
    let functions = vec![
        cuda_function(
            "add_cuda",
            "checks.cu",
            vec![
                param("a", Token::Arg),
                param("b", Token::Arg),
                param("c", Token::Ret),
                param("stream", Token::Stream),
            ],
        ),
        cuda_function(
            "host_negate",
            "host.cpp",
            vec![param("x", Token::Arg), param("y", Token::Ret)],
        ),
        cuda_function(
            "scale_cuda",
            "vec.cu",
            vec![
                param("x", Token::Arg),
                param("y", Token::Ret),
                attr("alpha", AttrType::Float32),
                param("stream", Token::Stream),
            ],
        ),
        cuda_function(
            "half_scale",
            "vec.cu",
            vec![
                param("x", Token::Arg),
                param("y", Token::Ret),
                half,
                param("stream", Token::Stream),
            ],
        ),
        cuda_function(
            "fill_f32",
            "vec.cu",
            vec![
                param("y", Token::Ret),
                attr("value", AttrType::Float32),
                param("stream", Token::Stream),
            ],
        ),
        cuda_function(
            "fill_i32",
            "vec.cu",
            vec![
                param("y", Token::Ret),
                attr("value", AttrType::Int32),
                param("stream", Token::Stream),
            ],
        ),
    ];
    let sources = [
        ("checks.cu", Platform::Cuda),
        ("host.cpp", Platform::Cpu),
        ("vec.cu", Platform::Cuda),
    ]
    .into_iter()
    .map(|(f, platform)| SourceFile {
        file: f.into(),
        path: root.join(f),
        platform,
    })
    .collect();
    let lib = Library {
        name: "handcuda".into(),
        prefix: "handcuda".into(),
        functions,
        sources,
    };
    let out = support::scratch("handcuda");
    let mut opts = Options::new(&root, &out);
    opts.arch = vec!["sm_90".into()];
    let env = Env::new().with("BEGEN_PYTHON", &python.display().to_string());
    let built = build::build_library(
        &lib,
        &Config::default(),
        PlatformChoice::Auto,
        &opts,
        &env,
        &mut StderrReporter::default(),
    )
    .unwrap_or_else(|e| panic!("build failed: {e}"));
    let exported = support::exported_symbols(&built.library_path);
    for f in &lib.functions {
        let symbol = format!("begen_handcuda_{}", f.name);
        assert!(
            exported.contains(&symbol),
            "{symbol} not exported: {exported:?}"
        );
    }
    // The static CUDA runtime stays private: nothing but the handlers (and
    // the C++ runtime's odds and ends) is exported.
    assert!(
        !exported.iter().any(|s| s.starts_with("cuda")),
        "cudart leaked: {exported:?}"
    );
}
