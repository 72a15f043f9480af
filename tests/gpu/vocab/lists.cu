// Lists of tensors on the GPU (tests/gpu/check_lists.py): a kernel launched
// once per element of a `const BE::Tensors`, outputs made per element of a
// `BE::Tensors`, on XLA's stream.
#include <cuda_runtime.h>

#include "brainevent/common.h"

__global__ void add_kernel(float* acc, const float* x, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) acc[i] += x[i];
}

__global__ void scaled_copy_kernel(float* y, const float* x, float s, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = s * x[i];
}

static int blocks(int64_t n) { return static_cast<int>((n + 255) / 256); }

// The sum of any number of float32 arrays of out's size.
// @BE gpu_sum_all
void gpu_sum_all(const BE::Tensors xs, BE::Tensor out, int64_t stream) {
    const auto s = reinterpret_cast<cudaStream_t>(stream);
    const int64_t n = out.numel();
    BE_CUDA_CHECK(cudaMemsetAsync(out.data_ptr(), 0, static_cast<size_t>(out.nbytes()), s));
    for (const BE::Tensor x : xs) {
        BE_CHECK_ARG(x.dtype() == BE::DType::Float32 && x.numel() == n) << "every input is float32 of out's size";
        add_kernel<<<blocks(n), 256, 0, s>>>(out.data_ptr<float>(), x.data_ptr<const float>(), n);
        BE_CHECK_KERNEL_LAUNCH();
    }
}

// Outputs like the inputs: ys[k] = -xs[k].
// @BE gpu_neg_each arg ret:like(xs) stream
void gpu_neg_each(const BE::Tensors xs, BE::Tensors ys, int64_t stream) {
    const auto s = reinterpret_cast<cudaStream_t>(stream);
    for (size_t k = 0; k < xs.size(); ++k) {
        BE_CHECK_ARG(xs[k].dtype() == BE::DType::Float32) << "gpu_neg_each takes float32 arrays";
        const int64_t n = xs[k].numel();
        scaled_copy_kernel<<<blocks(n), 256, 0, s>>>(ys[k].data_ptr<float>(), xs[k].data_ptr<const float>(), -1.0f, n);
        BE_CHECK_KERNEL_LAUNCH();
    }
}

// A list of outputs before a fixed one: ys[k] = x * (k + 1), and count
// their number.
// @BE gpu_copies
void gpu_copies(const BE::Tensor x, BE::Tensors ys, BE::Tensor count, int64_t stream) {
    const auto s = reinterpret_cast<cudaStream_t>(stream);
    const int32_t n_out = static_cast<int32_t>(ys.size());
    BE_CUDA_CHECK(cudaMemcpyAsync(count.data_ptr(), &n_out, sizeof n_out, cudaMemcpyHostToDevice, s));
    BE_CUDA_CHECK(cudaStreamSynchronize(s));
    for (size_t k = 0; k < ys.size(); ++k) {
        BE_CHECK_ARG(ys[k].numel() == x.numel()) << "every output is x's size";
        scaled_copy_kernel<<<blocks(x.numel()), 256, 0, s>>>(ys[k].data_ptr<float>(), x.data_ptr<const float>(),
                                                              static_cast<float>(k + 1), x.numel());
        BE_CHECK_KERNEL_LAUNCH();
    }
}

// Reads element `at`, which may be past the list's end.
// @BE gpu_pick
void gpu_pick(const BE::Tensors xs, BE::Tensor out, int64_t at, int64_t stream) {
    const BE::Tensor x = xs[static_cast<size_t>(at)];
    BE_CUDA_CHECK(cudaMemcpyAsync(out.data_ptr(), x.data_ptr(), static_cast<size_t>(out.nbytes()),
                                  cudaMemcpyDeviceToDevice, reinterpret_cast<cudaStream_t>(stream)));
}

// Writes only the first element of each output: begen.yaml's
// `zero_outputs` zeroes every output of the list on XLA's stream first.
// @BE gpu_first_only arg ret:like(xs) stream
void gpu_first_only(const BE::Tensors xs, BE::Tensors ys, int64_t stream) {
    for (size_t k = 0; k < ys.size(); ++k) {
        if (ys[k].numel() > 0) {
            BE_CUDA_CHECK(cudaMemcpyAsync(ys[k].data_ptr(), xs[k].data_ptr(), sizeof(float), cudaMemcpyDeviceToDevice,
                                          reinterpret_cast<cudaStream_t>(stream)));
        }
    }
}
