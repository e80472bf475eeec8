#include "CAnvilKernels.h"
#include "kernels_internal.h"
#include <string.h>

// Direct convolution: each output tile of up to 6 pixels × 16 channels lives in registers
// (12 AVX accumulators) while the kernel walks the window taps and input channels,
// reading the input in place — for a fixed tap, a pixel's channels are contiguous in NHWC —
// so no im2col matrix is ever written. Weights are packed per block of 16 output channels
// so the inner loop reads them as one sequential stream.

enum { TILE = 6, BLOCK = ANVIL_CONV_BLOCK };

size_t anvil_conv_packed_count(int outputs, int depth) {
    size_t blocks = (size_t)(outputs + BLOCK - 1) / BLOCK;
    return blocks * (size_t)depth * BLOCK;
}

void anvil_conv_pack_weights(const float *w, int outputs, int depth, float *packed) {
    int blocks = (outputs + BLOCK - 1) / BLOCK;
    for (int b = 0; b < blocks; b++) {
        float *dst = packed + (size_t)b * depth * BLOCK;
        for (int k = 0; k < depth; k++) {
            for (int j = 0; j < BLOCK; j++) {
                int o = b * BLOCK + j;
                dst[(size_t)k * BLOCK + j] = o < outputs ? w[(size_t)o * depth + k] : 0.0f;
            }
        }
    }
}

/// The input address of each tile pixel's window origin (tap 0, channel 0).
static inline void tile_origins(const anvil_conv_shape *s, const float *input, int first, int n,
                                const float *origins[TILE]) {
    // One division per tile: small-depth layers (MNIST's first, 25 multiply-adds per
    // output) spent as long dividing as multiplying with one per pixel.
    int oy = first / s->output_width, ox = first - oy * s->output_width;
    for (int i = 0; i < n; i++) {
        origins[i] = input + ((size_t)oy * s->stride_height * s->input_width + (size_t)ox * s->stride_width) * s->channels;
        if (++ox == s->output_width) { ox = 0; oy++; }
    }
}

/// One pass of a tile over input channels `[c0, c1)` of every tap, for one block of 16 output
/// channels. The first pass starts from the bias, later ones from the partial sums already in
/// `out`; the last applies the clamp. Splitting the channels keeps a pass's weights and
/// inputs in cache when a layer has thousands of input channels.
typedef struct {
    const anvil_conv_shape *s;
    const float *weights;   ///< The block's packed weights, `[tap][channel][16]`.
    const float *bias;      ///< 16 biases (zero-padded), or NULL.
    const float *residual;  ///< Values added to the first pass's start (laid out like `out`), or NULL.
    const int *window;      ///< Input offsets of every (tap, channel) of the window, or NULL (see `window_offsets`).
    int window_length;
    int c0, c1;
    int first, last;
    int valid;              ///< Output channels of the block that exist (16 but for the last block).
} pass_t;

/// The contiguous runs of (tap, channel) pairs a pass reads in one window row: in NHWC the
/// taps of a row lie side by side, so with no dilation and all channels in one pass the row
/// is one run of `kernel_width × channels` inputs — and the packed weights `[tap][c][16]`
/// match it — instead of `kernel_width` runs of `c1 − c0`. (A single-channel first layer
/// otherwise did one multiply-add per tile pixel between loop set-ups.)
typedef struct { int segments, length; } run_t;

static inline run_t runs(const pass_t *t) {
    const anvil_conv_shape *s = t->s;
    if (s->dilation_width == 1 && t->c0 == 0 && t->c1 == s->channels) return (run_t){ 1, s->kernel_width * s->channels };
    return (run_t){ s->kernel_width, t->c1 - t->c0 };
}

/// The input offset (from a pixel's window origin) of run `kx` of window row `ky`.
static inline size_t run_offset(const pass_t *t, int ky, int kx) {
    const anvil_conv_shape *s = t->s;
    return ((size_t)ky * s->dilation_height * s->input_width + (size_t)kx * s->dilation_width) * s->channels + t->c0;
}

/// The packed-weight offset of run `kx` of window row `ky`.
static inline size_t run_offset_weights(const pass_t *t, int ky, int kx) {
    const anvil_conv_shape *s = t->s;
    return ((size_t)(ky * s->kernel_width + kx) * s->channels + t->c0) * BLOCK;
}

