//! Prints where build.rs put the generated Python modules and how to run
//! the demo script against them.

fn main() {
    let cpu = env!("BEGEN_DEMO_CPU_DIR");
    println!("demo_cpu module:  {cpu}/demo_cpu.py");
    println!("demo_cpu library: {cpu}/libdemo_cpu.so");
    #[cfg(feature = "cuda")]
    let cuda = env!("BEGEN_DEMO_CUDA_DIR");
    #[cfg(not(feature = "cuda"))]
    let cuda = "";
    if !cuda.is_empty() {
        println!("demo_cuda module: {cuda}/demo_cuda.py");
    }
    println!();
    println!("run the kernels from JAX (the CUDA ones only on a GPU):");
    println!("  python run.py {cpu} {cuda}");
}
