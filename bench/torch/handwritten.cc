// The hand-written peer of begen's torch op in bench/torch/torch_overhead.py:
// the op a kernel library writes by hand over PyTorch's stable ABI for the
// kernel `scale` (cpu/scale.cpp, or cuda/scale.cu with -DBENCH_CUDA), with
// the checks such a library makes (dtype, rank, device, contiguity), and a
// plain C entry point for the `torch.library.custom_op` peer, which calls
// the kernel through ctypes.
#include <cstdint>
#include <vector>

#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/ScalarType.h>
#include <torch/headeronly/util/Exception.h>

using torch::headeronly::ScalarType;
using torch::stable::Tensor;

#ifdef BENCH_CUDA
void scale(const float* x, float* out, float alpha, int64_t n, int64_t stream);
extern "C" __attribute__((weak)) int32_t aoti_torch_get_current_cuda_stream(int32_t device_index, void** ret_stream);
#else
void scale(const float* x, float* out, float alpha, int64_t n);
#endif

namespace {

Tensor hand_scale(Tensor x, double alpha) {
    STD_TORCH_CHECK(x.scalar_type() == ScalarType::Float, "scale: x must be float32");
    STD_TORCH_CHECK(x.dim() == 1, "scale: x must have rank 1");
    STD_TORCH_CHECK(x.is_contiguous(), "scale: x must be contiguous");
#ifdef BENCH_CUDA
    STD_TORCH_CHECK(x.is_cuda(), "scale: x must be on a CUDA device");
#else
    STD_TORCH_CHECK(x.is_cpu(), "scale: x must be on the CPU");
#endif
    const int64_t n = x.size(0);
    Tensor out = torch::stable::new_empty(x, {n}, ScalarType::Float);
#ifdef BENCH_CUDA
    void* stream = nullptr;
    STD_TORCH_CHECK(aoti_torch_get_current_cuda_stream(x.get_device_index(), &stream) == 0, "no stream");
    scale(static_cast<const float*>(x.data_ptr()), static_cast<float*>(out.data_ptr()), static_cast<float>(alpha), n,
          reinterpret_cast<int64_t>(stream));
#else
    scale(static_cast<const float*>(x.data_ptr()), static_cast<float*>(out.data_ptr()), static_cast<float>(alpha), n);
#endif
    return out;
}

}  // namespace

STABLE_TORCH_LIBRARY(hand_bench, m) { m.def("scale(Tensor x, *, float alpha) -> Tensor"); }

#ifdef BENCH_CUDA
STABLE_TORCH_LIBRARY_IMPL(hand_bench, CUDA, m) { m.impl("scale", TORCH_BOX(&hand_scale)); }
extern "C" void bench_scale_c(const float* x, float* out, float alpha, int64_t n, int64_t stream) {
    scale(x, out, alpha, n, stream);
}
#else
STABLE_TORCH_LIBRARY_IMPL(hand_bench, CPU, m) { m.impl("scale", TORCH_BOX(&hand_scale)); }
extern "C" void bench_scale_c(const float* x, float* out, float alpha, int64_t n, int64_t stream) {
    (void)stream;
    scale(x, out, alpha, n);
}
#endif
