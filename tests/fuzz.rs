//! A bounded fuzz run over the whole front end (load, scan, parse, check)
//! and begen.yaml: inputs mutated from seeds (the fixtures' sources and the
//! crafted inputs that once made the scan quadratic), each run through
//! `driver::run`; a panic is a failure. `BEGEN_FUZZ_INPUTS` sets how many
//! inputs (default 20 000; a long run: `BEGEN_FUZZ_INPUTS=1000000 cargo
//! test --release --test fuzz`),
//! `BEGEN_FUZZ_SEED` the random seed. The run prints how many inputs it
//! ran, and how many panicked.

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

/// The seeds: every fixture's sources, headers and begen.yaml, and the
/// crafted inputs of bench/crafted_bench.py, smaller.
fn seeds() -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
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
                    _ => {}
                }
            }
        }
    }
    sources.sort();
    yamls.sort();
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
    (sources, yamls)
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

/// The last panic's message and location (the hook records it; the worker
/// that caught the panic reads it).
static LAST_PANIC: Mutex<String> = Mutex::new(String::new());

/// Where a panicking input is written, byte for byte, to be replayed with
/// `begen scan DIR`: `target/fuzz-panics/<seed>-<worker>-<index>/`.
fn keep(dir: &Path, ext: &str, src: &[u8], yaml: &[u8], message: &str) -> PathBuf {
    let base =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-panics").join(dir.file_name().unwrap_or_default());
    let _ = std::fs::create_dir_all(&base);
    let _ = std::fs::write(base.join(format!("k.{ext}")), src);
    let _ = std::fs::write(base.join("begen.yaml"), yaml);
    let _ = std::fs::write(base.join("panic.txt"), message);
    base
}

/// Runs `count` inputs on one worker in `dir`; returns the panics: where
/// each input was kept, and its message.
fn worker(dir: &Path, seed: u64, count: usize, done: &AtomicUsize) -> Vec<(PathBuf, String)> {
    let (sources, yamls) = seeds();
    let mut rng = Rng(seed | 1);
    let mut panics = Vec::new();
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let input = begen::driver::Settings::new(dir);
    for i in 0..count {
        let mut src = sources[rng.below(sources.len())].clone();
        mutate(&mut rng, &mut src, DICT, &sources);
        let mut yaml = yamls[rng.below(yamls.len())].clone();
        if i % 4 == 0 {
            mutate(&mut rng, &mut yaml, YAML_DICT, &yamls);
        }
        let ext = ["cu", "cpp", "cuh"][rng.below(3)];
        for stale in ["k.cu", "k.cpp", "k.cuh"] {
            let _ = std::fs::remove_file(dir.join(stale));
        }
        std::fs::write(dir.join(format!("k.{ext}")), &src).unwrap();
        std::fs::write(dir.join("begen.yaml"), &yaml).unwrap();
        let result = catch_unwind(AssertUnwindSafe(|| {
            if let Ok(run) = begen::driver::run(&input) {
                // The report and the rendered diagnostics are part of the front end too.
                let _ = run.to_json();
                for d in &run.diagnostics {
                    let _ = begen::diag::render::render_text(d, &run.sources, false);
                }
            }
        }));
        if result.is_err() {
            let message = LAST_PANIC.lock().map(|m| m.clone()).unwrap_or_default();
            let kept = keep(&dir.with_file_name(format!("{seed:x}-{i}")), ext, &src, &yaml, &message);
            panics.push((kept, message));
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
    let done = AtomicUsize::new(0);
    let start = Instant::now();
    let panics: Vec<(PathBuf, String)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let dir = base.join(format!("begen-fuzz-{}-{w}", std::process::id()));
                let n = count / workers + usize::from(w < count % workers);
                let done = &done;
                s.spawn(move || {
                    let p = worker(&dir, seed.wrapping_add(w as u64 * 0x9e37_79b9), n, done);
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
    for (kept, message) in &panics {
        println!("--- {message}\n    input kept in {} (replay: begen scan DIR)", kept.display());
    }
    assert_eq!(ran, count);
    assert!(panics.is_empty(), "{} input(s) panicked (shown above)", panics.len());
}
