#ifndef ANVIL_KERNELS_RESAMPLE_H
#define ANVIL_KERNELS_RESAMPLE_H

// The resampling loop every body shares. A row or column outside the input (crop-and-resize)
// is filled with the extrapolation value; a single tap of weight 1 on both axes (nearest
// neighbour) copies; otherwise each output pixel is zeroed and gets `weight · pixel` added per
// tap pair by the body's `axpy` (taps of weight 0, an antialiased filter's padding, are skipped).

#include "common.h"
#include <string.h>

typedef void anvil_resample_axpy(float *dst, const float *src, float weight, int n);

ANVIL_INLINE void anvil_resample_fill(float *dst, float value, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = value;
}

/// `out` (C values) = Σ over the column taps of output column `ox` of weight · `line[column]`.
ANVIL_INLINE void anvil_resample_columns(const anvil_resample_shape *s, const float *line, float *out, int ox,
                                         anvil_resample_axpy *axpy) {
    const int C = s->channels, CT = s->column_taps;
    if (CT == 1 && s->column_weight[ox] == 1.0f) {
        memcpy(out, line + (size_t)s->column_index[ox] * C, sizeof(float) * (size_t)C);
        return;
    }
    for (int c = 0; c < C; c++) out[c] = 0;
    for (int j = 0; j < CT; j++) {
        const float w = s->column_weight[ox * CT + j];
        if (w != 0.0f) axpy(out, line + (size_t)s->column_index[ox * CT + j] * C, w, C);
    }
}

/// The ROWS and COLUMNS stages (see `anvil_resample_stage`).
ANVIL_INLINE void anvil_resample_stage_impl(const anvil_resample_shape *s, const float *input, float *output,
                                            int line_begin, int line_end, anvil_resample_axpy *axpy) {
    const int C = s->channels, RT = s->row_taps, W = s->input_width;
    const size_t row_size = (size_t)W * C;
    for (int line = line_begin; line < line_end; line++) {
        const int image = line / s->output_height, oy = line - image * s->output_height;
        const int outside = s->row_outside && s->row_outside[oy];
        if (s->stage == ANVIL_RESAMPLE_ROWS) {
            if (outside) continue;
            const float *source = input + (size_t)image * s->input_height * row_size;
            float *out = output + (size_t)line * row_size;
            if (RT == 1 && s->row_weight[oy] == 1.0f) {
                memcpy(out, source + (size_t)s->row_index[oy] * row_size, sizeof(float) * row_size);
                continue;
            }
            for (size_t i = 0; i < row_size; i++) out[i] = 0;
            for (int i = 0; i < RT; i++) {
                const float wy = s->row_weight[oy * RT + i];
                if (wy != 0.0f) axpy(out, source + (size_t)s->row_index[oy * RT + i] * row_size, wy, (int)row_size);
            }
            continue;
        }
        const float *rows = input + (size_t)line * row_size;
        float *out = output + (size_t)line * s->output_width * C;
        if (outside) {
            anvil_resample_fill(out, s->extrapolation_value, (size_t)s->output_width * C);
            continue;
        }
        for (int ox = 0; ox < s->output_width; ox++, out += C) {
            if (s->column_outside && s->column_outside[ox]) anvil_resample_fill(out, s->extrapolation_value, (size_t)C);
            else anvil_resample_columns(s, rows, out, ox, axpy);
        }
    }
}

ANVIL_INLINE void anvil_resample_lines_impl(const anvil_resample_shape *s, const float *input, float *output,
                                            int line_begin, int line_end, anvil_resample_axpy *axpy) {
    if (s->stage != ANVIL_RESAMPLE_DIRECT) {
        anvil_resample_stage_impl(s, input, output, line_begin, line_end, axpy);
        return;
    }
    const int C = s->channels, RT = s->row_taps, CT = s->column_taps;
    const size_t image_size = (size_t)s->input_height * s->input_width * C;
    for (int line = line_begin; line < line_end; line++) {
        const int image = line / s->output_height, oy = line - image * s->output_height;
        const float *source = input + (size_t)image * image_size;
        float *out = output + (size_t)line * s->output_width * C;
        if (s->row_outside && s->row_outside[oy]) {
            anvil_resample_fill(out, s->extrapolation_value, (size_t)s->output_width * C);
            continue;
        }
        for (int ox = 0; ox < s->output_width; ox++, out += C) {
            if (s->column_outside && s->column_outside[ox]) {
                anvil_resample_fill(out, s->extrapolation_value, (size_t)C);
                continue;
            }
            if (RT == 1 && CT == 1 && s->row_weight[oy] == 1.0f && s->column_weight[ox] == 1.0f) {
                memcpy(out, source + ((size_t)s->row_index[oy] * s->input_width + s->column_index[ox]) * C,
                       sizeof(float) * (size_t)C);
                continue;
            }
            for (int c = 0; c < C; c++) out[c] = 0;
            for (int i = 0; i < RT; i++) {
                const float wy = s->row_weight[oy * RT + i];
                if (wy == 0.0f) continue;
                const float *row = source + (size_t)s->row_index[oy * RT + i] * s->input_width * C;
                for (int j = 0; j < CT; j++) {
                    const float w = wy * s->column_weight[ox * CT + j];
                    if (w == 0.0f) continue;
                    axpy(out, row + (size_t)s->column_index[ox * CT + j] * C, w, C);
                }
            }
        }
    }
}

#endif
