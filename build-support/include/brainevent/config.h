// begen support headers: compiler switches shared by the other headers.
#pragma once

// Functions usable from both host and device code when nvcc compiles the
// file; plain inline functions otherwise.
#if defined(__CUDACC__)
#define BE_HOST_DEVICE __host__ __device__
#else
#define BE_HOST_DEVICE
#endif

// True in nvcc's device compilation pass, where exceptions do not exist and
// a failed check traps instead of throwing.
#if defined(__CUDA_ARCH__)
#define BE_DEVICE_PASS 1
#else
#define BE_DEVICE_PASS 0
#endif
