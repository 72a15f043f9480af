// On a GPU machine: begen/cuda_driver.h with a real driver. Loads a cubin
// cuTile exported (`scale`, cutile_python_v1) and one nvcc built from
// tests/binary/ckernels.cu (`affine`, a struct by value), packs arguments at
// the offsets begen's ParamLayout gives (pinned in tests/binary.rs against the
// cubins' own parameter tables), launches on a created stream, checks the
// numbers, then checks that driver errors come back as messages.
//
//   g++ -std=c++17 -O2 -I build-support/include driver_smoke.cc -ldl -o driver_smoke
//   ./driver_smoke scale.cubin SCALE_SYMBOL ckernels.cubin
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "begen/cuda_driver.h"

using namespace begen::cuda;

namespace {
struct Extra {
    CUresult (*cuDeviceGet)(int*, int);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, int);
    CUresult (*cuCtxSetCurrent)(CUcontext);
    CUresult (*cuStreamCreate)(CUstream*, unsigned);
    CUresult (*cuStreamSynchronize)(CUstream);
    CUresult (*cuMemAlloc)(uint64_t*, size_t);
    CUresult (*cuMemcpyHtoD)(uint64_t, const void*, size_t);
    CUresult (*cuMemcpyDtoH)(void*, uint64_t, size_t);
};

int failures = 0;
void expect(bool ok, const char* what) {
    std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) ++failures;
}

std::vector<unsigned char> read(const char* path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), {}};
}

