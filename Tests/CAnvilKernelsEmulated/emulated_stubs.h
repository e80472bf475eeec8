#ifndef ANVIL_EMULATED_STUBS_H
#define ANVIL_EMULATED_STUBS_H

// Where the emulated bodies are not built (not x86-64), a file defines each of its kernels'
// `anvil_<name>_avx512_emulated` as doing nothing, so the tests link: it defines `ANVIL_KERNEL`
// as `ANVIL_EMULATED_STUB` and includes its operator's list.

#include "anvil_kernels_emulated.h"

#define ANVIL_EMULATED_STUB(name, widest, parameters, arguments, idle)                                           \
    ANVIL_IF_AVX512_BODY(widest, void anvil_##name##_avx512_emulated parameters {})

#endif
