#ifndef ANVIL_ELEMENTWISE_H
#define ANVIL_ELEMENTWISE_H

#include "anvil_isa.h"
#include "anvil_kernel_list.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The binary operations of `anvil_binary` (`out = a op b`).
typedef enum {
    ANVIL_BINARY_ADD = 0,      ///< a + b
    ANVIL_BINARY_SUBTRACT = 1, ///< a − b
    ANVIL_BINARY_MULTIPLY = 2, ///< a · b
    ANVIL_BINARY_DIVIDE = 3,   ///< a / b
    ANVIL_BINARY_MAXIMUM = 4,  ///< a > b ? a : b (b when either is NaN, as x86's maxps)
    ANVIL_BINARY_MINIMUM = 5,  ///< a < b ? a : b (b when either is NaN, as x86's minps)
    ANVIL_BINARY_POWER = 6,    ///< powf(a, b)
    ANVIL_BINARY_REMAINDER = 7, ///< a − b·⌊a / b⌋: fmodf(a, b), moved to the sign of b (NumPy's mod)
    ANVIL_BINARY_FMOD = 8,     ///< fmodf(a, b): the sign of a (C's fmod)
    ANVIL_BINARY_LESS = 9,     ///< a < b ? 1 : 0 (0 when either is NaN, as are the other comparisons)
    ANVIL_BINARY_LESS_OR_EQUAL = 10,    ///< a ≤ b ? 1 : 0
    ANVIL_BINARY_GREATER = 11,          ///< a > b ? 1 : 0
    ANVIL_BINARY_GREATER_OR_EQUAL = 12, ///< a ≥ b ? 1 : 0
    ANVIL_BINARY_EQUAL = 13,            ///< a = b ? 1 : 0
    ANVIL_BINARY_AND = 14,     ///< a ≠ 0 and b ≠ 0 ? 1 : 0 (masks)
    ANVIL_BINARY_OR = 15,      ///< a ≠ 0 or b ≠ 0 ? 1 : 0
    ANVIL_BINARY_XOR = 16,     ///< exactly one of a, b ≠ 0 ? 1 : 0
} anvil_binary_op;

/// How two operands broadcast to an output of `batch × height × width × channels` floats
/// (channels-last, contiguous). Each operand is addressed by its own strides per axis, in
/// floats; a broadcast axis has stride 0. The channel strides must be 0 or 1. Callers merge
/// axes first (a same-shape pair is one long `channels` axis; a per-channel gate over a map is
/// `width` = pixels with a column stride 0), so the inner loop runs over long contiguous spans.
typedef struct {
    long height, width, channels;                ///< The output's axes per image.
    long a_image, a_row, a_column, a_channel;    ///< Strides of operand a (a_channel 0 or 1).
    long b_image, b_row, b_column, b_channel;    ///< Strides of operand b (b_channel 0 or 1).
} anvil_binary_shape;

/// The entry points (see kernels/elementwise.inc).
#define ANVIL_KERNEL ANVIL_KERNEL_ENTRY
#include "../kernels/elementwise.inc"
#undef ANVIL_KERNEL

#ifdef __cplusplus
}
#endif

#endif
