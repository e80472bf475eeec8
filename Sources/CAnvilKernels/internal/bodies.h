#ifndef ANVIL_KERNELS_BODIES_H
#define ANVIL_KERNELS_BODIES_H

// Every kernel's bodies, one per instruction set, each its public entry point without the
// `isa`: the functions the tables in dispatch.c point at, declared from the kernel lists
// (`kernels/*.inc`). A kernel's files in scalar/, x86_avx2/ and x86_avx512/ define them.

#include "CAnvilKernels.h"

#if defined(__x86_64__)
#define ANVIL_ON_X86_64(...) __VA_ARGS__
#else
#define ANVIL_ON_X86_64(...)
#endif

#define ANVIL_KERNEL(name, widest, parameters, arguments, idle)                                                  \
    void anvil_##name##_scalar parameters;                                                                       \
    ANVIL_ON_X86_64(void anvil_##name##_avx2 parameters;                                                         \
                    ANVIL_IF_AVX512_BODY(widest, void anvil_##name##_avx512 parameters;))
#include "../kernels/all.inc"
#undef ANVIL_KERNEL

#endif
