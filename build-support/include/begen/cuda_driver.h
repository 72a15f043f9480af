// begen support headers: launching a precompiled GPU kernel (a cubin, fatbin
// or PTX image embedded in the library) through the CUDA driver API.
//
// Generated code only. The driver is opened with dlopen on first use, never
// linked: a library built with this header loads (and its CPU kernels run)
// on a machine without a GPU or a driver, and a binary kernel called there
// fails with a message that says so. The API types are declared here, so the
// glue TU needs no CUDA header.
//
// One begen::cuda::Kernel per bound kernel, a static of the library:
//
//     static begen::cuda::Kernel k("tile_scale", kImage, sizeof(kImage), "scale_Kt1_...");
//     // execute stage:
//     if (std::string e = k.launch(stream, grid, block, smem, params); !e.empty()) return Error(e);
//
// The image is loaded into a device context by the first launch there (also
// when that launch is being recorded into a CUDA graph: the load runs with
// the thread's capture mode relaxed). Later launches find the function
// without a lock. No initialize-stage handler: XLA calls that stage before
// every execution of every call site, a cost on every launch
// (bench/gpu/binary_overhead.py's `hand+init_noop` rows measure it).
//
// Success costs no allocation: an empty std::string. Modules are never
// unloaded (the driver may be gone when a library's statics are destroyed at
// process exit).
#pragma once

#include <dlfcn.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "begen/abi.h"

namespace begen {
namespace cuda {

// Driver API types and the few constants used, as cuda.h declares them (ABI
// stable since CUDA 4).
using CUresult = int;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
constexpr CUresult kSuccess = 0;
/// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
constexpr int kMaxDynamicSharedSizeBytes = 8;
/// CU_STREAM_CAPTURE_MODE_RELAXED.
constexpr int kCaptureModeRelaxed = 2;
/// Dynamic shared memory a kernel may use without opting in.
constexpr unsigned kDefaultSharedLimit = 48 * 1024;

/// The driver entry points begen uses, loaded once per process. `error` is
/// empty when they all loaded and cuInit succeeded.
struct Driver {
    std::string error;
    CUresult (*cuInit)(unsigned) = nullptr;
    CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
    CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;
    CUresult (*cuCtxGetCurrent)(CUcontext*) = nullptr;
    CUresult (*cuCtxPushCurrent)(CUcontext) = nullptr;
    CUresult (*cuCtxPopCurrent)(CUcontext*) = nullptr;
    CUresult (*cuStreamGetCtx)(CUstream, CUcontext*) = nullptr;
    CUresult (*cuModuleLoadData)(CUmodule*, const void*) = nullptr;
    CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
    CUresult (*cuFuncSetAttribute)(CUfunction, int, int) = nullptr;
    CUresult (*cuThreadExchangeStreamCaptureMode)(int*) = nullptr;
    CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                               CUstream, void**, void**) = nullptr;

