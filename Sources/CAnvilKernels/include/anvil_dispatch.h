#ifndef ANVIL_DISPATCH_H
#define ANVIL_DISPATCH_H

// One table of kernel bodies per instruction set. The entry points of the op headers
// (`anvil_conv_direct`, …) look the body up here from their `isa` argument; callers that want
// the pointers themselves (benchmarks of one body) can take a table directly.

#include "anvil_isa.h"
#include "anvil_kernel_list.h"
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

#ifdef __cplusplus
extern "C" {
#endif

/// The bodies of one instruction set, a field per kernel of the lists (`kernels/all.inc`), each
/// the kernel's entry point without the `isa` argument. An ISA without its own body for a kernel
/// holds the next best one (the AVX-512 table: the AVX2 bodies of the kernels whose `widest` is
/// `avx2`).
typedef struct {
    anvil_isa isa; ///< The instruction set this table is for.
#define ANVIL_KERNEL(name, widest, parameters, arguments, idle) void (*name) parameters;
#include "../kernels/all.inc"
#undef ANVIL_KERNEL
} anvil_kernel_table;

/// The table of `isa`, or NULL when this CPU (or this build's architecture) cannot run it.
const anvil_kernel_table *anvil_kernel_table_for(anvil_isa isa);

/// The table of `anvil_isa_detected()`, chosen once per process.
const anvil_kernel_table *anvil_kernel_table_detected(void);

#ifdef __cplusplus
}
#endif

#endif
