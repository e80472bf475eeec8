#ifndef ANVIL_KERNELS_DEPTHWISE_CONVOLUTION_H
#define ANVIL_KERNELS_DEPTHWISE_CONVOLUTION_H

// Depthwise convolution helpers shared by every body: which taps of a window fall inside the
// image, which output columns need no bounds checks, and where a window's taps start.

#include "common.h"

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

#endif
