#ifndef ANVIL_DENSE_H
#define ANVIL_DENSE_H

// Fully connected layers for small batches: every weight row is read once for up to four
// images at a time, so a batch of 4 costs about what one image does (the layer is bound by
// reading its weights, not by arithmetic).

#include <stddef.h>
#include "anvil_isa.h"
#include "anvil_kernel_list.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The entry points (see kernels/dense.inc).
#define ANVIL_KERNEL ANVIL_KERNEL_ENTRY
#include "../kernels/dense.inc"
#undef ANVIL_KERNEL

#ifdef __cplusplus
}
#endif

#endif
