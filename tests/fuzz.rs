//! A bounded fuzz run over the whole front end (load, scan, parse, check)
//! and begen.yaml: inputs mutated from seeds (the fixtures' sources and the
//! crafted inputs that would make a naive scan quadratic), each run through
//! `driver::run`; a panic is a failure. Inputs come in classes (hostile
//! ones among them): sources, begen.yaml, cuTile symbols,
//! `structs:`, launch expressions, and mutated cubins (ELF), fatbins and
//! PTX; the run prints, per class, how many inputs it tried, how many
//! begen refused with an error and how many panicked. `BEGEN_FUZZ_INPUTS` sets how many
//! inputs (default 20 000; a long run: `BEGEN_FUZZ_INPUTS=1000000 cargo
//! test --release --test fuzz`),
//! `BEGEN_FUZZ_SEED` the random seed. The run prints how many inputs it
//! ran, and how many panicked.
//!
//! A second class mutates the records begen reads back from its work
//! directory on a later build (dependency records, depfiles, probe answers,
//! the link record, the module's build id, `begen generate`'s record) and
//! calls their readers directly (`begen::fuzz_hooks`): each must reject a
//! record or accept a well-formed one, never panic, and never have begen
//! remove a file it did not write. Run together, the records take a
//! quarter as many inputs and the front end a twentieth fewer (the same
//! time as the front end alone); `BEGEN_FUZZ_CLASSES=records` or
//! `front-end` runs one group with all the inputs.

// Test code reads its switches from the environment directly (clippy.toml).
#![allow(clippy::disallowed_methods)]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// A small, deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }
}

/// Pieces of the languages begen reads, spliced into inputs.
const DICT: &[&str] = &[
    "// @BE ",
    "// @BE f",
    "//@BE g ",
    "@BE",
    " arg",
    " ret",
    " stream",
    " attr.x",
    " attr.a:float16",
    " attr.c:complex64",
    " arg:float32[n]",
    " ret:T[n, k]",
    " inout:int8[]",
    " dim.n",
    " dim.k:uint8",
    " const.T=float32,float64",
    " const.N=1,2,-3",
    " const.B=true",
    "[",
    "]",
    "[n,",
    "template <typename T>",
    "template <int N, bool B>",
    "void ",
    "f(",
    ")",
    "{",
    "}",
    ";",
    ",",
    "const BE::Tensor x",
    "BE::Tensor y",
    "BE::Tensor&& z",
    "const float* p",
    "float* q",
    "int64_t n",
    "int64_t stream",
    "__half h",
    "std::complex<float> c",
    "#define ",
    "#define F(a, b) ",
    "a ## b",
    "#a",
    "__VA_ARGS__",
    "__VA_OPT__(,)",
    "#if 0\n",
    "#endif\n",
    "#include \"h.cuh\"\n",
    "/*",
    "*/",
    "\"",
    "'",
    "\\\n",
    "\r",
    "\n",
    "\t",
    "namespace ns {",
    "struct S {",
    "__global__ ",
    "__device__ ",
    "...",
    "\u{202e}",
    "\u{00e9}",
    "\0",
];

const YAML_DICT: &[&str] = &[
    "name: ",
    "prefix: ",
    "platform: ",
    "cuda: {arch: [sm_90]}",
    "functions:\n  f: {command_buffer: true}\n",
    "sources:\n  k.cu: {f: [arg, ret]}\n",
    "sources:\n  k.cu: [f]\n",
    "modules: {per-file: true}\n",
    "modules:\n  names: {k.cu: m}\n",
    "variants:\n  k.cu:\n    - {module: v, defines: {A: 1}}\n",
    "link: {libs: [m], dirs: [x]}\n",
    "include_dirs: [inc]\n",
    "- ",
    ": ",
    "{",
    "}",
    "[",
    "]",
    "\"",
    "'",
    "&a ",
    "*a",
    "!!binary ",
    "\n",
    "  ",
    "123",
    "a..b",
    "~",
    "null",
];

