// Struct and array attributes on the GPU (tests/gpu/check_structs.py): a
// struct passed by value into a CUDA kernel, CUDA's 16-bit floats as
// members, arrays as BE::Span, xla::ffi::Span (of __half) and std::vector,
// copied into a kernel's parameters, and a template kernel instantiated per
// dtype with a struct attribute.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <vector>

#include "brainevent/common.h"
#include "params.cuh"
#include "xla/ffi/api/ffi.h"

namespace {
constexpr int kThreads = 128;

int blocks(int64_t n) { return static_cast<int>((n + kThreads - 1) / kThreads); }

// At most 16 coefficients travel by value in a kernel's parameters.
struct Coefficients {
    double c[16];
    int n;
};

Coefficients coefficients(const double* c, size_t n) {
    BE_CHECK(n >= 1 && n <= 16) << "1 to 16 coefficients, got " << n;
    Coefficients k{};
    for (size_t i = 0; i < n; ++i) k.c[i] = c[i];
    k.n = static_cast<int>(n);
    return k;
}
}  // namespace

__global__ void affine_kernel(const float* x, float* y, Affine p, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = p.apply(x[i]);
}

// @BE gpu_affine arg:float32[n] ret:float32[n] attr.p dim.n stream
void gpu_affine(const float* x, float* y, const Affine& p, int64_t n, int64_t stream) {
    affine_kernel<<<blocks(n), kThreads, 0, reinterpret_cast<cudaStream_t>(stream)>>>(x, y, p, n);
    BE_CHECK_KERNEL_LAUNCH();
}

__global__ void halves_kernel(float* y, Halves p) {
    y[0] = __half2float(p.h);
    y[1] = __bfloat162float(p.b);
    y[2] = static_cast<float>(p.bits);
}

// @BE gpu_halves ret:float32[3] attr.p stream
void gpu_halves(float* y, Halves p, int64_t stream) {
    halves_kernel<<<1, 1, 0, reinterpret_cast<cudaStream_t>(stream)>>>(y, p);
    BE_CHECK_KERNEL_LAUNCH();
}

__global__ void poly_kernel(const double* x, double* y, Coefficients c, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    double acc = 0;
    for (int k = c.n - 1; k >= 0; --k) acc = acc * x[i] + c.c[k];
    y[i] = acc;
}

// y = sum_k c[k] x^k, the coefficients a BE::Span.
// @BE gpu_poly arg:float64[n] ret:float64[n] attr.c dim.n stream
void gpu_poly(const double* x, double* y, BE::Span<const double> c, int64_t n, int64_t stream) {
    poly_kernel<<<blocks(n), kThreads, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
        x, y, coefficients(c.data(), c.size()), n);
    BE_CHECK_KERNEL_LAUNCH();
}

// The same from a std::vector.
// @BE gpu_poly_vec arg:float64[n] ret:float64[n] attr.c dim.n stream
void gpu_poly_vec(const double* x, double* y, const std::vector<double>& c, int64_t n, int64_t stream) {
    poly_kernel<<<blocks(n), kThreads, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
        x, y, coefficients(c.data(), c.size()), n);
    BE_CHECK_KERNEL_LAUNCH();
}

// Weights of __half, as XLA's own Span, turned into float coefficients.
// @BE gpu_half_poly arg:float64[n] ret:float64[n] attr.w dim.n stream
void gpu_half_poly(const double* x, double* y, xla::ffi::Span<const __half> w, int64_t n, int64_t stream) {
    std::vector<double> c;
    for (const __half& h : w) c.push_back(static_cast<double>(__half2float(h)));
    poly_kernel<<<blocks(n), kThreads, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
        x, y, coefficients(c.data(), c.size()), n);
    BE_CHECK_KERNEL_LAUNCH();
}

template <typename T>
__global__ void scale_kernel(const T* x, T* y, Affine p, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = static_cast<T>(p.apply(static_cast<float>(x[i])));
}

// @BE gpu_scale arg:T[n] ret:T[n] attr.p dim.n stream const.T=float32,float16
template <typename T>
void gpu_scale(const T* x, T* y, Affine p, int64_t n, int64_t stream) {
    scale_kernel<T><<<blocks(n), kThreads, 0, reinterpret_cast<cudaStream_t>(stream)>>>(x, y, p, n);
    BE_CHECK_KERNEL_LAUNCH();
}
