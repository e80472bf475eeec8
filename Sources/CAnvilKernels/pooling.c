#include "CAnvilKernels.h"
#include "kernels_internal.h"
#include <math.h>

// Max pooling: for each output pixel, the window's valid cells (rows and columns clipped
// to the image once per pixel, not tested per cell) are folded into running maxima. NaN
// inputs are skipped (a window of NaNs gives -infinity), as Anvil's Swift pooling did.

/// The clipped window of output pixel (oy, ox): cells [y0, y1) × [x0, x1) in tap units.
static inline void window(const anvil_pool_shape *s, int oy, int ox, int *ky0, int *ky1, int *kx0, int *kx1) {
    int top = oy * s->stride_height - s->pad_top, left = ox * s->stride_width - s->pad_left;
    *ky0 = 0; *ky1 = s->kernel_height; *kx0 = 0; *kx1 = s->kernel_width;
    while (*ky0 < *ky1 && top + *ky0 * s->dilation_height < 0) (*ky0)++;
    while (*ky1 > *ky0 && top + (*ky1 - 1) * s->dilation_height >= s->input_height) (*ky1)--;
    while (*kx0 < *kx1 && left + *kx0 * s->dilation_width < 0) (*kx0)++;
    while (*kx1 > *kx0 && left + (*kx1 - 1) * s->dilation_width >= s->input_width) (*kx1)--;
}

static void pixel_portable(const anvil_pool_shape *s, const float *image, float *out, int oy, int ox) {
    int ky0, ky1, kx0, kx1;
    window(s, oy, ox, &ky0, &ky1, &kx0, &kx1);
    const int C = s->channels;
    int top = oy * s->stride_height - s->pad_top, left = ox * s->stride_width - s->pad_left;
    for (int c = 0; c < C; c++) out[c] = -INFINITY;
    for (int ky = ky0; ky < ky1; ky++) {
        for (int kx = kx0; kx < kx1; kx++) {
            const float *cell = image + ((size_t)(top + ky * s->dilation_height) * s->input_width
                                         + (left + kx * s->dilation_width)) * C;
            for (int c = 0; c < C; c++) out[c] = cell[c] > out[c] ? cell[c] : out[c];
        }
    }
}

#if ANVIL_X86
ANVIL_AVX2 static void pixel_avx2(const anvil_pool_shape *s, const float *image, float *out, int oy, int ox) {
    int ky0, ky1, kx0, kx1;
    window(s, oy, ox, &ky0, &ky1, &kx0, &kx1);
    const int C = s->channels;
    const float *cells[64];
    int count = 0;
    int top = oy * s->stride_height - s->pad_top, left = ox * s->stride_width - s->pad_left;
    if ((ky1 - ky0) * (kx1 - kx0) > 64) { pixel_portable(s, image, out, oy, ox); return; }
    for (int ky = ky0; ky < ky1; ky++)
        for (int kx = kx0; kx < kx1; kx++)
            cells[count++] = image + ((size_t)(top + ky * s->dilation_height) * s->input_width
                                      + (left + kx * s->dilation_width)) * C;
    int c = 0;
    const __m256 lowest = _mm256_set1_ps(-INFINITY);
    for (; c + 32 <= C; c += 32) {
        __m256 m0 = lowest, m1 = lowest, m2 = lowest, m3 = lowest;
        for (int i = 0; i < count; i++) {
            // maxps returns its second operand when either is NaN: a NaN cell is skipped, as
            // in the portable body (and as Anvil's pooling always has).
            m0 = _mm256_max_ps(_mm256_loadu_ps(cells[i] + c), m0);
            m1 = _mm256_max_ps(_mm256_loadu_ps(cells[i] + c + 8), m1);
            m2 = _mm256_max_ps(_mm256_loadu_ps(cells[i] + c + 16), m2);
            m3 = _mm256_max_ps(_mm256_loadu_ps(cells[i] + c + 24), m3);
        }
        _mm256_storeu_ps(out + c, m0); _mm256_storeu_ps(out + c + 8, m1);
        _mm256_storeu_ps(out + c + 16, m2); _mm256_storeu_ps(out + c + 24, m3);
    }
    for (; c + 8 <= C; c += 8) {
        __m256 m = lowest;
        for (int i = 0; i < count; i++) m = _mm256_max_ps(_mm256_loadu_ps(cells[i] + c), m);
        _mm256_storeu_ps(out + c, m);
    }
    for (; c < C; c++) {
        float m = -INFINITY;
        for (int i = 0; i < count; i++) m = cells[i][c] > m ? cells[i][c] : m;
        out[c] = m;
    }
}
#endif

void anvil_max_pool_lines(const anvil_pool_shape *s, const float *input, float *output, int line_begin, int line_end) {
    const size_t image_size = (size_t)s->input_height * s->input_width * s->channels;
    const int avx2 = !s->portable && anvil_kernels_uses_avx2();
    for (int line = line_begin; line < line_end; line++) {
        int image = line / s->output_height, oy = line - image * s->output_height;
        const float *source = input + (size_t)image * image_size;
        float *out = output + (size_t)line * s->output_width * s->channels;
        for (int ox = 0; ox < s->output_width; ox++, out += s->channels) {
#if ANVIL_X86
            if (avx2) { pixel_avx2(s, source, out, oy, ox); continue; }
#endif
            (void)avx2;
            pixel_portable(s, source, out, oy, ox);
        }
    }
}
