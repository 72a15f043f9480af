//! The model `run` fills from the fixtures: half representations, function
//! options, sources and files read (moved here from tests/scan_api.rs: the
//! model is the crate's own).

use std::path::{Path, PathBuf};

use super::{Settings, run};
use crate::model::{AttrType, HalfRepr, Platform, Token, VmapMethod};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name).join("input")
}

#[test]
fn half_representations() {
    let scan = run(&Settings::new(fixture("explicit_types"))).unwrap();
    let halves = scan.library.functions.iter().find(|f| f.name == "halves").unwrap();
    let reprs: Vec<Option<HalfRepr>> = halves.params.iter().map(|p| p.half_repr).collect();
    use HalfRepr::*;
    assert_eq!(reprs, vec![None, None, Some(Bits), Some(Bits), Some(Bits), Some(CudaHalf), Some(CudaBFloat16), None]);
}

#[test]
fn options_sources_and_files_read() {
    let root = fixture("config_forms");
    let scan = run(&Settings::new(&root)).unwrap();
    assert!(!scan.has_errors(), "{:?}", scan.diagnostics);
    let scale = scan.library.functions.iter().find(|f| f.name == "scale").unwrap();
    assert!(scale.options.command_buffer);
    assert_eq!(scale.options.vmap_method, VmapMethod::BroadcastAll);
    let add_one = scan.library.functions.iter().find(|f| f.name == "add_one").unwrap();
    assert!(!add_one.options.command_buffer);
    assert_eq!(add_one.options.vmap_method, VmapMethod::ExpandDims);
    assert_eq!(add_one.platform, Platform::Cpu);
    assert_eq!(scan.library.name.as_str(), "mykernels");
    let files: Vec<&str> = scan.library.sources.iter().map(|s| s.file.as_str()).collect();
    assert_eq!(files, vec!["cpu.cpp", "ops/add.cu"]);
    for expected in ["begen.yaml", "cpu.cpp", "ops/add.cu", "inc/gen.h"] {
        assert!(scan.files_read.contains(&root.join(expected)), "{expected} not in {:?}", scan.files_read);
    }
    let sub = scan.library.functions.iter().find(|f| f.name == "sub_one").unwrap();
    assert_eq!(sub.params[2].token, Token::Attr { name: "k".into(), ty: AttrType::Int32 });
}
