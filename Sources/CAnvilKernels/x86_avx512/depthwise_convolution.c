#if defined(__x86_64__)
#include "../internal/depthwise_convolution.h"

// Depthwise convolution, NHWC, with AVX-512F: the AVX2 body's walk (x86_avx2/depthwise_convolution.c:
// a block of up to PIXELS output pixels whose accumulators stay in registers while the taps are
// walked, interior pixels without bounds checks, 3×3 and 5×5 windows unrolled) with 16 channels per
// zmm register. With 32 registers a block takes 32 channels of 8 pixels (16 accumulators, 2 weight
// vectors) at a time (a lone border pixel 64), and the channels left over in one strip whose last
// vector goes through a lane mask (masked-off lanes are neither read nor written), so no channel
// count falls back to narrower vectors. The engine's
// buffers start on 64-byte boundaries, so with channels a multiple of 16 every access is aligned;
// the AVX2 body's peeling for buffers 16 bytes off a boundary has no counterpart here.
//
// `ANVIL_AVX512_EMULATED` (Tests/CAnvilKernelsEmulated) compiles this file on emulated
// intrinsics under another name.

#ifdef ANVIL_AVX512_EMULATED
#define DEPTHWISE_AVX512_NAME anvil_depthwise_rows_avx512_emulated
#else
#define DEPTHWISE_AVX512_NAME anvil_depthwise_rows_avx512
#pragma clang attribute push(__attribute__((target("avx512f,avx2,fma"))), apply_to = function)
#endif

/// The lane mask of vector `v` of `V`: `last` for the last, all 16 lanes before it.
static inline __attribute__((always_inline)) __mmask16 lane_mask(int v, int V, __mmask16 last) {
    return v == V - 1 ? last : (__mmask16)0xffff;
}

/// Channels `[c, c + 16·V)` of `P` pixels, the last vector's lanes limited to `last` (all 16
/// lanes for a full strip): P·V accumulators, V weight vectors per tap.
static inline __attribute__((always_inline)) void
strip_avx512(const int P, const int V, const anvil_depthwise_shape *s, const walk *k, window win,
             const float *bias, float *out, int c, __mmask16 last) {
    __m512 a[WIDE_PIXELS][4];
    for (int v = 0; v < V; v++) {
        __m512 b = bias ? _mm512_maskz_loadu_ps(lane_mask(v, V, last), bias + c + 16 * v) : _mm512_setzero_ps();
        for (int i = 0; i < P; i++) a[i][v] = b;
    }
    for (int ky = 0; ky < win.rows; ky++) {
        const float *xr = win.x + ky * k->row + c;
        const float *wr = win.w + ky * k->weight_row + c;
        for (int kx = 0; kx < k->columns; kx++) {
            const float *x = xr + kx * k->tap;
            __m512 w[4];
            for (int v = 0; v < V; v++) w[v] = _mm512_maskz_loadu_ps(lane_mask(v, V, last), wr + kx * k->channels + 16 * v);
            for (int i = 0; i < P; i++)
                for (int v = 0; v < V; v++)
                    a[i][v] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(lane_mask(v, V, last), x + i * k->pixel + 16 * v), w[v],
                                              a[i][v]);
        }
    }
    const __m512 lo = _mm512_set1_ps(s->clamp_min), hi = _mm512_set1_ps(s->clamp_max);
    for (int i = 0; i < P; i++)
        for (int v = 0; v < V; v++)
            // Operand order keeps NaN: max/min return their second operand when either is NaN.
            _mm512_mask_storeu_ps(out + i * k->channels + c + 16 * v, lane_mask(v, V, last),
                                  _mm512_min_ps(hi, _mm512_max_ps(lo, a[i][v])));
}

/// `P` output pixels `pixel_step` floats apart in the input, all sharing the taps of `win`, channels
/// `[c0, c1)`. `P`, `KH` (window rows; 0 = read `win.rows`), `KW` (taps per window row; 0 = read
/// `win.columns`) and `S` (the stride along x with dilation 1; 0 = read them) are constants at
/// each call site so the loops unroll and the accumulators stay in registers.
static inline __attribute__((always_inline)) void
block_avx512(const int P, const int KH, const int KW, const int S, const anvil_depthwise_shape *s, window win,
             ptrdiff_t pixel_step, const float *bias, float *out, int c0, int c1) {
    if (KH) win.rows = KH;
    const walk k = make_walk(s, win, pixel_step, KW, S);
    const __mmask16 all = 0xffff;
    int c = c0;
    // Strips of 4 vectors for up to 4 pixels (border pixels), of 2 for up to 8: at most 16
    // accumulators. The channels left over go in one strip of as many vectors as they need, the
    // last through a lane mask: a strip of one vector has too few accumulators to hide the
    // multiply-add latency (as the last 8 of 72 channels split 64 + 8 would).
    const int wide = P <= PIXELS ? 4 : 2;
    for (; c + 16 * wide <= c1; c += 16 * wide) strip_avx512(P, wide, s, &k, win, bias, out, c, all);
    const int rest = c1 - c;
    if (rest > 0) {
        const __mmask16 last = (__mmask16)(0xffffu >> ((16 - rest % 16) % 16));
        switch ((rest + 15) / 16) {
        case 4: strip_avx512(P, 4, s, &k, win, bias, out, c, last); break;
        case 3: strip_avx512(P, 3, s, &k, win, bias, out, c, last); break;
        case 2: strip_avx512(P, 2, s, &k, win, bias, out, c, last); break;
        default: strip_avx512(P, 1, s, &k, win, bias, out, c, last); break;
        }
    }
}

