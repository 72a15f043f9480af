// Attributes of begen's own vocabulary into CUDA kernels
// (tests/gpu/check_vocab.py): every keyword as a dictionary (`BE::Attrs`),
// string attributes (`std::string_view`) choosing the device operation, and
// errors as INVALID_ARGUMENT (`BE::Status`, BE_CHECK_ARG, BE::Attrs' own).
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "brainevent/common.h"

namespace {

constexpr int kThreads = 256;

int blocks(int64_t n) { return static_cast<int>((n + kThreads - 1) / kThreads); }

cudaStream_t as_stream(int64_t stream) { return reinterpret_cast<cudaStream_t>(stream); }

// The device operations a string or dictionary attribute chooses.
enum class Op : int { kPlain, kAbs, kRelu, kDouble, kSquare, kNegate };

__device__ float apply(Op op, float v) {
    switch (op) {
        case Op::kAbs: return fabsf(v);
        case Op::kRelu: return v > 0.0f ? v : 0.0f;
        case Op::kDouble: return 2.0f * v;
        case Op::kSquare: return v * v;
        case Op::kNegate: return -v;
        default: return v;
    }
}

// y = op(x * scale + offset)
__global__ void affine_kernel(const float* x, float* y, float scale, int32_t offset, Op op, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = apply(op, x[i] * scale + static_cast<float>(offset));
}

// y = x + c
__global__ void add_kernel(const float* x, float* y, float c, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = x[i] + c;
}

// y = x clamped to [lo, hi]
__global__ void clip_kernel(const float* x, float* y, float lo, float hi, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = fminf(fmaxf(x[i], lo), hi);
}

}  // namespace

// Every keyword as one dictionary: y = mode(x * scale + offset), scale a
// float (required), offset an int32 (0 when not given), mode "plain", "abs"
// or "relu" ("plain" when not given; another is INVALID_ARGUMENT).
// @BE vocab_affine
void vocab_affine(const BE::Tensor x, BE::Tensor y, BE::Attrs attrs, int64_t stream) {
    const float scale = attrs.get<float>("scale");
    const int32_t offset = attrs.get_or<int32_t>("offset", 0);
    const std::string_view mode = attrs.get_or<std::string_view>("mode", "plain");
    Op op = Op::kPlain;
    if (mode == "abs") op = Op::kAbs;
    else if (mode == "relu") op = Op::kRelu;
    else BE_CHECK_ARG(mode == "plain") << "unknown mode '" << std::string(mode) << "'";
    const int64_t n = x.numel();
    affine_kernel<<<blocks(n), kThreads, 0, as_stream(stream)>>>(
        static_cast<const float*>(x.data_ptr()), static_cast<float*>(y.data_ptr()), scale, offset, op, n);
    BE_CHECK_KERNEL_LAUNCH();
}

// Typed pointers with a dictionary stated beside tokens (it takes none):
// y = x * scale + the count of attributes when `count` is given and true.
// @BE vocab_scale_count arg:float32[n] ret:float32[n] dim.n stream
void vocab_scale_count(const float* x, float* y, BE::Attrs attrs, int64_t n, int64_t stream) {
    const float scale = attrs.get_or<float>("scale", 1.0f);
    const bool count = attrs.contains("count") && attrs.get<bool>("count");
    const int32_t add = count ? static_cast<int32_t>(attrs.size()) : 0;
    affine_kernel<<<blocks(n), kThreads, 0, as_stream(stream)>>>(x, y, scale, add, Op::kPlain, n);
    BE_CHECK_KERNEL_LAUNCH();
}

// A string attribute chooses the device operation: y = 2x ("double"), x*x
// ("square") or -x ("negate"); another op is INVALID_ARGUMENT.
// @BE vocab_apply
void vocab_apply(const BE::Tensor x, BE::Tensor y, std::string_view op, int64_t stream) {
    Op chosen = Op::kDouble;
    if (op == "square") chosen = Op::kSquare;
    else if (op == "negate") chosen = Op::kNegate;
    else BE_CHECK_ARG(op == "double") << "unknown op '" << std::string(op) << "'";
    const int64_t n = x.numel();
    affine_kernel<<<blocks(n), kThreads, 0, as_stream(stream)>>>(
        static_cast<const float*>(x.data_ptr()), static_cast<float*>(y.data_ptr()), 1.0f, 0, chosen, n);
    BE_CHECK_KERNEL_LAUNCH();
}

// Typed pointers with a string between scalars, stated by tokens: x plus
// scale times the string's UTF-8 byte count.
// @BE vocab_add_length arg:float32[n] ret:float32[n] attr.word:str attr.scale dim.n stream
void vocab_add_length(const float* x, float* y, std::string_view word, float scale, int64_t n, int64_t stream) {
    add_kernel<<<blocks(n), kThreads, 0, as_stream(stream)>>>(x, y, scale * static_cast<float>(word.size()), n);
    BE_CHECK_KERNEL_LAUNCH();
}

// A status for a bad attribute value: y = x clamped to [lo, hi]; lo > hi
// (or either not a number) is INVALID_ARGUMENT, returned, not thrown.
// @BE vocab_clip
BE::Status vocab_clip(const BE::Tensor x, BE::Tensor y, float lo, float hi, int64_t stream) {
    if (!(lo <= hi)) {
        return BE::Status::InvalidArgument("lo (" + std::to_string(lo) + ") is above hi (" +
                                           std::to_string(hi) + ")");
    }
    const int64_t n = x.numel();
    clip_kernel<<<blocks(n), kThreads, 0, as_stream(stream)>>>(
        static_cast<const float*>(x.data_ptr()), static_cast<float*>(y.data_ptr()), lo, hi, n);
    const cudaError_t launched = cudaGetLastError();
    if (launched != cudaSuccess) {
        return BE::Status::Internal(cudaGetErrorString(launched));
    }
    return BE::Status::Ok();
}
