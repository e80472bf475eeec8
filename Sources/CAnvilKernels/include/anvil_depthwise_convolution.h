#ifndef ANVIL_DEPTHWISE_CONVOLUTION_H
#define ANVIL_DEPTHWISE_CONVOLUTION_H

#include <stddef.h>
#include "anvil_isa.h"

#ifdef __cplusplus
extern "C" {
#endif

/// A depthwise convolution over one NHWC image, described for `anvil_depthwise_rows`.
/// Output channel `c·multiplier + j` reads input channel `c`. Padding is implicit: taps
/// that fall outside the input are skipped, so the input is never copied.
typedef struct {
    int input_height, input_width;
    int channels;        ///< Input channels.
    int multiplier;      ///< Output channels per input channel (outputs = channels · multiplier).
    int kernel_height, kernel_width;
    int stride_height, stride_width;
    int dilation_height, dilation_width;
    int pad_top, pad_left; ///< Leading padding; trailing padding follows from the output size.
    int output_height, output_width;
    float clamp_min;     ///< Lower bound applied to every result (-INFINITY for none).
    float clamp_max;     ///< Upper bound applied to every result (INFINITY for none).
} anvil_depthwise_shape;

/// Computes output rows `[row_begin, row_end)` of one image: `input[h][w][channels]`,
/// weights `[kh][kw][channels·multiplier]`, optional `bias[channels·multiplier]`, results
/// clamped into `output[output_height][output_width][channels·multiplier]`. NaN propagates
/// through the clamp. `isa` picks the body; it must be one `anvil_isa_supported` accepts (the
/// process aborts otherwise).
void anvil_depthwise_rows(anvil_isa isa, const anvil_depthwise_shape *shape, const float *input, const float *weights,
                          const float *bias, float *output, int row_begin, int row_end);

#ifdef __cplusplus
}
#endif

#endif
