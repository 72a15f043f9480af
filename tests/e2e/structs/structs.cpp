// Struct and array attributes from JAX (tests/python/test_e2e_structs.py):
// structs found in this file and in a local header, by value and by const
// reference, inferred and named by tokens; arrays as BE::Span,
// xla::ffi::Span and std::vector, of every element kind.
#include <complex>
#include <cstdint>
#include <vector>

#include "brainevent/common.h"
#include "params.h"
#include "xla/ffi/api/ffi.h"

// @BE affine
void affine(const BE::Tensor x, BE::Tensor y, Affine p) {
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = p.apply(in[i]);
}

// Every integer member, written out as float64.
// @BE ints arg ret attr.v:Ints
void ints(const BE::Tensor x, BE::Tensor out, const Ints& v) {
    (void)x;
    double* o = out.data_ptr<double>();
    o[0] = v.i8; o[1] = v.u8; o[2] = v.i16; o[3] = v.u16;
    o[4] = v.i32; o[5] = v.u32; o[6] = static_cast<double>(v.i64); o[7] = static_cast<double>(v.u64);
}

struct Window {
    int64_t start;
    int64_t stop;
};

// A struct of this file, with a typed tensor and an array beside it.
// @BE window_sum arg:float32[n] ret:float32[] attr.w attr.weights
void window_sum(const float* x, float* out, Window w, BE::Span<const float> weights) {
    float s = 0;
    for (int64_t i = w.start; i < w.stop; ++i) s += x[i] * weights[static_cast<size_t>(i - w.start) % weights.size()];
    out[0] = s;
}

// y[i] = sum_k c[k] * x[i]^k
// @BE poly
void poly(const BE::Tensor x, BE::Tensor y, const std::vector<double>& c) {
    const double* in = x.data_ptr<double>();
    double* out = y.data_ptr<double>();
    for (int64_t i = 0; i < x.numel(); ++i) {
        double acc = 0;
        for (size_t k = c.size(); k-- > 0;) acc = acc * in[i] + c[k];
        out[i] = acc;
    }
}

// y[k] = x[idx[k]] (an empty idx gives nothing to do).
// @BE gather
void gather(const BE::Tensor x, BE::Tensor y, xla::ffi::Span<const int32_t> idx) {
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (size_t k = 0; k < idx.size(); ++k) {
        BE_CHECK(idx[k] >= 0 && idx[k] < x.numel()) << "index " << idx[k] << " out of range";
        out[k] = in[idx[k]];
    }
}

// Every other element kind, each array written out after its length.
// @BE arrays ret attr.b attr.h:float16[] attr.c attr.u attr.d
void arrays(BE::Tensor out, BE::Span<const bool> b, BE::Span<const uint16_t> h,
            BE::Span<const std::complex<float>> c, std::vector<uint64_t> u, const std::vector<int8_t>& d) {
    double* o = out.data_ptr<double>();
    int64_t k = 0;
    o[k++] = static_cast<double>(b.size());
    for (bool v : b) o[k++] = v ? 1.0 : 0.0;
    o[k++] = static_cast<double>(h.size());
    for (uint16_t v : h) o[k++] = v;
    o[k++] = static_cast<double>(c.size());
    for (const auto& v : c) { o[k++] = v.real(); o[k++] = v.imag(); }
    o[k++] = static_cast<double>(u.size());
    for (uint64_t v : u) o[k++] = static_cast<double>(v);
    o[k++] = static_cast<double>(d.size());
    for (int8_t v : d) o[k++] = v;
    while (k < out.numel()) o[k++] = -1;
}

// A template kernel with a struct attribute: one instance per dtype.
// @BE scale_t arg:T[n] ret:T[n] attr.p dim.n const.T=float32,float64
template <typename T>
void scale_t(const T* x, T* y, Affine p, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(p.scale * x[i] + p.shift);
}

// A second implementation of affine (the reference loop), for an algorithm
// whose implementations take the same struct attribute.
// @BE affine_ref
void affine_ref(const BE::Tensor x, BE::Tensor y, const Affine& p) {
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) {
        float r = p.scale * in[i] + p.shift;
        if (p.clamp) r = r > p.limit ? static_cast<float>(p.limit) : (r < -p.limit ? static_cast<float>(-p.limit) : r);
        out[i] = r;
    }
}
