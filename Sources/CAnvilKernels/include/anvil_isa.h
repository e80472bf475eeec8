#ifndef ANVIL_ISA_H
#define ANVIL_ISA_H

#ifdef __cplusplus
extern "C" {
#endif

/// The instruction sets Anvil's kernels have bodies for. Every value exists on every
/// platform; `anvil_isa_supported` says which ones this CPU (and OS) can run.
typedef enum {
    ANVIL_ISA_SCALAR = 0, ///< Plain C for the baseline target: runs everywhere.
    ANVIL_ISA_AVX2 = 1,   ///< x86-64 AVX2 + FMA (Haswell, Zen 1 and later).
    ANVIL_ISA_AVX512 = 2, ///< x86-64 AVX-512F on top of AVX2 + FMA (Skylake-SP, Zen 4 and later).
} anvil_isa;

/// How many `anvil_isa` values there are.
#define ANVIL_ISA_COUNT 3

/// 1 when this CPU and its OS can run `isa`'s bodies (the instructions exist and the OS saves
/// their registers), else 0. Detected once per process.
int anvil_isa_supported(anvil_isa isa);

/// The best instruction set this CPU runs: what the kernels would pick on their own.
anvil_isa anvil_isa_detected(void);

#ifdef __cplusplus
}
#endif

#endif
