#if defined(__x86_64__)
#include "../internal/direct_convolution.h"

// Direct convolution with AVX-512F: a tile of up to 8 pixels × 32 output channels (two
// neighbouring blocks, `PAIRS_ALL`) in 16 zmm accumulators, each input value broadcast once and
// multiplied by two weight vectors of 16 — against the AVX2 tile's 3 × 32 (4 weight loads and 3
// broadcasts per 12 multiply-adds of 8 lanes) 2 loads and 8 broadcasts per 16 multiply-adds of
// 16 lanes, with 32 registers to hold it. With an odd number of blocks one runs alone (8 × 16;
// see `run_blocks`).
// Each lane's sum is made in the AVX2 tile's order (bias, residual, then one multiply-add per
// (tap, channel) in the same sequence), so the two bodies' outputs agree bit for bit.
//
// `ANVIL_AVX512_EMULATED` (Tests/AnvilKernelEmulation) compiles this same file against portable
// emulations of the intrinsics, under another name, so that a CPU without AVX-512 still runs
// this body's loops in the tests.

#ifdef ANVIL_AVX512_EMULATED
#define DIRECT_AVX512_NAME anvil_direct_convolution_avx512_emulated
#else
#define DIRECT_AVX512_NAME anvil_direct_convolution_avx512
#pragma clang attribute push(__attribute__((target("avx512f,avx2,fma"))), apply_to = function)
#endif

/// Vector `h` of a tile's weights for (tap, channel) row `k`: the first block's, then the second's.
static inline __attribute__((always_inline)) __m512 weight_vector(int h, const float *w, const float *w2, size_t k) {
    return _mm512_loadu_ps((h == 0 ? w : w2) + k * BLOCK);
}

/// One tile of `N` pixels × `H` vectors of 16 output channels (`H` = 2 for a pair, whose second
/// vector's weights are `t->weights2`). The last vector of a partial block is read and written
/// through a lane mask: masked-off lanes are neither read (they cannot fault past the end of a
/// row) nor written. `N` and `H` are constants at every call site so the loops unroll.
static inline __attribute__((always_inline)) void
tile_avx512_n(const int N, const int H, const pass_t *t, const float *origins[MAX_TILE], float *out) {
    const anvil_conv_shape *s = t->s;
    __m512 a[MAX_TILE][2];
    const int tail = t->valid - BLOCK * (H - 1); // channels of the last vector, 1-16
    const __mmask16 mask = (__mmask16)((1u << tail) - 1u);
    if (t->first) {
        // The bias is padded to whole blocks (see run_block): whole loads.
        for (int h = 0; h < H; h++) {
            __m512 b = t->bias ? _mm512_loadu_ps(t->bias + BLOCK * h) : _mm512_setzero_ps();
            for (int i = 0; i < N; i++) a[i][h] = b;
        }
        if (t->residual) {
            for (int i = 0; i < N; i++) {
                const float *r = t->residual + (size_t)i * s->outputs;
                for (int h = 0; h < H - 1; h++) a[i][h] = _mm512_add_ps(a[i][h], _mm512_loadu_ps(r + BLOCK * h));
                a[i][H - 1] = _mm512_add_ps(a[i][H - 1], _mm512_maskz_loadu_ps(mask, r + BLOCK * (H - 1)));
            }
        }
    } else {
        for (int i = 0; i < N; i++) {
            const float *o = out + (size_t)i * s->outputs;
            for (int h = 0; h < H - 1; h++) a[i][h] = _mm512_loadu_ps(o + BLOCK * h);
            a[i][H - 1] = _mm512_maskz_loadu_ps(mask, o + BLOCK * (H - 1));
        }
    }
    if (t->window) {
        // One loop over the whole window (see window_offsets).
        const float *w = t->weights, *w2 = t->weights2;
        for (int e = 0; e < t->window_length; e++) {
            const int offset = t->window[e];
            __m512 wv[2];
            for (int h = 0; h < H; h++) wv[h] = weight_vector(h, w, w2, (size_t)e);
            for (int i = 0; i < N; i++) {
                __m512 v = _mm512_set1_ps(origins[i][offset]);
                for (int h = 0; h < H; h++) a[i][h] = _mm512_fmadd_ps(v, wv[h], a[i][h]);
            }
        }
    }
    const run_t r = runs(t);
    for (int ky = 0; ky < (t->window ? 0 : s->kernel_height); ky++) {
        for (int kx = 0; kx < r.segments; kx++) {
            size_t offset = run_offset(t, ky, kx);
            const float *w = t->weights + run_offset_weights(t, ky, kx);
            const float *w2 = H == 2 ? t->weights2 + run_offset_weights(t, ky, kx) : NULL;
            const float *x[MAX_TILE];
            for (int i = 0; i < N; i++) x[i] = origins[i] + offset;
            for (int c = 0; c < r.length; c++) {
                __m512 wv[2];
                for (int h = 0; h < H; h++) wv[h] = weight_vector(h, w, w2, (size_t)c);
                for (int i = 0; i < N; i++) {
                    __m512 v = _mm512_set1_ps(x[i][c]);
                    for (int h = 0; h < H; h++) a[i][h] = _mm512_fmadd_ps(v, wv[h], a[i][h]);
                }
            }
        }
    }
    if (t->last) {
        __m512 lo = _mm512_set1_ps(s->clamp_min), hi = _mm512_set1_ps(s->clamp_max);
        for (int i = 0; i < N; i++)
            // max then min with the sum second: each returns its second operand when either is
            // NaN, so a NaN sum stays NaN (as in the scalar body and the other kernels).
            for (int h = 0; h < H; h++) a[i][h] = _mm512_min_ps(hi, _mm512_max_ps(lo, a[i][h]));
    }
    for (int i = 0; i < N; i++) {
        float *row = out + (size_t)i * s->outputs;
        for (int h = 0; h < H - 1; h++) _mm512_storeu_ps(row + BLOCK * h, a[i][h]);
        _mm512_mask_storeu_ps(row + BLOCK * (H - 1), mask, a[i][H - 1]);
    }
}

/// `N` pixels (1-8) × `H` vectors, each a constant at its call site.
#define TILE_CASES(H)                                              \
    switch (n) {                                                   \
    case 8: tile_avx512_n(8, H, t, origins, out); break;           \
    case 7: tile_avx512_n(7, H, t, origins, out); break;           \
    case 6: tile_avx512_n(6, H, t, origins, out); break;           \
    case 5: tile_avx512_n(5, H, t, origins, out); break;           \
    case 4: tile_avx512_n(4, H, t, origins, out); break;           \
    case 3: tile_avx512_n(3, H, t, origins, out); break;           \
    case 2: tile_avx512_n(2, H, t, origins, out); break;           \
    default: tile_avx512_n(1, H, t, origins, out); break;          \
    }

static void tile_avx512(const pass_t *t, const float *origins[MAX_TILE], int n, float *out) {
    if (t->weights2)
        TILE_CASES(2)
    else
        TILE_CASES(1)
}
#undef TILE_CASES

void DIRECT_AVX512_NAME(const anvil_conv_shape *s, const float *input, const float *packed, const float *bias,
                        const float *residual, float *output, int pixel_begin, int pixel_end, int block_begin,
                        int block_end) {
    static const tile_shape shape = { tile_avx512, MAX_TILE, MAX_TILE, PAIRS_ALL };
    direct_convolution(s, input, packed, bias, residual, output, pixel_begin, pixel_end, block_begin, block_end,
                       &shape);
}

#ifndef ANVIL_AVX512_EMULATED
#pragma clang attribute pop
#endif
#endif
