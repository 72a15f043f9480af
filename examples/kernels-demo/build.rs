//! Builds the example kernels with begen: `kernels/cpu` always, and
//! `kernels/cuda` with `--features cuda`. The outputs (`lib<NAME>.so`,
//! `<NAME>.py`, `<NAME>.pyi`, `<NAME>.yaml`) land in OUT_DIR, and begen sets
//! `BEGEN_<NAME>_DIR` so `src/main.rs` can say where.

fn main() {
    begen::Build::new().dir("kernels/cpu").compile("demo_cpu");

    if std::env::var_os("CARGO_FEATURE_CUDA").is_some() {
        begen::Build::new().dir("kernels/cuda").platform("cuda").compile("demo_cuda");
    }
}