/// The seeds: every fixture's sources, headers, begen.yaml and PTX, the
/// crafted inputs of bench/crafted_bench.py, smaller, and a fatbin.
/// The seeds of every class: sources, begen.yamls, a fatbin (its cubin is
/// the ELF seed) and the fixtures' PTX.
fn all_seeds() -> Seeds {
    let mut ptxs = Vec::new();
    let mut sources = Vec::new();
    let mut yamls = vec![Vec::new()];
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(bytes) = std::fs::read(&p) {
                match p.extension().and_then(|x| x.to_str()) {
                    Some("cu" | "cpp" | "cc" | "cuh" | "h") if bytes.len() < 16_384 => sources.push(bytes),
                    Some("yaml") => yamls.push(bytes),
                    Some("ptx") => ptxs.push(bytes),
                    _ => {}
                }
            }
        }
    }
    sources.sort();
    yamls.sort();
    ptxs.sort();
    let fatbin = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/binaries/input/kernels.fatbin"))
        .expect("the fatbin seed");
    sources.push(
        (0..40).map(|i| format!("// @BE f{i}\nvoid f{i}(const BE::Tensor x,\n")).collect::<String>().into_bytes(),
    );
    sources.push("// @BE f\n".repeat(200).into_bytes());
    sources.push(format!("// @BE f\nvoid f({})\n", "[".repeat(300)).into_bytes());
    sources.push(format!("// @BE f arg:float32[{}n]\nvoid f(const float* x);\n", " ".repeat(2000)).into_bytes());
    yamls.push(
        (0..100)
            .map(|i| format!("  f{i}: {{command_buffer: true}}\n"))
            .fold("functions:\n".to_string(), |a, b| a + &b)
            .into_bytes(),
    );
    // Hostile begen.yamls: deep flow nesting, duplicate keys at
    // every level, an empty architecture, NaN.
    yamls.push(format!("name: {}", "[".repeat(70)).into_bytes());
    yamls.push(b"functions:\n  f: {command_buffer: true}\n  f: {command_buffer: false}\n".to_vec());
    yamls.push(b"cuda: {arch: ['']}\nfunctions:\n  f: {unsupported: {a: [.nan]}}\n".to_vec());
    Seeds { sources, yamls, elf: elf_in(&fatbin), fatbin, ptxs }
}

fn mutate(rng: &mut Rng, input: &mut Vec<u8>, dict: &[&str], pool: &[Vec<u8>]) {
    for _ in 0..1 + rng.below(6) {
        let at = rng.below(input.len() + 1);
        match rng.below(7) {
            0 if !input.is_empty() => {
                let k = rng.below(input.len());
                input[k] ^= 1 << rng.below(8);
            }
            1 if !input.is_empty() => {
                let end = (at + 1 + rng.below(32)).min(input.len());
                input.drain(at.min(end)..end);
            }
            2 | 3 => {
                let piece = dict[rng.below(dict.len())].as_bytes();
                input.splice(at..at, piece.iter().copied());
            }
            4 if !input.is_empty() => {
                let start = rng.below(input.len());
                let end = (start + 1 + rng.below(64)).min(input.len());
                let chunk = input[start..end].to_vec();
                input.splice(at..at, chunk);
            }
            5 => {
                let other = &pool[rng.below(pool.len())];
                if !other.is_empty() {
                    let start = rng.below(other.len());
                    let end = (start + 1 + rng.below(256)).min(other.len());
                    input.splice(at..at, other[start..end].iter().copied());
                }
            }
            _ => input.insert(at, rng.next() as u8),
        }
    }
    input.truncate(32_768);
}

/// The kinds of input, each with its own generator.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Class {
    /// A mutated source (and every fourth time a mutated begen.yaml).
    Source,
    /// A mutated begen.yaml (deep nesting, duplicate keys among the seeds).
    Yaml,
    /// A cuTile kernel whose symbol (in the PTX and in begen.yaml) is mutated.
    Symbol,
    /// `structs:` that double, chain, widen, cycle or are mutated.
    Struct,
    /// Launch expressions: long chains, deep parentheses, random tokens.
    Expr,
    /// A mutated cubin (ELF).
    Elf,
    /// A mutated fatbin.
    Fatbin,
    /// Mutated PTX text.
    Ptx,
}

/// The order inputs cycle through (sources three times as often).
const SCHEDULE: [Class; 10] = [
    Class::Source,
    Class::Source,
    Class::Source,
    Class::Yaml,
    Class::Symbol,
    Class::Struct,
    Class::Expr,
    Class::Elf,
    Class::Fatbin,
    Class::Ptx,
];

const CLASSES: [Class; 8] =
    [Class::Source, Class::Yaml, Class::Symbol, Class::Struct, Class::Expr, Class::Elf, Class::Fatbin, Class::Ptx];

const SYMBOL_SEEDS: &[&str] = &[
    "scale_Kt1_A1f32_1i16t1_p16_A1f32_1t1_Sf32_I16",
    "k_Kt1_A3f16_1t1_6v8_3i4_2l_2_p16g0iw_A1f16_g0",
    "k_Kt1_Lg0iA2f32_3v2_Lg0A1f32_B1_I_7_F3ff8000000000000",
    "sum_list_Kt1_LA1f32_1i16t1_p16_A1f32_1l0_Sf32_I16",
    "add_list2d_Kt1_A2f32_3l0_LiA2f32_1l0_2t1_w_A2f32_1i16_2i32_3l0_I16_I32",
    "k_Kt2_T2Sf32T1A1f32",
    "k_Kt1_A2i64_w",
];

