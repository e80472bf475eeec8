#include "anvil_kernels_emulated.h"

#if defined(__x86_64__)
// x86_avx512/winograd_products.c on emulated intrinsics (see direct_convolution_avx512.c).
#include "../../Sources/CAnvilKernels/internal/common.h"
#include "avx512_emulation.h"
#define ANVIL_AVX512_EMULATED 1
#include "../../Sources/CAnvilKernels/x86_avx512/winograd_products.c"
#else
void anvil_winograd_products_avx512_emulated(const anvil_winograd_products_shape *s, const float *v, const float *u,
                                             float *m, int block_begin, int block_end) {}
#endif
