#if defined(__x86_64__)
#include "../internal/direct_convolution.h"

// Direct convolution with AVX2 + FMA: a tile of up to 6 pixels × 16 output channels in 12
// ymm accumulators, each input value broadcast and multiplied by two weight vectors.

#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)

/// One tile of `N` pixels; `N` is a constant at every call site so the loops unroll.
static inline __attribute__((always_inline)) void
tile_avx2_n(const int N, const pass_t *t, const float *origins[TILE], float *out) {
    const anvil_conv_shape *s = t->s;
    __m256 a0[TILE], a1[TILE];
    if (t->first && (!t->residual || t->valid == BLOCK)) {
        // The bias is padded to 16 (see run_block): two loads, not a scalar copy per lane,
        // which cost a small-depth layer as much as its multiply-adds.
        __m256 b0 = t->bias ? _mm256_loadu_ps(t->bias) : _mm256_setzero_ps();
        __m256 b1 = t->bias ? _mm256_loadu_ps(t->bias + 8) : _mm256_setzero_ps();
        for (int i = 0; i < N; i++) { a0[i] = b0; a1[i] = b1; }
        if (t->residual) {
            for (int i = 0; i < N; i++) {
                a0[i] = _mm256_add_ps(a0[i], _mm256_loadu_ps(t->residual + (size_t)i * s->outputs));
                a1[i] = _mm256_add_ps(a1[i], _mm256_loadu_ps(t->residual + (size_t)i * s->outputs + 8));
            }
        }
    } else if (t->first || t->valid < BLOCK) {
        float start[TILE][BLOCK];
        start_tile(t, start, N, out);
        for (int i = 0; i < N; i++) { a0[i] = _mm256_loadu_ps(start[i]); a1[i] = _mm256_loadu_ps(start[i] + 8); }
    } else {
        for (int i = 0; i < N; i++) {
            a0[i] = _mm256_loadu_ps(out + (size_t)i * s->outputs);
            a1[i] = _mm256_loadu_ps(out + (size_t)i * s->outputs + 8);
        }
    }
    if (t->window) {
        // One loop over the whole window (see window_offsets).
        const float *w = t->weights;
        for (int e = 0; e < t->window_length; e++) {
            const int offset = t->window[e];
            __m256 w0 = _mm256_loadu_ps(w + (size_t)e * BLOCK), w1 = _mm256_loadu_ps(w + (size_t)e * BLOCK + 8);
            for (int i = 0; i < N; i++) {
                __m256 v = _mm256_broadcast_ss(origins[i] + offset);
                a0[i] = _mm256_fmadd_ps(v, w0, a0[i]);
                a1[i] = _mm256_fmadd_ps(v, w1, a1[i]);
            }
        }
    }
    const run_t r = runs(t);
    for (int ky = 0; ky < (t->window ? 0 : s->kernel_height); ky++) {
        for (int kx = 0; kx < r.segments; kx++) {
            size_t offset = run_offset(t, ky, kx);
            const float *w = t->weights + run_offset_weights(t, ky, kx);
            const float *x[TILE];
            for (int i = 0; i < N; i++) x[i] = origins[i] + offset;
            for (int c = 0; c < r.length; c++) {
                __m256 w0 = _mm256_loadu_ps(w + (size_t)c * BLOCK), w1 = _mm256_loadu_ps(w + (size_t)c * BLOCK + 8);
                for (int i = 0; i < N; i++) {
                    __m256 v = _mm256_broadcast_ss(x[i] + c);
                    a0[i] = _mm256_fmadd_ps(v, w0, a0[i]);
                    a1[i] = _mm256_fmadd_ps(v, w1, a1[i]);
                }
            }
        }
    }
    if (t->last) {
        __m256 lo = _mm256_set1_ps(s->clamp_min), hi = _mm256_set1_ps(s->clamp_max);
        for (int i = 0; i < N; i++) {
            a0[i] = _mm256_min_ps(_mm256_max_ps(a0[i], lo), hi);
            a1[i] = _mm256_min_ps(_mm256_max_ps(a1[i], lo), hi);
        }
    }
    if (t->valid == BLOCK) {
        for (int i = 0; i < N; i++) {
            float *row = out + (size_t)i * s->outputs;
            _mm256_storeu_ps(row, a0[i]);
            _mm256_storeu_ps(row + 8, a1[i]);
        }
    } else {
        for (int i = 0; i < N; i++) {
            float lanes[BLOCK];
            _mm256_storeu_ps(lanes, a0[i]);
            _mm256_storeu_ps(lanes + 8, a1[i]);
            float *row = out + (size_t)i * s->outputs;
            for (int j = 0; j < t->valid; j++) row[j] = lanes[j];
        }
    }
}

static void tile_avx2(const pass_t *t, const float *origins[TILE], int n, float *out) {
    switch (n) {
    case 6: tile_avx2_n(6, t, origins, out); break;
    case 5: tile_avx2_n(5, t, origins, out); break;
    case 4: tile_avx2_n(4, t, origins, out); break;
    case 3: tile_avx2_n(3, t, origins, out); break;
    case 2: tile_avx2_n(2, t, origins, out); break;
    default: tile_avx2_n(1, t, origins, out); break;
    }
}
void anvil_direct_convolution_avx2(const anvil_conv_shape *s, const float *input, const float *packed,
                                   const float *bias, const float *residual, float *output, int pixel_begin,
                                   int pixel_end, int block_begin, int block_end) {
    direct_convolution(s, input, packed, bias, residual, output, pixel_begin, pixel_end, block_begin, block_end,
                       tile_avx2);
}

#pragma clang attribute pop
#endif
