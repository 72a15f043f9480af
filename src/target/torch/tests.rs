use super::*;

fn library(dir: &str) -> Library {
    crate::driver::run(&crate::driver::Settings::new(dir)).expect("the tree checks").library
}

#[test]
fn typed_tree_ops_and_the_kernels_left_out() {
    let files = emit(&library("tests/e2e/typed"));
    assert_eq!(files.namespace, "e2e_typed");
    let skipped: Vec<(&str, &str)> = files.skipped.iter().map(|s| (s.function.as_str(), s.reason.as_str())).collect();
    assert_eq!(skipped.len(), 3, "{skipped:?}");
    assert!(skipped.iter().any(|(f, r)| *f == "fill" && r.contains("no tensor input")), "{skipped:?}");
    assert!(skipped.iter().any(|(f, r)| *f == "tile" && r.contains("dimension 'r'")), "{skipped:?}");
    assert!(skipped.iter().any(|(f, r)| *f == "untyped" && r.contains("no typed contract")), "{skipped:?}");
    for schema in [
        "axpy(Tensor x, Tensor y, *, float a) -> Tensor",
        "matvec(Tensor A, Tensor x) -> Tensor",
        "scale(Tensor x, *, float s) -> Tensor",
        "repeat(Tensor x, *, int TIMES) -> Tensor",
        "accumulate(Tensor(a!) acc, Tensor x) -> ()",
        "count_small(Tensor x) -> Tensor",
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
