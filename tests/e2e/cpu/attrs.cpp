// Every attribute type: the kernel writes each value it received into a
// float64 vector so the test can compare them.
#include <complex>
#include <cstdint>

#include "brainevent/common.h"

// @BE all_attrs ret attr.b attr.i8 attr.u8 attr.i16 attr.u16 attr.i32 attr.u32 attr.i64 attr.u64 attr.f32 attr.f64 attr.c64 attr.c128 attr.h:float16 attr.bf:bfloat16
void all_attrs(BE::Tensor out, bool b, int8_t i8, uint8_t u8, int16_t i16, uint16_t u16,
               int32_t i32, uint32_t u32, int64_t i64, uint64_t u64, float f32, double f64,
               std::complex<float> c64, std::complex<double> c128, uint16_t h, uint16_t bf) {
    BE_CHECK(out.numel() == 17) << "all_attrs writes 17 values, got room for " << out.numel();
    double* o = out.data_ptr<double>();
    o[0] = b ? 1.0 : 0.0;
    o[1] = i8;
    o[2] = u8;
    o[3] = i16;
    o[4] = u16;
    o[5] = i32;
    o[6] = u32;
    o[7] = static_cast<double>(i64);
    o[8] = static_cast<double>(u64);
    o[9] = f32;
    o[10] = f64;
    o[11] = c64.real();
    o[12] = c64.imag();
    o[13] = c128.real();
    o[14] = c128.imag();
    o[15] = h;
    o[16] = bf;
}
