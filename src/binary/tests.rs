//! The binary stage against the tools that make the binaries: begen's
//! cuTile demangler against cuTile's own `demangle_kernel_name` over
//! thousands of symbols; the arguments begen derives from a cuTile symbol
//! against the parameter table of cubins cuTile exports (sm_90, no GPU
//! needed); PTX and cubins from pip's nvcc for the `c` convention and
//! struct layouts; the readers against mutated images. (tests/binary.rs
//! compiles and runs the run-time headers and the generated handlers.)
//!
//! The cuTile tests need pip `cuda-tile` and `nvidia-cuda-tileiras`
//! (scripts/requirements.txt), the nvcc ones pip's nvcc: skipped when
//! missing, failures under CI=true. `BEGEN_CUTILE_COUNT` and
//! `BEGEN_CUTILE_SEED` widen the demangler comparison (default 2000
//! signatures, seed 10; 10000 with seeds 1, 2 and 3 agreed too).

// Test code reads its switches from the environment directly (clippy.toml).
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use super::cutile::{self, Array, Constant, Param};
use super::elf::Cubin;
use super::layout::{CType, ParamLayout, Structs};
use crate::build::Env;

#[path = "../../tests/support/tools.rs"]
#[allow(dead_code)]
mod tools;
use tools::{missing, python_with_jax, repo, run};

/// A fresh, empty directory of this test process.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("begen-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The Python that imports cuda.tile, and the PATH that puts pip's
/// `tileiras` first (cuTile uses the one on PATH when the pip versions of
/// tileiras and nvcc differ).
fn cutile_python() -> Option<(PathBuf, String)> {
    let mut candidates = vec![repo().join(".venv/bin/python")];
    if let Some(p) = std::env::var_os("BEGEN_PYTHON") {
        candidates.push(PathBuf::from(p));
    }
    for python in candidates {
        let out = Command::new(&python)
            .args(["-c", "import cuda.tile, sysconfig; print(sysconfig.get_paths()['purelib'])"])
            .output();
        if let Ok(out) = out
            && out.status.success()
        {
            let purelib = String::from_utf8_lossy(&out.stdout).trim().to_string();
            let path = format!("{purelib}/nvidia/cu13/bin:{}", std::env::var("PATH").unwrap_or_default());
            return Some((python, path));
        }
    }
    missing("no Python with cuda.tile (pip cuda-tile, from scripts/setup.sh)")
}

fn run_script(python: &Path, path: &str, args: &[&str]) -> String {
    let script = repo().join("tests/binary/cutile_signatures.py");
    let out = Command::new(python).arg(&script).args(args).env("PATH", path).output().expect("running python");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{} {args:?} failed:\n{text}", script.display());
    text
}

fn opt<T: Into<Value>>(v: Option<T>) -> Value {
    v.map_or(Value::Null, Into::into)
}

/// begen's reading of a parameter, in the JSON shape the script writes cuTile's in.
fn param_json(p: &Param) -> Value {
    let groups = |g: &[u32]| g.iter().map(|g| format!("group{g}")).collect::<Vec<_>>();
    let array = |a: &Array| {
        json!({
            "kind": "array", "dtype": a.dtype.code(), "ndim": a.ndim(), "index": a.index.name(),
            "shape_divisible_by": a.axes.iter().map(|x| x.shape_divisible_by).collect::<Vec<_>>(),
            "shape_constant": a.axes.iter().map(|x| opt(x.shape_constant)).collect::<Vec<_>>(),
            "stride_divisible_by": a.axes.iter().map(|x| x.stride_divisible_by).collect::<Vec<_>>(),
            "stride_constant": a.axes.iter().map(|x| opt(x.stride_constant)).collect::<Vec<_>>(),
            "stride_lower_bound": a.axes.iter().map(|x| opt(x.stride_lower_bound)).collect::<Vec<_>>(),
            "base_addr_divisible_by": a.base_addr_divisible_by,
            "alias_groups": groups(&a.alias_groups),
            "may_alias_internally": a.may_alias_internally,
        })
    };
    match p {
        Param::Array(a) => array(a),
        Param::List(l) => json!({
            "kind": "list", "element": array(&l.element), "alias_groups": groups(&l.alias_groups),
            "elements_may_alias": l.elements_may_alias,
        }),
        Param::Scalar(d) => json!({"kind": "scalar", "dtype": d.code()}),
        Param::Tuple(items) => json!({"kind": "tuple", "items": items.iter().map(param_json).collect::<Vec<_>>()}),
        Param::Constant(Constant::Bool(b)) => json!({"kind": "constant", "bool": b}),
        Param::Constant(Constant::Int(i)) => json!({"kind": "constant", "int": i.to_string()}),
        Param::Constant(Constant::Float(f)) => {
            json!({"kind": "constant", "float_bits": format!("{:016x}", f.to_bits())})
        }
    }
}

