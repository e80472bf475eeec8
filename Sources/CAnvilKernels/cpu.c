#include "CAnvilKernels.h"
#include "kernels_internal.h"

int anvil_kernels_uses_avx2(void) {
#if defined(__x86_64__) || defined(__i386__)
    // Any thread may be first: all compute the same answer, stored atomically.
    static int detected = -1;
    int known = __atomic_load_n(&detected, __ATOMIC_RELAXED);
    if (known < 0) {
        __builtin_cpu_init();
        known = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        __atomic_store_n(&detected, known, __ATOMIC_RELAXED);
    }
    return known;
#else
    return 0;
#endif
}
