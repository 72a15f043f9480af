// The generated handlers of fixtures/binaries (the binaries TU that
// `begen generate` writes, included here) called directly, with a fake CUDA
// driver (fake_cuda.cc, through BEGEN_LIBCUDA): what each launch packs
// (every parameter's bytes at its offset), its grid, block and shared
// memory, the image loaded once, cuTile's assumptions and index overflow
// refused before a launch, launch-expression errors and driver errors as
// xla::ffi::Errors naming the kernel. Prints one line per failed
// expectation and "all ok" at the end.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include BEGEN_GENERATED

namespace {
struct FakeRecord {
    int loads, launches;
    char symbol[256];
    unsigned grid[3], block[3], shared;
    unsigned char bytes[256];
    int nparams;
    unsigned sizes[32];
};

int failures = 0;
void expect(bool ok, const std::string& what) {
    if (!ok) {
        std::printf("FAIL: %s\n", what.c_str());
        ++failures;
    }
}

template <typename T>
T at(const FakeRecord* r, size_t offset) {
    T v;
    std::memcpy(&v, r->bytes + offset, sizeof(T));
    return v;
}

XLA_FFI_Buffer buffer(XLA_FFI_DataType t, void* data, std::vector<int64_t>& dims) {
    return XLA_FFI_Buffer{XLA_FFI_Buffer_STRUCT_SIZE, nullptr, t, data, static_cast<int64_t>(dims.size()), dims.data()};
}

template <typename B>
B view(XLA_FFI_Buffer& b) {
    return B(&b);
}

void expect_error(const xla::ffi::Error& e, const std::string& part, const char* what) {
    expect(!e.success() && e.message().find(part) != std::string::npos,
           std::string(what) + ": '" + e.message() + "' contains '" + part + "'");
}
}  // namespace

