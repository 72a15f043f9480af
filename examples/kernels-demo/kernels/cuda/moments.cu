// float64 and several outputs on the GPU: per-block partial sums reduced
// with atomics, then a host-side check that refuses empty input.
#include <cuda_runtime.h>
#include <cstdint>

#include "brainevent/common.h"

__global__ void moments_kernel(const double* x, double* sum, double* sumsq, int64_t n) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) {
        atomicAdd(sum, x[i]);
        atomicAdd(sumsq, x[i] * x[i]);
    }
}

__global__ void affine_kernel(const double* x, double* y, double* z, double a, double b, int64_t n) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + b;
        z[i] = -x[i];
    }
}

// Sum and sum of squares of a float64 vector: two 0-d outputs.
// @BE moments_f64
void moments_f64(const BE::Tensor x, BE::Tensor sum, BE::Tensor sumsq, int64_t stream) {
    BE_CHECK(x.numel() > 0) << "moments_f64: empty input";
    BE_CHECK(x.dtype() == BE::DType::Float64) << "moments_f64: expected float64, got " << BE::dtype_name(x.dtype());
    auto s = reinterpret_cast<cudaStream_t>(stream);
    BE_CUDA_CHECK(cudaMemsetAsync(sum.data_ptr(), 0, sizeof(double), s));
    BE_CUDA_CHECK(cudaMemsetAsync(sumsq.data_ptr(), 0, sizeof(double), s));
    const int64_t n = x.numel();
    moments_kernel<<<static_cast<int>((n + 255) / 256), 256, 0, s>>>(
        x.data_ptr<const double>(), sum.data_ptr<double>(), sumsq.data_ptr<double>(), n);
    BE_CHECK_KERNEL_LAUNCH();
}

// y = a*x + b and z = -x, with float64 attributes.
// @BE affine_neg_f64
void affine_neg_f64(const BE::Tensor x, BE::Tensor y, BE::Tensor z, double a, double b, int64_t stream) {
    const int64_t n = x.numel();
    affine_kernel<<<static_cast<int>((n + 255) / 256), 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
        x.data_ptr<const double>(), y.data_ptr<double>(), z.data_ptr<double>(), a, b, n);
    BE_CHECK_KERNEL_LAUNCH();
}
