#ifndef ANVIL_KERNELS_DEPTHWISE_CONVOLUTION_H
#define ANVIL_KERNELS_DEPTHWISE_CONVOLUTION_H

// Depthwise convolution helpers shared by every body: which taps of a window fall inside the
// image, which output columns need no bounds checks, and where a window's taps start.

#include "common.h"

/// Output pixels per interior block: the AVX2 and scalar bodies' (16 registers), and the AVX-512
/// body's (32 registers).
enum { PIXELS = 4, WIDE_PIXELS = 8 };

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
/// stride-2 case): a body fetches them while it computes the current row, so that a batch
/// larger than the caches does not wait on memory at the start of each row. Only when a pass
/// takes all channels: fetching a group's slice of each pixel costs more than it saves.
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

/// Strides (in floats) of a register block's walk over its taps.
typedef struct {
    ptrdiff_t channels;   ///< Between neighbouring pixels' channel 0, and between taps' weights.
    ptrdiff_t pixel;      ///< Between the block's pixels in the input.
    ptrdiff_t tap;        ///< Between taps of a window row in the input.
    ptrdiff_t row;        ///< Between window rows in the input.
    ptrdiff_t weight_row; ///< Between window rows in the weights.
    int columns;          ///< Taps per window row.
} walk;

/// The walk of a block of pixels `pixel_step` floats apart sharing `win`'s taps (multiplier 1).
/// `KW` (taps per window row) and `S` (the stride along x with dilation 1) are the body's
/// constants, 0 when read from `win` and the shape.
static inline __attribute__((always_inline)) walk
make_walk(const anvil_depthwise_shape *s, window win, ptrdiff_t pixel_step, const int KW, const int S) {
    const int channels = s->channels;
    walk k;
    k.channels = channels;
    k.columns = KW ? KW : win.columns;
    k.row = (ptrdiff_t)s->dilation_height * s->input_width * channels;
    k.tap = S ? channels : (ptrdiff_t)s->dilation_width * channels;
    k.pixel = S ? (ptrdiff_t)S * channels : pixel_step;
    k.weight_row = (ptrdiff_t)s->kernel_width * channels;
    return k;
}

/// A body's `n` interior output pixels (a row's run of them, which the body takes in blocks of its
/// size), `pixel_step` floats apart in the input, all
/// sharing the taps of `win`, channels `[c0, c1)`.
typedef void depthwise_interior_fn(const anvil_depthwise_shape *s, int n, window win, ptrdiff_t pixel_step,
                                   const float *bias, float *out, int c0, int c1);
/// A body's one border output pixel, whose own tap range `win` holds, channels `[c0, c1)`.
typedef void depthwise_border_fn(const anvil_depthwise_shape *s, window win, const float *bias, float *out, int c0,
                                 int c1);

/// Bytes of input a pass keeps in L1 (see the two rules below): about half the 32-48 KB L1 data
/// caches of the target CPUs.
enum { GROUP_FOOTPRINT = 24 * 1024 };

/// Channels per pass of `depthwise_rows` by the window of one block of `block` pixels: all of
/// them while the block's window (its input rows × the columns its pixels' taps span × the
/// channels) fits `GROUP_FOOTPRINT`, else `group`. Walked whole, a block of 14 × 14 × 672 reads 3
/// rows × 6 pixels × 672 channels = 48 KB, and neither the next block (2 of its 6 columns) nor
/// the next row (2 of its 3 rows) would find its inputs in L1.
static inline int depthwise_group_by_block(const anvil_depthwise_shape *s, int block, int group) {
    const long columns = (long)(block - 1) * s->stride_width + (long)(s->kernel_width - 1) * s->dilation_width + 1;
    const long bytes = (long)s->kernel_height * columns * s->channels * (long)sizeof(float);
    return bytes <= GROUP_FOOTPRINT || s->channels <= group ? s->channels : group;
}

/// Channels per pass of `depthwise_rows` by the window rows of a whole output row: all of them
/// while `kernel_height` whole input rows fit `GROUP_FOOTPRINT`, else as many multiples of `unit`
/// (the body's widest strip) as fit, at least one. Within a pass the next output row then finds
/// all its rows but the fresh ones in L1. The AVX-512 body's blocks of 8 pixels take this rule
/// (under the block rule, 56 × 56 × 144 reads three rows of 32 KB from L2 for every output row);
/// the AVX2 body's blocks of 4 do better with the block rule.
static inline int depthwise_group_by_rows(const anvil_depthwise_shape *s, int unit) {
    const long channel_rows = (long)s->kernel_height * s->input_width * (long)sizeof(float);
    if (channel_rows * s->channels <= GROUP_FOOTPRINT || s->channels <= unit) return s->channels;
    const long group = GROUP_FOOTPRINT / channel_rows / unit * unit;
    return group < unit ? unit : (int)group;
}

