#include "anvil_kernels_emulated.h"

#if defined(__x86_64__)
// x86_avx512/activation.c on emulated intrinsics (see direct_convolution_avx512.c).
#include "../../Sources/CAnvilKernels/internal/common.h"
#include "avx512_emulation.h"
#define ANVIL_AVX512_EMULATED 1
#include "../../Sources/CAnvilKernels/x86_avx512/activation.c"
#else
#include "emulated_stubs.h"
#define ANVIL_KERNEL ANVIL_EMULATED_STUB
#include "../../Sources/CAnvilKernels/kernels/activation.inc"
#undef ANVIL_KERNEL
#endif
