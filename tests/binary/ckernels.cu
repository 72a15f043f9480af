// Plain `extern "C"` CUDA kernels for begen's `c` calling convention tests
// (tests/binary.rs): compiled to PTX and to an sm_90 cubin by pip's nvcc at
// test time, their parameter lists compared with what begen derives.
//
// The structs mirror the ones the test declares with begen's layout; the test
// also compiles static_asserts of begen's sizes, alignments and offsets
// against them.
#include <cstdint>
#include <cuda_fp16.h>

// begen.yaml's example: structs: {Affine: [tag:uint16, scale:float64, shift:float32]}
struct Affine {
    uint16_t tag;
    double scale;
    float shift;
};

// A Rust-CUDA `#[repr(C)] struct Foo { a: u16, b: u64, c: u128 }`:
// 16-byte aligned, 32 bytes, passed as `.param .align 16 .b8 [32]`.
struct Foo {
    uint16_t a;
    uint64_t b;
    unsigned __int128 c;
};

// An explicitly aligned struct, and one nesting another.
struct alignas(16) Vec3 {
    float x, y, z;
};

struct Inner {
    bool flag;
    double x;
};

struct Outer {
    int8_t tag;
    Inner inner;
    __half h;
};

extern "C" __global__ void axpy(const float* x, const float* y, float* out, float a, uint64_t n) {
    uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}

extern "C" __global__ void affine(Affine p, const float* x, uint64_t n, float* out) {
    uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = (float)(x[i] * p.scale) + p.shift + p.tag;
}

// A slice as Rust-CUDA passes it: pointer, then length.
extern "C" __global__ void foo_sum(Foo f, const uint8_t* data, uint64_t len, uint64_t* out) {
    uint64_t s = f.a + f.b + (uint64_t)f.c;
    for (uint64_t i = 0; i < len; ++i) s += data[i];
    *out = s;
}

extern "C" __global__ void mixed(int8_t a, int16_t b, bool c, double d, Outer o, int32_t e, __half h, Vec3 v,
                                 uint64_t f, float* out) {
    *out = a + b + c + (float)d + o.tag + o.inner.flag + (float)o.inner.x + __half2float(o.h) + e +
           __half2float(h) + v.x + v.y + v.z + (float)f;
}
