#include "anvil_kernels_emulated.h"

#if defined(__x86_64__)
// x86_avx512/pooling.c on emulated intrinsics (see direct_convolution_avx512.c).
#include "../../Sources/CAnvilKernels/internal/common.h"
#include "avx512_emulation.h"
#define ANVIL_AVX512_EMULATED 1
#include "../../Sources/CAnvilKernels/x86_avx512/pooling.c"
#else
void anvil_max_pooling_avx512_emulated(const anvil_pool_shape *s, const float *input, float *output, int line_begin,
                                       int line_end) {}
void anvil_average_pooling_avx512_emulated(const anvil_pool_shape *s, anvil_pool_divisor d, const float *input,
                                           float *output, int line_begin, int line_end) {}
#endif
