#ifndef ANVIL_KERNELS_POOLING_H
#define ANVIL_KERNELS_POOLING_H

// Pooling helpers shared by every body: for each output pixel, the window's valid cells (rows
// and columns clipped to the image once per pixel, not tested per cell) are folded into running
// maxima or sums. Max pooling skips NaN inputs (a window of NaNs gives -infinity), as Anvil's
// Swift pooling did; average pooling adds them like any value.

#include "common.h"
#include <math.h>

/// The clipped window of output pixel (oy, ox): cells [y0, y1) × [x0, x1) in tap units.
static inline void anvil_pool_window(const anvil_pool_shape *s, int oy, int ox, int *ky0, int *ky1, int *kx0, int *kx1) {
    int top = oy * s->stride_height - s->pad_top, left = ox * s->stride_width - s->pad_left;
    *ky0 = 0; *ky1 = s->kernel_height; *kx0 = 0; *kx1 = s->kernel_width;
    while (*ky0 < *ky1 && top + *ky0 * s->dilation_height < 0) (*ky0)++;
    while (*ky1 > *ky0 && top + (*ky1 - 1) * s->dilation_height >= s->input_height) (*ky1)--;
    while (*kx0 < *kx1 && left + *kx0 * s->dilation_width < 0) (*kx0)++;
    while (*kx1 > *kx0 && left + (*kx1 - 1) * s->dilation_width >= s->input_width) (*kx1)--;
}

/// Most cells a vector body gathers per window; larger windows take the scalar pixel.
enum { ANVIL_POOL_MAX_CELLS = 64 };

/// The address of window cell (ky, kx) of the output pixel whose window starts at input row
/// `top`, column `left` (cells inside the input only).
static inline const float *anvil_pool_cell(const anvil_pool_shape *s, const float *image, int top, int left, int ky,
                                           int kx) {
    return image + ((size_t)(top + ky * s->dilation_height) * s->input_width + (left + kx * s->dilation_width))
                       * s->channels;
}

/// The addresses of the valid cells of output pixel (oy, ox), row-major; returns how many,
/// or -1 (nothing written) when there are more than `ANVIL_POOL_MAX_CELLS`.
static inline int anvil_pool_cells(const anvil_pool_shape *s, const float *image, int oy, int ox,
                                   const float *cells[ANVIL_POOL_MAX_CELLS]) {
    int ky0, ky1, kx0, kx1;
    anvil_pool_window(s, oy, ox, &ky0, &ky1, &kx0, &kx1);
    int top = oy * s->stride_height - s->pad_top, left = ox * s->stride_width - s->pad_left;
    if ((ky1 - ky0) * (kx1 - kx0) > ANVIL_POOL_MAX_CELLS) return -1;
    int count = 0;
    for (int ky = ky0; ky < ky1; ky++)
        for (int kx = kx0; kx < kx1; kx++) cells[count++] = anvil_pool_cell(s, image, top, left, ky, kx);
    return count;
}

/// One output pixel of max pooling, all channels, in plain C: the scalar body, and the vector
/// bodies' fallback for windows of more than `ANVIL_POOL_MAX_CELLS` cells. (`d` is an average's;
/// unused.)
static void anvil_max_pixel_scalar(const anvil_pool_shape *s, anvil_pool_divisor d, const float *image, float *out,
                                   int oy, int ox) {
    (void)d;
    int ky0, ky1, kx0, kx1;
    anvil_pool_window(s, oy, ox, &ky0, &ky1, &kx0, &kx1);
    const int C = s->channels;
    int top = oy * s->stride_height - s->pad_top, left = ox * s->stride_width - s->pad_left;
    for (int c = 0; c < C; c++) out[c] = -INFINITY;
    for (int ky = ky0; ky < ky1; ky++) {
        for (int kx = kx0; kx < kx1; kx++) {
            const float *cell = anvil_pool_cell(s, image, top, left, ky, kx);
            for (int c = 0; c < C; c++) out[c] = cell[c] > out[c] ? cell[c] : out[c];
        }
    }
}

/// 1 / the divisor of output pixel (oy, ox)'s average, whose window has `valid` cells inside the
/// input (see `anvil_pool_divisor`).
static inline float anvil_pool_average_scale(const anvil_pool_shape *s, anvil_pool_divisor d, int oy, int ox,
                                             int valid) {
    int divisor = valid;
    if (d.counts_padding) {
        const int top = oy * s->stride_height - s->pad_top, left = ox * s->stride_width - s->pad_left;
        int rows = 0, columns = 0;
        for (int ky = 0; ky < s->kernel_height; ky++) {
            const int y = top + ky * s->dilation_height;
            rows += y >= -s->pad_top && y < s->input_height + d.pad_bottom;
        }
        for (int kx = 0; kx < s->kernel_width; kx++) {
            const int x = left + kx * s->dilation_width;
            columns += x >= -s->pad_left && x < s->input_width + d.pad_right;
        }
        divisor = rows * columns;
    }
    return 1.0f / (float)(divisor > 1 ? divisor : 1);
}

/// One output pixel of average pooling, all channels, in plain C: the scalar body, and the
/// vector bodies' fallback for windows of more than `ANVIL_POOL_MAX_CELLS` cells.
static void anvil_average_pixel_scalar(const anvil_pool_shape *s, anvil_pool_divisor d, const float *image, float *out,
                                       int oy, int ox) {
    int ky0, ky1, kx0, kx1;
    anvil_pool_window(s, oy, ox, &ky0, &ky1, &kx0, &kx1);
    const int C = s->channels;
    int top = oy * s->stride_height - s->pad_top, left = ox * s->stride_width - s->pad_left;
    for (int c = 0; c < C; c++) out[c] = 0.0f;
    for (int ky = ky0; ky < ky1; ky++) {
        for (int kx = kx0; kx < kx1; kx++) {
            const float *cell = anvil_pool_cell(s, image, top, left, ky, kx);
            for (int c = 0; c < C; c++) out[c] += cell[c];
        }
    }
    const float scale = anvil_pool_average_scale(s, d, oy, ox, (ky1 - ky0) * (kx1 - kx0));
    for (int c = 0; c < C; c++) out[c] *= scale;
}

/// A body's per-pixel function: output pixel (oy, ox) of `image`, all channels, into `out`. `d` is
/// an average's divisor (max pooling's pixels ignore it).
typedef void anvil_pool_pixel(const anvil_pool_shape *s, anvil_pool_divisor d, const float *image, float *out, int oy,
                              int ox);

/// Output lines `[line_begin, line_end)`, each pixel by `pixel` (a constant at each call site),
/// which is handed `d`.
ANVIL_INLINE void anvil_pool_lines(const anvil_pool_shape *s, anvil_pool_divisor d, const float *input, float *output,
                                   int line_begin, int line_end, anvil_pool_pixel *pixel) {
    const size_t image_size = (size_t)s->input_height * s->input_width * s->channels;
    for (int line = line_begin; line < line_end; line++) {
        int image = line / s->output_height, oy = line - image * s->output_height;
        const float *source = input + (size_t)image * image_size;
        float *out = output + (size_t)line * s->output_width * s->channels;
        for (int ox = 0; ox < s->output_width; ox++, out += s->channels) pixel(s, d, source, out, oy, ox);
    }
}

/// What max pooling hands `anvil_pool_lines` for the divisor it does not use.
#define ANVIL_NO_DIVISOR ((anvil_pool_divisor){ 0, 0, 0 })

#endif