int main(int, char** argv) {
    void* fake = dlopen(argv[1], RTLD_NOW);
    auto* r = reinterpret_cast<FakeRecord* (*)()>(dlsym(fake, "fake_record"))();
    using F32 = begen::rt::Rank1<xla::ffi::DataType::F32>;
    void* stream = reinterpret_cast<void*>(0x1234);

    // affine (c): Affine by value @0 (24 bytes), x @24, n @32 (uint64), y @40.
    alignas(16) static float x[1024], y[1024];
    std::vector<int64_t> n1000 = {1000};
    XLA_FFI_Buffer xb = buffer(XLA_FFI_DataType_F32, x, n1000), yb = buffer(XLA_FFI_DataType_F32, y, n1000);
    unsigned char affine[24] = {};
    uint16_t tag = 3;
    double scale = 0.5;
    float shift = 0.25f;
    std::memcpy(affine, &tag, 2), std::memcpy(affine + 8, &scale, 8), std::memcpy(affine + 16, &shift, 4);
    const unsigned affine_sizes[] = {24, 8, 8, 8};
    r->nparams = 4, std::memcpy(r->sizes, affine_sizes, sizeof(affine_sizes));
    expect(r->loads == 0, "nothing is loaded before the first launch");
    xla::ffi::Error e = begen_mixed_affine_impl(stream, view<F32>(xb), xla::ffi::Result<F32>(view<F32>(yb)),
                                                xla::ffi::Span<const uint8_t>(affine, 24));
    expect(e.success(), "affine launches: " + e.message());
    expect(r->loads == 1 && r->launches == 1, "loaded once, launched once");
    expect(std::string(r->symbol) == "affine", "symbol affine");
    expect(r->grid[0] == 8 && r->grid[1] == 1 && r->grid[2] == 1, "affine grid (1000 + 127) / 128");
    expect(r->block[0] == 128 && r->block[1] == 1 && r->shared == 0, "affine block 128");
    expect(std::memcmp(r->bytes, affine, 24) == 0, "the struct's bytes at 0");
    expect(at<uint64_t>(r, 24) == reinterpret_cast<uintptr_t>(x), "x at 24");
    expect(at<uint64_t>(r, 32) == 1000, "n at 32");
    expect(at<uint64_t>(r, 40) == reinterpret_cast<uintptr_t>(y), "y at 40");
    expect_error(begen_mixed_affine_impl(stream, view<F32>(xb), xla::ffi::Result<F32>(view<F32>(yb)),
                                         xla::ffi::Span<const uint8_t>(affine, 20)),
                 "affine: attribute 'p' holds 20 bytes; struct Affine has 24", "a short struct");
    std::vector<int64_t> n999 = {999};
    XLA_FFI_Buffer short_y = buffer(XLA_FFI_DataType_F32, y, n999);
    expect_error(begen_mixed_affine_impl(stream, view<F32>(xb), xla::ffi::Result<F32>(view<F32>(short_y)),
                                         xla::ffi::Span<const uint8_t>(affine, 24)),
                 "dimension 'n'", "mismatched extents");
    std::vector<int64_t> n0 = {0};
    XLA_FFI_Buffer empty_x = buffer(XLA_FFI_DataType_F32, x, n0), empty_y = buffer(XLA_FFI_DataType_F32, y, n0);
    expect(begen_mixed_affine_impl(stream, view<F32>(empty_x), xla::ffi::Result<F32>(view<F32>(empty_y)),
                                   xla::ffi::Span<const uint8_t>(affine, 24))
                   .success() &&
               r->launches == 1,
           "an empty grid launches nothing");

    // tile_scale (cutile_python_v1): x (ptr @0, shape @8, stride @12), y (@16, @24, @28), s @32.
    std::vector<int64_t> n64 = {64};
    XLA_FFI_Buffer sx = buffer(XLA_FFI_DataType_F32, x, n64), sy = buffer(XLA_FFI_DataType_F32, y, n64);
    const unsigned scale_sizes[] = {8, 4, 4, 8, 4, 4, 4};
    r->nparams = 7, std::memcpy(r->sizes, scale_sizes, sizeof(scale_sizes));
    e = begen_mixed_tile_scale_impl(stream, view<F32>(sx), xla::ffi::Result<F32>(view<F32>(sy)), 2.5f);
    expect(e.success(), "tile_scale launches: " + e.message());
    expect(r->grid[0] == 4 && r->block[0] == 128, "tile_scale grid cdiv(64, 16), block 128");
    expect(at<uint64_t>(r, 0) == reinterpret_cast<uintptr_t>(x) && at<int32_t>(r, 8) == 64 && at<int32_t>(r, 12) == 1,
           "x as pointer, extent, stride");
    expect(at<uint64_t>(r, 16) == reinterpret_cast<uintptr_t>(y) && at<int32_t>(r, 24) == 64 && at<int32_t>(r, 28) == 1,
           "y as pointer, extent, stride");
    expect(at<float>(r, 32) == 2.5f, "s at 32");
    int launches = r->launches;
    std::vector<int64_t> n60 = {60};
    XLA_FFI_Buffer bx = buffer(XLA_FFI_DataType_F32, x, n60), by = buffer(XLA_FFI_DataType_F32, y, n60);
    expect_error(begen_mixed_tile_scale_impl(stream, view<F32>(bx), xla::ffi::Result<F32>(view<F32>(by)), 1.0f),
                 "tile_scale: parameter 'arg0': extent 60 of axis 0 is not a multiple of 16", "divisibility");
    std::vector<int64_t> huge = {INT64_C(1) << 31};
    XLA_FFI_Buffer hx = buffer(XLA_FFI_DataType_F32, x, huge), hy = buffer(XLA_FFI_DataType_F32, y, huge);
    expect_error(begen_mixed_tile_scale_impl(stream, view<F32>(hx), xla::ffi::Result<F32>(view<F32>(hy)), 1.0f),
                 "extent 2147483648 of axis 0 does not fit the kernel's int32 index type", "int32 overflow");
    XLA_FFI_Buffer ux = buffer(XLA_FFI_DataType_F32, x + 1, n64);
    expect_error(begen_mixed_tile_scale_impl(stream, view<F32>(ux), xla::ffi::Result<F32>(view<F32>(sy)), 1.0f),
                 "is not a multiple of 16 bytes", "base alignment");
    expect(r->launches == launches, "no launch after a refused array");

    // nested (c): Outer @0 (32 bytes), ret @32, k @40; grid [cdiv(rows*cols, k), 2, 1 + k % 3],
    // block [64, 2], shared k * 4.
    using S32x2 = begen::rt::Rank2<xla::ffi::DataType::S32>;
    std::vector<int64_t> rc = {3, 4};
    XLA_FFI_Buffer ob = buffer(XLA_FFI_DataType_S32, y, rc);
    unsigned char outer[32] = {1};
    const unsigned nested_sizes[] = {32, 8, 4};
    r->nparams = 3, std::memcpy(r->sizes, nested_sizes, sizeof(nested_sizes));
    e = begen_mixed_nested_impl(stream, xla::ffi::Result<S32x2>(view<S32x2>(ob)), xla::ffi::Span<const uint8_t>(outer, 32), 7);
    expect(e.success(), "nested launches: " + e.message());
    expect(r->grid[0] == 2 && r->grid[1] == 2 && r->grid[2] == 2, "nested grid [2, 2, 2]");
    expect(r->block[0] == 64 && r->block[1] == 2 && r->block[2] == 1 && r->shared == 28, "nested block, shared");
    expect(at<int32_t>(r, 40) == 7 && r->bytes[0] == 1, "k at 40, the struct at 0");
    expect_error(begen_mixed_nested_impl(stream, xla::ffi::Result<S32x2>(view<S32x2>(ob)),
                                         xla::ffi::Span<const uint8_t>(outer, 32), 0),
                 "nested: a launch expression divides by zero", "division by zero");
    expect_error(begen_mixed_nested_impl(stream, xla::ffi::Result<S32x2>(view<S32x2>(ob)),
                                         xla::ffi::Span<const uint8_t>(outer, 32), -7),
                 "nested: grid x is -1", "a negative grid");

    // A driver failure: an error naming the kernel, its symbol and the call.
    setenv("FAKE_CUDA_FAIL_LAUNCH", "1", 1);
    expect_error(begen_mixed_tile_scale_impl(stream, view<F32>(sx), xla::ffi::Result<F32>(view<F32>(sy)), 1.0f),
                 "kernel `tile_scale` (symbol `scale_Kt1_A1f32_1i16t1_p16_A1f32_1t1_Sf32_I16`): cuLaunchKernel failed: "
                 "CUDA_ERROR_FAKE (a fake failure)",
                 "driver error");
    std::printf("%s\n", failures == 0 ? "all ok" : "failures");
    return failures == 0 ? 0 : 1;
}
