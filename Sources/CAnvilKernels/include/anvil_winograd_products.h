#ifndef ANVIL_WINOGRAD_PRODUCTS_H
#define ANVIL_WINOGRAD_PRODUCTS_H

#include <stddef.h>
#include "anvil_isa.h"

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

/// Computes `M[t][o] = Σ_c V[t][c] · U[c][o]` for every tile `t` and the output-channel blocks
/// `[block_begin, block_end)`: `v` and `m` point at tile 0's row, `u` at the position's packed
/// filters `u[block][channel][16]` (the last block zero-padded). Each sum runs over the input
/// channels in order, in runs of `ANVIL_WINOGRAD_CHUNK` accumulated in registers, each run's
/// total added into `m` (the first stored unless `accumulate`: a layer's channels may come in
/// several calls of whole runs, each after the one before, and sum as in one). `m`'s rows get all 16 lanes of every block, so a
/// row must have room for the outputs rounded up to 16. `isa`'s body runs (see anvil_dispatch.h).
void anvil_winograd_products(anvil_isa isa, const anvil_winograd_products_shape *shape, const float *v, const float *u, float *m,
                             int block_begin, int block_end);

#ifdef __cplusplus
}
#endif

#endif