    /// `CUDA_ERROR_INVALID_VALUE (invalid argument)`, or the bare code.
    std::string describe(CUresult r) const {
        const char* name = nullptr;
        const char* text = nullptr;
        if (cuGetErrorName == nullptr || cuGetErrorName(r, &name) != kSuccess || name == nullptr) {
            return "CUDA driver error " + std::to_string(r);
        }
        std::string out = name;
        if (cuGetErrorString != nullptr && cuGetErrorString(r, &text) == kSuccess && text != nullptr) {
            out += " (";
            out += text;
            out += ")";
        }
        return out;
    }
};

namespace detail {

/// The library names tried, in order (the versioned name is what a driver
/// installation always provides; the bare one is a development symlink).
inline const char* const kLibraryNames[] = {"libcuda.so.1", "libcuda.so"};

template <typename F>
inline bool resolve(void* lib, const char* name, F*& out, std::string& error) {
    out = reinterpret_cast<F*>(dlsym(lib, name));
    if (out == nullptr && error.empty()) {
        error = std::string("the CUDA driver has no `") + name + "`";
    }
    return out != nullptr;
}

inline Driver load_driver() {
    Driver d;
    // A test may point begen at another library (or at none) by name.
    const char* forced = std::getenv("BEGEN_LIBCUDA");
    void* lib = nullptr;
    std::string tried;
    if (forced != nullptr) {
        lib = dlopen(forced, RTLD_NOW | RTLD_LOCAL);
        tried = forced;
    } else {
        for (const char* name : kLibraryNames) {
            lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
            if (lib != nullptr) break;
            if (!tried.empty()) tried += ", ";
            tried += name;
        }
    }
    if (lib == nullptr) {
        const char* why = dlerror();
        d.error = "no CUDA driver (could not load " + tried + (why != nullptr ? std::string(": ") + why : "") + ")";
        return d;
    }
    std::string& e = d.error;
    // The symbols cuda.h (CUDA 12 and 13) binds these names to: the bare
    // name unless it defines a _v2.
    resolve(lib, "cuInit", d.cuInit, e);
    resolve(lib, "cuGetErrorName", d.cuGetErrorName, e);
    resolve(lib, "cuGetErrorString", d.cuGetErrorString, e);
    resolve(lib, "cuCtxGetCurrent", d.cuCtxGetCurrent, e);
    resolve(lib, "cuCtxPushCurrent_v2", d.cuCtxPushCurrent, e);
    resolve(lib, "cuCtxPopCurrent_v2", d.cuCtxPopCurrent, e);
    resolve(lib, "cuStreamGetCtx", d.cuStreamGetCtx, e);
    resolve(lib, "cuModuleLoadData", d.cuModuleLoadData, e);
    resolve(lib, "cuModuleGetFunction", d.cuModuleGetFunction, e);
    resolve(lib, "cuFuncSetAttribute", d.cuFuncSetAttribute, e);
    resolve(lib, "cuThreadExchangeStreamCaptureMode", d.cuThreadExchangeStreamCaptureMode, e);
    resolve(lib, "cuLaunchKernel", d.cuLaunchKernel, e);
    if (!e.empty()) return d;
    CUresult r = d.cuInit(0);
    if (r != kSuccess) e = "the CUDA driver did not initialise: " + d.describe(r);
    return d;
}

}  // namespace detail

/// The process's driver (loaded on first call; thread-safe).
BEGEN_HIDDEN inline const Driver& driver() {
    static const Driver d = detail::load_driver();
    return d;
}

namespace detail {

/// The stream this thread last launched a kernel on, with its context and
/// the context that was current then. XLA launches on a few long-lived
/// streams with the stream's context current, so the driver is asked for a
/// stream's context (cuStreamGetCtx: a lookup of the handle, the costliest
/// part of a launch after the launch itself) once per stream and thread,
/// not per call.
struct StreamContext {
    CUstream stream = nullptr;
    CUcontext ctx = nullptr;
    CUcontext current = nullptr;
};

BEGEN_HIDDEN inline StreamContext& last_stream() noexcept {
    static thread_local StreamContext s;
    return s;
}

}  // namespace detail

/// A launch's grid or block extent.
struct Dim3 {
    unsigned x = 1, y = 1, z = 1;
};

/// One precompiled kernel of an embedded image: loaded into each device
/// context that launches it, once, its CUfunction cached.
class Kernel {
public:
    /// Device contexts one kernel can be loaded into (one per GPU).
    static constexpr int kMaxContexts = 64;

    /// `name` is the kernel's Python name (for messages), `symbol` its
    /// entry in the image. A PTX image must end with its NUL.
    Kernel(const char* name, const void* image, size_t image_size, const char* symbol) noexcept
        : name_(name), image_(image), image_size_(image_size), symbol_(symbol) {}

    Kernel(const Kernel&) = delete;
    Kernel& operator=(const Kernel&) = delete;

