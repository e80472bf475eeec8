#ifndef ANVIL_KERNELS_EMULATED_H
#define ANVIL_KERNELS_EMULATED_H

// Test support only: kernel bodies of instruction sets this CPU may lack, compiled from their
// own source files against portable emulations of their intrinsics (avx512_emulation.h), so the
// tests run their loops, tiles, masks and pairings on any x86-64 CPU. On a CPU that has the set,
// the tests also run the real body through the dispatch table.

#include "CAnvilKernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/// 1 when this build has the emulated bodies (x86-64), else 0.
int anvil_emulated_bodies_available(void);

/// `anvil_<name>_avx512_emulated` for every kernel of the lists with an AVX-512 body: its
/// `x86_avx512/` source on emulated AVX-512, the entry point's arguments without the `isa`. Where
/// `anvil_emulated_bodies_available` is 0 each does nothing, except the Winograd 3×3 transforms
/// (`internal/winograd_3x3.h` at 16 lanes, plain vector extensions), built on every CPU.
#define ANVIL_KERNEL(name, widest, parameters, arguments, idle)                                                  \
    ANVIL_IF_AVX512_BODY(widest, void anvil_##name##_avx512_emulated parameters;)
#include "../../../Sources/CAnvilKernels/kernels/all.inc"
#undef ANVIL_KERNEL

#ifdef __cplusplus
}
#endif

#endif