/// Loads the starting sums of `n` pixels into `acc`: on the first pass the bias plus the
/// residual (zero past the valid channels), later the partial sums already in `out`.
static inline void start_tile(const pass_t *t, float acc[TILE][BLOCK], int n, const float *out) {
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < BLOCK; j++) {
            if (t->first) acc[i][j] = (t->bias ? t->bias[j] : 0.0f)
                                    + (t->residual && j < t->valid ? t->residual[(size_t)i * t->s->outputs + j] : 0.0f);
            else acc[i][j] = j < t->valid ? out[(size_t)i * t->s->outputs + j] : 0.0f;
        }
    }
}

/// Writes `n` pixels of sums, clamped on the last pass, only the block's valid channels.
static inline void store_tile(const pass_t *t, float acc[TILE][BLOCK], int n, float *out) {
    const anvil_conv_shape *s = t->s;
    for (int i = 0; i < n; i++) {
        float *row = out + (size_t)i * s->outputs;
        for (int j = 0; j < t->valid; j++) row[j] = t->last ? anvil_clamp(acc[i][j], s->clamp_min, s->clamp_max) : acc[i][j];
    }
}

static void tile_portable(const pass_t *t, const float *origins[TILE], int n, float *out) {
    const anvil_conv_shape *s = t->s;
    float acc[TILE][BLOCK];
    start_tile(t, acc, n, out);
    const run_t r = runs(t);
    for (int ky = 0; ky < s->kernel_height; ky++) {
        for (int kx = 0; kx < r.segments; kx++) {
            size_t offset = run_offset(t, ky, kx);
            const float *w = t->weights + run_offset_weights(t, ky, kx);
            for (int q = 0; q < r.length; q++) {
                for (int i = 0; i < n; i++) {
                    float x = origins[i][offset + q];
                    for (int j = 0; j < BLOCK; j++) acc[i][j] += x * w[(size_t)q * BLOCK + j];
                }
            }
        }
    }
    store_tile(t, acc, n, out);
}

#if ANVIL_X86
/// One tile of `N` pixels; `N` is a constant at every call site so the loops unroll.
ANVIL_AVX2 static inline __attribute__((always_inline)) void
tile_avx2_n(const int N, const pass_t *t, const float *origins[TILE], float *out) {
    const anvil_conv_shape *s = t->s;
    __m256 a0[TILE], a1[TILE];
    if (t->first && (!t->residual || t->valid == BLOCK)) {
        // The bias is padded to 16 (see run_block): two loads, not a scalar copy per lane,
        // which cost a small-depth layer as much as its multiply-adds.
        __m256 b0 = t->bias ? _mm256_loadu_ps(t->bias) : _mm256_setzero_ps();
        __m256 b1 = t->bias ? _mm256_loadu_ps(t->bias + 8) : _mm256_setzero_ps();
        for (int i = 0; i < N; i++) { a0[i] = b0; a1[i] = b1; }
        if (t->residual) {
            for (int i = 0; i < N; i++) {
                a0[i] = _mm256_add_ps(a0[i], _mm256_loadu_ps(t->residual + (size_t)i * s->outputs));
                a1[i] = _mm256_add_ps(a1[i], _mm256_loadu_ps(t->residual + (size_t)i * s->outputs + 8));
            }
        }
    } else if (t->first || t->valid < BLOCK) {
        float start[TILE][BLOCK];
        start_tile(t, start, N, out);
        for (int i = 0; i < N; i++) { a0[i] = _mm256_loadu_ps(start[i]); a1[i] = _mm256_loadu_ps(start[i] + 8); }
    } else {
        for (int i = 0; i < N; i++) {
            a0[i] = _mm256_loadu_ps(out + (size_t)i * s->outputs);
            a1[i] = _mm256_loadu_ps(out + (size_t)i * s->outputs + 8);
        }
    }
    if (t->window) {
        // One loop over the whole window (see window_offsets).
        const float *w = t->weights;
        for (int e = 0; e < t->window_length; e++) {
            const int offset = t->window[e];
            __m256 w0 = _mm256_loadu_ps(w + (size_t)e * BLOCK), w1 = _mm256_loadu_ps(w + (size_t)e * BLOCK + 8);
            for (int i = 0; i < N; i++) {
                __m256 v = _mm256_broadcast_ss(origins[i] + offset);
                a0[i] = _mm256_fmadd_ps(v, w0, a0[i]);
                a1[i] = _mm256_fmadd_ps(v, w1, a1[i]);
            }
        }
    }
    const run_t r = runs(t);
    for (int ky = 0; ky < (t->window ? 0 : s->kernel_height); ky++) {
        for (int kx = 0; kx < r.segments; kx++) {
            size_t offset = run_offset(t, ky, kx);
            const float *w = t->weights + run_offset_weights(t, ky, kx);
            const float *x[TILE];
            for (int i = 0; i < N; i++) x[i] = origins[i] + offset;
            for (int c = 0; c < r.length; c++) {
                __m256 w0 = _mm256_loadu_ps(w + (size_t)c * BLOCK), w1 = _mm256_loadu_ps(w + (size_t)c * BLOCK + 8);
                for (int i = 0; i < N; i++) {
                    __m256 v = _mm256_broadcast_ss(x[i] + c);
                    a0[i] = _mm256_fmadd_ps(v, w0, a0[i]);
                    a1[i] = _mm256_fmadd_ps(v, w1, a1[i]);
                }
            }
        }
    }
    if (t->last) {
        __m256 lo = _mm256_set1_ps(s->clamp_min), hi = _mm256_set1_ps(s->clamp_max);
        for (int i = 0; i < N; i++) {
            a0[i] = _mm256_min_ps(_mm256_max_ps(a0[i], lo), hi);
            a1[i] = _mm256_min_ps(_mm256_max_ps(a1[i], lo), hi);
        }
    }
    if (t->valid == BLOCK) {
        for (int i = 0; i < N; i++) {
            float *row = out + (size_t)i * s->outputs;
            _mm256_storeu_ps(row, a0[i]);
            _mm256_storeu_ps(row + 8, a1[i]);
        }
    } else {
        for (int i = 0; i < N; i++) {
            float lanes[BLOCK];
            _mm256_storeu_ps(lanes, a0[i]);
            _mm256_storeu_ps(lanes + 8, a1[i]);
            float *row = out + (size_t)i * s->outputs;
            for (int j = 0; j < t->valid; j++) row[j] = lanes[j];
        }
    }
}

