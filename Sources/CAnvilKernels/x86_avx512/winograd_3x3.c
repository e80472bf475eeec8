#if defined(__x86_64__)
// Winograd F(2×2) and F(4×4) transforms with AVX-512F: internal/winograd_3x3.h at 16 lanes, a
// zmm register per vector — half the instructions of the AVX2 body's ymm, the same arithmetic
// lane by lane (so the same bits). Tests/CAnvilKernelsEmulated compiles the same header at 16
// lanes without the target as its emulation.
#define ANVIL_WINOGRAD3_LANES 16
#include "../internal/winograd_3x3.h"

#pragma clang attribute push(__attribute__((target("avx512f,avx2,fma"))), apply_to = function)

ANVIL_WINOGRAD3_BODIES(avx512)

#pragma clang attribute pop
#endif