/// `n` pixels through `block_avx512` with the window constants `KH`, `KW`, `S`, in blocks of
/// WIDE_PIXELS and one of the rest: the switch turns the rest into a constant too.
static inline __attribute__((always_inline)) void
blocks_avx512(const int KH, const int KW, const int S, const anvil_depthwise_shape *s, int n, window win,
              ptrdiff_t pixel_step, const float *bias, float *out, int c0, int c1) {
    for (; n >= WIDE_PIXELS; n -= WIDE_PIXELS) {
        block_avx512(WIDE_PIXELS, KH, KW, S, s, win, pixel_step, bias, out, c0, c1);
        win.x += WIDE_PIXELS * pixel_step;
        out += (ptrdiff_t)WIDE_PIXELS * s->channels;
    }
    switch (n) {
    case 0: return;
    case 7: block_avx512(7, KH, KW, S, s, win, pixel_step, bias, out, c0, c1); return;
    case 6: block_avx512(6, KH, KW, S, s, win, pixel_step, bias, out, c0, c1); return;
    case 5: block_avx512(5, KH, KW, S, s, win, pixel_step, bias, out, c0, c1); return;
    case 4: block_avx512(4, KH, KW, S, s, win, pixel_step, bias, out, c0, c1); return;
    case 3: block_avx512(3, KH, KW, S, s, win, pixel_step, bias, out, c0, c1); return;
    case 2: block_avx512(2, KH, KW, S, s, win, pixel_step, bias, out, c0, c1); return;
    default: block_avx512(1, KH, KW, S, s, win, pixel_step, bias, out, c0, c1); return;
    }
}

/// A run of interior pixels, with the AVX2 body's unrolled cases (3-tap rows at stride 1, whole
/// 3×3 windows at stride 2 and whole 5×5 windows at stride 1) and whole 5×5 windows at stride 2
/// (EfficientNet-B0, MobileNet v3), which 32 registers hold without spilling.
static void interior_avx512(const anvil_depthwise_shape *s, int n, window win, ptrdiff_t pixel_step,
                            const float *bias, float *out, int c0, int c1) {
    const int dense = s->dilation_width == 1;
    if (dense && win.columns == 3 && s->stride_width == 1)
        blocks_avx512(0, 3, 1, s, n, win, pixel_step, bias, out, c0, c1);
    else if (dense && win.columns == 3 && win.rows == 3 && s->stride_width == 2)
        blocks_avx512(3, 3, 2, s, n, win, pixel_step, bias, out, c0, c1);
    else if (dense && win.columns == 3 && s->stride_width == 2)
        blocks_avx512(0, 3, 2, s, n, win, pixel_step, bias, out, c0, c1);
    else if (dense && win.columns == 5 && win.rows == 5 && s->stride_width == 1)
        blocks_avx512(5, 5, 1, s, n, win, pixel_step, bias, out, c0, c1);
    else if (dense && win.columns == 5 && win.rows == 5 && s->stride_width == 2)
        blocks_avx512(5, 5, 2, s, n, win, pixel_step, bias, out, c0, c1);
    else
        blocks_avx512(0, 0, 0, s, n, win, pixel_step, bias, out, c0, c1);
}

/// A border pixel: its own tap range, one pixel.
static void border_avx512(const anvil_depthwise_shape *s, window win, const float *bias, float *out, int c0, int c1) {
    block_avx512(1, 0, 0, 0, s, win, 0, bias, out, c0, c1);
}

void DEPTHWISE_AVX512_NAME(const anvil_depthwise_shape *s, const float *input, const float *weights,
                           const float *bias, float *output, int row_begin, int row_end) {
    if (s->multiplier != 1) {
        anvil_depthwise_rows_scalar(s, input, weights, bias, output, row_begin, row_end);
        return;
    }
    // Blocks of 8 pixels in strips of 2 vectors (16 accumulators): per window row of a 3×3 window
    // at stride 1, 10 input and 3 weight loads per vector feed 24 multiply-adds, against 6 and 3
    // for 12 in blocks of 4 × 4 vectors, and half the blocks to set up.
    // Windows whose rows outgrow L1 go a group of channels at a time, in multiples of the
    // 32-channel strip (see depthwise_group_by_rows).
    depthwise_rows(s, input, weights, bias, output, row_begin, row_end, depthwise_group_by_rows(s, 32), interior_avx512,
                   border_avx512);
}

#ifndef ANVIL_AVX512_EMULATED
#pragma clang attribute pop
#endif
#endif
