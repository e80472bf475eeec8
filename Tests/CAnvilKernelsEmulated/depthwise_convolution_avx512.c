#include "anvil_kernels_emulated.h"

#if defined(__x86_64__)
// x86_avx512/depthwise_convolution.c on emulated intrinsics (see direct_convolution_avx512.c).
#include "../../Sources/CAnvilKernels/internal/common.h"
#include "avx512_emulation.h"
#define ANVIL_AVX512_EMULATED 1
#include "../../Sources/CAnvilKernels/x86_avx512/depthwise_convolution.c"
#else
void anvil_depthwise_convolution_avx512_emulated(const anvil_depthwise_shape *s, const float *input,
                                                 const float *weights, const float *bias, float *output,
                                                 int row_begin, int row_end) {}
#endif
