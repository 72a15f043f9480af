// Exercises build-support/include/begen/cuda_driver.h on a machine without a
// CUDA driver (tests/binary.rs): built once as a shared library, the way a
// begen library embeds it, and once as the program that loads that library.
// The library must load (nothing links libcuda), and a launch must come back
// as a message naming the kernel, not a crash.
#include <cstdio>
#include <string>

#ifndef BEGEN_PROBE_MAIN
#include "begen/cuda_driver.h"

namespace {
// A stand-in image: an ELF header's first bytes (never loaded here).
const unsigned char kImage[] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
begen::cuda::Kernel kernel("probe_scale", kImage, sizeof(kImage), "scale_Kt1_A1f32_Sf32");
}  // namespace

extern "C" __attribute__((visibility("default"))) int probe_launch(char* message, int size) {
    std::string e = kernel.prepare(nullptr);
    void* params[1] = {nullptr};
    std::string l = kernel.launch(nullptr, {2, 1, 1}, {128, 1, 1}, 0, params);
    std::snprintf(message, size, "prepare: %s\nlaunch: %s\n", e.c_str(), l.c_str());
    return e.empty() || l.empty() ? 1 : 0;
}
#else
#include <dlfcn.h>

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        std::printf("dlopen failed: %s\n", dlerror());
        return 3;
    }
    auto launch = reinterpret_cast<int (*)(char*, int)>(dlsym(lib, "probe_launch"));
    if (launch == nullptr) return 4;
    char message[2048];
    int rc = launch(message, sizeof(message));
    std::fputs(message, stdout);
    return rc;
}
#endif
