#include "anvil_kernels_emulated.h"

#if defined(__x86_64__)
// x86_avx512/dense.c on emulated intrinsics (see direct_convolution_avx512.c).
#include "../../Sources/CAnvilKernels/internal/common.h"
#include "avx512_emulation.h"
#define ANVIL_AVX512_EMULATED 1
#include "../../Sources/CAnvilKernels/x86_avx512/dense.c"
#else
void anvil_dense_avx512_emulated(const float *w, const float *x, const float *bias, float *y, int inputs, int outputs,
                                 int batch, int output_begin, int output_end, float clamp_min, float clamp_max) {}
#endif
