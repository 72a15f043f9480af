// States that record the CUDA device current when they are made and when
// they are destroyed (tests/gpu/check_state_devices.py): each device that
// runs an executable gets a state of its own, made and destroyed with that
// device current, for begen's own kernels (`T& state`) and for kernels of
// XLA FFI's types (`T* state`) alike.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "brainevent/common.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

// What each destroyed state recorded: its kind (0: `T&`, 1: `T*`), the
// device current when it was made, the device current when it was
// destroyed. Host memory, for the life of the process.
std::mutex destroyed_lock;
std::vector<int32_t> destroyed;

int32_t current_device() {
    int device = -1;
    if (cudaGetDevice(&device) != cudaSuccess) return -1;
    return device;
}

}  // namespace

struct Probe {
    Probe(int32_t kind, int32_t made_on) : kind(kind), made_on(made_on) {}
    Probe(const Probe&) = delete;
    Probe& operator=(const Probe&) = delete;
    ~Probe() {
        const std::lock_guard<std::mutex> lock(destroyed_lock);
        destroyed.insert(destroyed.end(), {kind, made_on, current_device()});
    }
    int32_t kind;
    int32_t made_on;
};

std::unique_ptr<Probe> make_be_probe() { return std::make_unique<Probe>(0, current_device()); }

static ffi::ErrorOr<std::unique_ptr<Probe>> MakeNativeProbe() {
    return ffi::ErrorOr<std::unique_ptr<Probe>>(std::make_unique<Probe>(1, current_device()));
}

// out[0] = the device that was current when this device's state was made.
// From pageable memory: the copy has read the value when it returns.
// @BE be_made_on
void be_made_on(BE::Tensor out, Probe& probe, int64_t stream) {
    BE_CHECK(cudaMemcpyAsync(out.data_ptr(), &probe.made_on, sizeof(int32_t), cudaMemcpyHostToDevice,
                             reinterpret_cast<cudaStream_t>(stream)) == cudaSuccess)
        << "cudaMemcpyAsync failed";
}

// The same for a state of XLA FFI's types.
// @BE NativeMadeOn
ffi::Error NativeMadeOn(cudaStream_t stream, Probe* probe, ffi::ResultBuffer<ffi::S32> out) {
    if (cudaMemcpyAsync(out->typed_data(), &probe->made_on, sizeof(int32_t), cudaMemcpyHostToDevice, stream) !=
        cudaSuccess)
        return ffi::Error::Internal("NativeMadeOn: cudaMemcpyAsync failed");
    return ffi::Error::Success();
}

// out = the destroyed states' records, one row (kind, made on, destroyed
// on) each, in the order they were destroyed; the rows after them -1.
// @BE state_destructions
void state_destructions(BE::Tensor out, int64_t stream) {
    std::vector<int32_t> rows(static_cast<size_t>(out.numel()), -1);
    {
        const std::lock_guard<std::mutex> lock(destroyed_lock);
        for (size_t k = 0; k < destroyed.size() && k < rows.size(); ++k) rows[k] = destroyed[k];
    }
    BE_CHECK(cudaMemcpyAsync(out.data_ptr(), rows.data(), rows.size() * sizeof(int32_t), cudaMemcpyHostToDevice,
                             reinterpret_cast<cudaStream_t>(stream)) == cudaSuccess)
        << "cudaMemcpyAsync failed";
    BE_CHECK(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream)) == cudaSuccess)
        << "cudaStreamSynchronize failed";
}
