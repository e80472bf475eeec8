#if defined(__x86_64__)
#include "../internal/direct_convolution.h"

// Direct convolution with AVX-512F: a tile of a group of up to 4 neighbouring blocks — 6 pixels
// × 64 output channels, 8 × 48, 8 × 32 or 8 × 16 (see `run_blocks`) — in up to 24 zmm
// accumulators, each input value broadcast once and multiplied by one weight vector of 16 per
// block. The widest groups pay most where a tile has few multiply-adds per output, as in 1×1
// layers of 16–64 input channels: per 24 multiply-adds 4 weight loads and 6 broadcasts against
// the 8 × 32 tile's 3 and 12, each pixel's 64 outputs stored together, and a third fewer tiles to
// set up, clamp and store. The walk's chunks are multiples of 24 pixels (of 6 and of 8: with
// multiples of 8, tiles of 6 left rests of 2). Tiles of more than 8 pixels would need more input
// pointers than the general registers hold (a 12 × 32 tile spills them), except where
// the pixels' inputs follow one another (1×1 at stride 1): there one block takes 16 pixels from
// four base pointers (`tile_contiguous_avx512`), and the walk's chunks are multiples of 48.
// Each lane's sum is made in the AVX2 tile's order (bias, residual, then one multiply-add per
// (tap, channel) in the same sequence), so the two bodies' outputs agree bit for bit.
//
// `ANVIL_AVX512_EMULATED` (Tests/AnvilKernelEmulation) compiles this same file against portable
// emulations of the intrinsics, under another name, so that a CPU without AVX-512 still runs
// this body's loops in the tests.

#ifdef ANVIL_AVX512_EMULATED
#define DIRECT_AVX512_NAME anvil_conv_direct_avx512_emulated
#else
#define DIRECT_AVX512_NAME anvil_conv_direct_avx512
#pragma clang attribute push(__attribute__((target("avx512f,avx2,fma"))), apply_to = function)
#endif

/// Vector `h` of a tile's weights for (tap, channel) row `k`: block `h` of the group's, `stride`
/// floats after the one before.
static inline __attribute__((always_inline)) __m512 weight_vector(int h, const float *w, size_t stride, size_t k) {
    return _mm512_loadu_ps(w + h * stride + k * BLOCK);
}

/// The lane mask of a tile's last vector of `H`: its valid channels, 1-16.
static inline __attribute__((always_inline)) __mmask16 tile_mask(const int H, const pass_t *t) {
    return (__mmask16)((1u << (t->valid - BLOCK * (H - 1))) - 1u);
}

/// Loads a tile's starting sums into `a` (`N` pixels × `H` vectors): on the first pass the bias
/// plus the residual, later the partial sums already in `out`.
static inline __attribute__((always_inline)) void
tile_start_avx512(const int N, const int H, const pass_t *t, const float *out, __m512 a[MAX_TILE][MAX_GROUP]) {
    const anvil_conv_shape *s = t->s;
    const __mmask16 mask = tile_mask(H, t);
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
}

/// Writes a tile's sums, clamped on the last pass.
static inline __attribute__((always_inline)) void
tile_finish_avx512(const int N, const int H, const pass_t *t, float *out, __m512 a[MAX_TILE][MAX_GROUP]) {
    const anvil_conv_shape *s = t->s;
    const __mmask16 mask = tile_mask(H, t);
    if (t->last) {
        // max then min with the sum second: each returns its second operand when either is NaN,
        // so a NaN sum stays NaN (as in the scalar body and the other kernels). A bound that
        // cannot change a value is skipped (see clamps_below).
        __m512 lo = _mm512_set1_ps(s->clamp_min), hi = _mm512_set1_ps(s->clamp_max);
        if (clamps_below(s))
            for (int i = 0; i < N; i++)
                for (int h = 0; h < H; h++) a[i][h] = _mm512_max_ps(lo, a[i][h]);
        if (clamps_above(s))
            for (int i = 0; i < N; i++)
                for (int h = 0; h < H; h++) a[i][h] = _mm512_min_ps(hi, a[i][h]);
    }
    for (int i = 0; i < N; i++) {
        float *row = out + (size_t)i * s->outputs;
        for (int h = 0; h < H - 1; h++) _mm512_storeu_ps(row + BLOCK * h, a[i][h]);
        _mm512_mask_storeu_ps(row + BLOCK * (H - 1), mask, a[i][H - 1]);
    }
}