/// cuTile's error text names the offset it stopped at (`At offset #N`) for
/// errors found while reading; the whole-signature checks name none.
fn cutile_offset(error: &str) -> Option<usize> {
    let rest = &error[error.find("At offset #")? + "At offset #".len()..];
    rest[..rest.find(|c: char| !c.is_ascii_digit())?].parse().ok()
}

#[test]
fn demangler_agrees_with_cutile() {
    let Some((python, path)) = cutile_python() else { return };
    let dir = scratch("binary-cutile-signatures");
    let json_path = dir.join("signatures.json");
    let (count, seed) = (
        std::env::var("BEGEN_CUTILE_COUNT").unwrap_or("2000".into()),
        std::env::var("BEGEN_CUTILE_SEED").unwrap_or("10".into()),
    );
    run_script(&python, &path, &["signatures", json_path.to_str().unwrap(), "--count", &count, "--seed", &seed]);
    let records: Vec<Value> = serde_json::from_slice(&std::fs::read(&json_path).unwrap()).unwrap();
    let (mut valid, mut refused, mut same_offset, mut offsets) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for r in &records {
        let symbol = r["symbol"].as_str().unwrap();
        let ours = cutile::demangle(symbol);
        match (r["ok"].as_bool().unwrap(), &ours) {
            (true, Ok(sig)) => {
                let got = json!({
                    "name": sig.name, "convention": sig.convention.name(),
                    "params": sig.params.iter().map(|p| param_json(&p.param)).collect::<Vec<_>>(),
                });
                let want = json!({"name": r["name"], "convention": r["convention"], "params": r["params"]});
                if got == want {
                    valid += 1;
                } else {
                    failures.push(format!("{symbol}: differs\n  cuTile: {want}\n  begen:  {got}"));
                }
            }
            (false, Err(e)) => {
                refused += 1;
                if let Some(at) = cutile_offset(r["error"].as_str().unwrap()) {
                    offsets += 1;
                    if at == e.offset {
                        same_offset += 1;
                    } else {
                        failures.push(format!("{symbol}: cuTile stops at offset {at}, begen at {}: {e}", e.offset));
                    }
                }
            }
            (true, Err(e)) => failures.push(format!("{symbol}: cuTile accepts it, begen refuses: {e}")),
            (false, Ok(_)) => failures.push(format!("{symbol}: cuTile refuses it ({}), begen accepts it", r["error"])),
        }
    }
    eprintln!(
        "{} symbols: {valid} read alike, {refused} refused by both ({same_offset} of {offsets} at the offset cuTile names)",
        records.len()
    );
    assert!(failures.is_empty(), "{} of {} disagree:\n{}", failures.len(), records.len(), failures.join("\n"));
    assert!(valid > 2000 && refused > 1000, "too few cases: {valid} valid, {refused} refused");
}

#[test]
fn exported_cubins_take_the_derived_arguments() {
    let Some((python, path)) = cutile_python() else { return };
    let dir = scratch("binary-cutile-export");
    run_script(&python, &path, &["export", dir.to_str().unwrap()]);
    let exports: Vec<Value> = serde_json::from_slice(&std::fs::read(dir.join("exports.json")).unwrap()).unwrap();
    assert_eq!(exports.len(), 7);
    for e in &exports {
        let (file, symbol) = (e["file"].as_str().unwrap(), e["symbol"].as_str().unwrap());
        let cubin = Cubin::parse(&std::fs::read(dir.join(file)).unwrap()).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(cubin.sm, 90, "{file}");
        let names: Vec<_> = cubin.kernels.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, [symbol], "{file}: the symbol begen derives is the kernel's");
        let kernel = cubin.kernel(symbol).unwrap();
        let args = cutile::demangle(symbol).unwrap().kernel_args().unwrap();
        let types: Vec<CType> = args.iter().map(|a| a.ty).collect();
        let layout = ParamLayout::of(&types, &Structs::new());
        let derived: Vec<(u16, u16)> =
            layout.offsets.iter().zip(&layout.sizes).map(|(&o, &s)| (o as u16, s as u16)).collect();
        let actual: Vec<(u16, u16)> = kernel.params.iter().map(|p| (p.offset, p.size)).collect();
        assert_eq!(derived, actual, "{file}: (offset, size) of each argument");
        assert_eq!(kernel.param_size, Some(layout.size as u16), "{file}: parameter buffer size");
        // cuTile fixes the block: the handler must launch with it.
        assert_eq!(kernel.required_block, Some([128, 1, 1]), "{file}: required block");
    }
}