#define CHECK(call)                                                         \
    do {                                                                    \
        CUresult r_ = (call);                                               \
        if (r_ != kSuccess) {                                               \
            std::printf("FAIL: %s: %s\n", #call, driver().describe(r_).c_str()); \
            return 1;                                                       \
        }                                                                   \
    } while (0)
}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) return 2;
    const Driver& d = driver();
    if (!d.error.empty()) {
        std::printf("FAIL: %s\n", d.error.c_str());
        return 1;
    }
    void* lib = dlopen("libcuda.so.1", RTLD_NOW);
    Extra x{};
    x.cuDeviceGet = reinterpret_cast<decltype(x.cuDeviceGet)>(dlsym(lib, "cuDeviceGet"));
    x.cuDevicePrimaryCtxRetain = reinterpret_cast<decltype(x.cuDevicePrimaryCtxRetain)>(dlsym(lib, "cuDevicePrimaryCtxRetain"));
    x.cuCtxSetCurrent = reinterpret_cast<decltype(x.cuCtxSetCurrent)>(dlsym(lib, "cuCtxSetCurrent"));
    x.cuStreamCreate = reinterpret_cast<decltype(x.cuStreamCreate)>(dlsym(lib, "cuStreamCreate"));
    x.cuStreamSynchronize = reinterpret_cast<decltype(x.cuStreamSynchronize)>(dlsym(lib, "cuStreamSynchronize"));
    x.cuMemAlloc = reinterpret_cast<decltype(x.cuMemAlloc)>(dlsym(lib, "cuMemAlloc_v2"));
    x.cuMemcpyHtoD = reinterpret_cast<decltype(x.cuMemcpyHtoD)>(dlsym(lib, "cuMemcpyHtoD_v2"));
    x.cuMemcpyDtoH = reinterpret_cast<decltype(x.cuMemcpyDtoH)>(dlsym(lib, "cuMemcpyDtoH_v2"));

    // Before any context: prepare must say so, not crash.
    std::vector<unsigned char> scale_image = read(argv[1]);
    Kernel scale("tile_scale", scale_image.data(), scale_image.size(), argv[2]);
    std::string e = scale.prepare(nullptr);
    expect(e.find("no CUDA context is current") != std::string::npos, ("no context: " + e).c_str());

    int dev = 0;
    CUcontext ctx = nullptr;
    CHECK(x.cuDeviceGet(&dev, 0));
    CHECK(x.cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(x.cuCtxSetCurrent(ctx));
    CUstream stream = nullptr;
    CHECK(x.cuStreamCreate(&stream, 0));

    // cuTile `scale`: y = x * s, n = 4096, tiles of 16; x, y: pointer, int32 shape, int32 stride.
    const int n = 4096;
    std::vector<float> hx(n), hy(n, -1.0f);
    for (int i = 0; i < n; ++i) hx[i] = 0.5f * i;
    uint64_t dx = 0, dy = 0;
    CHECK(x.cuMemAlloc(&dx, n * 4));
    CHECK(x.cuMemAlloc(&dy, n * 4));
    CHECK(x.cuMemcpyHtoD(dx, hx.data(), n * 4));
    e = scale.prepare(stream);
    expect(e.empty(), ("prepare: " + e).c_str());
    alignas(16) unsigned char buf[36] = {};
    const unsigned offsets[7] = {0, 8, 12, 16, 24, 28, 32};  // ParamLayout of the symbol's kernel_args
    int32_t shape = n, stride = 1;
    float s = 3.0f;
    std::memcpy(buf + offsets[0], &dx, 8);
    std::memcpy(buf + offsets[1], &shape, 4);
    std::memcpy(buf + offsets[2], &stride, 4);
    std::memcpy(buf + offsets[3], &dy, 8);
    std::memcpy(buf + offsets[4], &shape, 4);
    std::memcpy(buf + offsets[5], &stride, 4);
    std::memcpy(buf + offsets[6], &s, 4);
    void* params[7];
    for (int i = 0; i < 7; ++i) params[i] = buf + offsets[i];
    // cuTile fixes the block (the cubin's REQNTID, 128 here: elf.rs reads it).
    e = scale.launch(stream, {n / 16, 1, 1}, {64, 1, 1}, 0, params);
    expect(!e.empty(), ("another block than the required one: " + e).c_str());
    e = scale.launch(stream, {n / 16, 1, 1}, {128, 1, 1}, 0, params);
    expect(e.empty(), ("launch scale: " + e).c_str());
    CHECK(x.cuStreamSynchronize(stream));
    CHECK(x.cuMemcpyDtoH(hy.data(), dy, n * 4));
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += hy[i] != hx[i] * s;
    expect(bad == 0, "cuTile scale: y == x * 3 on all 4096 elements");

    // Per-launch cost through the header (cached function, stream's context looked up).
    const int reps = 20000;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) scale.launch(stream, {n / 16, 1, 1}, {128, 1, 1}, 0, params);
    auto t1 = std::chrono::steady_clock::now();
    CHECK(x.cuStreamSynchronize(stream));
    std::printf("info: %.2f us per launch (host side, %d launches)\n",
                std::chrono::duration<double, std::micro>(t1 - t0).count() / reps, reps);

    // nvcc `affine`: out = x * p.scale + p.shift + p.tag, Affine by value.
    std::vector<unsigned char> c_image = read(argv[3]);
    Kernel affine("affine", c_image.data(), c_image.size(), "affine");
    struct Affine {
        uint16_t tag;
        double scale;
        float shift;
    } p{3, 0.5, 0.25f};
    uint64_t len = n;
    alignas(16) unsigned char cbuf[48] = {};
    const unsigned coff[4] = {0, 24, 32, 40};  // ParamLayout of [Affine, ptr, u64, ptr]
    std::memcpy(cbuf + coff[0], &p, sizeof p);
    std::memcpy(cbuf + coff[1], &dx, 8);
    std::memcpy(cbuf + coff[2], &len, 8);
    std::memcpy(cbuf + coff[3], &dy, 8);
    void* cparams[4];
    for (int i = 0; i < 4; ++i) cparams[i] = cbuf + coff[i];
    e = affine.launch(stream, {n / 128, 1, 1}, {128, 1, 1}, 0, cparams);
    expect(e.empty(), ("launch affine: " + e).c_str());
    CHECK(x.cuStreamSynchronize(stream));
    CHECK(x.cuMemcpyDtoH(hy.data(), dy, n * 4));
    bad = 0;
    for (int i = 0; i < n; ++i) bad += hy[i] != (float)(hx[i] * 0.5) + 0.25f + 3;
    expect(bad == 0, "c affine: struct by value, all 4096 elements");

    // Errors as messages naming the kernel.
    e = affine.launch(stream, {0, 1, 1}, {128, 1, 1}, 0, cparams);
    expect(e.find("kernel `affine` (symbol `affine`): cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE") == 0,
           ("empty grid: " + e).c_str());
    Kernel missing("nope", c_image.data(), c_image.size(), "no_such_kernel");
    e = missing.prepare(stream);
    expect(e.find("cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND") != std::string::npos, ("missing symbol: " + e).c_str());
    const unsigned char junk[] = {'x', 'y'};
    Kernel garbage("garbage", junk, sizeof junk, "k");
    e = garbage.prepare(stream);
    expect(e.find("neither a cubin, a fatbin, nor NUL-terminated PTX") != std::string::npos, ("bad image: " + e).c_str());
    std::printf("%s\n", failures == 0 ? "ALL OK" : "FAILED");
    return failures == 0 ? 0 : 1;
}
