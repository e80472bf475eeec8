#include "anvil_kernels_emulated.h"

#if defined(__x86_64__)
// x86_avx512/activation.c on emulated intrinsics (see direct_convolution_avx512.c).
#include "../../Sources/CAnvilKernels/internal/common.h"
#include "avx512_emulation.h"
#define ANVIL_AVX512_EMULATED 1
#include "../../Sources/CAnvilKernels/x86_avx512/activation.c"
#else
void anvil_activation_avx512_emulated(const anvil_activation_function *f, float *values, long count) {}
#endif