const SYMBOL_DICT: &[&str] = &[
    "_",
    "A1f32",
    "A2i8",
    "Sf32",
    "Sf16",
    "T1",
    "T9",
    "L",
    "Lg0",
    "g0",
    "g1",
    "i",
    "I",
    "I_7",
    "B1",
    "F",
    "1i16",
    "1t1",
    "3v2",
    "p16",
    "w",
    "u",
    "l0",
    "_K",
    "_Kt1_",
    "_Kt2_",
    "99999999999999999999",
    "0",
    "C",
    "Cs_",
];

const EXPR_DICT: &[&str] =
    &["n", "1", "128", "+", "-", "*", "/", "%", "(", ")", "cdiv(", ",", " ", "k", "9223372036854775807", "0", "x"];

const PTX_DICT: &[&str] = &[
    ".visible .entry ",
    ".entry ",
    ".param ",
    ".u64 ",
    ".u32 ",
    ".f32 ",
    ".b8 ",
    ".align 8 ",
    ".ptr ",
    "[24]",
    "[4294967296]",
    "(",
    ")",
    ",",
    "{",
    "}",
    "ret;",
    "// ",
    "/*",
    "*/",
    "\n",
    ".version 8.0\n",
    ".target sm_90\n",
    ".address_size 64\n",
    "affine",
    "k",
];

/// Per class: inputs tried, refused with an error diagnostic, panicked.
struct Stats([[AtomicUsize; 3]; CLASSES.len()]);

impl Stats {
    fn new() -> Stats {
        Stats(std::array::from_fn(|_| std::array::from_fn(|_| AtomicUsize::new(0))))
    }
    fn add(&self, class: Class, what: usize) {
        let k = CLASSES.iter().position(|c| *c == class).unwrap_or(0);
        self.0[k][what].fetch_add(1, Ordering::Relaxed);
    }
}

/// A begen.yaml declaring `file` (a PTX, cubin or fatbin) with kernel
/// `entry` of the `convention`, its `params` and launch.
fn binary_yaml(file: &str, convention: &str, entry: &str, symbol: Option<&str>, params: &str, launch: &str) -> String {
    let symbol = symbol.map(|s| format!("        symbol: {}\n", serde_json::to_string(s).unwrap())).unwrap_or_default();
    format!(
        "name: m\nbinaries:\n  - file: {file}\n    convention: {convention}\n    kernels:\n      {entry}:\n{symbol}        \
         params: {params}\n{launch}"
    )
}

const DEFAULT_LAUNCH: &str = "        grid: [\"cdiv(n, 128)\"]\n        block: [128]\n";

/// The begen.yaml lines of the struct the fixtures' `affine` kernel takes.
const AFFINE: &str = "name: m\nstructs:\n  Affine: [tag:uint16, scale:float64, shift:float32]\n";

/// A PTX module of one entry `name` with `params` u64 parameters, then
/// those of `more` types.
fn ptx_of(name: &str, params: usize, more: &[&str]) -> String {
    let types = std::iter::repeat_n("u64", params).chain(more.iter().copied());
    let list: Vec<String> = types.enumerate().map(|(i, ty)| format!("\t.param .{ty} p_{i}")).collect();
    format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry {name}(\n{}\n)\n{{\n\tret;\n}}\n",
        list.join(",\n")
    )
}

/// A random launch expression: a chain, deep parentheses, nested calls or
/// random tokens.
fn expression(rng: &mut Rng) -> String {
    // Mostly within begen's limits (256 operators, 64 parentheses deep), a
    // quarter of the time far beyond them.
    let size = |rng: &mut Rng, small: usize, big: usize| {
        let bound = if rng.below(4) == 0 { big } else { small };
        rng.below(bound)
    };
    match rng.below(4) {
        0 => format!("1{}", "+n".repeat(size(rng, 100, 20_000))),
        1 => {
            let depth = size(rng, 40, 10_000);
            format!("{}n{}", "(".repeat(depth), ")".repeat(depth))
        }
        2 => {
            let depth = size(rng, 20, 2_000);
            format!("{}1{}", "cdiv(".repeat(depth), ", 2)".repeat(depth))
        }
        _ => (0..1 + rng.below(64)).map(|_| EXPR_DICT[rng.below(EXPR_DICT.len())]).collect(),
    }
}

