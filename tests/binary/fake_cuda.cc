// A stand-in for libcuda.so.1 (tests/binary.rs, through BEGEN_LIBCUDA): the
// driver entry points begen/cuda_driver.h resolves, recording what a
// generated handler asks for instead of running anything. The probe reads
// the record through fake_record(); FAKE_CUDA_FAIL_LAUNCH=1 makes
// cuLaunchKernel fail. One context: every stream's, and current.
//
// `begen_write_words` (begen/list_words.h, the kernel that writes a cuTile
// list's words) is run as the GPU would: its `count` words are stored at its
// destination, which in the probe is host memory standing in for the hidden
// output buffer. Every other launch records its parameters' bytes.
#include <cstdint>
#include <cstdlib>
#include <cstring>

extern "C" {

struct FakeRecord {
    int loads;               // cuModuleLoadData calls
    int launches;            // cuLaunchKernel calls of bound kernels
    char symbol[256];        // the last function asked for
    unsigned grid[3], block[3], shared;
    unsigned char bytes[256];  // each parameter's bytes, at its offset from the first
    int nparams;
    unsigned sizes[32];      // set by the probe: each parameter's size
    int word_launches;       // begen_write_words launches
    unsigned word_grid[3], word_block[3];
    unsigned word_counts[16];  // the count of each (the first 16)
    int ctx_asks;            // cuStreamGetCtx calls
};

static FakeRecord record;
static int context = 1;
// Function handles: one per distinct name, pointing at its entry here.
static char functions[8][256];

__attribute__((visibility("default"))) FakeRecord* fake_record() { return &record; }

int cuInit(unsigned) { return 0; }
int cuGetErrorName(int, const char** s) { return *s = "CUDA_ERROR_FAKE", 0; }
int cuGetErrorString(int, const char** s) { return *s = "a fake failure", 0; }
int cuCtxGetCurrent(void** c) { return *c = &context, 0; }
int cuCtxPushCurrent_v2(void*) { return 0; }
int cuCtxPopCurrent_v2(void** c) { return *c = &context, 0; }
int cuStreamGetCtx(void*, void** c) { return ++record.ctx_asks, *c = &context, 0; }
int cuModuleLoadData(void** m, const void*) { return ++record.loads, *m = &context, 0; }
int cuModuleGetFunction(void** f, void*, const char* name) {
    std::strncpy(record.symbol, name, sizeof(record.symbol) - 1);
    for (auto& slot : functions) {
        if (slot[0] == 0) std::strncpy(slot, name, sizeof(slot) - 1);
        if (std::strcmp(slot, name) == 0) return *f = slot, 0;
    }
    return 1;
}
int cuFuncSetAttribute(void*, int, int) { return 0; }
int cuThreadExchangeStreamCaptureMode(int* mode) { return *mode = 1, 0; }
int cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shared, void*, void** params, void**) {
    if (std::getenv("FAKE_CUDA_FAIL_LAUNCH") != nullptr) return 1;
    if (std::strcmp(static_cast<const char*>(f), "begen_write_words") == 0) {
        uint64_t dst;
        unsigned count;
        std::memcpy(&dst, params[0], 8);
        std::memcpy(&count, params[1], 4);
        if (count > 500) return 1;
        std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(dst)), params[2], count * size_t{8});
        if (record.word_launches < 16) record.word_counts[record.word_launches] = count;
        ++record.word_launches;
        record.word_grid[0] = gx, record.word_grid[1] = gy, record.word_grid[2] = gz;
        record.word_block[0] = bx, record.word_block[1] = by, record.word_block[2] = bz;
        return 0;
    }
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
