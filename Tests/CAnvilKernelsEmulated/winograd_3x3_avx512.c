#include "anvil_kernels_emulated.h"

// x86_avx512/winograd_3x3.c without its target: the shared header's vector extensions at 16
// lanes need no intrinsics, so the compiler lowers them to whatever this build has — the same
// source and arithmetic, run on any CPU.
#define ANVIL_WINOGRAD3_LANES 16
#include "../../Sources/CAnvilKernels/internal/winograd_3x3.h"

ANVIL_WINOGRAD3_BODIES(avx512_emulated)
