#if defined(__x86_64__)
#include "../internal/winograd_3x3.h"

// Winograd F(2×2) and F(4×4) transforms with AVX2: the 8-lane vectors are ymm registers.

#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)

ANVIL_WINOGRAD3_BODIES(avx2)

#pragma clang attribute pop
#endif