    /// Loads the image into the context of `stream` (the current context
    /// when `stream` is null) unless it is there already. Empty on success,
    /// else the message.
    std::string prepare(CUstream stream) noexcept {
        CUfunction f = nullptr;
        return function(stream, &f);
    }

    /// The kernel's function in the context of `stream` (or the current
    /// one), loading the image there on first use.
    std::string function(CUstream stream, CUfunction* out, CUcontext* in = nullptr) noexcept {
        const Driver& d = driver();
        if (!d.error.empty()) return fail(d.error);
        CUcontext ctx = nullptr;
        CUresult r = stream != nullptr ? d.cuStreamGetCtx(stream, &ctx) : d.cuCtxGetCurrent(&ctx);
        if (r != kSuccess) return fail(stream != nullptr ? "cuStreamGetCtx" : "cuCtxGetCurrent", r);
        if (ctx == nullptr) return fail("no CUDA context is current");
        if (in != nullptr) *in = ctx;
        // Lock-free: a slot is written before `count_` publishes it.
        if (Loaded* l = find(ctx, count_.load(std::memory_order_acquire))) {
            *out = l->function;
            return {};
        }
        return load(ctx, out);
    }

    /// Launches on `stream` with `params` (one pointer per kernel parameter,
    /// as cuLaunchKernel takes them). Empty on success, else the message.
    ///
    /// The fast path: the stream is the one this thread launched on last,
    /// the same context is current (a thread-local read in the driver), and
    /// the kernel is loaded in that stream's context with enough shared
    /// memory allowed: one launch, no other driver call. A stream destroyed
    /// and another made at the same handle in another context changes the
    /// current context too (XLA makes a stream's context current), and a
    /// fast launch that fails anyway is retried the full way (the stream's
    /// context asked, the image loaded, the shared memory opted in), whose
    /// outcome is the call's.
    std::string launch(CUstream stream, Dim3 grid, Dim3 block, unsigned shared_bytes, void** params) noexcept {
        const Driver& d = driver();
        if (!d.error.empty()) return fail(d.error);
        detail::StreamContext& last = detail::last_stream();
        CUcontext current = nullptr;
        if (stream != nullptr && stream == last.stream && d.cuCtxGetCurrent(&current) == kSuccess &&
            current == last.current) {
            Loaded* l = find(last.ctx, count_.load(std::memory_order_acquire));
            if (l != nullptr && shared_bytes <= l->shared_allowed.load(std::memory_order_acquire) &&
                d.cuLaunchKernel(l->function, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared_bytes, stream,
                                 params, nullptr) == kSuccess) {
                return {};
            }
        }
        last = detail::StreamContext{};
        CUfunction f = nullptr;
        CUcontext ctx = nullptr;
        if (std::string e = function(stream, &f, &ctx); !e.empty()) return e;
        if (shared_bytes > kDefaultSharedLimit) {
            if (std::string e = allow_shared(f, shared_bytes); !e.empty()) return e;
        }
        CUresult r = d.cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared_bytes, stream,
                                      params, nullptr);
        if (r != kSuccess) return fail("cuLaunchKernel", r);
        if (stream != nullptr && d.cuCtxGetCurrent(&current) == kSuccess) last = {stream, ctx, current};
        return {};
    }

    const char* name() const noexcept { return name_; }
    const char* symbol() const noexcept { return symbol_; }

private:
    struct Loaded {
        CUcontext ctx = nullptr;
        CUfunction function = nullptr;
        std::atomic<unsigned> shared_allowed{kDefaultSharedLimit};
    };

    Loaded* find(CUcontext ctx, int count) noexcept {
        for (int i = 0; i < count; ++i) {
            if (loaded_[i].ctx == ctx) return &loaded_[i];
        }
        return nullptr;
    }

