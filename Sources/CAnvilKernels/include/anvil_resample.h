#ifndef ANVIL_RESAMPLE_H
#define ANVIL_RESAMPLE_H

// Separable resampling of NHWC images (Resize: nearest, linear, cubic, antialiased filters,
// crop-and-resize): every output pixel is a weighted sum of input pixels over precomputed taps
// per output row and per output column, vectorised across channels; a row or column marked
// outside the input holds a constant instead.

#include "anvil_isa.h"

#ifdef __cplusplus
extern "C" {
#endif

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
} anvil_resample_shape;

/// Output lines `[line_begin, line_end)` (line = image · output_height + row) of `input`
/// (`[images][H][W][C]`) resampled into `output` (`[images][OH][OW][C]`).
void anvil_resample_lines(anvil_isa isa, const anvil_resample_shape *shape, const float *input, float *output,
                          int line_begin, int line_end);

#ifdef __cplusplus
}
#endif

#endif
