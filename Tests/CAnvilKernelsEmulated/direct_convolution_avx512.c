#include "anvil_kernels_emulated.h"

#if defined(__x86_64__)
// The real body's source, with the intrinsics it names replaced by avx512_emulation.h's (after
// <immintrin.h>, which common.h includes) and its function renamed (ANVIL_AVX512_EMULATED). One
// body per file: each op's internal header defines its own `BLOCK`-style names.
#include "../../Sources/CAnvilKernels/internal/common.h"
#include "avx512_emulation.h"
#define ANVIL_AVX512_EMULATED 1
#include "../../Sources/CAnvilKernels/x86_avx512/direct_convolution.c"

int anvil_emulated_bodies_available(void) { return 1; }
#else
int anvil_emulated_bodies_available(void) { return 0; }

#include "emulated_stubs.h"
#define ANVIL_KERNEL ANVIL_EMULATED_STUB
#include "../../Sources/CAnvilKernels/kernels/direct_convolution.inc"
#undef ANVIL_KERNEL
#endif
