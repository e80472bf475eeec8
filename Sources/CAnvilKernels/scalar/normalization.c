#include "../internal/normalization.h"

// Group / instance / layer normalisation, LRN and Lp pooling in plain C.

static void accumulate_scalar(double *sums, const float *x, int n) {
    for (int i = 0; i < n; i++) sums[i] += x[i];
}

static void accumulate_squares_scalar(double *sums, const float *x, const float *mean, int n) {
    for (int i = 0; i < n; i++) { const double d = (double)x[i] - mean[i]; sums[i] += d * d; }
}

static void scale_shift_scalar(float *y, const float *x, const float *scale, const float *shift, int n) {
    for (int i = 0; i < n; i++) y[i] = x[i] * scale[i] + shift[i];
}

static double sum_scalar(const float *x, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += x[i];
    return s;
}

static double sum_squares_scalar(const float *x, double mean, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += ((double)x[i] - mean) * ((double)x[i] - mean);
    return s;
}

static void normalize_scalar(float *y, const float *x, float mean, float inv, const float *gamma, const float *beta,
                             int n) {
    for (int i = 0; i < n; i++) y[i] = (x[i] - mean) * inv * (gamma ? gamma[i] : 1.0f) + (beta ? beta[i] : 0.0f);
}

static const anvil_norm_primitives scalar_primitives = {
    accumulate_scalar, accumulate_squares_scalar, scale_shift_scalar, sum_scalar, sum_squares_scalar, normalize_scalar,
};

void anvil_group_norm_coefficients_scalar(const float *image, int pixels, int channels, int groups, float epsilon,
                                          const float *gamma, const float *beta, float *scale, float *shift,
                                          float *work) {
    anvil_group_norm_coefficients_impl(image, pixels, channels, groups, epsilon, gamma, beta, scale, shift, work,
                                       &scalar_primitives);
}

void anvil_scale_shift_pixels_scalar(const float *input, const float *scale, const float *shift, float *output,
                                     int channels, long pixel_begin, long pixel_end) {
    anvil_scale_shift_pixels_impl(input, scale, shift, output, channels, pixel_begin, pixel_end, &scalar_primitives);
}

void anvil_layer_norm_pixels_scalar(const float *input, const float *gamma, const float *beta, float *output,
                                    int size, float epsilon, long run_begin, long run_end) {
    anvil_layer_norm_pixels_impl(input, gamma, beta, output, size, epsilon, run_begin, run_end,
                                 &scalar_primitives);
}

void anvil_lrn_pixels_scalar(const float *input, float *output, int channels, int size, float alpha, float beta,
                             float bias, long pixel_begin, long pixel_end) {
    int before, after;
    anvil_lrn_window(size, &before, &after);
    const float alpha_n = alpha / (float)size;
    for (long p = pixel_begin; p < pixel_end; p++) {
        const float *x = input + p * channels;
        float *y = output + p * channels;
        for (int c = 0; c < channels; c++) y[c] = anvil_lrn_channel(x, c, channels, before, after, alpha_n, beta, bias);
    }
}

void anvil_lp_pool_lines_scalar(const anvil_pool_shape *s, float p, const float *input, float *output, int line_begin,
                                int line_end) {
    anvil_lp_pool_lines_impl(s, p, input, output, line_begin, line_end, anvil_lp_pool_pixel_scalar);
}
