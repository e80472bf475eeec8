#include "CAnvilKernels.h"
#include "kernels_internal.h"

static int forced_portable = 0;

int anvil_kernels_uses_avx2(void) {
#if defined(__x86_64__) || defined(__i386__)
    if (forced_portable) return 0;
    static int detected = -1;
    if (detected < 0) {
        __builtin_cpu_init();
        detected = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
    return detected;
#else
    return 0;
#endif
}

void anvil_kernels_force_portable(int portable) { forced_portable = portable != 0; }
