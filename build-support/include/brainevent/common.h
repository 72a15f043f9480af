// begen support headers: the user-facing kernel API.
//
// Kernel sources include this one header:
//
//     #include "brainevent/common.h"
//
// and get BE::Tensor / BE::DType (tensor.h), BE_CHECK and the CUDA error
// checks (check.h), and the dtype dispatch helpers (dispatch.h). Everything
// here compiles as plain C++17 without CUDA; the CUDA-only parts switch on
// when nvcc compiles the file.
#pragma once

#include "brainevent/tensor.h"
#include "brainevent/check.h"
#include "brainevent/dispatch.h"
