// begen support headers: their version.
//
// Bumped when the headers' API changes (BE::Tensor, BE::DType, the check
// macros, the glue/trampoline ABI in abi.h): the minor for additions, the
// major for changes that break a kernel or a generated wrapper written
// against an earlier version. `begen doctor` prints it; kernels may test it:
//
//     #if BEGEN_SUPPORT_VERSION_MAJOR >= 1
//
// Only the two numbers below are the source of truth; begen reads them from
// this file's text.
#pragma once

#define BEGEN_SUPPORT_VERSION_MAJOR 1
#define BEGEN_SUPPORT_VERSION_MINOR 4
