#ifndef CANVILKERNELS_H
#define CANVILKERNELS_H

// Anvil's hand-vectorised CPU kernels. Each entry point picks an AVX2 + FMA body at run
// time when the CPU has one and a portable C body otherwise, so the package builds for any
// target without compiler flags. All tensors are float32, channels last (NHWC).

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// 1 when the CPU runs the AVX2 + FMA bodies, 0 when kernels use the portable ones. (Each
/// kernel call can also force its portable body, which the tests compare with.)
int anvil_kernels_uses_avx2(void);

#include "anvil_direct_convolution.h"
#include "anvil_depthwise_convolution.h"
#include "anvil_dense.h"
#include "anvil_pooling.h"
#include "anvil_winograd_5x5.h"
#include "anvil_winograd_products.h"
#include "anvil_winograd_3x3.h"

#ifdef __cplusplus
}
#endif

#endif
