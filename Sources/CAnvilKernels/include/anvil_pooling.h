#ifndef ANVIL_POOLING_H
#define ANVIL_POOLING_H

// Max and average pooling over NHWC windows, vectorised across channels with each output
// pixel's running maxima or sums in registers (32 channels at a time).

#include <stddef.h>
#include "anvil_isa.h"
#include "anvil_kernel_list.h"

#ifdef __cplusplus
extern "C" {
#endif

/// A max pooling window over one image, described for `anvil_max_pool_lines`.
typedef struct {
    int input_height, input_width, channels;
    int kernel_height, kernel_width;
    int stride_height, stride_width;
    int dilation_height, dilation_width;
    int pad_top, pad_left;
    int output_height, output_width;
} anvil_pool_shape;

/// How an average pooling window's sum is divided: by its cells inside the input, or with
/// `counts_padding` (ONNX's `count_include_pad`) by its cells inside the padded input, whose
/// bottom and right pads are `pad_bottom` and `pad_right` (cells past them, which only ceil mode
/// reaches, never count). The divisor is at least 1: a window wholly in the padding gives 0.
typedef struct {
    int counts_padding;
    int pad_bottom, pad_right;
} anvil_pool_divisor;

/// The entry points (see kernels/pooling.inc).
#define ANVIL_KERNEL ANVIL_KERNEL_ENTRY
#include "../kernels/pooling.inc"
#undef ANVIL_KERNEL

#ifdef __cplusplus
}
#endif

#endif
