// Per-executable state of CUDA kernels (`T& state`, created by begen.yaml's
// `instantiate:` function; tests/gpu/check_vocab.py): a counter kept in
// device memory, allocated for each device that runs an executable (once
// for each call of the kernel in it) and read and advanced on the stream of
// each run, so one executable counts 42, 43, 44 on each device and a new
// one starts again at 42.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "brainevent/common.h"

// One int32 in device memory, freed with the executable.
struct DeviceCounter {
    int32_t* value = nullptr;
    DeviceCounter() = default;
    DeviceCounter(const DeviceCounter&) = delete;
    DeviceCounter& operator=(const DeviceCounter&) = delete;
    ~DeviceCounter() {
        // At process exit the CUDA runtime may already be gone: the result
        // is of no use then.
        if (value != nullptr) (void)cudaFree(value);
    }
};

std::unique_ptr<DeviceCounter> make_device_counter() {
    auto counter = std::make_unique<DeviceCounter>();
    cudaError_t e = cudaMalloc(&counter->value, sizeof(int32_t));
    if (e != cudaSuccess) throw std::runtime_error(std::string("cudaMalloc: ") + cudaGetErrorString(e));
    const int32_t start = 42;
    e = cudaMemcpy(counter->value, &start, sizeof(int32_t), cudaMemcpyHostToDevice);
    if (e != cudaSuccess) throw std::runtime_error(std::string("cudaMemcpy: ") + cudaGetErrorString(e));
    return counter;
}

// A state that is never made: the executable is not created, and the error
// names this function.
std::unique_ptr<DeviceCounter> make_no_counter() { return nullptr; }

namespace {

cudaStream_t as_stream(int64_t stream) { return reinterpret_cast<cudaStream_t>(stream); }

// out = *counter, then *counter + 1 (one thread).
__global__ void read_and_advance(int32_t* counter, int32_t* out) {
    *out = *counter;
    *counter += 1;
}

// y = x + *counter
__global__ void add_counter(const float* x, float* y, const int32_t* counter, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = x[i] + static_cast<float>(*counter);
}

// *counter + 1
__global__ void advance(int32_t* counter) { *counter += 1; }

}  // namespace

// out = the count of this executable's calls, from 42, kept on the device.
// @BE vocab_read_counter
void vocab_read_counter(BE::Tensor out, DeviceCounter& counter, int64_t stream) {
    read_and_advance<<<1, 1, 0, as_stream(stream)>>>(counter.value, static_cast<int32_t*>(out.data_ptr()));
    BE_CHECK_KERNEL_LAUNCH();
}

// out = the device that holds the counter's memory: each device's state is
// made with that device current, so it is the device the call runs on.
// @BE vocab_counter_device
void vocab_counter_device(BE::Tensor out, DeviceCounter& counter, int64_t stream) {
    cudaPointerAttributes where{};
    BE_CHECK(cudaPointerGetAttributes(&where, counter.value) == cudaSuccess) << "cudaPointerGetAttributes failed";
    const int32_t device = where.device;
    // From pageable memory: the copy has read `device` when it returns.
    BE_CHECK(cudaMemcpyAsync(out.data_ptr(), &device, sizeof(int32_t), cudaMemcpyHostToDevice, as_stream(stream)) ==
             cudaSuccess)
        << "cudaMemcpyAsync failed";
}

// Typed pointers with the state stated beside tokens (it takes none):
// y = x + the count, from 42; the count advances after the sum, in stream
// order.
// @BE vocab_add_count arg:float32[n] ret:float32[n] dim.n stream
void vocab_add_count(const float* x, float* y, DeviceCounter& counter, int64_t n, int64_t stream) {
    const int threads = 256;
    add_counter<<<static_cast<int>((n + threads - 1) / threads), threads, 0, as_stream(stream)>>>(
        x, y, counter.value, n);
    BE_CHECK_KERNEL_LAUNCH();
    advance<<<1, 1, 0, as_stream(stream)>>>(counter.value);
    BE_CHECK_KERNEL_LAUNCH();
}

// @BE vocab_no_counter
void vocab_no_counter(BE::Tensor out, DeviceCounter& counter, int64_t stream) {
    read_and_advance<<<1, 1, 0, as_stream(stream)>>>(counter.value, static_cast<int32_t*>(out.data_ptr()));
    BE_CHECK_KERNEL_LAUNCH();
}
