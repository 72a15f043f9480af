// begen/binary_launch.h on the host (tests/binary.rs): the launch-expression
// arithmetic refuses overflow and division by zero, and check_array refuses
// every broken cuTile assumption with a message naming the parameter, index
// overflow first (check_element likewise for a list's element, named
// `xs[k]`); a list's length from its word buffer. Prints one line per failed expectation; exit status 1 then.
#include <cstdio>
#include <string>

#include "begen/binary_launch.h"

using begen::bin::ArrayRules;
using begen::bin::AxisRules;
using begen::bin::Calc;
using begen::bin::check_array;

static int failures = 0;

static void expect(bool ok, const std::string& what) {
    if (!ok) {
        std::printf("FAIL: %s\n", what.c_str());
        ++failures;
    }
}

static void expect_error(const std::string& got, const char* part) {
    expect(got.find(part) != std::string::npos, "message '" + got + "' contains '" + part + "'");
}

int main() {
    Calc c;
    expect(c.cdiv(100, 16) == 7 && c.cdiv(96, 16) == 6 && c.cdiv(0, 16) == 0 && c.error == nullptr, "cdiv");
    expect(c.add(2, c.mul(3, 4)) == 14 && c.rem(17, 5) == 2 && c.sub(1, 3) == -2, "arithmetic");
    Calc d;
    d.div(1, 0);
    expect(d.error != nullptr && std::string(d.error) == "divides by zero", "division by zero");
    Calc o;
    o.mul(INT64_C(1) << 62, 4);
    expect(o.error != nullptr && std::string(o.error) == "overflows int64", "multiplication overflow");
    Calc u;
    u.of(UINT64_C(18446744073709551615));
    expect(u.error != nullptr, "uint64 above int64");

    // scale_Kt1_A1f32_1i16t1_p16: extent % 16, stride 1, base % 16; int32 index.
    const AxisRules ax[1] = {{16, 1, true, 1, false, 0}};
    const ArrayRules r = {INT64_C(-2147483648), INT64_C(2147483647), "int32", 16, ax, 1};
    int64_t shape[2], strides[2];
    alignas(16) static float data[64];
    int64_t n = 64;
    expect(check_array("x", data, &n, 1, r, shape, strides).empty(), "a good array");
    expect(shape[0] == 64 && strides[0] == 1, "extent and stride filled");
    n = 60;
    expect_error(check_array("x", data, &n, 1, r, shape, strides),
                 "parameter 'x': extent 60 of axis 0 is not a multiple of 16, as the kernel assumes");
    n = INT64_C(2147483648);
    expect_error(check_array("x", data, &n, 1, r, shape, strides),
                 "parameter 'x': extent 2147483648 of axis 0 does not fit the kernel's int32 index type");
    n = 64;
    expect_error(check_array("x", data + 1, &n, 1, r, shape, strides), "is not a multiple of 16 bytes");
    int64_t two[2] = {4, 64};
    expect_error(check_array("x", data, two, 2, r, shape, strides), "parameter 'x' has rank 2; the kernel takes rank 1");

    // Row-major strides of a 2-D array against add2d's first parameter:
    // stride of axis 0 divisible by 8, axis 1 constant 1, bounds 0.
    const AxisRules ax2[2] = {{1, 8, false, 0, true, 0}, {1, 1, true, 1, false, 0}};
    const ArrayRules r2 = {INT64_C(-2147483648), INT64_C(2147483647), "int32", 1, ax2, 2};
    int64_t m[2] = {3, 16};
    expect(check_array("a", data, m, 2, r2, shape, strides).empty() && strides[0] == 16 && strides[1] == 1,
           "2-D strides");
    m[1] = 12;
    expect_error(check_array("a", data, m, 2, r2, shape, strides),
                 "parameter 'a': stride 12 of axis 0 is not a multiple of 8");
    // A row stride beyond int32 with extents inside it.
    int64_t wide[2] = {2, INT64_C(1) << 31};
    const ArrayRules r3 = {INT64_C(-2147483648), INT64_C(2147483647), "int32", 1, ax2, 2};
    expect_error(check_array("a", data, wide, 2, r3, shape, strides), "does not fit the kernel's int32 index type");
    // uint32 index: extents up to 2**32 - 1.
    const AxisRules ax4[1] = {{1, 1, false, 0, false, 0}};
    const ArrayRules r4 = {0, INT64_C(4294967295), "uint32", 1, ax4, 1};
    n = INT64_C(3000000000);
    expect(check_array("b", data, &n, 1, r4, shape, strides).empty(), "uint32 index takes 3e9");

    // A list's elements: the same checks, the message naming `param[k]`.
    n = 60;
    expect_error(begen::bin::check_element("xs", 3, data, &n, 1, r, shape, strides),
                 "parameter 'xs[3]': extent 60 of axis 0 is not a multiple of 16, as the kernel assumes");
    n = 64;
    expect(begen::bin::check_element("xs", 0, data, &n, 1, r, shape, strides).empty(), "a good element");
    expect_error(begen::bin::check_element("xs", 12, data + 2, &n, 1, r, shape, strides),
                 "parameter 'xs[12]': data address");
    expect_error(begen::bin::check_element_type("xs", 2, begen::xla_type::kF16, begen::xla_type::kF32, 1, 1),
                 "parameter 'xs[2]' is float16; the kernel takes float32");
    expect_error(begen::bin::check_element_type("xs", 1, begen::xla_type::kF32, begen::xla_type::kF32, 3, 1),
                 "parameter 'xs[1]' has rank 3; the kernel takes rank 1");
    expect(begen::bin::xla_type_name(99) == "XLA DataType 99", "an unknown type by number");
    // Where a list's elements are: its length from its word buffer (1 + 2n words each).
    size_t len = 0;
    expect(begen::bin::list_span("xs", 3 * 24, 3, 1, 4, &len).empty() && len == 3, "3 elements after 1");
    expect_error(begen::bin::list_span("xs", 0, 3, 0, 0, &len), "parameter 'xs' is an empty list");
    expect_error(begen::bin::list_span("xs", 3 * 24, 3, 2, 4, &len),
                 "parameter 'xs' lists 3 arrays, but XLA passed 2 after the earlier ones");
    expect_error(begen::bin::list_span("xs", 25, 3, 0, 4, &len), "holds 25 bytes, not a multiple of 24");
    expect_error(begen::bin::list_span("xs", (INT64_C(1) << 31) * 40, 5, 0, 4, &len),
                 "lists 2147483648 arrays; the kernel's length is an int32");
    std::printf("%s\n", failures == 0 ? "all ok" : "failures");
    return failures == 0 ? 0 : 1;
}
