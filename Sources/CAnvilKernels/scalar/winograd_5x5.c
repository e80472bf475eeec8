#include "../internal/winograd_5x5.h"

// Winograd F(2×2, 5×5) in plain C (the transforms' 8-lane vectors become SSE pairs).

/// `M[p] = V[p] · U[p]` for one position, one block at a time (see `products_body`).
static void products_scalar(const float *v, int cp, const float *u, size_t u_block, int channels, int n, int blocks,
                            float *m) {
    for (int k = 0; k < blocks; k++, u += u_block, m += M_BLOCK) {
        for (int i = 0; i < n; i++) {
            float acc[BLOCK] = { 0 };
            for (int c = 0; c < channels; c++) {
                const float x = v[(size_t)i * cp + c];
                for (int j = 0; j < BLOCK; j++) acc[j] += x * u[(size_t)c * BLOCK + j];
            }
            memcpy(m + (size_t)i * BLOCK, acc, sizeof acc);
        }
    }
}

void anvil_winograd5_scalar(const anvil_winograd5_shape *s, const float *input, const float *u, const float *bias,
                            float *output, long tile_begin, long tile_end, float *scratch) {
    run_tiles(s, input, u, bias, output, tile_begin, tile_end, scratch, products_scalar, 1);
}
