// Structs of struct attributes, in a local header (tests/python/test_e2e_structs.py).
#pragma once

#include <cstdint>

// y = scale * x + shift, then clamped to [-limit, limit] when clamp is set.
struct Affine {
    float scale;
    float shift;
    double limit;
    bool clamp;
    static constexpr int kVersion = 1;  // not part of a value

    float apply(float v) const {
        float r = scale * v + shift;
        if (clamp && r > limit) r = static_cast<float>(limit);
        if (clamp && r < -limit) r = static_cast<float>(-limit);
        return r;
    }
};

typedef struct {
    int8_t i8;
    uint8_t u8;
    short i16;
    unsigned short u16;
    int i32;
    unsigned int u32;
    long long i64;
    uint64_t u64;
} Ints;
