#ifndef ANVIL_DEPTHWISE_CONVOLUTION_H
#define ANVIL_DEPTHWISE_CONVOLUTION_H

#include <stddef.h>
#include "anvil_isa.h"
#include "anvil_kernel_list.h"

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

/// The entry points (see kernels/depthwise_convolution.inc).
#define ANVIL_KERNEL ANVIL_KERNEL_ENTRY
#include "../kernels/depthwise_convolution.inc"
#undef ANVIL_KERNEL

#ifdef __cplusplus
}
#endif

#endif
