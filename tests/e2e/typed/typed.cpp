// Shape contracts from JAX (tests/python/test_e2e_typed.py): typed tensors
// as views and as pointers, dimensions passed as integers, outputs inferred
// from the inputs, template kernels instantiated per value and per dtype,
// and tensors updated in place.
#include <cstdint>
#include <stdexcept>

#include "brainevent/common.h"

// @BE axpy arg:float32[n] arg:float32[n] ret:float32[n] attr.a dim.n
void axpy(const float* x, const float* y, float* out, float a, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = a * x[i] + y[i];
}

// @BE matvec arg:float32[m, k] arg:float32[k] ret:float32[m]
void matvec(const BE::Tensor A, const BE::Tensor x, BE::Tensor y) {
    const float* a = A.data_ptr<float>();
    const float* v = x.data_ptr<float>();
    float* o = y.data_ptr<float>();
    for (int64_t i = 0; i < A.size(0); ++i) {
        float s = 0;
        for (int64_t j = 0; j < A.size(1); ++j) s += a[i * A.size(1) + j] * v[j];
        o[i] = s;
    }
}

// @BE scale arg:T[n] ret:T[n] attr.s:float64 dim.n const.T=float32,float64,int32
template <typename T>
void scale(const T* x, T* out, double s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(x[i] * s);
}

// @BE repeat arg:float32[n] ret:float32[n] const.TIMES=1,2,3
template <int TIMES>
void repeat(const BE::Tensor x, BE::Tensor out) {
    for (int64_t i = 0; i < x.numel(); ++i) out.data_ptr<float>()[i] = TIMES * x.data_ptr<float>()[i];
}

// @BE fill ret:T[n] attr.v:float64 dim.n const.T=float32,int64 const.NEG=true,false
template <typename T, bool NEG>
void fill(T* out, double v, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(NEG ? -v : v);
}

// @BE accumulate inout:float32[n] arg:float32[n] dim.n
void accumulate(float* acc, const float* x, int32_t n) {
    for (int32_t i = 0; i < n; ++i) acc[i] += x[i];
}

// @BE count_small arg:float32[n] ret:int32[] dim.n:int8
void count_small(const float* x, int32_t* out, int8_t n) {
    int32_t c = 0;
    for (int8_t i = 0; i < n; ++i) c += x[i] < 0.5f;
    *out = c;
}

// @BE tile arg:float32[n] ret:float32[n, r]
void tile(const BE::Tensor x, BE::Tensor out) {
    const int64_t n = x.size(0), r = out.size(1);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < r; ++j) out.data_ptr<float>()[i * r + j] = x.data_ptr<float>()[i];
}

// @BE untyped arg ret attr.a
void untyped(const BE::Tensor x, BE::Tensor y, float a) {
    for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = a * x.data_ptr<float>()[i];
}
