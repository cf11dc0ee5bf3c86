// Portability macros for the layout headers: the same functions compile as
// constexpr host code and as CUDA __host__ __device__ code.
#pragma once

#if defined(__CUDACC__)
#define PROBKIT_HD __host__ __device__
#else
#define PROBKIT_HD
#endif

#define PROBKIT_HD_INLINE PROBKIT_HD constexpr inline
