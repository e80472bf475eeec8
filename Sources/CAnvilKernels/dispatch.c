#include "internal/common.h"
#include <stdio.h>
#include <stdlib.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

// CPU detection and the tables of bodies. Bodies for another architecture (arm_neon/, one day)
// would add an `anvil_isa` value, a table under their own `#if defined(__aarch64__)` and a
// detection line below.

static const anvil_kernel_table scalar_table = {
    .isa = ANVIL_ISA_SCALAR,
#define ANVIL_KERNEL(name, widest, parameters, arguments, idle) .name = anvil_##name##_scalar,
#include "kernels/all.inc"
#undef ANVIL_KERNEL
};

#if defined(__x86_64__)
static const anvil_kernel_table avx2_table = {
    .isa = ANVIL_ISA_AVX2,
#define ANVIL_KERNEL(name, widest, parameters, arguments, idle) .name = anvil_##name##_avx2,
#include "kernels/all.inc"
#undef ANVIL_KERNEL
};

// A kernel without an AVX-512 body (`widest` avx2 in its list) runs its AVX2 body, which every
// AVX-512 CPU also runs.
static const anvil_kernel_table avx512_table = {
    .isa = ANVIL_ISA_AVX512,
#define ANVIL_KERNEL(name, widest, parameters, arguments, idle) .name = anvil_##name##_##widest,
#include "kernels/all.inc"
#undef ANVIL_KERNEL
};

/// XCR0: which register states the OS saves on a context switch (0 when it manages none
/// through XSAVE). Instructions whose registers it does not save must not run.
static unsigned long long os_saved_state(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & bit_OSXSAVE)) return 0;
    unsigned int low, high;
    __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
    return ((unsigned long long)high << 32) | low;
}
#endif

/// Bit `isa` set for each instruction set this CPU and OS run.
static unsigned detect(void) {
    unsigned supported = 1u << ANVIL_ISA_SCALAR;
#if defined(__x86_64__)
    __builtin_cpu_init();
    const unsigned long long xcr0 = os_saved_state();
    // SSE and AVX state (bits 1-2); for AVX-512 also the opmask and both halves of the zmm
    // registers (bits 5-7).
    const int ymm = (xcr0 & 0x6) == 0x6, zmm = (xcr0 & 0xe6) == 0xe6;
    const int avx2 = ymm && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (avx2) supported |= 1u << ANVIL_ISA_AVX2;
    if (avx2 && zmm && __builtin_cpu_supports("avx512f")) supported |= 1u << ANVIL_ISA_AVX512;
#endif
    return supported;
}

static unsigned supported_set(void) {
    // Any thread may be first: all compute the same answer, stored atomically.
    static unsigned known = 0;
    unsigned value = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (value == 0) {
        value = detect();
        __atomic_store_n(&known, value, __ATOMIC_RELAXED);
    }
    return value;
}

int anvil_isa_supported(anvil_isa isa) {
    return (unsigned)isa < ANVIL_ISA_COUNT && (supported_set() >> isa & 1u);
}

anvil_isa anvil_isa_detected(void) {
    const unsigned supported = supported_set();
    if (supported >> ANVIL_ISA_AVX512 & 1u) return ANVIL_ISA_AVX512;
    if (supported >> ANVIL_ISA_AVX2 & 1u) return ANVIL_ISA_AVX2;
    return ANVIL_ISA_SCALAR;
}

const anvil_kernel_table *anvil_kernel_table_for(anvil_isa isa) {
    if (!anvil_isa_supported(isa)) return NULL;
    switch (isa) {
#if defined(__x86_64__)
    case ANVIL_ISA_AVX2: return &avx2_table;
    case ANVIL_ISA_AVX512: return &avx512_table;
#endif
    case ANVIL_ISA_SCALAR: return &scalar_table;
    default: return NULL;
    }
}

const anvil_kernel_table *anvil_kernel_table_detected(void) {
    static const anvil_kernel_table *table = NULL;
    const anvil_kernel_table *value = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
    if (!value) {
        value = anvil_kernel_table_for(anvil_isa_detected());
        __atomic_store_n(&table, value, __ATOMIC_RELEASE);
    }
    return value;
}

/// The table of `isa` for an entry point. An ISA the CPU lacks is the caller's error; stop
/// here with a message rather than die of an illegal instruction somewhere in a body.
static const anvil_kernel_table *table_or_abort(anvil_isa isa) {
    const anvil_kernel_table *table = anvil_kernel_table_for(isa);
    if (!table) {
        fprintf(stderr, "CAnvilKernels: instruction set %d is not supported by this CPU\n", (int)isa);
        abort();
    }
    return table;
}

// The entry points: each returns at once when its list line says the call has nothing to do,
// else runs `isa`'s body.
#define ANVIL_KERNEL(name, widest, parameters, arguments, idle)                                                  \
    void anvil_##name(anvil_isa isa, ANVIL_UNPARENTHESISED parameters) {                                         \
        if (idle) return;                                                                                        \
        table_or_abort(isa)->name arguments;                                                                     \
    }
#include "kernels/all.inc"
#undef ANVIL_KERNEL
