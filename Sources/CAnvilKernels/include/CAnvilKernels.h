#ifndef CANVILKERNELS_H
#define CANVILKERNELS_H

// Anvil's hand-vectorised CPU kernels. Every op has a body per instruction set (scalar C for
// any CPU, AVX2 + FMA, AVX-512; see anvil_dispatch.h), chosen per call by an `anvil_isa`, so
// the package builds for any target without compiler flags. All tensors are float32, channels
// last (NHWC).

#include <stddef.h>

#include "anvil_isa.h"
#include "anvil_direct_convolution.h"
#include "anvil_depthwise_convolution.h"
#include "anvil_dense.h"
#include "anvil_pooling.h"
#include "anvil_winograd_5x5.h"
#include "anvil_winograd_products.h"
#include "anvil_winograd_3x3.h"
#include "anvil_elementwise.h"
#include "anvil_transposed_convolution.h"
#include "anvil_resample.h"
#include "anvil_pad.h"
#include "anvil_normalization.h"
#include "anvil_strided_copy.h"
#include "anvil_activation.h"
#include "anvil_dispatch.h"
#include "anvil_spin.h"

#endif
