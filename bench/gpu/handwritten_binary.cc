// The reference for binding a precompiled kernel: a hand-written XLA FFI
// handler that loads the same cubin with the CUDA driver API (path in
// $BEGEN_BENCH_CUBIN, loaded on the first call, for the context current
// then) and launches it with cuLaunchKernel: typed buffers, no checks beyond
// XLA's own, the arguments passed as pointers to locals.
//
//   g++ -std=c++17 -O3 -fPIC -shared -isystem "$XLA_INC" handwritten_binary.cc -ldl -o hand_binary.so
//   (XLA_INC: python -c 'import jax.ffi; print(jax.ffi.include_dir())')
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <vector>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {
using CUresult = int;
using CUfunction = void*;
using CUmodule = void*;
using CUstream = void*;

struct Loaded {
    std::string error;
    CUfunction function = nullptr;
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                       void**, void**) = nullptr;
};

const Loaded& loaded() {
    static Loaded l = [] {
        Loaded out;
        void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (lib == nullptr) return out.error = "no libcuda.so.1", out;
        auto load = reinterpret_cast<CUresult (*)(CUmodule*, const void*)>(dlsym(lib, "cuModuleLoadData"));
        auto get = reinterpret_cast<CUresult (*)(CUfunction*, CUmodule, const char*)>(dlsym(lib, "cuModuleGetFunction"));
        out.launch = reinterpret_cast<decltype(out.launch)>(dlsym(lib, "cuLaunchKernel"));
        const char* path = std::getenv("BEGEN_BENCH_CUBIN");
        if (path == nullptr) return out.error = "set BEGEN_BENCH_CUBIN", out;
        std::ifstream f(path, std::ios::binary);
        static std::vector<char> image{std::istreambuf_iterator<char>(f), {}};
        CUmodule module = nullptr;
        if (load(&module, image.data()) != 0 || get(&out.function, module, "add_one") != 0) {
            out.error = "cannot load add_one";
        }
        return out;
    }();
    return l;
}

ffi::Error hand_impl(void* stream, ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
    const Loaded& l = loaded();
    if (!l.error.empty()) return ffi::Error::Internal(l.error);
    const void* xp = x.untyped_data();
    void* yp = y->untyped_data();
    uint64_t n = x.element_count();
    void* args[] = {&xp, &yp, &n};
    unsigned blocks = static_cast<unsigned>((n + 255) / 256);
    if (blocks == 0) return ffi::Error::Success();
    if (l.launch(l.function, blocks, 1, 1, 256, 1, 1, 0, stream, args, nullptr) != 0) {
        return ffi::Error::Internal("cuLaunchKernel failed");
    }
    return ffi::Error::Success();
}
}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(hand_bin_add_one, hand_impl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<void*>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(hand_bin_add_one_graph, hand_impl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<void*>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>(),
                              {ffi::Traits::kCmdBufferCompatible});

// Diagnostics for begen's initialize stage (which loads the image before a
// graph is recorded): the same handler registered with an initialize
// handler too, once doing nothing (XLA's own cost of calling a stage) and
// once asking the stream's context under a mutex (begen's check that the
// image is loaded there).
namespace {
ffi::Error init_noop(void*) { return ffi::Error::Success(); }

ffi::Error init_ctx(void* stream) {
    using GetCtx = CUresult (*)(CUstream, void**);
    static GetCtx get = reinterpret_cast<GetCtx>(dlsym(dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL), "cuStreamGetCtx"));
    static std::mutex m;
    void* ctx = nullptr;
    if (get == nullptr || get(stream, &ctx) != 0) return ffi::Error::Internal("cuStreamGetCtx failed");
    std::lock_guard<std::mutex> lock(m);
    return ffi::Error::Success();
}
}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(hand_init_noop, init_noop,
                              ffi::Ffi::BindInitialize().Ctx<ffi::PlatformStream<void*>>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(hand_init_ctx, init_ctx,
                              ffi::Ffi::BindInitialize().Ctx<ffi::PlatformStream<void*>>());
