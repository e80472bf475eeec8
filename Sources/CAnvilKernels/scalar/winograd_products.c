#include "../internal/winograd_products.h"

// The products in plain C: a running sum per output, in the same runs of channels as every body.

void anvil_winograd_products_scalar(const anvil_winograd_products_shape *s, const float *v, const float *u, float *m,
                                    int block_begin, int block_end) {
    const int accumulate = s->accumulate;
    for (int b = block_begin; b < block_end; b++) {
        const float *ub = u + (size_t)b * s->channels * BLOCK;
        for (int t = 0; t < s->tiles; t += GROUP) {
            const int n = s->tiles - t < GROUP ? s->tiles - t : GROUP;
            const float *rows[GROUP];
            tile_rows(s, v, t, n, rows);
            for (int c0 = 0; c0 < s->channels; c0 += CHUNK) {
                const int c1 = s->channels - c0 < CHUNK ? s->channels : c0 + CHUNK;
                float acc[GROUP][BLOCK] = { { 0 } };
                for (int c = c0; c < c1; c++) {
                    const float *w = ub + (size_t)c * BLOCK;
                    for (int i = 0; i < n; i++) {
                        const float x = rows[i][c];
                        for (int j = 0; j < BLOCK; j++) acc[i][j] += x * w[j];
                    }
                }
                for (int i = 0; i < n; i++) {
                    float *out = m + (size_t)(t + i) * s->m_tile_stride + (size_t)b * BLOCK;
                    for (int j = 0; j < BLOCK; j++) out[j] = c0 == 0 && !accumulate ? acc[i][j] : out[j] + acc[i][j];
                }
            }
        }
    }
}
