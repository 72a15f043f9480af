// begen support headers: the user-facing kernel API.
//
// Kernel sources include this one header:
//
//     #include "brainevent/common.h"
//
// and get BE::Tensor / BE::DType (tensor.h), BE::Span for array attributes
// (span.h), BE::bfloat16 and BE::half (float16.h), BE_CHECK and the CUDA
// error checks (check.h), the dtype dispatch
// helpers (dispatch.h), BE::Attrs for every attribute as one dictionary
// (begen/attrs.h), BE::Tensors for variadic tensor lists (begen/tensors.h),
// and the headers' version, BEGEN_SUPPORT_VERSION_MAJOR/MINOR (begen/version.h). Everything
// here compiles as plain C++17 without CUDA; the CUDA-only parts switch on
// when nvcc compiles the file.
#pragma once

#include "begen/version.h"
#include "brainevent/tensor.h"
#include "brainevent/span.h"
#include "brainevent/float16.h"
#include "brainevent/check.h"
#include "brainevent/dispatch.h"
#include "begen/attrs.h"
#include "begen/tensors.h"
