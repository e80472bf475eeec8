#include "internal/winograd_5x5.h"

// The F(2×2, 5×5) filter transform and the sizes callers allocate: the same for every body,
// computed once per layer in double.

long anvil_winograd5_tiles_per_image(const anvil_winograd5_shape *s) {
    return tiles_per_image(s);
}

size_t anvil_winograd5_filter_count(int outputs, int channels) {
    size_t blocks = (size_t)(outputs + BLOCK - 1) / BLOCK;
    return blocks * POSITIONS * (size_t)channels * BLOCK;
}

size_t anvil_winograd5_scratch_count(int channels) {
    return scratch_floats(channels);
}

// G (6 × 5): row i is f_i · (1, p_i, p_i², p_i³, p_i⁴) for p = 0, 1, −1, 2, −2 and
// f = 1/4, −1/6, −1/6, 1/24, 1/24; the last row picks g₄ (the point at infinity).
static const double G[ALPHA][TAPS] = {
    { 1.0 / 4, 0, 0, 0, 0 },
    { -1.0 / 6, -1.0 / 6, -1.0 / 6, -1.0 / 6, -1.0 / 6 },
    { -1.0 / 6, 1.0 / 6, -1.0 / 6, 1.0 / 6, -1.0 / 6 },
    { 1.0 / 24, 2.0 / 24, 4.0 / 24, 8.0 / 24, 16.0 / 24 },
    { 1.0 / 24, -2.0 / 24, 4.0 / 24, -8.0 / 24, 16.0 / 24 },
    { 0, 0, 0, 0, 1 },
};

void anvil_winograd5_transform_filters(const float *w, int outputs, int channels, float *u) {
    memset(u, 0, anvil_winograd5_filter_count(outputs, channels) * sizeof(float));
    for (int o = 0; o < outputs; o++) {
        for (int c = 0; c < channels; c++) {
            double g[TAPS][TAPS], rows[ALPHA][TAPS];
            for (int y = 0; y < TAPS; y++)
                for (int x = 0; x < TAPS; x++) g[y][x] = w[(((size_t)o * TAPS + y) * TAPS + x) * channels + c];
            for (int a = 0; a < ALPHA; a++)
                for (int x = 0; x < TAPS; x++) {
                    double sum = 0;
                    for (int y = 0; y < TAPS; y++) sum += G[a][y] * g[y][x];
                    rows[a][x] = sum;
                }
            float *target = u + ((size_t)(o / BLOCK) * POSITIONS * channels + c) * BLOCK + o % BLOCK;
            for (int a = 0; a < ALPHA; a++)
                for (int b = 0; b < ALPHA; b++) {
                    double sum = 0;
                    for (int x = 0; x < TAPS; x++) sum += rows[a][x] * G[b][x];
                    target[(size_t)(a * ALPHA + b) * channels * BLOCK] = (float)sum;
                }
        }
    }
}

