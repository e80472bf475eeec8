#ifndef ANVIL_PAD_H
#define ANVIL_PAD_H

// Padding of NHWC images on height, width and channels: a constant, the reflection (without
// repeating the edge, ONNX `reflect`) or the edge value (`edge`).

#include "anvil_isa.h"
#include "anvil_kernel_list.h"

#ifdef __cplusplus
extern "C" {
#endif

/// How `anvil_pad_lines` fills the border.
typedef enum { ANVIL_PAD_CONSTANT = 0, ANVIL_PAD_REFLECT = 1, ANVIL_PAD_EDGE = 2 } anvil_pad_mode;

/// One padding, for `anvil_pad_lines`. Output sizes are the input's plus both pads.
typedef struct {
    int input_height, input_width, channels;
    int pad_top, pad_left, pad_front;  ///< rows, columns and channels added before
    int output_height, output_width, output_channels;
    anvil_pad_mode mode;
    float value;                       ///< the constant, in constant mode
} anvil_pad_shape;

/// The entry points (see kernels/pad.inc).
#define ANVIL_KERNEL ANVIL_KERNEL_ENTRY
#include "../kernels/pad.inc"
#undef ANVIL_KERNEL

#ifdef __cplusplus
}
#endif

#endif