/// Bytes of input (all channels) one band of output rows reads, when a pass takes a group of
/// channels (see `depthwise_rows`): half the smallest L2 of the target CPUs (Zen 3's 512 KB).
enum { BAND_FOOTPRINT = 256 * 1024 };

/// Output rows per band of a grouped walk: as many as read at most `BAND_FOOTPRINT` of input rows,
/// at least one.
static inline int depthwise_band_rows(const anvil_depthwise_shape *s) {
    const long row_bytes = (long)s->input_width * s->channels * (long)sizeof(float);
    const long window_rows = (long)(s->kernel_height - 1) * s->dilation_height + 1;
    const long rows = BAND_FOOTPRINT / (row_bytes > 0 ? row_bytes : 1);
    const long band = rows < window_rows ? 1 : (rows - window_rows) / s->stride_height + 1;
    return band > 1 << 20 ? 1 << 20 : (int)band;
}

/// Output rows `[row_begin, row_end)` of one image with multiplier 1, the walk every vector body
/// shares: border pixels singly with their own tap ranges, each row's interior ones in one call
/// (a call per block of pixels costs more than the walk saves); a group
/// of `step` channels at a time (the body's choice: see the two rules above), or all channels at
/// once, fetching the input rows the next output row reads. Groups go over bands of rows
/// (`depthwise_band_rows`), every group over one band before the next band: over all the rows,
/// each group would read an image larger than the L2 from the L3 again (112 × 112 × 96 at stride
/// 2, in three groups, would read its 4.8 MB input three times). The body's `interior` and
/// `border` compute.
static inline __attribute__((always_inline)) void
depthwise_rows(const anvil_depthwise_shape *s, const float *image, const float *weights, const float *bias,
               float *output, int row_begin, int row_end, int step, depthwise_interior_fn *interior,
               depthwise_border_fn *border) {
    const int channels = s->channels;
    const ptrdiff_t row_floats = (ptrdiff_t)s->output_width * channels;
    const ptrdiff_t pixel_step = (ptrdiff_t)s->stride_width * channels;
    int lo, hi;
    interior_columns(s, &lo, &hi);
    const int band = step < channels ? depthwise_band_rows(s) : row_end - row_begin;
    for (int band_begin = row_begin; band_begin < row_end; band_begin += band) {
        const int band_end = row_end - band_begin < band ? row_end : band_begin + band;
        for (int c0 = 0; c0 < channels; c0 += step) {
            const int c1 = channels - c0 < step ? channels : c0 + step;
            for (int oy = band_begin; oy < band_end; oy++) {
                float *out = output + oy * row_floats;
                const int iy0 = oy * s->stride_height - s->pad_top;
                int ky_lo, ky_hi;
                tap_range(iy0, s->input_height, s->kernel_height, s->dilation_height, &ky_lo, &ky_hi);
                const row_prefetch ahead = step < channels ? (row_prefetch){ { 0, 0 }, 0, 0, 0 } : next_rows(s, image, oy);
                int ox = 0;
                while (ox < s->output_width) {
                    const int ix0 = ox * s->stride_width - s->pad_left;
                    float *o = out + (ptrdiff_t)ox * channels;
                    if (ox >= lo && ox < hi) {
                        prefetch_pixels(&ahead, ox, hi);
                        interior(s, hi - ox, make_window(s, image, weights, iy0, ky_lo, ky_hi, ix0, 0, s->kernel_width),
                                 pixel_step, bias, o, c0, c1);
                        ox = hi;
                    } else {
                        int kx_lo, kx_hi;
                        tap_range(ix0, s->input_width, s->kernel_width, s->dilation_width, &kx_lo, &kx_hi);
                        prefetch_pixels(&ahead, ox, ox + 1);
                        border(s, make_window(s, image, weights, iy0, ky_lo, ky_hi, ix0, kx_lo, kx_hi), bias, o, c0, c1);
                        ox += 1;
                    }
                }
            }
        }
    }
}

#endif
