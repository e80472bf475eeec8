#ifndef ANVIL_RESAMPLE_H
#define ANVIL_RESAMPLE_H

// Separable resampling of NHWC images (Resize: nearest, linear, cubic, antialiased filters,
// crop-and-resize): every output pixel is a weighted sum of input pixels over precomputed taps
// per output row and per output column, vectorised across channels; a row or column marked
// outside the input holds a constant instead.

#include "anvil_isa.h"
#include "anvil_kernel_list.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Which part of a resampling `anvil_resample_lines` computes. Separable filters with several
/// taps run in two stages (rows, then columns: `RT·W + OW·CT` multiply-adds per output line
/// instead of `OW·RT·CT`, and the rows stage runs over whole lines of `W·C` values).
typedef enum {
    /// Output pixels from input pixels over every (row tap, column tap) pair.
    ANVIL_RESAMPLE_DIRECT = 0,
    /// Output line (image, oy) = the row taps' weighted input rows, all `input_width` columns:
    /// `output` is `[images][output_height][input_width][C]`. Rows outside are not written.
    ANVIL_RESAMPLE_ROWS = 1,
    /// Output pixels from a ROWS result (`input` is `[images][output_height][input_width][C]`)
    /// over the column taps; rows and columns outside get the extrapolation value.
    ANVIL_RESAMPLE_COLUMNS = 2,
} anvil_resample_stage;

/// One resampling, for `anvil_resample_lines`. Output row `oy` reads input rows
/// `row_index[oy·row_taps + i]` with weights `row_weight[oy·row_taps + i]`; columns likewise.
typedef struct {
    int input_height, input_width, channels;
    int output_height, output_width;
    int row_taps, column_taps;         ///< 1 (nearest), 2 (linear), 4 (cubic), more (antialiased)
    const int *row_index;
    const float *row_weight;
    const int *column_index;
    const float *column_weight;
    /// Per output row / column, nonzero when its source lies outside the input (crop-and-resize):
    /// every output pixel on it is `extrapolation_value`. NULL: none is.
    const unsigned char *row_outside;
    const unsigned char *column_outside;
    float extrapolation_value;
    anvil_resample_stage stage;
} anvil_resample_shape;

/// The entry points (see kernels/resample.inc).
#define ANVIL_KERNEL ANVIL_KERNEL_ENTRY
#include "../kernels/resample.inc"
#undef ANVIL_KERNEL

#ifdef __cplusplus
}
#endif

#endif
