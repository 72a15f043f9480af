// A stand-in for libcuda.so.1 (tests/binary.rs, through BEGEN_LIBCUDA): the
// driver entry points begen/cuda_driver.h resolves, recording what a
// generated handler asks for instead of running anything. The probe reads
// the record through fake_record(); FAKE_CUDA_FAIL_LAUNCH=1 makes
// cuLaunchKernel fail.
#include <cstdint>
#include <cstdlib>
#include <cstring>

extern "C" {

struct FakeRecord {
    int loads;               // cuModuleLoadData calls
    int launches;            // cuLaunchKernel calls
    char symbol[256];        // the last function asked for
    unsigned grid[3], block[3], shared;
    unsigned char bytes[256];  // each parameter's bytes, at its offset from the first
    int nparams;
    unsigned sizes[32];      // set by the probe: each parameter's size
};

static FakeRecord record;
static int context = 1;

__attribute__((visibility("default"))) FakeRecord* fake_record() { return &record; }

int cuInit(unsigned) { return 0; }
int cuGetErrorName(int, const char** s) { return *s = "CUDA_ERROR_FAKE", 0; }
int cuGetErrorString(int, const char** s) { return *s = "a fake failure", 0; }
int cuCtxGetCurrent(void** c) { return *c = &context, 0; }
int cuCtxPushCurrent_v2(void*) { return 0; }
int cuCtxPopCurrent_v2(void** c) { return *c = &context, 0; }
int cuStreamGetCtx(void*, void** c) { return *c = &context, 0; }
int cuModuleLoadData(void** m, const void*) { return ++record.loads, *m = &context, 0; }
int cuModuleGetFunction(void** f, void*, const char* name) {
    std::strncpy(record.symbol, name, sizeof(record.symbol) - 1);
    return *f = &context, 0;
}
int cuFuncSetAttribute(void*, int, int) { return 0; }
int cuThreadExchangeStreamCaptureMode(int* mode) { return *mode = 1, 0; }
int cuLaunchKernel(void*, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shared, void*, void** params, void**) {
    if (std::getenv("FAKE_CUDA_FAIL_LAUNCH") != nullptr) return 1;
    ++record.launches;
    record.grid[0] = gx, record.grid[1] = gy, record.grid[2] = gz;
    record.block[0] = bx, record.block[1] = by, record.block[2] = bz;
    record.shared = shared;
    std::memset(record.bytes, 0xee, sizeof(record.bytes));
    const auto* base = static_cast<const unsigned char*>(params[0]);
    for (int i = 0; i < record.nparams; ++i) {
        const auto* p = static_cast<const unsigned char*>(params[i]);
        std::memcpy(record.bytes + (p - base), p, record.sizes[i]);
    }
    return 0;
}
}
