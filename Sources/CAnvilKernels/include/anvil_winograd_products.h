#ifndef ANVIL_WINOGRAD_PRODUCTS_H
#define ANVIL_WINOGRAD_PRODUCTS_H

#include <stddef.h>
#include "anvil_isa.h"
#include "anvil_kernel_list.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Output channels per block of packed Winograd filters (and the multiple M's rows are padded to).
#define ANVIL_WINOGRAD_BLOCK 16

/// Input channels summed in registers before a partial sum is added into M: the products'
/// rounding error then grows like √(K·32 + K²/32) rather than K for K input channels, whatever
/// instruction set runs (see `anvil_winograd_products`).
#define ANVIL_WINOGRAD_CHUNK 32

/// The element-wise products of one Winograd position for a block of tiles, described for
/// `anvil_winograd_products`.
typedef struct {
    int tiles;             ///< Rows of V and M.
    int channels;          ///< Input channels: the length of each sum.
    int outputs;           ///< Output channels.
    long v_tile_stride;    ///< Floats from one tile's row of V to the next.
    long m_tile_stride;    ///< Floats from one tile's row of M to the next (rows hold whole blocks of 16).
    int accumulate;        ///< Nonzero: the first run is added into M too (these channels follow others already there).
} anvil_winograd_products_shape;

/// The entry points (see kernels/winograd_products.inc).
#define ANVIL_KERNEL ANVIL_KERNEL_ENTRY
#include "../kernels/winograd_products.inc"
#undef ANVIL_KERNEL

#ifdef __cplusplus
}
#endif

#endif
