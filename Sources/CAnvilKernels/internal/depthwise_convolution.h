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

/// Input rows the next output row reads and this one does not (at most `AHEAD_ROWS`, the
/// stride-2 case): a body fetches them while it computes the current row, a slice per block of
/// pixels, so that a batch larger than the caches does not wait on memory at the start of each
/// row (MobileNet v1 at batch 8: 0.87× the time).
enum { AHEAD_ROWS = 2 };

typedef struct {
    const char *rows[AHEAD_ROWS];
    int count;
    ptrdiff_t bytes;     ///< Of one input row.
    ptrdiff_t per_pixel; ///< Bytes of each row to fetch per output pixel, rounded up so the last pixel reaches the row's end.
} row_prefetch;

static inline row_prefetch next_rows(const anvil_depthwise_shape *s, const float *image, int oy) {
    const ptrdiff_t floats = (ptrdiff_t)s->input_width * s->channels;
    const ptrdiff_t bytes = floats * (ptrdiff_t)sizeof(float);
    row_prefetch p = {{0, 0}, 0, bytes, (bytes + s->output_width - 1) / s->output_width};
    if (oy + 1 >= s->output_height) return p;
    const int newest = (oy + 1) * s->stride_height - s->pad_top + (s->kernel_height - 1) * s->dilation_height;
    const int fresh = s->stride_height < s->kernel_height ? s->stride_height : s->kernel_height;
    for (int j = 0; j < fresh && j < AHEAD_ROWS; j++) {
        const int iy = newest - j * s->dilation_height;
        if (iy >= 0 && iy < s->input_height) p.rows[p.count++] = (const char *)(image + iy * floats);
    }
    return p;
}

/// Prefetches the slice of `p`'s rows that belongs to output pixels `[first, end)`, a cache line
/// at a time.
static inline void prefetch_pixels(const row_prefetch *p, int first, int end) {
    const ptrdiff_t to = end * p->per_pixel < p->bytes ? end * p->per_pixel : p->bytes;
    for (int r = 0; r < p->count; r++)
        for (ptrdiff_t b = first * p->per_pixel; b < to; b += 64) __builtin_prefetch(p->rows[r] + b, 0, 3);
}

#endif
