// A CUDA source compiled by nvcc into the same library as the precompiled
// kernels and the CPU source.
#include <cstdint>

#include <cuda_runtime.h>

__global__ void twice_kernel(const float* x, float* y, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}

// @BE cu_twice arg:float32[n] ret:float32[n] dim.n stream
void cu_twice(const float* x, float* y, int64_t n, int64_t stream) {
    if (n == 0) return;
    twice_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(x, y, n);
}

__global__ void set_kernel(int32_t* out, int32_t value) { *out = value; }

// tests/gpu/check_binaries.py's proof that a jit's custom calls were recorded
// into a CUDA graph (XLA's command buffer): 1 when this call ran while its
// stream was capturing (the value is baked into the recorded launch, so a
// replay writes 1 too), else 0.
// @BE capture_probe ret:int32[] stream
void capture_probe(int32_t* out, int64_t stream) {
    auto s = reinterpret_cast<cudaStream_t>(stream);
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(s, &status) != cudaSuccess) status = cudaStreamCaptureStatusNone;
    set_kernel<<<1, 1, 0, s>>>(out, status == cudaStreamCaptureStatusActive ? 1 : 0);
}