ANVIL_AVX2 static void tile_avx2(const pass_t *t, const float *origins[TILE], int n, float *out) {
    switch (n) {
    case 6: tile_avx2_n(6, t, origins, out); break;
    case 5: tile_avx2_n(5, t, origins, out); break;
    case 4: tile_avx2_n(4, t, origins, out); break;
    case 3: tile_avx2_n(3, t, origins, out); break;
    case 2: tile_avx2_n(2, t, origins, out); break;
    default: tile_avx2_n(1, t, origins, out); break;
    }
}
#endif

/// Runs one pass over the tiles of pixels `[pixel_begin, pixel_end)` for block `b`.
static void run_block(const anvil_conv_shape *s, const float *input, const float *packed, const float *bias,
                      const float *residual, const int *window, int window_length, float *output, int pixel_begin,
                      int pixel_end, int b, int c0, int c1, int avx2) {
    const size_t depth = (size_t)s->kernel_height * s->kernel_width * s->channels;
    pass_t t = { s, packed + (size_t)b * depth * BLOCK, NULL, NULL, window, window_length, c0, c1, c0 == 0,
                 c1 == s->channels, s->outputs - b * BLOCK };
    if (t.valid > BLOCK) t.valid = BLOCK;
    float padded_bias[BLOCK];
    if (bias) {
        memset(padded_bias, 0, sizeof padded_bias);
        memcpy(padded_bias, bias + b * BLOCK, (size_t)t.valid * sizeof(float));
        t.bias = padded_bias;
    }
    for (int p = pixel_begin, n; p < pixel_end; p += n) {
        // Tiles of 6; 7–9 pixels left become two tiles of 3–5 (49 pixels: 7 × 6, 3, 4 rather
        // than 8 × 6, 1): a 1-pixel tile has two accumulators, waits on the multiply-add
        // latency and costs 2/3 of a full one.
        const int left = pixel_end - p;
        n = left > TILE && left < TILE + TILE / 2 + 1 ? left / 2 : (left < TILE ? left : TILE);
        const float *origins[TILE];
        tile_origins(s, input, p, n, origins);
        float *out = output + (size_t)p * s->outputs + (size_t)b * BLOCK;
        t.residual = residual ? residual + (size_t)p * s->outputs + (size_t)b * BLOCK : NULL;
#if ANVIL_X86
        if (avx2) { tile_avx2(&t, origins, n, out); continue; }
#endif
        (void)avx2;
        tile_portable(&t, origins, n, out);
    }
}

