#if defined(__x86_64__)
#include "../internal/direct_convolution.h"

// Direct convolution with AVX2 + FMA: a tile of up to 3 pixels × 32 output channels (a pair of
// blocks) or 6 pixels × 16 (a block alone) in 12 ymm accumulators, each input value broadcast
// once and multiplied by four or two weight vectors (three for a pair whose second block has 8
// channels or fewer, one for such a block alone).

#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)

/// Lane masks for the block's last, partial vector: `tail_masks + 8 - n` enables `n` lanes.
static const int tail_masks[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

/// Vector `h` of a tile's weights for (tap, channel) row `k`: the block's two halves, then, in a
/// pair, the second block's (`w2`).
static inline __attribute__((always_inline)) __m256 weight_vector(int h, const float *w, const float *w2, size_t k) {
    return _mm256_loadu_ps(h < 2 ? w + k * BLOCK + 8 * h : w2 + k * BLOCK + 8 * (h - 2));
}

/// One (tap, channel) row of a tile: `N` inputs, each multiplied by the row's `H` weight vectors.
/// With 4 vectors (3 pixels × 32 channels) the 3 broadcasts come first and each weight vector
/// is loaded just before its 3 multiply-adds: 12 accumulators, 3 inputs and 1 weight vector
/// fill the 16 ymm registers exactly, where holding all 4 weight vectors makes clang spill.
static inline __attribute__((always_inline)) void
multiply_row(const int N, const int H, __m256 a[TILE][4], const float *const x[TILE], size_t input, const float *w,
             const float *w2, size_t k) {
    if (H == 4) {
        __m256 v[TILE];
        for (int i = 0; i < N; i++) v[i] = _mm256_broadcast_ss(x[i] + input);
        for (int h = 0; h < H; h++) {
            const __m256 wv = weight_vector(h, w, w2, k);
            for (int i = 0; i < N; i++) a[i][h] = _mm256_fmadd_ps(v[i], wv, a[i][h]);
        }
    } else {
        __m256 wv[4];
        for (int h = 0; h < H; h++) wv[h] = weight_vector(h, w, w2, k);
        for (int i = 0; i < N; i++) {
            const __m256 v = _mm256_broadcast_ss(x[i] + input);
            for (int h = 0; h < H; h++) a[i][h] = _mm256_fmadd_ps(v, wv[h], a[i][h]);
        }
    }
}

/// One tile of `N` pixels × `H` vectors of 8 output channels (`H` = 1 when a block alone has at
/// most 8 valid channels, so the padding lanes cost no multiply-adds; `H` = 4 for a pair, whose
/// third and fourth vectors' weights are the second block's, `t->block_stride` floats on, or 3
/// when that block has at most 8 valid channels). The last vector of a partial block is read and
/// written through a lane mask (whole when its channels are a multiple of 8, as 24, 40 and 1000
/// are). `N` and `H` are constants at every call site so the loops unroll.
static inline __attribute__((always_inline)) void
tile_avx2_n(const int N, const int H, const pass_t *t, const float *origins[MAX_TILE], float *out) {
    const anvil_conv_shape *s = t->s;
    __m256 a[TILE][4];
    const int tail = t->valid - 8 * (H - 1); // channels of the last vector, 1-8
    const int masked = tail < 8;
    const __m256i mask = _mm256_loadu_si256((const __m256i *)(tail_masks + 8 - tail));
#define LOAD_LAST(p) (masked ? _mm256_maskload_ps((p), mask) : _mm256_loadu_ps(p))
    if (t->first) {
        // The bias is padded to 16 (see run_block): whole loads.
        for (int h = 0; h < H; h++) {
            __m256 b = t->bias ? _mm256_loadu_ps(t->bias + 8 * h) : _mm256_setzero_ps();
            for (int i = 0; i < N; i++) a[i][h] = b;
        }
        if (t->residual) {
            for (int i = 0; i < N; i++) {
                const float *r = t->residual + (size_t)i * s->outputs;
                for (int h = 0; h < H - 1; h++) a[i][h] = _mm256_add_ps(a[i][h], _mm256_loadu_ps(r + 8 * h));
                a[i][H - 1] = _mm256_add_ps(a[i][H - 1], LOAD_LAST(r + 8 * (H - 1)));
            }
        }
    } else {
        for (int i = 0; i < N; i++) {
            const float *o = out + (size_t)i * s->outputs;
            for (int h = 0; h < H - 1; h++) a[i][h] = _mm256_loadu_ps(o + 8 * h);
            a[i][H - 1] = LOAD_LAST(o + 8 * (H - 1));
        }
    }
#undef LOAD_LAST
    if (t->window) {
        // One loop over the whole window (see window_offsets).
        const float *w = t->weights, *w2 = t->weights + t->block_stride;
        for (int e = 0; e < t->window_length; e++)
            multiply_row(N, H, a, origins, (size_t)t->window[e], w, w2, (size_t)e);
    }
    const run_t r = runs(t);
    for (int ky = 0; ky < (t->window ? 0 : s->kernel_height); ky++) {
        for (int kx = 0; kx < r.segments; kx++) {
            size_t offset = run_offset(t, ky, kx);
            const float *w = t->weights + run_offset_weights(t, ky, kx);
            const float *w2 = H >= 3 ? w + t->block_stride : NULL;
            const float *x[TILE];
            for (int i = 0; i < N; i++) x[i] = origins[i] + offset;
            const float *ahead = t->ahead ? t->ahead + run_offset_weights(t, ky, kx) : NULL;
            for (int c = 0; c < r.length; c++) {
                if (ahead) __builtin_prefetch(ahead + (size_t)c * BLOCK, 0, 2);
                multiply_row(N, H, a, x, (size_t)c, w, w2, (size_t)c);
            }
        }
    }
    if (t->last) {
        // max then min with the sum second: each returns its second operand when either is NaN,
        // so a NaN sum stays NaN (as in the scalar body and the other kernels). A bound that
        // cannot change a value is skipped (see clamps_below).
        __m256 lo = _mm256_set1_ps(s->clamp_min), hi = _mm256_set1_ps(s->clamp_max);
        if (clamps_below(s))
            for (int i = 0; i < N; i++)
                for (int h = 0; h < H; h++) a[i][h] = _mm256_max_ps(lo, a[i][h]);
        if (clamps_above(s))
            for (int i = 0; i < N; i++)
                for (int h = 0; h < H; h++) a[i][h] = _mm256_min_ps(hi, a[i][h]);
    }
    for (int i = 0; i < N; i++) {
        float *row = out + (size_t)i * s->outputs;
        for (int h = 0; h < H - 1; h++) _mm256_storeu_ps(row + 8 * h, a[i][h]);
        if (masked)
            _mm256_maskstore_ps(row + 8 * (H - 1), mask, a[i][H - 1]);
        else
            _mm256_storeu_ps(row + 8 * (H - 1), a[i][H - 1]);
    }
}

/// `N` pixels (1-6) × `H` vectors, each a constant at its call site.
#define TILE_CASES(H)                                              \
    switch (n) {                                                   \
    case 6: tile_avx2_n(6, H, t, origins, out); break;             \
    case 5: tile_avx2_n(5, H, t, origins, out); break;             \
    case 4: tile_avx2_n(4, H, t, origins, out); break;             \
    case 3: tile_avx2_n(3, H, t, origins, out); break;             \
    case 2: tile_avx2_n(2, H, t, origins, out); break;             \
    default: tile_avx2_n(1, H, t, origins, out); break;            \
    }

/// A pair's `N` pixels (1-3) × `H` vectors (4, or 3 when the second block has at most 8
/// channels): 12 or 9 accumulators. (4 pixels × 3 vectors would need all 16 ymm registers, and
/// clang then shuffles and spills accumulators inside the loop.)
#define PAIR_CASES(H)                                              \
    switch (n) {                                                   \
    case 3: tile_avx2_n(3, H, t, origins, out); break;             \
    case 2: tile_avx2_n(2, H, t, origins, out); break;             \
    default: tile_avx2_n(1, H, t, origins, out); break;            \
    }

static void tile_avx2(const pass_t *t, const float *origins[MAX_TILE], int n, float *out) {
    if (t->blocks == 2 && t->valid > 3 * 8)
        PAIR_CASES(4)
    else if (t->blocks == 2)
        PAIR_CASES(3)
    else if (t->valid > 8)
        TILE_CASES(2)
    else
        TILE_CASES(1)
}
#undef TILE_CASES
#undef PAIR_CASES

void anvil_conv_direct_avx2(const anvil_conv_shape *s, const float *input, const float *packed,
                            const float *bias, const float *residual, float *output, int pixel_begin,
                            int pixel_end, int block_begin, int block_end) {
    static const tile_shape shape = { tile_avx2, ANVIL_CONV_TILE_BLOCKS_AVX2, { 0, TILE, 3 }, TILE };
    direct_convolution(s, input, packed, bias, residual, output, pixel_begin, pixel_end, block_begin, block_end,
                       &shape);
}

#pragma clang attribute pop
#endif
