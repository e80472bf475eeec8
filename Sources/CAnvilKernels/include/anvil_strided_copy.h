#ifndef ANVIL_STRIDED_COPY_H
#define ANVIL_STRIDED_COPY_H

// The data movement of Anvil's layout layers (Transpose, Slice, Concatenate on any axis,
// ChannelShuffle, DepthToSpace, SpaceToDepth): one strided copy over up to six axes.
// `output[Σ i_k · out_strides[k]] = input[Σ i_k · in_strides[k]]` for every index
// `0 ≤ i_k < dims[k]`. A row is one index over the outer `rank - 1` axes (row-major); the
// innermost axis is copied per row (contiguously when both of its strides are 1).

#include "anvil_isa.h"
#include "anvil_kernel_list.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The most axes a strided copy walks.
#define ANVIL_COPY_MAX_AXES 6

/// The axes of one strided copy, in elements (floats).
typedef struct {
    int rank;                               ///< Axes in use, 1...ANVIL_COPY_MAX_AXES.
    long dims[ANVIL_COPY_MAX_AXES];         ///< Extent of each axis (outermost first).
    long in_strides[ANVIL_COPY_MAX_AXES];   ///< Step in the input per index of each axis.
    long out_strides[ANVIL_COPY_MAX_AXES];  ///< Step in the output per index of each axis.
} anvil_copy_shape;

/// The entry points (see kernels/strided_copy.inc).
#define ANVIL_KERNEL ANVIL_KERNEL_ENTRY
#include "../kernels/strided_copy.inc"
#undef ANVIL_KERNEL

#ifdef __cplusplus
}
#endif

#endif
