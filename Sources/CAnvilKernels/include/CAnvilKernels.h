#ifndef CANVILKERNELS_H
#define CANVILKERNELS_H

// Anvil's hand-vectorised CPU kernels. Each entry point picks an AVX2 + FMA body at run
// time when the CPU has one and a portable C body otherwise, so the package builds for any
// target without compiler flags. All tensors are float32, channels last (NHWC).

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// 1 when the AVX2 + FMA bodies are in use, 0 for the portable ones.
int anvil_kernels_uses_avx2(void);

/// Forces the portable bodies (`portable` = 1) or restores detection (0); for tests that
/// compare the two. Not thread-safe: call it while no kernel runs.
void anvil_kernels_force_portable(int portable);

#include "anvil_direct_convolution.h"
#include "anvil_depthwise_convolution.h"
#include "anvil_dense.h"

#ifdef __cplusplus
}
#endif

#endif
