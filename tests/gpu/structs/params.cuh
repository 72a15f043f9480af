// Structs of the struct attributes of structs.cu, in a local header.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

// y = scale * x + shift, clamped to [-limit, limit] when clamp is set.
struct Affine {
    float scale;
    float shift;
    double limit;
    bool clamp;

    __host__ __device__ float apply(float v) const {
        float r = scale * v + shift;
        if (clamp && r > limit) r = static_cast<float>(limit);
        if (clamp && r < -limit) r = static_cast<float>(-limit);
        return r;
    }
};

// CUDA's 16-bit floats as members, beside their raw bits.
struct Halves {
    __half h;
    __nv_bfloat16 b;
    uint16_t bits;
};
