#include "CAnvilKernels.h"
#include "kernels_internal.h"
#include <stddef.h>

// Depthwise convolution, NHWC. Each output pixel is a per-channel weighted sum of its window,
// so channels are independent and contiguous: the AVX2 body vectorises across channels and
// keeps a block of up to PIXELS output pixels × 16 channels in registers while it walks the
// taps, so each weight vector loaded is reused by every pixel of the block and each input
// vector feeds its FMA straight from memory. Pixels whose window lies wholly inside the
// image ("interior") run without bounds checks; the few border pixels get their own tap
// ranges. Padding is never materialised.

enum { PIXELS = 4 };

/// Taps `[*lo, *hi)` of a `k`-tap window with dilation `d` whose first tap sits at `origin`
/// that land inside `[0, extent)`; an empty range has `*lo == *hi`.
static inline void tap_range(int origin, int extent, int k, int d, int *lo, int *hi) {
    int a = origin < 0 ? (-origin + d - 1) / d : 0;
    int last = extent - 1 - origin; // the largest in-bounds offset from the origin
    int b = last < 0 ? 0 : last / d + 1;
    if (b > k) b = k;
    if (a > b) a = b;
    *lo = a;
    *hi = b;
}

/// Output columns `[*lo, *hi)` whose whole window row lies inside the input.
static inline void interior_columns(const anvil_depthwise_shape *s, int *lo, int *hi) {
    int extent = (s->kernel_width - 1) * s->dilation_width + 1;
    int first = (s->pad_left + s->stride_width - 1) / s->stride_width;
    int room = s->input_width - extent + s->pad_left; // largest ox·stride that fits
    int end = room < 0 ? 0 : room / s->stride_width + 1;
    if (end > s->output_width) end = s->output_width;
    if (first > end) first = end;
    *lo = first;
    *hi = end;
}

/// The taps of one output pixel (or block of pixels sharing the same tap ranges): the input
/// at the first in-bounds tap, the matching weights, and how many taps remain in y and x.
typedef struct {
    const float *x;
    const float *w;
    int rows, columns;
} window;

static inline window make_window(const anvil_depthwise_shape *s, const float *image, const float *weights,
                                 int iy0, int ky_lo, int ky_hi, int ix0, int kx_lo, int kx_hi) {
    window win;
    win.rows = ky_hi - ky_lo;
    win.columns = kx_hi - kx_lo;
    if (win.rows <= 0 || win.columns <= 0) {
        // Entirely in the padding: the result is the bias alone; the pointers are never read.
        win.rows = win.columns = 0;
        win.x = image;
        win.w = weights;
        return win;
    }
    const ptrdiff_t outputs = (ptrdiff_t)s->channels * s->multiplier;
    ptrdiff_t iy = iy0 + (ptrdiff_t)ky_lo * s->dilation_height, ix = ix0 + (ptrdiff_t)kx_lo * s->dilation_width;
    win.x = image + (iy * s->input_width + ix) * s->channels;
    win.w = weights + ((ptrdiff_t)ky_lo * s->kernel_width + kx_lo) * outputs;
    return win;
}

// MARK: - Portable body (also every multiplier other than 1)

/// One output pixel, all channels: bias, taps of `win`, clamp.
static void pixel_portable(const anvil_depthwise_shape *s, window win, const float *restrict bias,
                           float *restrict out) {
    const int channels = s->channels, multiplier = s->multiplier;
    const int outputs = channels * multiplier;
    const ptrdiff_t row_step = (ptrdiff_t)s->dilation_height * s->input_width * channels;
    const ptrdiff_t tap_step = (ptrdiff_t)s->dilation_width * channels;
    const ptrdiff_t weight_row = (ptrdiff_t)s->kernel_width * outputs;
    for (int o = 0; o < outputs; o++) out[o] = bias ? bias[o] : 0.0f;
    for (int ky = 0; ky < win.rows; ky++) {
        for (int kx = 0; kx < win.columns; kx++) {
            const float *restrict x = win.x + ky * row_step + kx * tap_step;
            const float *restrict w = win.w + ky * weight_row + (ptrdiff_t)kx * outputs;
            if (multiplier == 1) {
                for (int c = 0; c < channels; c++) out[c] += x[c] * w[c];
            } else {
                for (int c = 0; c < channels; c++)
                    for (int j = 0; j < multiplier; j++) out[c * multiplier + j] += x[c] * w[c * multiplier + j];
            }
        }
    }
    for (int o = 0; o < outputs; o++) out[o] = anvil_clamp(out[o], s->clamp_min, s->clamp_max);
}

