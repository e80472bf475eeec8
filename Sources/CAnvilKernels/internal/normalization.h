#ifndef ANVIL_KERNELS_NORMALIZATION_H
#define ANVIL_KERNELS_NORMALIZATION_H

// The loops every normalisation body shares; each body supplies its vector primitives.

#include "common.h"
#include "pooling.h"
#include <math.h>
#include <stdint.h>

/// A body's vector primitives over runs of `n` floats.
typedef struct {
    /// `sums[i] += x[i]` (double accumulators).
    void (*accumulate)(double *sums, const float *x, int n);
    /// `sums[i] += (x[i] − mean[i])²` (double accumulators, float means).
    void (*accumulate_squares)(double *sums, const float *x, const float *mean, int n);
    /// `y[i] = x[i] · scale[i] + shift[i]`.
    void (*scale_shift)(float *y, const float *x, const float *scale, const float *shift, int n);
    /// Σ x[i] and Σ (x[i] − mean)², accumulated in double, for one run of layer normalisation
    /// (a pixel's channels, or a row / an image when it normalises the last 2 or 3 axes).
    double (*sum)(const float *x, int n);
    double (*sum_squares)(const float *x, double mean, int n);
    /// `y[i] = (x[i] − mean) · inv · gamma[i] + beta[i]` (gamma, beta may be NULL).
    void (*normalize)(float *y, const float *x, float mean, float inv, const float *gamma, const float *beta, int n);
} anvil_norm_primitives;

ANVIL_INLINE void anvil_group_norm_coefficients_impl(const float *image, int pixels, int channels, int groups,
                                                     float epsilon, const float *gamma, const float *beta,
                                                     float *scale, float *shift, float *work,
                                                     const anvil_norm_primitives *v) {
    double *sums = (double *)(((uintptr_t)work + 7) & ~(uintptr_t)7);
    for (int c = 0; c < channels; c++) sums[c] = 0;
    for (long p = 0; p < pixels; p++) v->accumulate(sums, image + p * channels, channels);
    const int per_group = channels / groups;
    const double count = (double)pixels * per_group;
    // The group means, per channel (in `scale` for now).
    for (int g = 0; g < groups; g++) {
        double total = 0;
        for (int c = g * per_group; c < (g + 1) * per_group; c++) total += sums[c];
        for (int c = g * per_group; c < (g + 1) * per_group; c++) scale[c] = (float)(total / count);
    }
    for (int c = 0; c < channels; c++) sums[c] = 0;
    for (long p = 0; p < pixels; p++) v->accumulate_squares(sums, image + p * channels, scale, channels);
    for (int g = 0; g < groups; g++) {
        double total = 0;
        for (int c = g * per_group; c < (g + 1) * per_group; c++) total += sums[c];
        const double inv = 1.0 / sqrt(total / count + (double)epsilon);
        for (int c = g * per_group; c < (g + 1) * per_group; c++) {
            const double a = inv * (gamma ? gamma[c] : 1.0f);
            shift[c] = (float)((beta ? beta[c] : 0.0f) - scale[c] * a);
            scale[c] = (float)a;
        }
    }
}

ANVIL_INLINE void anvil_scale_shift_pixels_impl(const float *input, const float *scale, const float *shift,
                                                float *output, int channels, long pixel_begin, long pixel_end,
                                                const anvil_norm_primitives *v) {
    for (long p = pixel_begin; p < pixel_end; p++)
        v->scale_shift(output + p * channels, input + p * channels, scale, shift, channels);
}

/// Runs `[run_begin, run_end)` of `size` contiguous values each: every run normalised with its
/// own mean and variance (both from double sums), then `· gamma[i] + beta[i]` per value of the run.
ANVIL_INLINE void anvil_layer_norm_pixels_impl(const float *input, const float *gamma, const float *beta,
                                               float *output, int size, float epsilon, long run_begin,
                                               long run_end, const anvil_norm_primitives *v) {
    for (long p = run_begin; p < run_end; p++) {
        const float *x = input + p * size;
        const double mean = v->sum(x, size) / (double)size;
        const double variance = v->sum_squares(x, mean, size) / (double)size;
        v->normalize(output + p * size, x, (float)mean, (float)(1.0 / sqrt(variance + (double)epsilon)), gamma, beta,
                     size);
    }
}

/// The LRN window of channel c: [c − before, c + after] clipped to the channels.
static inline void anvil_lrn_window(int size, int *before, int *after) {
    *before = (size - 1) / 2;
    *after = size - 1 - *before;
}

/// One channel of LRN in plain C (the vector bodies' edges and general powers).
static inline float anvil_lrn_channel(const float *x, int c, int channels, int before, int after, float alpha_n,
                                      float beta, float bias) {
    const int lo = c - before < 0 ? 0 : c - before, hi = c + after >= channels ? channels - 1 : c + after;
    float s = 0;
    for (int d = lo; d <= hi; d++) s += x[d] * x[d];
    return x[c] / powf(bias + alpha_n * s, beta);
}

/// The valid cells of an Lp pooling window and the pixel's output in plain C.
static inline void anvil_lp_pool_pixel_scalar(const anvil_pool_shape *s, float p, const float *image, float *out,
                                              int oy, int ox) {
    int ky0, ky1, kx0, kx1;
    anvil_pool_window(s, oy, ox, &ky0, &ky1, &kx0, &kx1);
    const int C = s->channels;
    const int top = oy * s->stride_height - s->pad_top, left = ox * s->stride_width - s->pad_left;
    for (int c = 0; c < C; c++) out[c] = 0;
    for (int ky = ky0; ky < ky1; ky++) {
        for (int kx = kx0; kx < kx1; kx++) {
            const float *cell = image + ((size_t)(top + ky * s->dilation_height) * s->input_width
                                         + (left + kx * s->dilation_width)) * C;
            if (p == 2.0f) { for (int c = 0; c < C; c++) out[c] += cell[c] * cell[c]; }
            else if (p == 1.0f) { for (int c = 0; c < C; c++) out[c] += fabsf(cell[c]); }
            else { for (int c = 0; c < C; c++) out[c] += powf(fabsf(cell[c]), p); }
        }
    }
    if (p == 2.0f) { for (int c = 0; c < C; c++) out[c] = sqrtf(out[c]); }
    else if (p != 1.0f) { for (int c = 0; c < C; c++) out[c] = powf(out[c], 1.0f / p); }
}

/// One output pixel of Lp pooling: a body's `pixel` (its image, output row and column).
typedef void (*anvil_lp_pool_pixel_fn)(const anvil_pool_shape *s, float p, const float *image, float *out, int oy,
                                       int ox);

/// Output lines [line_begin, line_end) of Lp pooling (over the whole batch), one body's `pixel` at a time.
ANVIL_INLINE void anvil_lp_pool_lines_impl(const anvil_pool_shape *s, float p, const float *input, float *output,
                                           int line_begin, int line_end, anvil_lp_pool_pixel_fn pixel) {
    const size_t image_size = (size_t)s->input_height * s->input_width * s->channels;
    for (int line = line_begin; line < line_end; line++) {
        const int image = line / s->output_height, oy = line - image * s->output_height;
        float *out = output + (size_t)line * s->output_width * s->channels;
        for (int ox = 0; ox < s->output_width; ox++, out += s->channels)
            pixel(s, p, input + (size_t)image * image_size, out, oy, ox);
    }
}

#endif