/// The structs of tests/binary/ckernels.cu, declared with begen.
fn c_structs() -> (Structs, [CType; 5]) {
    use super::layout::{Member, StructDef};
    use crate::model::AttrType::*;
    let mut s = Structs::new();
    let affine = s
        .add(StructDef::new(
            "Affine",
            [Member::new("tag", UInt16), Member::new("scale", Float64), Member::new("shift", Float32)],
        ))
        .unwrap();
    // `unsigned __int128 c` / Rust's u128: two 64-bit halves in a 16-aligned struct.
    let seed_foo = s
        .add(
            StructDef::new(
                "Foo",
                [
                    Member::new("a", UInt16),
                    Member::new("b", UInt64),
                    Member::new("c", UInt64),
                    Member::new("c_hi", UInt64),
                ],
            )
            .aligned(16),
        )
        .unwrap();
    let vec3 = s
        .add(
            StructDef::new("Vec3", [Member::new("x", Float32), Member::new("y", Float32), Member::new("z", Float32)])
                .aligned(16),
        )
        .unwrap();
    let inner = s.add(StructDef::new("Inner", [Member::new("flag", Bool), Member::new("x", Float64)])).unwrap();
    let outer = s
        .add(StructDef::new(
            "Outer",
            [
                Member::new("tag", Int8),
                super::layout::Member::of("inner", CType::Struct(inner)),
                Member::new("h", Float16),
            ],
        ))
        .unwrap();
    let ids = [affine, seed_foo, vec3, inner, outer].map(CType::Struct);
    (s, ids)
}