/// A random `structs:` section and the struct a kernel takes.
fn structs_yaml(rng: &mut Rng) -> (String, String) {
    const TYPES: &[&str] = &["int8", "float64", "uint16", "bool", "complex128", "float16", "nope", "S0", "S1"];
    let mut text = String::from("structs:\n");
    let mut n = 1 + rng.below(80);
    match rng.below(4) {
        // Each level two of the one below.
        0 => {
            text.push_str("  S0: [x:float64]\n");
            for i in 1..n {
                text.push_str(&format!("  S{i}: [a:S{}, b:S{}]\n", i - 1, i - 1));
            }
        }
        // A chain, innermost last.
        1 => {
            n = 1 + rng.below(3_000);
            for i in 0..n {
                let inner = if i + 1 == n { "int8".to_string() } else { format!("S{}", i + 1) };
                text.push_str(&format!("  S{i}: [x:{inner}]\n"));
            }
        }
        // One wide struct.
        2 => {
            n = 1;
            let members: Vec<String> = (0..1 + rng.below(5_000)).map(|i| format!("m{i}:int8")).collect();
            text.push_str(&format!("  S0: [{}]\n", members.join(", ")));
        }
        // Random members: cycles and unknown types included.
        _ => {
            for i in 0..n {
                let members: Vec<String> = (0..1 + rng.below(6))
                    .map(|m| {
                        let ty = if rng.below(3) == 0 {
                            format!("S{}", rng.below(n))
                        } else {
                            TYPES[rng.below(TYPES.len())].into()
                        };
                        format!("m{m}:{ty}")
                    })
                    .collect();
                text.push_str(&format!("  S{i}: [{}]\n", members.join(", ")));
            }
        }
    }
    (text, format!("S{}", rng.below(n)))
}

/// The first ELF image inside `fatbin` (a cubin), to the end of the bytes.
fn elf_in(fatbin: &[u8]) -> Vec<u8> {
    fatbin.windows(4).position(|w| w == b"\x7fELF").map(|at| fatbin[at..].to_vec()).unwrap_or_default()
}

/// Mutates a binary: bit flips, truncation, and sizes, offsets and counts
/// overwritten with edge values (a third of them in the headers).
fn mutate_binary(rng: &mut Rng, bytes: &mut Vec<u8>) {
    const EDGES: [u64; 9] = [0, 1, 2, 4, 5, 0x7f, 0xffff, 0xffff_ffff, u64::MAX];
    for _ in 0..1 + rng.below(8) {
        if bytes.is_empty() {
            return;
        }
        let at = if rng.below(3) == 0 { rng.below(bytes.len().min(128)) } else { rng.below(bytes.len()) };
        match rng.below(6) {
            0 => bytes[at] ^= 1 << rng.below(8),
            1 => bytes.truncate(at),
            _ => {
                let value = EDGES[rng.below(EDGES.len())].to_le_bytes();
                let width = [1, 2, 4, 8][rng.below(4)];
                for (k, b) in value.iter().take(width).enumerate() {
                    if let Some(slot) = bytes.get_mut(at + k) {
                        *slot = *b;
                    }
                }
            }
        }
    }
}

/// The seeds [`generate`] draws from.
struct Seeds {
    sources: Vec<Vec<u8>>,
    yamls: Vec<Vec<u8>>,
    fatbin: Vec<u8>,
    elf: Vec<u8>,
    ptxs: Vec<Vec<u8>>,
}