/// One tile of `N` pixels × `H` vectors of 16 output channels, one per block of the group. The
/// last vector of a partial block is read and written through a lane mask: masked-off lanes are
/// neither read (they cannot fault past the end of a row) nor written. `N` and `H` are constants
/// at every call site so the loops unroll.
static inline __attribute__((always_inline)) void
tile_avx512_n(const int N, const int H, const pass_t *t, const float *origins[MAX_TILE], float *out) {
    const anvil_conv_shape *s = t->s;
    __m512 a[MAX_TILE][MAX_GROUP];
    tile_start_avx512(N, H, t, out, a);
    if (t->window) {
        // One loop over the whole window (see window_offsets).
        const float *w = t->weights;
        for (int e = 0; e < t->window_length; e++) {
            const int offset = t->window[e];
            __m512 wv[MAX_GROUP];
            for (int h = 0; h < H; h++) wv[h] = weight_vector(h, w, t->block_stride, (size_t)e);
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
            const float *x[MAX_TILE];
            for (int i = 0; i < N; i++) x[i] = origins[i] + offset;
            const float *ahead = t->ahead ? t->ahead + run_offset_weights(t, ky, kx) : NULL;
            for (int c = 0; c < r.length; c++) {
                if (ahead) __builtin_prefetch(ahead + (size_t)c * BLOCK, 0, 2);
                __m512 wv[MAX_GROUP];
                for (int h = 0; h < H; h++) wv[h] = weight_vector(h, w, t->block_stride, (size_t)c);
                for (int i = 0; i < N; i++) {
                    __m512 v = _mm512_set1_ps(x[i][c]);
                    for (int h = 0; h < H; h++) a[i][h] = _mm512_fmadd_ps(v, wv[h], a[i][h]);
                }
            }
        }
    }
    tile_finish_avx512(N, H, t, out, a);
}

/// One block of 16 output channels for `N` (9 to 16) pixels of a 1×1 layer at stride 1, whose
/// inputs follow one another (pixel i's at `origins[0] + i · channels`): 16 accumulators hide the
/// multiply-add latency that the 8-pixel tile's 8 wait on, and the pixels are addressed from four
/// base pointers and multiples of the row, not sixteen pointers (which spill). It serves layers of
/// one block, such as MobileNet v2's and EfficientNet-B0's 112 × 112 32 → 16 and v3 large's 16 → 16.
/// Sums in the same order as the general tile, so the bodies still agree bit for bit.
static inline __attribute__((always_inline)) void
tile_contiguous_avx512(const int N, const pass_t *t, const float *origins[MAX_TILE], float *out) {
    const anvil_conv_shape *s = t->s;
    __m512 a[MAX_TILE][MAX_GROUP];
    tile_start_avx512(N, 1, t, out, a);
    const size_t C = (size_t)s->channels;
    const float *x0 = origins[0] + t->c0, *x4 = x0 + 4 * C, *x8 = x0 + 8 * C, *x12 = x0 + 12 * C;
    const float *w = t->weights + (size_t)t->c0 * BLOCK;
    const size_t C2 = 2 * C, C3 = 3 * C;
    const float *ahead = t->ahead ? t->ahead + (size_t)t->c0 * BLOCK : NULL;
    for (int c = 0; c < t->c1 - t->c0; c++) {
        if (ahead) __builtin_prefetch(ahead + (size_t)c * BLOCK, 0, 2);
        const __m512 wv = _mm512_loadu_ps(w + (size_t)c * BLOCK);
        // Pixel I's input is at X + R + c: X the base of its four, R = (I mod 4) · channels.
#define PIXEL(I, X, R) if (I < N) a[I][0] = _mm512_fmadd_ps(_mm512_set1_ps((X)[(R) + c]), wv, a[I][0]);
        PIXEL(0, x0, 0) PIXEL(1, x0, C) PIXEL(2, x0, C2) PIXEL(3, x0, C3)
        PIXEL(4, x4, 0) PIXEL(5, x4, C) PIXEL(6, x4, C2) PIXEL(7, x4, C3)
        PIXEL(8, x8, 0) PIXEL(9, x8, C) PIXEL(10, x8, C2) PIXEL(11, x8, C3)
        PIXEL(12, x12, 0) PIXEL(13, x12, C) PIXEL(14, x12, C2) PIXEL(15, x12, C3)
#undef PIXEL
    }
    tile_finish_avx512(N, 1, t, out, a);
}