/// Each kernel of ckernels.cu with the C parameters begen expects for it.
fn c_kernels() -> (Structs, Vec<(&'static str, Vec<CType>)>) {
    use crate::model::AttrType::*;
    let (s, [affine, seed_foo, vec3, _, outer]) = c_structs();
    let p = |t| CType::Prim(t);
    let kernels = vec![
        ("axpy", vec![CType::Pointer, CType::Pointer, CType::Pointer, p(Float32), p(UInt64)]),
        ("affine", vec![affine, CType::Pointer, p(UInt64), CType::Pointer]),
        ("foo_sum", vec![seed_foo, CType::Pointer, p(UInt64), CType::Pointer]),
        (
            "mixed",
            vec![p(Int8), p(Int16), p(Bool), p(Float64), outer, p(Int32), p(Float16), vec3, p(UInt64), CType::Pointer],
        ),
    ];
    (s, kernels)
}

/// The nvcc a build would use (`begen doctor`'s rules, pip's CUDA in the
/// Python with jax).
fn nvcc_or_skip() -> Option<PathBuf> {
    let python = python_with_jax()?;
    let env = Env::new().with("BEGEN_PYTHON", &python.display().to_string());
    match crate::build::nvcc(&env) {
        Ok(nvcc) => Some(nvcc),
        Err(e) => missing(&format!("no nvcc: {e}")),
    }
}

fn run_nvcc(nvcc: &Path, args: &[&str]) {
    let out = Command::new(nvcc).args(args).output().expect("running nvcc");
    assert!(
        out.status.success(),
        "nvcc {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
#[ignore = "needs nvcc (pip nvidia-cuda-nvcc); CI runs it"]
fn c_kernels_take_the_params_begen_lays_out() {
    let Some(nvcc) = nvcc_or_skip() else { return };
    let dir = scratch("binary-c-kernels");
    let src = repo().join("tests/binary/ckernels.cu");
    let (ptx, cubin) = (dir.join("ckernels.ptx"), dir.join("ckernels.cubin"));
    run_nvcc(&nvcc, &["-ptx", "-arch=sm_90", src.to_str().unwrap(), "-o", ptx.to_str().unwrap()]);
    run_nvcc(&nvcc, &["-cubin", "-arch=sm_90", src.to_str().unwrap(), "-o", cubin.to_str().unwrap()]);
    let (structs, kernels) = c_kernels();

    let entries = super::ptx::entries(&std::fs::read_to_string(&ptx).unwrap()).unwrap();
    let mut names: Vec<_> = entries.iter().map(|e| e.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["affine", "axpy", "foo_sum", "mixed"]);
    let cubin = Cubin::parse(&std::fs::read(&cubin).unwrap()).unwrap();
    assert_eq!(cubin.sm, 90);
    for (name, params) in &kernels {
        let entry = entries.iter().find(|e| e.name == *name).unwrap();
        assert_eq!(entry.check_params(params, &structs), Ok(()), "{name}: PTX parameters");
        let layout = ParamLayout::of(params, &structs);
        let kernel = cubin.kernel(name).unwrap_or_else(|| panic!("{name} not in the cubin"));
        let derived: Vec<(u16, u16)> =
            layout.offsets.iter().zip(&layout.sizes).map(|(&o, &s)| (o as u16, s as u16)).collect();
        let actual: Vec<(u16, u16)> = kernel.params.iter().map(|p| (p.offset, p.size)).collect();
        assert_eq!(derived, actual, "{name}: (offset, size) of each parameter in the cubin");
        assert_eq!(kernel.param_size, Some(layout.size as u16), "{name}: parameter buffer size");
        assert_eq!(kernel.required_block, None, "{name}: no __launch_bounds__, no required block");
    }
    // The seed-003 shape: the 16-aligned 32-byte struct by value.
    let foo = &entries.iter().find(|e| e.name == "foo_sum").unwrap().params[0];
    assert_eq!((foo.size(), foo.align(), foo.count), (32, 16, Some(32)));
    // A wrong manifest is caught: `mixed` with an int32 where the kernel has an int16.
    let mut wrong = kernels[3].1.clone();
    wrong[1] = CType::Prim(crate::model::AttrType::Int32);
    let mixed = entries.iter().find(|e| e.name == "mixed").unwrap();
    assert!(mixed.check_params(&wrong, &structs).is_err());
}

/// nvcc's fatbins, read by begen: a cubin per real architecture (listed with
/// the same kernels and parameter tables as `-cubin` gives), PTX compressed
/// or not as this nvcc writes it (read when it is not).
#[test]
#[ignore = "needs nvcc (pip nvidia-cuda-nvcc); CI runs it"]
fn fatbins_list_their_kernels() {
    use super::fatbin::{Fatbin, Image};
    let Some(nvcc) = nvcc_or_skip() else { return };
    let dir = scratch("binary-fatbin");
    let src = repo().join("tests/binary/ckernels.cu");
    let (fat, cubin) = (dir.join("two.fatbin"), dir.join("sm80.cubin"));
    let two = ["-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=[sm_90,compute_90]"];
    run_nvcc(&nvcc, &[&["-fatbin", src.to_str().unwrap(), "-o", fat.to_str().unwrap()][..], &two[..]].concat());
    run_nvcc(&nvcc, &["-cubin", "-arch=sm_80", src.to_str().unwrap(), "-o", cubin.to_str().unwrap()]);
    let f = Fatbin::parse(&std::fs::read(&fat).unwrap()).unwrap();
    let sms: Vec<u32> = f.cubins().map(|c| c.sm).collect();
    assert_eq!(sms, [80, 90], "one cubin per real architecture, in order; unread: {:?}", f.unread());
    assert_eq!(f.images.len(), 3, "two cubins and the compute_90 PTX: {:?}", f.unread());
    let alone = Cubin::parse(&std::fs::read(&cubin).unwrap()).unwrap();
    let inside = f.cubins().next().unwrap();
    let table = |c: &Cubin| -> Vec<(String, Vec<(u16, u16)>)> {
        c.kernels.iter().map(|k| (k.name.clone(), k.params.iter().map(|p| (p.offset, p.size)).collect())).collect()
    };
    assert_eq!(table(inside), table(&alone), "the fatbin's sm_80 cubin is nvcc's -cubin");
    // The PTX image: listed when nvcc stored it plain, else reported unread.
    match &f.images[2] {
        Image::Ptx(entries) => {
            let mut names: Vec<_> = entries.iter().map(|e| e.name.as_str()).collect();
            names.sort();
            assert_eq!(names, ["affine", "axpy", "foo_sum", "mixed"]);
        }
        Image::Unread { sm, why } => assert_eq!((*sm, why.to_string().as_str()), (90, "its payload is compressed")),
        Image::Cubin(_) => panic!("the third image is the PTX"),
    }
    // Uncompressed (`--no-compress`): the PTX is read and listed too.
    let plain = dir.join("plain.fatbin");
    run_nvcc(&nvcc, &["-fatbin", "--no-compress", "-arch=sm_90", src.to_str().unwrap(), "-o", plain.to_str().unwrap()]);
    let f = Fatbin::parse(&std::fs::read(&plain).unwrap()).unwrap();
    assert!(f.unread().is_empty(), "{:?}", f.unread());
    let mut names: Vec<String> = f.ptx().flatten().map(|e| e.name.clone()).collect();
    names.sort();
    assert_eq!(names, ["affine", "axpy", "foo_sum", "mixed"]);
    assert_eq!(f.cubins().map(|c| c.kernels.len()).collect::<Vec<_>>(), [4]);
}

#[test]
#[ignore = "needs nvcc (pip nvidia-cuda-nvcc); CI runs it"]
fn struct_layouts_match_nvcc() {
    let Some(nvcc) = nvcc_or_skip() else { return };
    let dir = scratch("binary-struct-layouts");
    let (structs, ids) = c_structs();
    let mut text = format!("#include \"{}\"\n#include <cstddef>\n", repo().join("tests/binary/ckernels.cu").display());
    let mut asserts = 0;
    for ty in ids {
        let CType::Struct(id) = ty else { unreachable!() };
        let (def, l) = (structs.def(id), structs.layout(id));
        let n = &def.name;
        text += &format!("static_assert(sizeof({n}) == {}, \"sizeof {n}\");\n", l.size);
        text += &format!("static_assert(alignof({n}) == {}, \"alignof {n}\");\n", l.align);
        asserts += 2;
        for (m, off) in def.members.iter().zip(&l.offsets) {
            if m.name.ends_with("_hi") {
                continue; // the upper half of a 128-bit member C names as one
            }
            text += &format!("static_assert(offsetof({n}, {}) == {off}, \"offsetof {n}.{}\");\n", m.name, m.name);
            asserts += 1;
        }
    }
    let check = dir.join("layout_check.cu");
    std::fs::write(&check, &text).unwrap();
    // Both passes: the host compiler's layout and the device compiler's.
    run_nvcc(
        &nvcc,
        &["-c", "-arch=sm_90", check.to_str().unwrap(), "-o", dir.join("layout_check.o").to_str().unwrap()],
    );
    assert_eq!(asserts, 24);
    // And a layout begen got wrong would fail to compile.
    std::fs::write(&check, text.replace("sizeof(Affine) == 24", "sizeof(Affine) == 20")).unwrap();
    let out =
        Command::new(&nvcc).args(["-c", "-arch=sm_90", check.to_str().unwrap(), "-o", "/dev/null"]).output().unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("sizeof Affine"));
}

/// The PTX of `begen_write_words` (begen/list_words.h: the kernel that
/// writes a cuTile list's words on the launch stream) assembles for the
/// architectures pip's ptxas knows from Turing to Blackwell, with its
/// parameters inside the 4 KiB every driver takes.
#[test]
#[ignore = "needs a C++ compiler and ptxas (pip nvcc); CI runs it"]
fn list_words_ptx_assembles() {
    let Some(nvcc) = nvcc_or_skip() else { return };
    let dir = scratch("binary-list-words");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".to_string());
    let src = dir.join("print_ptx.cc");
    std::fs::write(
        &src,
        "#include <cstdio>\n#include \"begen/list_words.h\"\n\
         int main() { std::fputs(begen::cuda::kWordsPtx, stdout); return 0; }\n",
    )
    .unwrap();
    let main = dir.join("print_ptx");
    run(Command::new(&cxx)
        .args(["-std=c++17", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(repo().join("build-support/include"))
        .arg(&src)
        .arg("-o")
        .arg(&main)
        .arg("-ldl"));
    let ptx = run(&mut Command::new(&main)).stdout;
    let ptx_file = dir.join("words.ptx");
    std::fs::write(&ptx_file, &ptx).unwrap();
    let ptxas = nvcc.with_file_name("ptxas");
    for arch in ["sm_75", "sm_80", "sm_90", "sm_100"] {
        let out = run(Command::new(&ptxas)
            .args(["-v", &format!("-arch={arch}"), "-o"])
            .arg(dir.join(format!("words_{arch}.cubin")))
            .arg(&ptx_file));
        let report = String::from_utf8_lossy(&out.stderr);
        assert!(report.contains("Compiling entry function 'begen_write_words'"), "{arch}: {report}");
    }
    // The entry's parameter table as the driver reads it: dst @0, count @8, the words @16 (4000 bytes).
    let cubin = Cubin::parse(&std::fs::read(dir.join("words_sm_90.cubin")).unwrap()).unwrap();
    let k = cubin.kernel("begen_write_words").expect("the entry");
    let table: Vec<(u16, u16)> = k.params.iter().map(|p| (p.offset, p.size)).collect();
    assert_eq!(table, [(0, 8), (8, 4), (16, 4000)]);
    assert_eq!(k.param_size, Some(4016));
}

/// The readers answer every mutation of a real image's header fields with a
/// result, never a panic: the fixture fatbin's sm_90 cubin, alone and inside
/// the fatbin, with each field of the ELF header and of every section header
/// set to hostile values, every byte flipped and every prefix. A symbol
/// table of 1..5-byte entries (it once indexed past its entries) is refused
/// by name.
#[test]
fn mutated_cubins_and_fatbins_are_answers() {
    use super::elf::ElfError;
    use super::fatbin::Fatbin;
    let fatbin = std::fs::read(repo().join("fixtures/binaries/input/kernels.fatbin")).unwrap();
    let field = |b: &[u8], at: usize, n: usize| b[at..at + n].iter().rev().fold(0u64, |v, &c| v << 8 | u64::from(c));
    // The first entry is the cubin: its header size at +4, its payload's at +8.
    let start = 16 + field(&fatbin, 16 + 4, 4) as usize;
    let cubin = fatbin[start..start + field(&fatbin, 16 + 8, 8) as usize].to_vec();
    let good = Cubin::parse(&cubin).unwrap();
    assert!(!good.kernels.is_empty());
    let check = |image: &[u8]| {
        let _ = Cubin::parse(image);
        let mut wrapped = fatbin.clone();
        wrapped[start..start + image.len().min(cubin.len())].copy_from_slice(&image[..image.len().min(cubin.len())]);
        let _ = Fatbin::parse(&wrapped);
    };
    let len = cubin.len() as u64;
    let values = [0, 1, 2, 3, 4, 5, 6, 23, 24, 25, 63, 64, 0x7fff, 0xffff, 0x7fff_ffff, u32::MAX as u64, len - 1, len];
    let values: Vec<u64> = values.into_iter().chain([u64::MAX, u64::MAX - 7, 1 << 63]).collect();
    let set = |at: usize, n: usize, v: u64| {
        let mut b = cubin.clone();
        b[at..at + n].copy_from_slice(&v.to_le_bytes()[..n]);
        b
    };
    let mut tried = 0;
    // ELF64 header fields (offset, width).
    let header = [(4, 1), (5, 1), (8, 1), (0x12, 2), (0x20, 8), (0x28, 8), (0x30, 4), (0x3a, 2), (0x3c, 2), (0x3e, 2)];
    let (shoff, shnum) = (field(&cubin, 0x28, 8) as usize, field(&cubin, 0x3c, 2) as usize);
    // Section header fields: name, type, offset, size, link, info, entsize.
    let section = [(0, 4), (4, 4), (24, 8), (32, 8), (40, 4), (44, 4), (56, 8)];
    let fields = header.into_iter().chain((0..shnum).flat_map(|i| section.map(|(o, n)| (shoff + 64 * i + o, n))));
    for (at, n) in fields {
        for &v in &values {
            check(&set(at, n, v));
            tried += 1;
        }
    }
    for at in 0..cubin.len() {
        let mut b = cubin.clone();
        b[at] ^= 0xff;
        check(&b);
        let _ = Cubin::parse(&cubin[..at]);
        tried += 2;
    }
    assert!(tried > 20_000, "{tried}");
    // Every symbol table with entries too short for a symbol: a named error, alone and in the fatbin.
    let symtabs: Vec<usize> = (0..shnum).map(|i| shoff + 64 * i).filter(|&h| field(&cubin, h + 4, 4) == 2).collect();
    assert!(!symtabs.is_empty());
    for h in symtabs {
        for n in 1..=5 {
            let bad = set(h + 56, 8, n);
            assert_eq!(Cubin::parse(&bad), Err(ElfError::SymbolSize(n)));
            let mut wrapped = fatbin.clone();
            wrapped[start..start + bad.len()].copy_from_slice(&bad);
            let unread = Fatbin::parse(&wrapped).unwrap().unread();
            let want = format!("sm_90: not a readable cubin: symbol table entries of {n} bytes");
            assert!(unread.iter().any(|u| u.starts_with(&want)), "{unread:?}");
        }
    }
}