/// One input of `class` (the `i`th of its worker): the files to write
/// beside begen.yaml, and begen.yaml.
fn generate(class: Class, rng: &mut Rng, i: usize, seeds: &Seeds) -> (Vec<(String, Vec<u8>)>, Vec<u8>) {
    let Seeds { sources, yamls, fatbin, elf, ptxs } = seeds;
    match class {
        Class::Source | Class::Yaml => {
            let mut src = sources[rng.below(sources.len())].clone();
            if class == Class::Source {
                mutate(rng, &mut src, DICT, sources);
            }
            let mut yaml = yamls[rng.below(yamls.len())].clone();
            if class == Class::Yaml || i.is_multiple_of(4) {
                mutate(rng, &mut yaml, YAML_DICT, yamls);
            }
            let ext = ["cu", "cpp", "cuh"][rng.below(3)];
            (vec![(format!("k.{ext}"), src)], yaml)
        }
        Class::Symbol => {
            let mut symbol = SYMBOL_SEEDS[rng.below(SYMBOL_SEEDS.len())].as_bytes().to_vec();
            if rng.below(8) == 0 {
                let deep = ["T1", "L", "Lg0"][rng.below(3)].repeat(rng.below(20_000));
                symbol = format!("f_Kt{}_{deep}Sf32", 1 + rng.below(2)).into_bytes();
            }
            let pool: Vec<Vec<u8>> = SYMBOL_SEEDS.iter().map(|s| s.as_bytes().to_vec()).collect();
            mutate(rng, &mut symbol, SYMBOL_DICT, &pool);
            let symbol = String::from_utf8_lossy(&symbol).into_owned();
            let params =
                ["[\"arg:float32[n]\", \"ret:float32[n]\", attr.s]", "[\"arg:float32[n]...\", \"ret:float32[n]\"]"];
            let yaml =
                binary_yaml("k.ptx", "cutile_python_v1", "k", Some(&symbol), params[rng.below(2)], DEFAULT_LAUNCH);
            (vec![("k.ptx".into(), ptx_of(&symbol, 1 + rng.below(12), &[]).into_bytes())], yaml.into_bytes())
        }
        Class::Struct => {
            let (structs, used) = structs_yaml(rng);
            let params = format!("[attr.s:{used}, \"arg:float32[n]\", dim.n:uint64, \"ret:float32[n]\"]");
            let yaml = binary_yaml("k.ptx", "c", "k", None, &params, DEFAULT_LAUNCH);
            let mut yaml = format!("{structs}{yaml}").into_bytes();
            if rng.below(4) == 0 {
                mutate(rng, &mut yaml, YAML_DICT, yamls);
            }
            (vec![("k.ptx".into(), ptx_of("k", 4, &[]).into_bytes())], yaml)
        }
        Class::Expr => {
            let mut quoted = || serde_json::to_string(&expression(rng)).unwrap();
            let launch = format!(
                "        grid: [{}, {}]\n        block: [{}]\n        shared: {}\n",
                quoted(),
                quoted(),
                quoted(),
                quoted()
            );
            let params = "[\"arg:float32[n]\", \"ret:float32[n]\", dim.n:int64, attr.k:int32]";
            let yaml = binary_yaml("k.ptx", "c", "k", None, params, &launch);
            (vec![("k.ptx".into(), ptx_of("k", 3, &["u32"]).into_bytes())], yaml.into_bytes())
        }
        Class::Elf | Class::Fatbin | Class::Ptx => {
            let (file, mut bytes) = match class {
                Class::Elf => ("k.cubin", elf.clone()),
                Class::Fatbin => ("k.fatbin", fatbin.clone()),
                _ => ("k.ptx", ptxs[rng.below(ptxs.len())].clone()),
            };
            if class == Class::Ptx {
                mutate(rng, &mut bytes, PTX_DICT, ptxs);
            } else {
                mutate_binary(rng, &mut bytes);
            }
            let params = "[attr.p:Affine, \"arg:float32[n]\", dim.n:uint64, \"ret:float32[n]\"]";
            let yaml = binary_yaml(file, "c", "affine", None, params, DEFAULT_LAUNCH).replacen("name: m\n", AFFINE, 1);
            (vec![(file.into(), bytes)], yaml.into_bytes())
        }
    }
}

/// The last panic's message and location (the hook records it; the worker
/// that caught the panic reads it).
static LAST_PANIC: Mutex<String> = Mutex::new(String::new());

/// Where a panicking input is written, byte for byte, to be replayed with
/// `begen scan DIR`: `target/fuzz-panics/<seed>-<worker>-<index>/`.
fn keep(dir: &Path, files: &[(String, Vec<u8>)], yaml: &[u8], message: &str) -> PathBuf {
    let base =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-panics").join(dir.file_name().unwrap_or_default());
    let _ = std::fs::create_dir_all(&base);
    for (name, bytes) in files {
        let _ = std::fs::write(base.join(name), bytes);
    }
    let _ = std::fs::write(base.join("begen.yaml"), yaml);
    let _ = std::fs::write(base.join("panic.txt"), message);
    base
}

/// Runs `count` inputs on one worker in `dir`; returns the panics: where
/// each input was kept, and its message.
fn worker(dir: &Path, seed: u64, count: usize, done: &AtomicUsize, stats: &Stats) -> Vec<(PathBuf, String)> {
    let seeds = all_seeds();
    let mut rng = Rng(seed | 1);
    let mut panics = Vec::new();
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let input = begen::driver::Settings::new(dir);
    for i in 0..count {
        let class = SCHEDULE[i % SCHEDULE.len()];
        let (files, yaml) = generate(class, &mut rng, i, &seeds);
        for stale in ["k.cu", "k.cpp", "k.cuh", "k.ptx", "k.cubin", "k.fatbin"] {
            let _ = std::fs::remove_file(dir.join(stale));
        }
        for (name, bytes) in &files {
            std::fs::write(dir.join(name), bytes).unwrap();
        }
        std::fs::write(dir.join("begen.yaml"), &yaml).unwrap();
        let result = catch_unwind(AssertUnwindSafe(|| {
            let Ok(run) = begen::driver::run(&input) else { return true };
            // The report and the rendered diagnostics are part of the front end too.
            let _ = run.to_json();
            for d in &run.diagnostics {
                let _ = begen::diag::render::render_text(d, &run.sources, false);
            }
            run.diagnostics.iter().any(|d| d.is_error())
        }));
        stats.add(class, 0);
        match result {
            Ok(true) => stats.add(class, 1),
            Ok(false) => {}
            Err(_) => {
                stats.add(class, 2);
                let message = LAST_PANIC.lock().map(|m| m.clone()).unwrap_or_default();
                let kept = keep(&dir.with_file_name(format!("{seed:x}-{i}")), &files, &yaml, &message);
                panics.push((kept, message));
            }
        }
        done.fetch_add(1, Ordering::Relaxed);
    }
    panics
}

