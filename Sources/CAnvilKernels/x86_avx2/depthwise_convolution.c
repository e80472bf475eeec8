#if defined(__x86_64__)
#include "../internal/depthwise_convolution.h"

// Depthwise convolution, NHWC. Each output pixel is a per-channel weighted sum of its window,
// so channels are independent and contiguous: the AVX2 body vectorises across channels and
// keeps a block of up to PIXELS output pixels × 16 channels (a lone pixel: 32) in registers
// while it walks the taps, so each weight vector loaded is reused by every pixel of the
// block, and at stride 1 each input vector by the taps of neighbouring pixels that share it.
// Pixels whose window lies wholly inside the image ("interior") run without bounds checks,
// 3×3 windows at stride 1 and 2 and 5×5 at stride 1 unrolled; border pixels get their own tap
// ranges.
// Padding is never materialised. The contiguous per-pixel walk prefetches better than a
// channel-outer sweep (the nine 3×3 weight vectors held in registers) or a row's channels sliced
// to stay in L1; outputs are stored normally, since the next layer reads them from cache.

#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)

/// Lane masks for the last, partial vector of channels: `tail_masks + 8 - n` enables `n` lanes.
static const int tail_masks[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

static inline __m256 clamp8(__m256 v, __m256 lo, __m256 hi) {
    // Operand order keeps NaN: max/min return their second operand when either is NaN.
    return _mm256_min_ps(hi, _mm256_max_ps(lo, v));
}

/// Channels `[c, c + 8·V)` of `P` pixels: P·V accumulators, V weight vectors per tap.
static inline __attribute__((always_inline)) void
strip_avx2(const int P, const int V, const anvil_depthwise_shape *s, const walk *k, window win, const float *bias,
           float *out, int c) {
    __m256 a[PIXELS][4];
    for (int v = 0; v < V; v++) {
        __m256 b = bias ? _mm256_loadu_ps(bias + c + 8 * v) : _mm256_setzero_ps();
        for (int i = 0; i < P; i++) a[i][v] = b;
    }
    for (int ky = 0; ky < win.rows; ky++) {
        const float *xr = win.x + ky * k->row + c;
        const float *wr = win.w + ky * k->weight_row + c;
        for (int kx = 0; kx < k->columns; kx++) {
            const float *x = xr + kx * k->tap;
            __m256 w[4];
            for (int v = 0; v < V; v++) w[v] = _mm256_loadu_ps(wr + kx * k->channels + 8 * v);
            for (int i = 0; i < P; i++)
                for (int v = 0; v < V; v++)
                    a[i][v] = _mm256_fmadd_ps(_mm256_loadu_ps(x + i * k->pixel + 8 * v), w[v], a[i][v]);
        }
    }
    const __m256 lo = _mm256_set1_ps(s->clamp_min), hi = _mm256_set1_ps(s->clamp_max);
    for (int i = 0; i < P; i++)
        for (int v = 0; v < V; v++) _mm256_storeu_ps(out + i * k->channels + c + 8 * v, clamp8(a[i][v], lo, hi));
}

/// Channels `[c, c + 4)` of `P` pixels with 128-bit vectors.
static inline __attribute__((always_inline)) void
quad_avx2(const int P, const anvil_depthwise_shape *s, const walk *k, window win, const float *bias, float *out, int c) {
    __m128 a[PIXELS];
    __m128 b = bias ? _mm_loadu_ps(bias + c) : _mm_setzero_ps();
    for (int i = 0; i < P; i++) a[i] = b;
    for (int ky = 0; ky < win.rows; ky++) {
        const float *xr = win.x + ky * k->row + c;
        const float *wr = win.w + ky * k->weight_row + c;
        for (int kx = 0; kx < k->columns; kx++) {
            const float *x = xr + kx * k->tap;
            __m128 w = _mm_loadu_ps(wr + kx * k->channels);
            for (int i = 0; i < P; i++) a[i] = _mm_fmadd_ps(_mm_loadu_ps(x + i * k->pixel), w, a[i]);
        }
    }
    const __m128 lo = _mm_set1_ps(s->clamp_min), hi = _mm_set1_ps(s->clamp_max);
    for (int i = 0; i < P; i++) _mm_storeu_ps(out + i * k->channels + c, _mm_min_ps(hi, _mm_max_ps(lo, a[i])));
}

/// The last `n` (1-7) channels from `c` of `P` pixels, with masked loads and stores.
static inline __attribute__((always_inline)) void
masked_avx2(const int P, const anvil_depthwise_shape *s, const walk *k, window win, const float *bias, float *out,
            int c, int n) {
    const __m256i mask = _mm256_loadu_si256((const __m256i *)(tail_masks + 8 - n));
    __m256 a[PIXELS];
    __m256 b = bias ? _mm256_maskload_ps(bias + c, mask) : _mm256_setzero_ps();
    for (int i = 0; i < P; i++) a[i] = b;
    for (int ky = 0; ky < win.rows; ky++) {
        const float *xr = win.x + ky * k->row + c;
        const float *wr = win.w + ky * k->weight_row + c;
        for (int kx = 0; kx < k->columns; kx++) {
            const float *x = xr + kx * k->tap;
            __m256 w = _mm256_maskload_ps(wr + kx * k->channels, mask);
            for (int i = 0; i < P; i++) a[i] = _mm256_fmadd_ps(_mm256_maskload_ps(x + i * k->pixel, mask), w, a[i]);
        }
    }
    const __m256 lo = _mm256_set1_ps(s->clamp_min), hi = _mm256_set1_ps(s->clamp_max);
    for (int i = 0; i < P; i++) _mm256_maskstore_ps(out + i * k->channels + c, mask, clamp8(a[i], lo, hi));
}

/// `P` output pixels `pixel_step` floats apart in the input, all sharing the taps of `win`,
/// channels `[c0, c1)`. `P`, `KH` (window rows; 0 = read `win.rows`), `KW` (taps per window row; 0 =
/// read `win.columns`), `S` (the stride
/// along x with dilation 1; 0 = read them) and `head` are constants at each call site so the
/// loops unroll and the accumulators stay in registers. A lone pixel takes 32 channels at a
/// time so that 4 independent accumulator chains hide the FMA latency. `head` peels 4
/// channels with 128-bit vectors so that the 256-bit ones after them start on a 32-byte
/// boundary when the pixels start 16 bytes past one: an unaligned 256-bit access crosses a
/// cache line every other time, which costs the large-channel layers up to a third.
static inline __attribute__((always_inline)) void
block_avx2(const int P, const int KH, const int KW, const int S, const anvil_depthwise_shape *s, window win,
           ptrdiff_t pixel_step, const float *bias, float *out, const int head, int c0, int c1) {
    if (KH) win.rows = KH;
    const walk k = make_walk(s, win, pixel_step, KW, S);
    int c = c0;
    if (head) {
        quad_avx2(P, s, &k, win, bias, out, c0);
        c = c0 + 4;
    }
    if (P == 1)
        for (; c + 32 <= c1; c += 32) strip_avx2(1, 4, s, &k, win, bias, out, c);
    for (; c + 16 <= c1; c += 16) strip_avx2(P, 2, s, &k, win, bias, out, c);
    if (c + 8 <= c1) {
        strip_avx2(P, 1, s, &k, win, bias, out, c);
        c += 8;
    }
    if (c1 - c == 4)
        quad_avx2(P, s, &k, win, bias, out, c);
    else if (c < c1)
        masked_avx2(P, s, &k, win, bias, out, c, c1 - c);
}

/// `n` pixels through `block_avx2` with the window constants `KH`, `KW`, `S`, in blocks of PIXELS
/// and one of the rest: the switch turns the rest into a constant too.
static inline __attribute__((always_inline)) void
blocks_avx2(const int KH, const int KW, const int S, const int head, const anvil_depthwise_shape *s, int n, window win,
            ptrdiff_t pixel_step, const float *bias, float *out, int c0, int c1) {
    for (; n >= PIXELS; n -= PIXELS) {
        block_avx2(PIXELS, KH, KW, S, s, win, pixel_step, bias, out, head, c0, c1);
        win.x += PIXELS * pixel_step;
        out += (ptrdiff_t)PIXELS * s->channels;
    }
    switch (n) {
    case 0: return;
    case 3: block_avx2(3, KH, KW, S, s, win, pixel_step, bias, out, head, c0, c1); return;
    case 2: block_avx2(2, KH, KW, S, s, win, pixel_step, bias, out, head, c0, c1); return;
    default: block_avx2(1, KH, KW, S, s, win, pixel_step, bias, out, head, c0, c1); return;
    }
}

/// A run of interior pixels, with unrolled bodies for 3-tap rows, whole 3×3 windows at
/// stride 2 and whole 5×5 windows at stride 1.
static inline __attribute__((always_inline)) void
interior_avx2(const int head, const anvil_depthwise_shape *s, int n, window win, ptrdiff_t pixel_step,
              const float *bias, float *out, int c0, int c1) {
    const int dense = s->dilation_width == 1;
    if (dense && win.columns == 3 && s->stride_width == 1) {
        blocks_avx2(0, 3, 1, head, s, n, win, pixel_step, bias, out, c0, c1);
    } else if (dense && win.columns == 3 && s->stride_width == 2) {
        // Whole windows unrolled: with a loop over the rows, the 18 input addresses a stride-2
        // block reads become 18 pointers rotated through registers and the stack every row. At
        // stride 1 the row loop stays (unrolling gains nothing clear there).
        if (win.rows == 3)
            blocks_avx2(3, 3, 2, head, s, n, win, pixel_step, bias, out, c0, c1);
        else
            blocks_avx2(0, 3, 2, head, s, n, win, pixel_step, bias, out, c0, c1);
    } else if (dense && win.columns == 5 && win.rows == 5 && s->stride_width == 1) {
        // 5×5 at stride 1 unrolled whole (EfficientNet, MobileNet v3), faster than the row loop.
        // At stride 2 the 22 input vectors of a block would spill, so the row loop stays.
        blocks_avx2(5, 5, 1, head, s, n, win, pixel_step, bias, out, c0, c1);
    } else {
        blocks_avx2(0, 0, 0, head, s, n, win, pixel_step, bias, out, c0, c1);
    }
}

/// `interior_avx2` with `head` a constant, so the aligned case carries no peeling code.
static void interior_aligned_avx2(const anvil_depthwise_shape *s, int n, window win, ptrdiff_t pixel_step,
                                  const float *bias, float *out, int c0, int c1) {
    interior_avx2(0, s, n, win, pixel_step, bias, out, c0, c1);
}

static void interior_peeled_avx2(const anvil_depthwise_shape *s, int n, window win, ptrdiff_t pixel_step,
                                 const float *bias, float *out, int c0, int c1) {
    interior_avx2(1, s, n, win, pixel_step, bias, out, c0, c1);
}

/// A border pixel: its own tap range, one pixel; `_peeled` with the aligning head.
static void border_aligned_avx2(const anvil_depthwise_shape *s, window win, const float *bias, float *out, int c0,
                               int c1) {
    block_avx2(1, 0, 0, 0, s, win, 0, bias, out, 0, c0, c1);
}

static void border_peeled_avx2(const anvil_depthwise_shape *s, window win, const float *bias, float *out, int c0,
                              int c1) {
    block_avx2(1, 0, 0, 0, s, win, 0, bias, out, 1, c0, c1);
}

void anvil_depthwise_rows_avx2(const anvil_depthwise_shape *s, const float *input, const float *weights,
                               const float *bias, float *output, int row_begin, int row_end) {
    if (s->multiplier != 1) {
        anvil_depthwise_rows_scalar(s, input, weights, bias, output, row_begin, row_end);
        return;
    }
    // When every pixel starts 16 bytes past a 32-byte boundary (channels a multiple of 8,
    // a 16-byte aligned buffer, as malloc gives), peel 4 channels to align the rest — of each
    // group, when windows too wide for L1 go 256 channels at a time (see depthwise_group_by_block).
    const int step = depthwise_group_by_block(s, PIXELS, 256);
    if (s->channels % 8 == 0 && s->channels >= 256 && (size_t)input % 32 == 16)
        depthwise_rows(s, input, weights, bias, output, row_begin, row_end, step, interior_peeled_avx2,
                       border_peeled_avx2);
    else
        depthwise_rows(s, input, weights, bias, output, row_begin, row_end, step, interior_aligned_avx2,
                       border_aligned_avx2);
}

#pragma clang attribute pop
#endif
