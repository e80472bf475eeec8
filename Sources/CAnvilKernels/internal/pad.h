#ifndef ANVIL_KERNELS_PAD_H
#define ANVIL_KERNELS_PAD_H

// The padding loop every body shares: each output coordinate maps to an input coordinate (or
// to the constant); the channels inside the input are copied in one run. `fill` is the body's
// `dst[i] = value` over `n` floats.

#include "common.h"
#include <string.h>

typedef void anvil_pad_fill(float *dst, float value, int n);

/// The input coordinate of padded coordinate `i` (already shifted by the pad before), or -1
/// for the constant. Reflection needs pads below the size (checked by the layer).
static inline int anvil_pad_source(int i, int size, anvil_pad_mode mode) {
    if (i >= 0 && i < size) return i;
    switch (mode) {
    case ANVIL_PAD_REFLECT: return i < 0 ? -i : 2 * (size - 1) - i;
    case ANVIL_PAD_EDGE: return i < 0 ? 0 : size - 1;
    default: return -1;
    }
}

ANVIL_INLINE void anvil_pad_lines_impl(const anvil_pad_shape *s, const float *input, float *output, int line_begin,
                                       int line_end, anvil_pad_fill *fill) {
    const int C = s->channels, OC = s->output_channels;
    const int back = OC - C - s->pad_front;
    const size_t image_size = (size_t)s->input_height * s->input_width * C;
    for (int line = line_begin; line < line_end; line++) {
        const int image = line / s->output_height, oy = line - image * s->output_height;
        float *out = output + (size_t)line * s->output_width * OC;
        const int iy = anvil_pad_source(oy - s->pad_top, s->input_height, s->mode);
        if (iy < 0) { fill(out, s->value, s->output_width * OC); continue; }
        const float *row = input + (size_t)image * image_size + (size_t)iy * s->input_width * C;
        for (int ox = 0; ox < s->output_width; ox++, out += OC) {
            const int ix = anvil_pad_source(ox - s->pad_left, s->input_width, s->mode);
            if (ix < 0) { fill(out, s->value, OC); continue; }
            const float *pixel = row + (size_t)ix * C;
            memcpy(out + s->pad_front, pixel, sizeof(float) * (size_t)C);
            if (s->mode == ANVIL_PAD_CONSTANT) {
                if (s->pad_front) fill(out, s->value, s->pad_front);
                if (back) fill(out + s->pad_front + C, s->value, back);
            } else {
                for (int c = 0; c < s->pad_front; c++) out[c] = pixel[anvil_pad_source(c - s->pad_front, C, s->mode)];
                for (int c = s->pad_front + C; c < OC; c++) out[c] = pixel[anvil_pad_source(c - s->pad_front, C, s->mode)];
            }
        }
    }
}

#endif
