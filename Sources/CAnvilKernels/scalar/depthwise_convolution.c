#include "../internal/depthwise_convolution.h"

// Depthwise convolution in plain C, one output pixel at a time: the body for any CPU, and the
// vector bodies' body for channel multipliers other than 1.

/// One output pixel, all channels: bias, taps of `win`, clamp.
static void pixel_scalar(const anvil_depthwise_shape *s, window win, const float *restrict bias,
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
static void row_scalar(const anvil_depthwise_shape *s, const float *image, const float *weights,
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
        pixel_scalar(s, win, bias, out + (ptrdiff_t)ox * outputs);
    }
}

void anvil_depthwise_rows_scalar(const anvil_depthwise_shape *s, const float *input, const float *weights,
                                 const float *bias, float *output, int row_begin, int row_end) {
    const ptrdiff_t row_floats = (ptrdiff_t)s->output_width * s->channels * s->multiplier;
    for (int oy = row_begin; oy < row_end; oy++) row_scalar(s, input, weights, bias, output + oy * row_floats, oy);
}