/// A case of `n` for each tile size: `N` pixels × `H` vectors, each a constant at its call site.
#define TILE_CASE(N, H) case N: tile_avx512_n(N, H, t, origins, out); break;
#define CASES_1_TO_6(H) TILE_CASE(6, H) TILE_CASE(5, H) TILE_CASE(4, H) TILE_CASE(3, H) TILE_CASE(2, H) \
    default: tile_avx512_n(1, H, t, origins, out); break;
#define CASES_1_TO_8(H) TILE_CASE(8, H) TILE_CASE(7, H) CASES_1_TO_6(H)

static void tile_avx512(const pass_t *t, const float *origins[MAX_TILE], int n, float *out) {
    switch (t->blocks) {
    case 4: switch (n) { CASES_1_TO_6(4) } break;
    case 3: switch (n) { CASES_1_TO_8(3) } break;
    case 2: switch (n) { CASES_1_TO_8(2) } break;
    default:
        switch (n) {
        case 16: tile_contiguous_avx512(16, t, origins, out); break;
        case 15: tile_contiguous_avx512(15, t, origins, out); break;
        case 14: tile_contiguous_avx512(14, t, origins, out); break;
        case 13: tile_contiguous_avx512(13, t, origins, out); break;
        case 12: tile_contiguous_avx512(12, t, origins, out); break;
        case 11: tile_contiguous_avx512(11, t, origins, out); break;
        case 10: tile_contiguous_avx512(10, t, origins, out); break;
        case 9: tile_contiguous_avx512(9, t, origins, out); break;
        CASES_1_TO_8(1)
        }
        break;
    }
}
#undef CASES_1_TO_8
#undef CASES_1_TO_6
#undef TILE_CASE

void DIRECT_AVX512_NAME(const anvil_conv_shape *s, const float *input, const float *packed, const float *bias,
                        const float *residual, float *output, int pixel_begin, int pixel_end, int block_begin,
                        int block_end) {
    // A 1×1 layer at stride 1 reads its pixels' inputs one after another: its one-block tiles take
    // 16 pixels (tile_contiguous_avx512), and its chunks are multiples of 48.
    static const tile_shape shape = { tile_avx512, ANVIL_CONV_TILE_BLOCKS_AVX512, { 0, 8, 8, 8, 6 }, 24 };
    static const tile_shape contiguous = { tile_avx512, ANVIL_CONV_TILE_BLOCKS_AVX512, { 0, 16, 8, 8, 6 }, 48 };
    const int follow = s->kernel_height == 1 && s->kernel_width == 1 && s->stride_height == 1 && s->stride_width == 1;
    direct_convolution(s, input, packed, bias, residual, output, pixel_begin, pixel_end, block_begin, block_end,
                       follow ? &contiguous : &shape);
}

#ifndef ANVIL_AVX512_EMULATED
#pragma clang attribute pop
#endif
#endif