/// Cache budgets (bytes). A pass's weights up to `CACHED_WEIGHTS` stay in L2: the kernel then
/// walks all blocks for `PIXEL_CHUNK` pixels at a time, reading those inputs from L1. Larger
/// weights go block by block (each block's slice of a pass fits L1) over `INPUT_SPAN` bytes of
/// input pixels at a time, which stay in L2. Layers with more than `MAX_PASS_CHANNELS` input
/// channels are split into passes of `PASS_CHANNELS`.
enum {
    CACHED_WEIGHTS = 256 * 1024, INPUT_SPAN = 96 * 1024, PIXEL_CHUNK = 4 * TILE,
    MAX_PASS_CHANNELS = 512, PASS_CHANNELS = 256, MAX_WINDOW = 1024
};

/// Small windows of few channels (first layers: 3×3 or 7×7 over 3 channels, 5×5 over 1) read
/// runs of 3–21 inputs per window row, and the exit of each short loop costs a branch
/// misprediction. For those the AVX2 tile walks the whole window in one loop, reading each
/// (tap, channel)'s input offset from this table; the weights `[tap][c][16]` are already in
/// that order. Returns the table's length, or 0 (no table) for windows of long runs, more
/// than `MAX_WINDOW` entries, or several passes.
static int window_offsets(const anvil_conv_shape *s, int pass_channels, int table[MAX_WINDOW]) {
    const int length = s->kernel_height * s->kernel_width * s->channels;
    if (pass_channels != s->channels || s->kernel_width * s->channels >= 64 || length > MAX_WINDOW) return 0;
    int e = 0;
    for (int ky = 0; ky < s->kernel_height; ky++)
        for (int kx = 0; kx < s->kernel_width; kx++)
            for (int c = 0; c < s->channels; c++)
                table[e++] = (ky * s->dilation_height * s->input_width + kx * s->dilation_width) * s->channels + c;
    return length;
}

void anvil_conv_direct(const anvil_conv_shape *s, const float *input, const float *packed, const float *bias,
                       const float *residual, float *output, int pixel_begin, int pixel_end, int block_begin,
                       int block_end) {
    const int avx2 = !s->portable && anvil_kernels_uses_avx2();
    const int taps = s->kernel_height * s->kernel_width;
    const int pass_channels = s->channels <= MAX_PASS_CHANNELS ? s->channels : PASS_CHANNELS;
    const size_t pass_weights = (size_t)(block_end - block_begin) * taps * pass_channels * BLOCK * sizeof(float);
    int window_storage[MAX_WINDOW];
    const int window_length = window_offsets(s, pass_channels, window_storage);
    const int *window = window_length ? window_storage : NULL;
    int span = (int)(INPUT_SPAN / ((size_t)pass_channels * sizeof(float))) / TILE * TILE;
    if (span < PIXEL_CHUNK) span = PIXEL_CHUNK;
    // A span or chunk of pixels is never followed by less than a chunk or a tile: that rest joins it.
    for (int p0 = pixel_begin, p1; p0 < pixel_end; p0 = p1) {
        p1 = pixel_end - p0 < span + PIXEL_CHUNK ? pixel_end : p0 + span;
        for (int c0 = 0; c0 < s->channels; c0 += pass_channels) {
            int c1 = s->channels - c0 < pass_channels ? s->channels : c0 + pass_channels;
            if (pass_weights <= CACHED_WEIGHTS) {
                for (int p = p0, end; p < p1; p = end) {
                    end = p1 - p < PIXEL_CHUNK + TILE ? p1 : p + PIXEL_CHUNK;
                    for (int b = block_begin; b < block_end; b++)
                        run_block(s, input, packed, bias, residual, window, window_length, output, p, end, b, c0, c1, avx2);
                }
            } else {
                for (int b = block_begin; b < block_end; b++)
                    run_block(s, input, packed, bias, residual, window, window_length, output, p0, p1, b, c0, c1, avx2);
            }
        }
    }
}
