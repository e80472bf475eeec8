#ifndef ANVIL_KERNELS_INTERNAL_H
#define ANVIL_KERNELS_INTERNAL_H

// Shared by the kernel files: the attribute that compiles one function for AVX2 + FMA.
#if defined(__x86_64__) || defined(__i386__)
#define ANVIL_X86 1
#include <immintrin.h>
#define ANVIL_AVX2 __attribute__((target("avx2,fma")))
#else
#define ANVIL_X86 0
#endif

static inline float anvil_clamp(float x, float lo, float hi) {
    return x < lo ? lo : (x > hi ? hi : x);
}

#endif