/// One output row, one pixel at a time.
static void row_portable(const anvil_depthwise_shape *s, const float *image, const float *weights,
                         const float *bias, float *out, int oy) {
    const int outputs = s->channels * s->multiplier;
    const int iy0 = oy * s->stride_height - s->pad_top;
    int ky_lo, ky_hi;
    tap_range(iy0, s->input_height, s->kernel_height, s->dilation_height, &ky_lo, &ky_hi);
    for (int ox = 0; ox < s->output_width; ox++) {
        const int ix0 = ox * s->stride_width - s->pad_left;
        int kx_lo, kx_hi;
        tap_range(ix0, s->input_width, s->kernel_width, s->dilation_width, &kx_lo, &kx_hi);
        window win = make_window(s, image, weights, iy0, ky_lo, ky_hi, ix0, kx_lo, kx_hi);
        pixel_portable(s, win, bias, out + (ptrdiff_t)ox * outputs);
    }
}

// MARK: - AVX2 + FMA body (multiplier 1)

#if ANVIL_X86
/// Lane masks for the last, partial vector of channels: `tail_masks + 8 - n` enables `n` lanes.
static const int tail_masks[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

ANVIL_AVX2 static inline __m256 clamp8(__m256 v, __m256 lo, __m256 hi) {
    // Operand order keeps NaN: max/min return their second operand when either is NaN.
    return _mm256_min_ps(hi, _mm256_max_ps(lo, v));
}

/// `P` output pixels `pixel_step` floats apart in the input, all sharing the taps of `win`,
/// every channel. `P` and `KW` (taps per window row; 0 = read `win.columns`) are constants
/// at each call site so the pixel and tap loops unroll and the accumulators stay in registers.
ANVIL_AVX2 static inline __attribute__((always_inline)) void
block_avx2(const int P, const int KW, const int S, const anvil_depthwise_shape *s, window win, ptrdiff_t pixel_step,
           const float *bias, float *out) {
    const int channels = s->channels;
    const int columns = KW ? KW : win.columns;
    const ptrdiff_t row_step = (ptrdiff_t)s->dilation_height * s->input_width * channels;
    const ptrdiff_t tap_step = S ? channels : (ptrdiff_t)s->dilation_width * channels;
    if (S) pixel_step = (ptrdiff_t)S * channels;
    const ptrdiff_t weight_row = (ptrdiff_t)s->kernel_width * channels;
    const __m256 lo = _mm256_set1_ps(s->clamp_min), hi = _mm256_set1_ps(s->clamp_max);
    int c = 0;
    for (; c + 16 <= channels; c += 16) {
        __m256 a0[PIXELS], a1[PIXELS];
        __m256 b0 = bias ? _mm256_loadu_ps(bias + c) : _mm256_setzero_ps();
        __m256 b1 = bias ? _mm256_loadu_ps(bias + c + 8) : _mm256_setzero_ps();
        for (int i = 0; i < P; i++) { a0[i] = b0; a1[i] = b1; }
        for (int ky = 0; ky < win.rows; ky++) {
            const float *xr = win.x + ky * row_step + c;
            const float *wr = win.w + ky * weight_row + c;
            for (int kx = 0; kx < columns; kx++) {
                const float *x = xr + kx * tap_step;
                __m256 w0 = _mm256_loadu_ps(wr + (ptrdiff_t)kx * channels);
                __m256 w1 = _mm256_loadu_ps(wr + (ptrdiff_t)kx * channels + 8);
                for (int i = 0; i < P; i++) {
                    a0[i] = _mm256_fmadd_ps(_mm256_loadu_ps(x + i * pixel_step), w0, a0[i]);
                    a1[i] = _mm256_fmadd_ps(_mm256_loadu_ps(x + i * pixel_step + 8), w1, a1[i]);
                }
            }
        }
        for (int i = 0; i < P; i++) {
            float *o = out + (ptrdiff_t)i * channels + c;
            _mm256_storeu_ps(o, clamp8(a0[i], lo, hi));
            _mm256_storeu_ps(o + 8, clamp8(a1[i], lo, hi));
        }
    }
    // The remaining 1-15 channels: one full vector, then a masked one.
    for (; c < channels; c += 8) {
        const int n = channels - c < 8 ? channels - c : 8;
        const __m256i mask = _mm256_loadu_si256((const __m256i *)(tail_masks + 8 - n));
        __m256 a[PIXELS];
        __m256 b = bias ? _mm256_maskload_ps(bias + c, mask) : _mm256_setzero_ps();
        for (int i = 0; i < P; i++) a[i] = b;
        for (int ky = 0; ky < win.rows; ky++) {
            const float *xr = win.x + ky * row_step + c;
            const float *wr = win.w + ky * weight_row + c;
            for (int kx = 0; kx < columns; kx++) {
                const float *x = xr + kx * tap_step;
                __m256 w = _mm256_maskload_ps(wr + (ptrdiff_t)kx * channels, mask);
                for (int i = 0; i < P; i++)
                    a[i] = _mm256_fmadd_ps(_mm256_maskload_ps(x + i * pixel_step, mask), w, a[i]);
            }
        }
        for (int i = 0; i < P; i++)
            _mm256_maskstore_ps(out + (ptrdiff_t)i * channels + c, mask, clamp8(a[i], lo, hi));
    }
}

/// Interior pixels: up to PIXELS at once, with a fully unrolled body for 3-tap rows.
ANVIL_AVX2 static void interior_avx2(const anvil_depthwise_shape *s, int n, window win, ptrdiff_t pixel_step,
                                     const float *bias, float *out) {
    if (win.columns == 3 && s->dilation_width == 1 && s->stride_width == 1) {
        switch (n) {
        case 4: block_avx2(4, 3, 1, s, win, pixel_step, bias, out); return;
        case 3: block_avx2(3, 3, 1, s, win, pixel_step, bias, out); return;
        case 2: block_avx2(2, 3, 1, s, win, pixel_step, bias, out); return;
        default: block_avx2(1, 3, 1, s, win, pixel_step, bias, out); return;
        }
    }
    if (win.columns == 3 && s->dilation_width == 1 && s->stride_width == 2) {
        switch (n) {
        case 4: block_avx2(4, 3, 2, s, win, pixel_step, bias, out); return;
        case 3: block_avx2(3, 3, 2, s, win, pixel_step, bias, out); return;
        case 2: block_avx2(2, 3, 2, s, win, pixel_step, bias, out); return;
        default: block_avx2(1, 3, 2, s, win, pixel_step, bias, out); return;
        }
    }
    switch (n) {
    case 4: block_avx2(4, 0, 0, s, win, pixel_step, bias, out); return;
    case 3: block_avx2(3, 0, 0, s, win, pixel_step, bias, out); return;
    case 2: block_avx2(2, 0, 0, s, win, pixel_step, bias, out); return;
    default: block_avx2(1, 0, 0, s, win, pixel_step, bias, out); return;
    }
}

/// A border pixel: its own tap range, one pixel.
ANVIL_AVX2 static void border_avx2(const anvil_depthwise_shape *s, window win, const float *bias, float *out) {
    block_avx2(1, 0, 0, s, win, 0, bias, out);
}

/// One output row (multiplier 1): border pixels singly, interior ones in blocks.
ANVIL_AVX2 static void row_avx2(const anvil_depthwise_shape *s, const float *image, const float *weights,
                                const float *bias, float *out, int oy, int interior_lo, int interior_hi) {
    const int channels = s->channels;
    const int iy0 = oy * s->stride_height - s->pad_top;
    int ky_lo, ky_hi;
    tap_range(iy0, s->input_height, s->kernel_height, s->dilation_height, &ky_lo, &ky_hi);
    const ptrdiff_t pixel_step = (ptrdiff_t)s->stride_width * channels;
    int ox = 0;
    while (ox < s->output_width) {
        const int ix0 = ox * s->stride_width - s->pad_left;
        float *o = out + (ptrdiff_t)ox * channels;
        if (ox >= interior_lo && ox < interior_hi) {
            int n = interior_hi - ox < PIXELS ? interior_hi - ox : PIXELS;
            window win = make_window(s, image, weights, iy0, ky_lo, ky_hi, ix0, 0, s->kernel_width);
            interior_avx2(s, n, win, pixel_step, bias, o);
            ox += n;
        } else {
            int kx_lo, kx_hi;
            tap_range(ix0, s->input_width, s->kernel_width, s->dilation_width, &kx_lo, &kx_hi);
            border_avx2(s, make_window(s, image, weights, iy0, ky_lo, ky_hi, ix0, kx_lo, kx_hi), bias, o);
            ox += 1;
        }
    }
}
#endif

void anvil_depthwise_rows(const anvil_depthwise_shape *s, const float *input, const float *weights,
                          const float *bias, float *output, int row_begin, int row_end) {
    const ptrdiff_t row_floats = (ptrdiff_t)s->output_width * s->channels * s->multiplier;
#if ANVIL_X86
    if (s->multiplier == 1 && anvil_kernels_uses_avx2()) {
        int lo, hi;
        interior_columns(s, &lo, &hi);
        for (int oy = row_begin; oy < row_end; oy++)
            row_avx2(s, input, weights, bias, output + oy * row_floats, oy, lo, hi);
        return;
    }
#endif
    for (int oy = row_begin; oy < row_end; oy++) row_portable(s, input, weights, bias, output + oy * row_floats, oy);
}
