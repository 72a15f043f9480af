// Probe of the API of brainevent/dtypes.h and brainevent/ffi_compat.h, for
// tests/corpus/hybrid_build.py. No source of brainevent 0.3.0 includes
// ffi_compat.h, so the corpus builds alone would leave it unparsed. nvcc
// compiles this with begen's support headers first, then with brainevent's
// include directory first (the same code must work against both), and runs
// it: exit 0 when every check passes, else 1 with the failed checks.
#include <cstdint>
#include <cstdio>
#include <stdexcept>

#include "brainevent/common.h"
#include "brainevent/dtypes.h"
#include "brainevent/ffi_compat.h"

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
    if (!ok) {
        std::printf("ffi_compat_probe: FAILED: %s\n", what);
        ++failures;
    }
}

// An XLA FFI buffer as XLA hands it to a handler.
XLA_FFI_Buffer raw_buffer(void* data, xla::ffi::DataType type, int64_t* dims, int64_t rank) {
    XLA_FFI_Buffer b{};
    b.struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
    b.dtype = static_cast<XLA_FFI_DataType>(type);
    b.data = data;
    b.rank = rank;
    b.dims = dims;
    return b;
}

}  // namespace

int main() {
    using X = xla::ffi::DataType;
    using BE::DType;

    const struct {
        X xla;
        DType be;
    } mapped[] = {
        {X::PRED, DType::Bool},       {X::S8, DType::Int8},         {X::S16, DType::Int16},
        {X::S32, DType::Int32},       {X::S64, DType::Int64},       {X::U8, DType::UInt8},
        {X::U16, DType::UInt16},      {X::U32, DType::UInt32},      {X::U64, DType::UInt64},
        {X::F16, DType::Float16},     {X::BF16, DType::BFloat16},   {X::F32, DType::Float32},
        {X::F64, DType::Float64},     {X::C64, DType::Complex64},   {X::C128, DType::Complex128},
    };
    for (const auto& m : mapped) expect(BE::xla_to_jkb_dtype(m.xla) == m.be, "xla_to_jkb_dtype of a mapped type");
    for (X t : {X::INVALID, X::TOKEN, X::S4, X::U4, X::F8E5M2, X::F8E4M3FN, X::F4E2M1FN})
        expect(BE::xla_to_jkb_dtype(t) == DType::Invalid, "xla_to_jkb_dtype of an unmapped type is Invalid");

    float data[24] = {};
    int64_t dims[3] = {2, 3, 4};

    XLA_FFI_Buffer in = raw_buffer(data, X::F32, dims, 3);
    BE::Tensor t = BE::internal::buffer_to_tensor(xla::ffi::AnyBuffer(&in));
    expect(t.data_ptr() == data, "buffer_to_tensor keeps the data pointer");
    expect(t.ndim() == 3 && t.shape(0) == 2 && t.shape(1) == 3 && t.shape(2) == 4,
           "buffer_to_tensor copies the dimensions");
    expect(t.stride(0) == 12 && t.stride(1) == 4 && t.stride(2) == 1, "row-major strides");
    expect(t.dtype() == DType::Float32 && t.numel() == 24, "dtype and numel");
    dims[0] = 7;
    expect(t.shape(0) == 2, "the view owns its dimensions");
    dims[0] = 2;

    XLA_FFI_Buffer out = raw_buffer(data, X::S32, dims, 2);
    BE::Tensor r = BE::internal::result_buffer_to_tensor(
        xla::ffi::Result<xla::ffi::AnyBuffer>(xla::ffi::AnyBuffer(&out)));
    expect(r.data_ptr() == data && r.ndim() == 2 && r.numel() == 6 && r.dtype() == DType::Int32,
           "result_buffer_to_tensor");

    XLA_FFI_Buffer scalar = raw_buffer(data, X::F64, nullptr, 0);
    BE::Tensor s = BE::internal::buffer_to_tensor(xla::ffi::AnyBuffer(&scalar));
    expect(s.ndim() == 0 && s.numel() == 1 && s.element_size() == 8, "a rank-0 buffer");

    bool threw = false;
    XLA_FFI_Buffer f8 = raw_buffer(data, X::F8E4M3FN, dims, 1);
    try {
        (void)BE::internal::buffer_to_tensor(xla::ffi::AnyBuffer(&f8));
    } catch (const std::invalid_argument&) {
        threw = true;
    }
    expect(threw, "an unmapped element type throws std::invalid_argument");

    threw = false;
    int64_t many[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    XLA_FFI_Buffer deep = raw_buffer(data, X::F32, many, 9);
    try {
        (void)BE::internal::buffer_to_tensor(xla::ffi::AnyBuffer(&deep));
    } catch (const std::out_of_range&) {
        threw = true;
    }
    expect(threw, "a rank above BE::kMaxDim throws std::out_of_range");

    if (failures == 0) std::printf("ffi_compat_probe: all checks passed\n");
    return failures == 0 ? 0 : 1;
}
