#ifndef ANVIL_KERNELS_WINOGRAD_PRODUCTS_H
#define ANVIL_KERNELS_WINOGRAD_PRODUCTS_H

// The element-wise products of Winograd's 3×3 algorithms: for one of the α² positions,
// M = V · U over a block of tiles — a GEMM whose K is the layer's input channels.
//
// Anvil's own rather than a BLAS call for accuracy as much as speed: a BLAS kernel sums the K
// products in an order of its own (often one running sum), and F(4×4)'s output transform
// amplifies that sum's rounding error until, over 256 channels, some VGG-like outputs near zero
// leave ONNX's rtol 1e-3 on one CPU's BLAS kernel and not another's. Here every body sums in
// the same order: runs of ANVIL_WINOGRAD_CHUNK channels in registers, each run added into M.
//
// Register tile: 3 tiles × 32 output channels of two blocks (12 AVX accumulators; 6 tiles × 16
// for a last odd block; with AVX-512, 8 tiles × 32 in 16 zmm), each block's filter values of a
// channel one sequential stream (packed `[block][channel][16]`), one broadcast per tile.

// What the bodies share: the tile grouping. Each body file brings its register tile.

#include "common.h"

enum { GROUP = 6, BLOCK = ANVIL_WINOGRAD_BLOCK, CHUNK = ANVIL_WINOGRAD_CHUNK };

/// Rows of `n` tiles starting at tile `t`, `group` of them; rows past `n` repeat the last one
/// (computed, never stored).
ANVIL_INLINE void tile_rows_of(const anvil_winograd_products_shape *s, const float *v, int t, int n, int group,
                               const float *rows[]) {
    for (int i = 0; i < group; i++) rows[i] = v + (size_t)(t + (i < n ? i : n - 1)) * s->v_tile_stride;
}

/// `tile_rows_of` for the `GROUP` tiles of the AVX2 and scalar bodies.
ANVIL_INLINE void tile_rows(const anvil_winograd_products_shape *s, const float *v, int t, int n, const float *rows[GROUP]) {
    tile_rows_of(s, v, t, n, GROUP, rows);
}

#endif
