#include "../internal/direct_convolution.h"

// Direct convolution in plain C: the same passes and tiles as the vector bodies, each tile's
// 6 × 16 sums in an array.

static void tile_scalar(const pass_t *t, const float *origins[MAX_TILE], int n, float *out) {
    const anvil_conv_shape *s = t->s;
    float acc[TILE][BLOCK];
    start_tile(t, acc, n, out);
    const run_t r = runs(t);
    for (int ky = 0; ky < s->kernel_height; ky++) {
        for (int kx = 0; kx < r.segments; kx++) {
            size_t offset = run_offset(t, ky, kx);
            const float *w = t->weights + run_offset_weights(t, ky, kx);
            for (int q = 0; q < r.length; q++) {
                for (int i = 0; i < n; i++) {
                    float x = origins[i][offset + q];
                    for (int j = 0; j < BLOCK; j++) acc[i][j] += x * w[(size_t)q * BLOCK + j];
                }
            }
        }
    }
    store_tile(t, acc, n, out);
}

void anvil_conv_direct_scalar(const anvil_conv_shape *s, const float *input, const float *packed,
                              const float *bias, const float *residual, float *output, int pixel_begin,
                              int pixel_end, int block_begin, int block_end) {
    static const tile_shape shape = { tile_scalar, ANVIL_CONV_TILE_BLOCKS_SCALAR, { 0, TILE }, TILE };
    direct_convolution(s, input, packed, bias, residual, output, pixel_begin, pixel_end, block_begin, block_end,
                       &shape);
}
