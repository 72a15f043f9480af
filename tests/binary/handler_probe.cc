// The generated handlers of fixtures/binaries (the binaries TU that
// `begen generate` writes, included here) called directly, with a fake CUDA
// driver (fake_cuda.cc, through BEGEN_LIBCUDA): what each launch packs
// (every parameter's bytes at its offset), its grid, block and shared
// memory, the image loaded once, cuTile's assumptions and index overflow
// refused before a launch, launch-expression errors and driver errors as
// xla::ffi::Errors naming the kernel. Lists of arrays: their elements passed
// as XLA's remaining arguments, the word buffer the fake driver's
// `begen_write_words` writes (every word, chunked launches), each element
// checked (type, rank, named dimensions, cuTile's assumptions) with its
// index in the message. Prints one line per failed expectation and "all ok"
// at the end.
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
    int word_launches;
    unsigned word_grid[3], word_block[3];
    unsigned word_counts[16];
    int ctx_asks;
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

/// XLA's remaining arguments: one buffer each.
struct Rest {
    std::vector<XLA_FFI_Buffer> buffers;
    std::vector<XLA_FFI_ArgType> types;
    std::vector<void*> args;
    XLA_FFI_Args frame;

    explicit Rest(std::vector<XLA_FFI_Buffer> b) : buffers(std::move(b)) {
        for (auto& x : buffers) {
            types.push_back(XLA_FFI_ArgType_BUFFER);
            args.push_back(&x);
        }
        frame = XLA_FFI_Args{XLA_FFI_Args_STRUCT_SIZE, nullptr, static_cast<int64_t>(buffers.size()), types.data(),
                             args.data()};
    }
    xla::ffi::RemainingArgs get() const { return xla::ffi::RemainingArgs(&frame, 0); }
};

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
    // Later launches on the stream do not ask the driver for its context;
    // one on another stream does, once.
    int asks = r->ctx_asks;
    expect(asks == 1, "the stream's context asked at the first launch");
    for (int k = 0; k < 3; ++k) {
        expect(begen_mixed_affine_impl(stream, view<F32>(xb), xla::ffi::Result<F32>(view<F32>(yb)),
                                       xla::ffi::Span<const uint8_t>(affine, 24))
                   .success(),
               "affine launches again");
    }
    expect(r->ctx_asks == asks && r->launches == 4 && r->loads == 1, "three more launches, no context asked");
    void* other = reinterpret_cast<void*>(0x5678);
    for (int k = 0; k < 2; ++k) {
        expect(begen_mixed_affine_impl(other, view<F32>(xb), xla::ffi::Result<F32>(view<F32>(yb)),
                                       xla::ffi::Span<const uint8_t>(affine, 24))
                   .success(),
               "affine launches on another stream");
    }
    expect(r->ctx_asks == asks + 1 && r->launches == 6 && r->loads == 1, "another stream: its context asked once");
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
               r->launches == 6,
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

    // tile_sum (cutile_python_v1, a list): the list's words pointer @0 and int32 length @8, y (@16, @24,
    // @28), s @32; each element 3 words (address, extent, stride), written by begen_write_words.
    using U8 = begen::rt::Rank1<xla::ffi::DataType::U8>;
    alignas(16) static float l0[64], l1[64], l2[64];
    alignas(8) static uint64_t words[1024];
    std::vector<int64_t> n72 = {72};
    XLA_FFI_Buffer wb = buffer(XLA_FFI_DataType_U8, words, n72);
    auto f32 = [&](float* data, std::vector<int64_t>& dims) { return buffer(XLA_FFI_DataType_F32, data, dims); };
    Rest three({f32(l0, n64), f32(l1, n64), f32(l2, n64)});
    const unsigned sum_sizes[] = {8, 4, 8, 4, 4, 4};
    r->nparams = 6, std::memcpy(r->sizes, sum_sizes, sizeof(sum_sizes));
    int loads = r->loads;
    launches = r->launches;
    e = begen_mixed_tile_sum_impl(stream, three.get(), xla::ffi::Result<F32>(view<F32>(sy)),
                                  xla::ffi::Result<U8>(view<U8>(wb)), 2.5f);
    expect(e.success(), "tile_sum launches: " + e.message());
    expect(r->loads == loads + 2, "the first launch loads the image and begen_write_words");
    expect(r->launches == launches + 1 && r->word_launches == 1 && r->word_counts[0] == 9, "one words launch, 9 words");
    expect(r->word_grid[0] == 1 && r->word_block[0] == 512 && r->word_block[1] == 1, "begen_write_words: 1 x 512");
    const uint64_t want[9] = {reinterpret_cast<uintptr_t>(l0), 64, 1, reinterpret_cast<uintptr_t>(l1), 64, 1,
                              reinterpret_cast<uintptr_t>(l2), 64, 1};
    expect(std::memcmp(words, want, sizeof(want)) == 0, "the words: address, extent, stride per element");
    expect(r->grid[0] == 4 && r->block[0] == 128, "tile_sum grid cdiv(64, 16)");
    expect(at<uint64_t>(r, 0) == reinterpret_cast<uintptr_t>(words) && at<int32_t>(r, 8) == 3,
           "the list as its words' address and int32 length");
    expect(std::memcmp(r->bytes + 12, "\xee\xee\xee\xee", 4) == 0, "padding after the length");
    expect(at<uint64_t>(r, 16) == reinterpret_cast<uintptr_t>(y) && at<int32_t>(r, 24) == 64 && at<int32_t>(r, 28) == 1,
           "y after the list");
    expect(at<float>(r, 32) == 2.5f, "s at 32");
    // Refused before any launch, naming the element.
    launches = r->launches;
    int word_launches = r->word_launches;
    auto refused = [&](const Rest& rest, XLA_FFI_Buffer& w, XLA_FFI_Buffer& out, const char* part, const char* what) {
        expect_error(begen_mixed_tile_sum_impl(stream, rest.get(), xla::ffi::Result<F32>(view<F32>(out)),
                                               xla::ffi::Result<U8>(view<U8>(w)), 1.0f),
                     part, what);
    };
    std::vector<int64_t> n48 = {48}, one_by_64 = {1, 64};
    refused(Rest({f32(l0, n64), buffer(XLA_FFI_DataType_F16, l1, n64), f32(l2, n64)}), wb, sy,
            "tile_sum: parameter 'arg0[1]' is float16; the kernel takes float32", "an element's dtype");
    refused(Rest({f32(l0, n64), f32(l1, one_by_64), f32(l2, n64)}), wb, sy,
            "tile_sum: parameter 'arg0[1]' has rank 2; the kernel takes rank 1", "an element's rank");
    refused(Rest({buffer(XLA_FFI_DataType_F16, l0, n64), f32(l1, n64), f32(l2, n64)}), wb, sy,
            "tile_sum: parameter 'arg0[0]' is float16; the kernel takes float32", "the first element's dtype");
    refused(Rest({f32(l0, n64), f32(l1, n64), f32(l2, n48)}), wb, sy,
            "tile_sum: dimension 'n' is 64 (parameter 'arg0[0]', axis 0) but parameter 'arg0[2]' has 48 at axis 0",
            "an element's extent against the first's");
    refused(Rest({f32(l0, n64), f32(l1 + 1, n64), f32(l2, n64)}), wb, sy,
            "tile_sum: parameter 'arg0[1]': data address", "an element's base alignment");
    refused(Rest({f32(l0, n60), f32(l1, n60), f32(l2, n60)}), wb, by,
            "tile_sum: parameter 'arg0[0]': extent 60 of axis 0 is not a multiple of 16, as the kernel assumes",
            "an element's extent divisibility");
    refused(Rest({f32(l0, huge), f32(l1, huge), f32(l2, huge)}), wb, hy,
            "tile_sum: parameter 'arg0[0]': extent 2147483648 of axis 0 does not fit the kernel's int32 index type",
            "int32 overflow in an element");
    refused(Rest({f32(l0, n64), f32(l1, n64)}), wb, sy,
            "tile_sum: parameter 'arg0' lists 3 arrays, but XLA passed 2", "fewer elements than words");
    refused(Rest({f32(l0, n64), f32(l1, n64), f32(l2, n64), f32(l0, n64)}), wb, sy,
            "tile_sum: XLA passed 4 list elements; the lists hold 3", "more elements than words");
    std::vector<int64_t> n0b = {0}, n70 = {70};
    XLA_FFI_Buffer empty_w = buffer(XLA_FFI_DataType_U8, words, n0b), odd_w = buffer(XLA_FFI_DataType_U8, words, n70);
    refused(Rest({}), empty_w, sy, "tile_sum: parameter 'arg0' is an empty list; the kernel takes at least one array",
            "an empty list");
    refused(three, odd_w, sy, "word buffer holds 70 bytes, not a multiple of 24", "a word buffer of part of an element");
    expect(r->launches == launches && r->word_launches == word_launches, "no launch after a refused list");

    // tile_add_list2d: an array, then a list of 2-D int64-index elements (5 words each), 120 of them:
    // 600 words, written by two launches (500, then 100).
    using F32x2 = begen::rt::Rank2<xla::ffi::DataType::F32>;
    alignas(16) static float a2[16 * 32], o2[16 * 32], e2[16 * 32];
    std::vector<int64_t> mn = {16, 32};
    XLA_FFI_Buffer ab = buffer(XLA_FFI_DataType_F32, a2, mn), obf = buffer(XLA_FFI_DataType_F32, o2, mn);
    std::vector<XLA_FFI_Buffer> many;
    for (int k = 0; k < 120; ++k) many.push_back(f32(e2, mn));
    Rest list120(many);
    std::vector<int64_t> n4800 = {120 * 5 * 8};
    std::memset(words, 0, sizeof(words));
    XLA_FFI_Buffer wb2 = buffer(XLA_FFI_DataType_U8, words, n4800);
    const unsigned add_sizes[] = {8, 4, 4, 4, 4, 8, 4, 8, 4, 4, 4, 4};
    r->nparams = 12, std::memcpy(r->sizes, add_sizes, sizeof(add_sizes));
    word_launches = r->word_launches;
    e = begen_mixed_tile_add_list2d_impl(stream, view<F32x2>(ab), list120.get(), xla::ffi::Result<F32x2>(view<F32x2>(obf)),
                                         xla::ffi::Result<U8>(view<U8>(wb2)));
    expect(e.success(), "tile_add_list2d launches: " + e.message());
    expect(r->word_launches == word_launches + 2 && r->word_counts[word_launches] == 500 &&
               r->word_counts[word_launches + 1] == 100,
           "600 words in two launches");
    bool all = true;
    for (int k = 0; k < 120; ++k) {
        const uint64_t* w = words + 5 * k;
        all = all && w[0] == reinterpret_cast<uintptr_t>(e2) && w[1] == 16 && w[2] == 32 && w[3] == 32 && w[4] == 1;
    }
    expect(all, "each element: address, extents 16 32, strides 32 1");
    expect(at<uint64_t>(r, 0) == reinterpret_cast<uintptr_t>(a2) && at<int32_t>(r, 8) == 16 && at<int32_t>(r, 12) == 32 &&
               at<int32_t>(r, 16) == 32 && at<int32_t>(r, 20) == 1,
           "a: pointer, extents, strides");
    expect(at<uint64_t>(r, 24) == reinterpret_cast<uintptr_t>(words) && at<int32_t>(r, 32) == 120,
           "the list after a: its words' address @24, length 120 @32");
    expect(at<uint64_t>(r, 40) == reinterpret_cast<uintptr_t>(o2) && at<int32_t>(r, 48) == 16 &&
               at<int32_t>(r, 60) == 1,
           "out after the list");
    expect(r->grid[0] == 1 && r->grid[1] == 1, "tile_add_list2d grid");
    std::vector<int64_t> mn2 = {16, 64};
    many[7] = f32(e2, mn2);
    expect_error(begen_mixed_tile_add_list2d_impl(stream, view<F32x2>(ab), Rest(many).get(),
                                                  xla::ffi::Result<F32x2>(view<F32x2>(obf)),
                                                  xla::ffi::Result<U8>(view<U8>(wb2))),
                 "tile_add_list2d: dimension 'n' is 32 (parameter 'arg0', axis 1) but parameter 'arg1[7]' has 64 at "
                 "axis 1",
                 "a list element against the array before it");

    // tile_two_lists: two lists around an array; their elements follow each other among the
    // remaining arguments (2 of float32[8], then 3 of int32[5, 4]), each list's words in its own
    // buffer: list0 @0 (len @8), ret @16, list2 @32 (len @40).
    alignas(16) static float t0[8], t1[8], tr[8];
    alignas(16) static int32_t u0[20], u1[20], u2[20];
    alignas(8) static uint64_t wa[6], wc[15];
    std::vector<int64_t> n8 = {8}, r54 = {5, 4}, b48 = {48}, b120 = {120};
    auto s32 = [&](int32_t* data) { return buffer(XLA_FFI_DataType_S32, data, r54); };
    XLA_FFI_Buffer trb = f32(tr, n8), wab = buffer(XLA_FFI_DataType_U8, wa, b48),
                   wcb = buffer(XLA_FFI_DataType_U8, wc, b120);
    Rest five({f32(t0, n8), f32(t1, n8), s32(u0), s32(u1), s32(u2)});
    const unsigned two_sizes[] = {8, 4, 8, 4, 4, 8, 4};
    r->nparams = 7, std::memcpy(r->sizes, two_sizes, sizeof(two_sizes));
    e = begen_mixed_tile_two_lists_impl(stream, five.get(), xla::ffi::Result<F32>(view<F32>(trb)),
                                        xla::ffi::Result<U8>(view<U8>(wab)), xla::ffi::Result<U8>(view<U8>(wcb)));
    expect(e.success(), "tile_two_lists launches: " + e.message());
    const uint64_t want_a[6] = {reinterpret_cast<uintptr_t>(t0), 8, 1, reinterpret_cast<uintptr_t>(t1), 8, 1};
    expect(std::memcmp(wa, want_a, sizeof(want_a)) == 0, "the first list's words");
    bool rows = true;
    const int32_t* us[3] = {u0, u1, u2};
    for (int k = 0; k < 3; ++k) {
        const uint64_t* w = wc + 5 * k;
        rows = rows && w[0] == reinterpret_cast<uintptr_t>(us[k]) && w[1] == 5 && w[2] == 4 && w[3] == 4 && w[4] == 1;
    }
    expect(rows, "the second list's words: address, extents 5 4, strides 4 1");
    expect(at<uint64_t>(r, 0) == reinterpret_cast<uintptr_t>(wa) && at<int32_t>(r, 8) == 2 &&
               at<uint64_t>(r, 16) == reinterpret_cast<uintptr_t>(tr) && at<int32_t>(r, 24) == 8 &&
               at<uint64_t>(r, 32) == reinterpret_cast<uintptr_t>(wc) && at<int32_t>(r, 40) == 3,
           "both lists' words and lengths around the array");
    expect(r->grid[0] == 5, "tile_two_lists grid [r] from the second list");
    expect_error(begen_mixed_tile_two_lists_impl(stream, Rest({f32(t0, n8), f32(t1, n8), s32(u0), s32(u1)}).get(),
                                                 xla::ffi::Result<F32>(view<F32>(trb)),
                                                 xla::ffi::Result<U8>(view<U8>(wab)),
                                                 xla::ffi::Result<U8>(view<U8>(wcb))),
                 "tile_two_lists: parameter 'arg2' lists 3 arrays, but XLA passed 2 after the earlier ones",
                 "the second list short");
    std::vector<int64_t> r55 = {5, 5};
    expect_error(begen_mixed_tile_two_lists_impl(
                     stream, Rest({f32(t0, n8), f32(t1, n8), s32(u0), s32(u1), buffer(XLA_FFI_DataType_S32, u2, r55)}).get(),
                     xla::ffi::Result<F32>(view<F32>(trb)), xla::ffi::Result<U8>(view<U8>(wab)),
                     xla::ffi::Result<U8>(view<U8>(wcb))),
                 "tile_two_lists: parameter 'arg2[2]': dimension 1 must be 4, got 5", "a literal extent in an element");

    // A driver failure: an error naming the kernel, its symbol and the call.
    // The launch before it was on the same stream, so the failed launch is
    // the fast one, retried the full way (the stream's context asked).
    asks = r->ctx_asks;
    setenv("FAKE_CUDA_FAIL_LAUNCH", "1", 1);
    expect_error(begen_mixed_tile_scale_impl(stream, view<F32>(sx), xla::ffi::Result<F32>(view<F32>(sy)), 1.0f),
                 "kernel `tile_scale` (symbol `scale_Kt1_A1f32_1i16t1_p16_A1f32_1t1_Sf32_I16`): cuLaunchKernel failed: "
                 "CUDA_ERROR_FAKE (a fake failure)",
                 "driver error");
    expect(r->ctx_asks == asks + 1, "the failed fast launch retried with the stream's context asked");
    std::printf("%s\n", failures == 0 ? "all ok" : "failures");
    return failures == 0 ? 0 : 1;
}