#[test]
fn fuzz_front_end_and_config() {
    let count: usize = std::env::var("BEGEN_FUZZ_INPUTS").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
    let seed: u64 = std::env::var("BEGEN_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed_b39e);
    // Panics are caught and counted; the hook keeps the message and the
    // place instead of printing them.
    std::panic::set_hook(Box::new(|info| {
        if let Ok(mut last) = LAST_PANIC.lock() {
            *last = info.to_string();
        }
    }));
    let base = if Path::new("/dev/shm").is_dir() { PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).min(4);
    let only = std::env::var("BEGEN_FUZZ_CLASSES").unwrap_or_default();
    let wants = |group: &str| only.is_empty() || only.split(',').any(|g| g.trim() == group);
    // Run together, the classes share the time of the front end's alone:
    // the records (far cheaper each) take a quarter as many inputs, the
    // front end a twentieth fewer. Run alone, a group takes all `count`.
    let (front, records) = match (wants("front-end"), wants("records")) {
        (true, true) => (count - count / 20, count / 4),
        (true, false) => (count, 0),
        (false, true) => (0, count),
        (false, false) => (0, 0),
    };
    let record_failures = if records > 0 { fuzz_records(&base, workers, records, seed) } else { Vec::new() };
    let count = front;
    let done = AtomicUsize::new(0);
    let stats = Stats::new();
    let start = Instant::now();
    let panics: Vec<(PathBuf, String)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let dir = base.join(format!("begen-fuzz-{}-{w}", std::process::id()));
                let n = count / workers + usize::from(w < count % workers);
                let (done, stats) = (&done, &stats);
                s.spawn(move || {
                    let p = worker(&dir, seed.wrapping_add(w as u64 * 0x9e37_79b9), n, done, stats);
                    let _ = std::fs::remove_dir_all(&dir);
                    p
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let _ = std::panic::take_hook();
    let ran = done.load(Ordering::Relaxed);
    println!(
        "fuzz: {ran} inputs in {:.1} s ({workers} workers, seed {seed}), {} panicked",
        start.elapsed().as_secs_f64(),
        panics.len()
    );
    for (class, counts) in CLASSES.iter().zip(&stats.0) {
        let [tried, refused, panicked] = counts.each_ref().map(|c| c.load(Ordering::Relaxed));
        println!(
            "  {:<7} {tried:>8} tried, {refused:>8} refused with an error, {:>8} accepted, {panicked} panicked",
            format!("{class:?}"),
            tried - refused - panicked
        );
    }
    for (kept, message) in &panics {
        println!("--- {message}\n    input kept in {} (replay: begen scan DIR)", kept.display());
    }
    assert_eq!(ran, count);
    assert!(panics.is_empty(), "{} input(s) panicked (shown above)", panics.len());
    assert!(record_failures.is_empty(), "{} record(s) panicked or were misread (shown above)", record_failures.len());
}

/// The work-directory records' class: `count` mutated records over
/// `workers` threads; prints the counts per record and returns the failures.
fn fuzz_records(base: &Path, workers: usize, count: usize, seed: u64) -> Vec<String> {
    let stats: [[AtomicUsize; 3]; 6] = std::array::from_fn(|_| std::array::from_fn(|_| AtomicUsize::new(0)));
    let start = Instant::now();
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let dir = base.join(format!("begen-fuzz-records-{}-{w}", std::process::id()));
                let n = count / workers + usize::from(w < count % workers);
                let stats = &stats;
                s.spawn(move || {
                    let f = record_worker(&dir, seed.wrapping_add(w as u64 * 0x9e37_79b9), n, stats);
                    let _ = std::fs::remove_dir_all(&dir);
                    f
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    println!(
        "fuzz: {count} work-directory records in {:.1} s ({workers} workers, seed {seed}), {} failed",
        start.elapsed().as_secs_f64(),
        failures.len()
    );
    for (kind, counts) in RECORDS.iter().zip(&stats) {
        let [tried, rejected, failed] = counts.each_ref().map(|c| c.load(Ordering::Relaxed));
        println!(
            "  {:<9} {tried:>8} tried, {rejected:>8} rejected, {:>8} accepted, {failed} panicked or misread",
            format!("{kind:?}"),
            tried - rejected - failed
        );
    }
    for f in &failures {
        println!("--- {f}");
    }
    failures
}

/// Pieces of begen's work-directory records, spliced into them.
const RECORD_DICT: &[&str] = &[
    " ",
    ":",
    ":racy",
    "absent - - ",
    "changed-during-compile",
    "-",
    "-1",
    "0",
    "18446744073709551616",
    "340282366920938463463374607431768211456",
    "ffffffffffffffff",
    "../",
    "/",
    "/dev/stdin",
    "\n",
    "\r\n",
    "\0",
    "\u{ff}",
    "--- output\n",
    "_BEGEN_BUILD = \"",
    "\"",
    "{",
    "}",
    "[",
    "]",
    "null",
    "1e999",
    "\"begen\": ",
    "\"entries\": ",
    "\"inputs\": ",
    "\"files\": ",
    "\"value\": ",
    "{\"size\": 1, \"mtime\": 1, \"ctime\": 1, \"ino\": 1}",
];

/// The records [`record_input`] reads back, one class of the fuzz run.
#[derive(Clone, Copy, Debug)]
enum Record {
    /// An object's dependency record (`<obj>.deps`).
    Deps,
    /// A compiler's depfile (`<obj>.d`).
    Depfile,
    /// The probe answers (`probes.json`).
    Probes,
    /// The record of the last link (`link.record`).
    Link,
    /// The generated module's `_BEGEN_BUILD` id.
    Module,
    /// The record of `begen generate`'s files (`OUT/gen/<lib>.begen-files`).
    Generated,
}

const RECORDS: [Record; 6] =
    [Record::Deps, Record::Depfile, Record::Probes, Record::Link, Record::Module, Record::Generated];

/// One worker's real records (the seeds), written by begen's own writers
/// in `dir`.
fn record_seeds(dir: &Path) -> Vec<Vec<u8>> {
    std::fs::write(dir.join("a.h"), "int a;\n").unwrap();
    std::fs::write(dir.join("b.h"), "int b;\n").unwrap();
    std::fs::write(dir.join("libk.so"), "library bytes").unwrap();
    let deps = begen::fuzz_hooks::record_deps(dir, Path::new("k.o"), &["a.h".into(), "b.h".into()]);
    let depfile = "k.o: k.cc a.h \\\n  b\\ c.h $$x.h\n".to_string();
    let answer = vec!["recorded".to_string(), "answer".to_string()];
    let _ = std::fs::remove_file(dir.join("probes.json"));
    begen::fuzz_hooks::probe(dir, "p", "inputs", answer, Some(vec![dir.join("a.h")]));
    let probes = std::fs::read(dir.join("probes.json")).unwrap_or_default();
    begen::fuzz_hooks::link_stale(dir, &["-o".into(), "libk.so".into()], &dir.join("libk.so"), true);
    let link = std::fs::read(dir.join("link.record")).unwrap_or_default();
    let module = b"import ctypes\n_BEGEN_BUILD = \"0123456789abcdef\"\n".to_vec();
    let generated = b"k.begen.cc\nk.begen.h\n".to_vec();
    vec![deps.into_bytes(), depfile.into_bytes(), probes, link, module, generated]
}

/// Mutates a record: [`mutate`]'s edits with the records' pieces, and now
/// and then a truncation, a very long line or random bytes.
fn mutate_record(rng: &mut Rng, bytes: &mut Vec<u8>, pool: &[Vec<u8>]) {
    match rng.below(10) {
        0 => bytes.truncate(rng.below(bytes.len() + 1)),
        1 => {
            let at = rng.below(bytes.len() + 1);
            let long = vec![b"9a/\0 :"[rng.below(6)]; rng.below(100_000)];
            bytes.splice(at..at, long);
        }
        2 => *bytes = (0..rng.below(512)).map(|_| rng.next() as u8).collect(),
        _ => mutate(rng, bytes, RECORD_DICT, pool),
    }
}

/// Writes a mutated record of `kind` into `dir` and has begen read it:
/// `Ok(true)` when begen accepted it, `Ok(false)` when it rejected it (the
/// next build redoes the step), `Err` when it accepted a malformed one.
fn record_input(kind: Record, rng: &mut Rng, dir: &Path, seeds: &[Vec<u8>]) -> Result<bool, String> {
    let mut bytes = seeds[kind as usize].clone();
    mutate_record(rng, &mut bytes, seeds);
    // begen reads its text records with `read_to_string`: other bytes are
    // no record at all.
    let text = String::from_utf8(bytes.clone());
    match kind {
        Record::Deps => {
            let Ok(text) = text else { return Ok(false) };
            match begen::fuzz_hooks::check_deps(dir, &text) {
                Err(_) => Ok(false),
                Ok(()) => {
                    // Accepted: every line names a file with its identity.
                    for line in text.lines() {
                        let fields: Vec<&str> = line.splitn(4, ' ').collect();
                        if fields.len() != 4 {
                            return Err(format!("accepted the line {line:?}"));
                        }
                    }
                    Ok(true)
                }
            }
        }
        Record::Depfile => {
            let Ok(text) = text else { return Ok(false) };
            let deps = begen::fuzz_hooks::depfile_prerequisites(&text);
            Ok(!deps.is_empty())
        }
        Record::Probes => {
            std::fs::write(dir.join("probes.json"), &bytes).unwrap();
            // The answer is typed by its reader (a list of strings here):
            // one of another shape makes the probe run again.
            let fresh = vec!["fresh".to_string()];
            Ok(begen::fuzz_hooks::probe(dir, "p", "inputs", fresh.clone(), None) != fresh)
        }
        Record::Link => {
            std::fs::write(dir.join("link.record"), &bytes).unwrap();
            let args = ["-o".to_string(), "libk.so".to_string()];
            match begen::fuzz_hooks::link_stale(dir, &args, &dir.join("libk.so"), false) {
                Some(_) => Ok(false),
                None if bytes == seeds[Record::Link as usize] => Ok(true),
                None => {
                    // Only the library's identity and hash may differ.
                    let (inputs, _) = text.as_deref().unwrap_or("").split_once("--- output\n").unwrap_or_default();
                    let (want, _) =
                        std::str::from_utf8(&seeds[Record::Link as usize]).unwrap().split_once("--- output\n").unwrap();
                    if inputs == want { Ok(true) } else { Err("accepted a link record of other inputs".into()) }
                }
            }
        }
        Record::Module => {
            std::fs::write(dir.join("m.py"), &bytes).unwrap();
            match begen::fuzz_hooks::module_build(&dir.join("m.py")) {
                None => Ok(false),
                Some(id) if id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit()) => Ok(true),
                Some(id) => Err(format!("accepted the build id {id:?}")),
            }
        }
        Record::Generated => {
            // OUT holds a file of the user's beside begen's; a folder beside
            // OUT holds another: no record may have begen remove either.
            let out = dir.join("out");
            let _ = std::fs::create_dir_all(out.join("gen"));
            std::fs::write(out.join("precious.txt"), "keep").unwrap();
            std::fs::write(dir.join("precious.txt"), "keep").unwrap();
            std::fs::write(out.join("gen/k.begen-files"), &bytes).unwrap();
            let accepted = begen::fuzz_hooks::write_generated(&out, "k", &[("k.begen.cc", "int k;\n")]).is_ok();
            for kept in [out.join("precious.txt"), dir.join("precious.txt")] {
                if !kept.is_file() {
                    return Err(format!("removed {}, a file begen did not write", kept.display()));
                }
            }
            Ok(accepted)
        }
    }
}

/// Runs `count` mutated work-directory records on one worker in `dir`;
/// adds to `stats` per record kind (tried, rejected, panicked or accepted
/// a malformed one); returns the failures.
fn record_worker(dir: &Path, seed: u64, count: usize, stats: &[[AtomicUsize; 3]; 6]) -> Vec<String> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let seeds = record_seeds(dir);
    let mut rng = Rng(seed | 1);
    let mut failures = Vec::new();
    for i in 0..count {
        let kind = RECORDS[i % RECORDS.len()];
        let result = catch_unwind(AssertUnwindSafe(|| record_input(kind, &mut rng, dir, &seeds)));
        let counts = &stats[kind as usize];
        counts[0].fetch_add(1, Ordering::Relaxed);
        match result {
            Ok(Ok(true)) => {}
            Ok(Ok(false)) => _ = counts[1].fetch_add(1, Ordering::Relaxed),
            Ok(Err(why)) => {
                counts[2].fetch_add(1, Ordering::Relaxed);
                failures.push(format!("{kind:?} (seed {seed}, input {i}): {why}"));
            }
            Err(_) => {
                counts[2].fetch_add(1, Ordering::Relaxed);
                let message = LAST_PANIC.lock().map(|m| m.clone()).unwrap_or_default();
                failures.push(format!("{kind:?} (seed {seed}, input {i}) panicked: {message}"));
            }
        }
    }
    failures
}
