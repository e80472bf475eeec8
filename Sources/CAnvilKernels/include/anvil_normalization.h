#ifndef ANVIL_NORMALIZATION_H
#define ANVIL_NORMALIZATION_H

// Normalisations of NHWC images: group normalisation (instance normalisation is its case of
// one channel per group) as per-channel moments summed in double then a per-channel scale and
// shift, and layer normalisation over runs of contiguous values (each pixel's channels, or the
// trailing 2 or 3 axes). Local response
// normalisation across channels (ONNX/Caffe LRN) and Lp pooling live here too.

#include "anvil_isa.h"
#include "anvil_kernel_list.h"
#include "anvil_pooling.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The entry points (see kernels/normalization.inc).
#define ANVIL_KERNEL ANVIL_KERNEL_ENTRY
#include "../kernels/normalization.inc"
#undef ANVIL_KERNEL

#ifdef __cplusplus
}
#endif

#endif