    /// The slow path: loads the image into `ctx` (once, under the mutex).
    std::string load(CUcontext ctx, CUfunction* out) noexcept {
        const Driver& d = driver();
        std::lock_guard<std::mutex> lock(mutex_);
        int count = count_.load(std::memory_order_relaxed);
        if (Loaded* l = find(ctx, count)) {
            *out = l->function;
            return {};
        }
        if (count == kMaxContexts) return fail("loaded into " + std::to_string(kMaxContexts) + " contexts already");
        if (std::string e = check_image(); !e.empty()) return fail(e);
        // The driver loads into the current context: make the stream's
        // current for the load (XLA normally has it current already). The
        // first launch may be recorded into a CUDA graph: loading a module
        // is not a stream operation, and a relaxed capture mode lets this
        // thread do it while its stream captures.
        CUcontext previous = nullptr;
        d.cuCtxGetCurrent(&previous);
        bool pushed = previous != ctx;
        CUresult r = kSuccess;
        if (pushed && (r = d.cuCtxPushCurrent(ctx)) != kSuccess) return fail("cuCtxPushCurrent", r);
        int mode = kCaptureModeRelaxed;
        bool exchanged = d.cuThreadExchangeStreamCaptureMode(&mode) == kSuccess;
        CUmodule module = nullptr;
        CUfunction f = nullptr;
        r = d.cuModuleLoadData(&module, image_);
        const char* failed = r != kSuccess ? "cuModuleLoadData" : nullptr;
        if (failed == nullptr) {
            r = d.cuModuleGetFunction(&f, module, symbol_);
            if (r != kSuccess) failed = "cuModuleGetFunction";
        }
        if (exchanged) d.cuThreadExchangeStreamCaptureMode(&mode);
        if (pushed) {
            CUcontext popped = nullptr;
            d.cuCtxPopCurrent(&popped);
        }
        if (failed != nullptr) return fail(failed, r);
        loaded_[count].ctx = ctx;
        loaded_[count].function = f;
        count_.store(count + 1, std::memory_order_release);
        *out = f;
        return {};
    }

    /// Opts the function in to more than 48 KiB of dynamic shared memory
    /// (once per size increase).
    std::string allow_shared(CUfunction f, unsigned bytes) {
        int count = count_.load(std::memory_order_acquire);
        for (int i = 0; i < count; ++i) {
            Loaded& l = loaded_[i];
            if (l.function != f || l.shared_allowed.load(std::memory_order_acquire) >= bytes) continue;
            std::lock_guard<std::mutex> lock(mutex_);
            if (l.shared_allowed.load(std::memory_order_relaxed) >= bytes) return {};
            CUresult r = driver().cuFuncSetAttribute(f, kMaxDynamicSharedSizeBytes, static_cast<int>(bytes));
            if (r != kSuccess) return fail("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", r);
            l.shared_allowed.store(bytes, std::memory_order_release);
        }
        return {};
    }

    /// A cubin (ELF), a fatbin, or NUL-terminated PTX text.
    std::string check_image() const {
        const auto* b = static_cast<const unsigned char*>(image_);
        if (image_size_ >= 4 && std::memcmp(b, "\x7f" "ELF", 4) == 0) return {};
        if (image_size_ >= 4 && b[0] == 0x50 && b[1] == 0xed && b[2] == 0x55 && b[3] == 0xba) return {};
        if (image_size_ == 0 || b[image_size_ - 1] != 0) {
            return "the embedded image is neither a cubin, a fatbin, nor NUL-terminated PTX";
        }
        return {};
    }

    std::string fail(const std::string& what) const {
        return std::string("kernel `") + name_ + "` (symbol `" + symbol_ + "`): " + what;
    }

    std::string fail(const char* call, CUresult r) const {
        return fail(std::string(call) + " failed: " + driver().describe(r));
    }

    const char* name_;
    const void* image_;
    size_t image_size_;
    const char* symbol_;
    std::mutex mutex_;
    std::atomic<int> count_{0};
    Loaded loaded_[kMaxContexts];
};

}  // namespace cuda
}  // namespace begen
