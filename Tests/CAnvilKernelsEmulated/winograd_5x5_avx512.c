#include "anvil_kernels_emulated.h"

#if defined(__x86_64__)
// x86_avx512/winograd_5x5.c on emulated intrinsics (see direct_convolution_avx512.c); its
// transforms are internal/winograd_5x5.h at 16 lanes, compiled here without the target.
#include "../../Sources/CAnvilKernels/internal/common.h"
#include "avx512_emulation.h"
#define ANVIL_AVX512_EMULATED 1
#include "../../Sources/CAnvilKernels/x86_avx512/winograd_5x5.c"
#else
void anvil_winograd_5x5_avx512_emulated(const anvil_winograd5_shape *s, const float *input, const float *u,
                                        const float *bias, float *output, long tile_begin, long tile_end,
                                        float *scratch) {}
#endif
