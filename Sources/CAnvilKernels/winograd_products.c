#include "CAnvilKernels.h"
#include "kernels_internal.h"
#include <string.h>

// The element-wise products of Winograd's 3×3 algorithms: for one of the α² positions,
// M = V · U over a block of tiles — a GEMM whose K is the layer's input channels.
//
// Anvil's own rather than a BLAS call for accuracy as much as speed: a BLAS kernel sums the K
// products in an order of its own (often one running sum), and F(4×4)'s output transform
// amplifies that sum's rounding error until, over 256 channels, some VGG-like outputs near zero
// leave ONNX's rtol 1e-3 on one CPU's BLAS kernel and not another's. Here every body sums in
// the same order: runs of ANVIL_WINOGRAD_CHUNK channels in registers, each run added into M.
//
// Register tile: 6 tiles × 16 output channels (12 AVX accumulators), the 16 filter values of
// a channel one sequential stream (packed `[block][channel][16]`), one broadcast per tile.

enum { GROUP = 6, BLOCK = ANVIL_WINOGRAD_BLOCK, CHUNK = ANVIL_WINOGRAD_CHUNK };

#define INLINE static inline __attribute__((always_inline))

/// Rows of `n` tiles starting at tile `t`; rows past `n` repeat the last one (computed, never stored).
INLINE void tile_rows(const anvil_winograd_products_shape *s, const float *v, int t, int n, const float *rows[GROUP]) {
    for (int i = 0; i < GROUP; i++) rows[i] = v + (size_t)(t + (i < n ? i : n - 1)) * s->v_tile_stride;
}

static void products_portable(const anvil_winograd_products_shape *s, const float *v, const float *u, float *m,
                              int block_begin, int block_end) {
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
                    for (int j = 0; j < BLOCK; j++) out[j] = c0 == 0 ? acc[i][j] : out[j] + acc[i][j];
                }
            }
        }
    }
}

#if ANVIL_X86
ANVIL_AVX2 static void products_avx2(const anvil_winograd_products_shape *s, const float *v, const float *u, float *m,
                                     int block_begin, int block_end) {
    for (int b = block_begin; b < block_end; b++) {
        const float *ub = u + (size_t)b * s->channels * BLOCK;
        for (int t = 0; t < s->tiles; t += GROUP) {
            const int n = s->tiles - t < GROUP ? s->tiles - t : GROUP;
            const float *r[GROUP];
            tile_rows(s, v, t, n, r);
            float *out = m + (size_t)t * s->m_tile_stride + (size_t)b * BLOCK;
            for (int c0 = 0; c0 < s->channels; c0 += CHUNK) {
                const int c1 = s->channels - c0 < CHUNK ? s->channels : c0 + CHUNK;
                __m256 a00 = _mm256_setzero_ps(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00;
                __m256 a30 = a00, a31 = a00, a40 = a00, a41 = a00, a50 = a00, a51 = a00;
                const float *w = ub + (size_t)c0 * BLOCK;
                for (int c = c0; c < c1; c++, w += BLOCK) {
                    const __m256 w0 = _mm256_loadu_ps(w), w1 = _mm256_loadu_ps(w + 8);
                    __m256 x;
                    x = _mm256_broadcast_ss(r[0] + c); a00 = _mm256_fmadd_ps(x, w0, a00); a01 = _mm256_fmadd_ps(x, w1, a01);
                    x = _mm256_broadcast_ss(r[1] + c); a10 = _mm256_fmadd_ps(x, w0, a10); a11 = _mm256_fmadd_ps(x, w1, a11);
                    x = _mm256_broadcast_ss(r[2] + c); a20 = _mm256_fmadd_ps(x, w0, a20); a21 = _mm256_fmadd_ps(x, w1, a21);
                    x = _mm256_broadcast_ss(r[3] + c); a30 = _mm256_fmadd_ps(x, w0, a30); a31 = _mm256_fmadd_ps(x, w1, a31);
                    x = _mm256_broadcast_ss(r[4] + c); a40 = _mm256_fmadd_ps(x, w0, a40); a41 = _mm256_fmadd_ps(x, w1, a41);
                    x = _mm256_broadcast_ss(r[5] + c); a50 = _mm256_fmadd_ps(x, w0, a50); a51 = _mm256_fmadd_ps(x, w1, a51);
                }
                const __m256 acc[GROUP][2] = { { a00, a01 }, { a10, a11 }, { a20, a21 }, { a30, a31 }, { a40, a41 }, { a50, a51 } };
                for (int i = 0; i < n; i++) {
                    float *o = out + (size_t)i * s->m_tile_stride;
                    if (c0 == 0) {
                        _mm256_storeu_ps(o, acc[i][0]);
                        _mm256_storeu_ps(o + 8, acc[i][1]);
                    } else {
                        _mm256_storeu_ps(o, _mm256_add_ps(_mm256_loadu_ps(o), acc[i][0]));
                        _mm256_storeu_ps(o + 8, _mm256_add_ps(_mm256_loadu_ps(o + 8), acc[i][1]));
                    }
                }
            }
        }
    }
}
#endif

void anvil_winograd_products(const anvil_winograd_products_shape *s, const float *v, const float *u, float *m,
                             int block_begin, int block_end) {
    if (s->tiles <= 0 || block_begin >= block_end) return;
#if ANVIL_X86
    if (!s->portable && anvil_kernels_uses_avx2()) {
        products_avx2(s, v, u, m, block_begin, block_end);
        return;
    }
#endif
    products_portable(s, v, u, m, block_begin, block_end);
}
