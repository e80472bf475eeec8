#ifndef ANVIL_KERNELS_DIRECT_CONVOLUTION_H
#define ANVIL_KERNELS_DIRECT_CONVOLUTION_H

// Direct convolution: each output tile of a few pixels × 16–64 channels lives in registers
// (3 × 32 or 6 × 16 in 12 ymm accumulators in the AVX2 body; 6 × 64, 8 × 48, 8 × 32 or 8 × 16 in
// up to 24 zmm in the AVX-512 one, and 16 × 16 for 1×1 layers at stride 1) while the kernel walks
// the window taps and input channels,
// reading the input in place — for a fixed tap, a pixel's channels are contiguous in NHWC —
// so no im2col matrix is ever written. Weights are packed per block of 16 output channels
// so the inner loop reads them as one sequential stream.

// Everything but the tile is shared by the bodies and lives here; each body file defines its
// tile and instantiates `direct_convolution` with it.

#include "common.h"
#include <string.h>

/// `TILE`: the pixels of the AVX2 and scalar bodies' one-block tiles; `MAX_TILE`: of any body's
/// tile (the AVX-512 body's one-block tile of contiguous pixels); `MAX_GROUP`: the blocks of 16
/// output channels one tile takes at most.
enum { TILE = 6, MAX_TILE = 16, MAX_GROUP = 4, BLOCK = ANVIL_CONV_BLOCK };
_Static_assert(ANVIL_CONV_TILE_BLOCKS_SCALAR <= MAX_GROUP && ANVIL_CONV_TILE_BLOCKS_AVX2 <= MAX_GROUP &&
               ANVIL_CONV_TILE_BLOCKS_AVX512 <= MAX_GROUP,
               "a body's tiles take at most MAX_GROUP blocks");

/// The input address of each tile pixel's window origin (tap 0, channel 0), for the `n` pixels
/// from output row `oy`, column `ox` on.
static inline void tile_origins(const anvil_conv_shape *s, const float *input, int oy, int ox, int n,
                                const float *origins[MAX_TILE]) {
    const size_t step = (size_t)s->stride_width * s->channels;
    const float *origin = input + ((size_t)oy * s->stride_height * s->input_width + (size_t)ox * s->stride_width) * s->channels;
    if (ox + n <= s->output_width) {
        // The whole tile in one output row (most tiles): origins a stride apart. A product and
        // a row test per pixel weigh on small 1×1 layers; a vectorised loop's set-up costs more
        // than the few pixels it computes.
#pragma clang loop vectorize(disable) unroll(disable)
        for (int i = 0; i < n; i++) origins[i] = origin + (size_t)i * step;
        return;
    }
    for (int i = 0; i < n; i++) {
        origins[i] = origin;
        origin += step;
        if (++ox == s->output_width) {
            ox = 0;
            oy++;
            origin = input + (size_t)oy * s->stride_height * s->input_width * s->channels;
        }
    }
}

/// One pass of a tile over input channels `[c0, c1)` of every tap, for a group of 1 to
/// `MAX_GROUP` neighbouring blocks of 16 output channels. The first pass starts from the bias,
/// later ones from the partial sums already in `out`; the last applies the clamp. Splitting the channels keeps a pass's weights and
/// inputs in cache when a layer has thousands of input channels.
typedef struct {
    const anvil_conv_shape *s;
    const float *weights;   ///< The group's first block's packed weights, `[tap][channel][16]`.
    size_t block_stride;    ///< Floats from one block's packed weights to the next's.
    int blocks;             ///< Blocks in the group (see `tile_shape`).
    const float *bias;      ///< 16 biases per block (zero-padded), or NULL.
    const float *residual;  ///< Values added to the first pass's start (laid out like `out`), or NULL.
    const int *window;      ///< Input offsets of every (tap, channel) of the window, or NULL (see `window_offsets`).
    int window_length;
    int c0, c1;
    int first, last;
    int valid;              ///< Output channels of the group that exist (16 × blocks but for the layer's last block).
    const float *ahead;     ///< The packed weights of a block of the next group, for the tile to request the line
                            ///< matching each of its own weight steps (see `run_block`), or NULL.
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

/// Whether the clamp's lower / upper bound can change a value. `max(−∞, x)` and `min(+∞, x)` are
/// `x` (a NaN too), so the tiles skip those bounds with the same bits out; with no activation or a
/// ReLU that saves N·H or 2·N·H vector operations per tile, which compete with the multiply-adds
/// for the FP pipes.
static inline int clamps_below(const anvil_conv_shape *s) { return s->clamp_min != -__builtin_inff(); }
static inline int clamps_above(const anvil_conv_shape *s) { return s->clamp_max != __builtin_inff(); }

/// Outputs per pixel from which a block's lines in consecutive pixels are too far apart (512
/// bytes or more) for the hardware prefetchers to see one stream.
enum { SPARSE_ROW = 128 };

/// Requests the cache lines of the fused residual that the next tile of this block adds, and
/// of the outputs it stores: its pixels' 16 channels lie a whole output row apart (1 KB for
/// 256 outputs), a stride the hardware prefetchers do not follow, so each line would
/// otherwise be a miss the tile waits on (the 1×1 expansions of a residual block with a fused
/// residual). Without a residual the output lines alone are not worth the instructions.
static inline void prefetch_tile_ends(const pass_t *t, const float *out, int n, int left, int size) {
    const size_t row = (size_t)t->s->outputs;
    if (!t->first || !t->residual || row < SPARSE_ROW) return;
    if (left > size) left = size;
    for (int i = n; i < n + left; i++) {
        const float *o = out + (size_t)i * row, *r = t->residual + (size_t)i * row;
        for (int j = 0; j < t->valid; j += 16) {
            __builtin_prefetch(r + j);
            __builtin_prefetch(o + j);
        }
        __builtin_prefetch(r + t->valid - 1);
        __builtin_prefetch(o + t->valid - 1);
    }
}

/// A body's tile: `n` (1 … the shape's pixels for `t->blocks`) pixels at `origins`, one pass, one
/// group of blocks, into `out`.
typedef void (*tile_body)(const pass_t *t, const float *origins[MAX_TILE], int n, float *out);

/// A body's tile and its sizes: what the shared walk needs to know of it.
typedef struct {
    tile_body tile;
    int groups;                    ///< Blocks a tile takes at most (1 … `MAX_GROUP`; see `run_blocks`).
    int pixels[MAX_GROUP + 1];     ///< `[g]`: pixels of a tile of `g` blocks (at most `MAX_TILE`).
    int chunk;                     ///< A multiple of every tile's pixels: chunks of the walk are multiples of it.
} tile_shape;

/// Runs one pass over the tiles of pixels `[pixel_begin, pixel_end)` for the group of blocks
/// `[b, b + blocks)`, in tiles of the shape's `pixels[blocks]`.
ANVIL_INLINE void run_block(const anvil_conv_shape *s, const float *input, const float *packed, const float *bias,
                      const float *residual, const int *window, int window_length, float *output, int pixel_begin,
                      int pixel_end, int b, int blocks, int c0, int c1, int next_blocks, const tile_shape *shape) {
    const size_t depth = (size_t)s->kernel_height * s->kernel_width * s->channels;
    const int rest = s->outputs - b * BLOCK; // channels from the block's first on
    const int width = blocks * BLOCK;
    pass_t t = { .s = s, .weights = packed + (size_t)b * depth * BLOCK, .block_stride = depth * BLOCK,
                 .blocks = blocks, .window = window, .window_length = window_length, .c0 = c0, .c1 = c1,
                 .first = c0 == 0, .last = c1 == s->channels,
                 .valid = rest < width ? rest : width };
    // Only the last, partial block needs its bias padded (to whole blocks: a copy per call cost
    // layers of few input channels as much as a tile's multiply-adds).
    float padded_bias[MAX_GROUP * BLOCK];
    if (bias && t.valid % BLOCK == 0) {
        t.bias = bias + (size_t)b * BLOCK;
    } else if (bias) {
        memset(padded_bias, 0, sizeof padded_bias);
        memcpy(padded_bias, bias + b * BLOCK, (size_t)t.valid * sizeof(float));
        t.bias = padded_bias;
    }
    const int size = shape->pixels[blocks];
    // The next group's weights (`next_blocks` blocks), one block per tile from the second tile on:
    // the tile requests the line of that block matching each line of its own weights it reads.
    const float *next = next_blocks > 0 && !window ? t.weights + (size_t)blocks * depth * BLOCK : NULL;
    int tile_index = 0;
    // The output row and column of pixel `p`, advanced tile by tile: one division per call, not
    // one per tile.
    int oy = pixel_begin / s->output_width, ox = pixel_begin - oy * s->output_width;
    for (int p = pixel_begin, n; p < pixel_end; p += n, tile_index++) {
        t.ahead = next && tile_index >= 1 && tile_index <= next_blocks ? next + (size_t)(tile_index - 1) * depth * BLOCK : NULL;
        // Tiles of `size` pixels; a rest of 1–1.5 tiles becomes two tiles (with tiles of 6, 49
        // pixels are 7 × 6, 3, 4 rather than 8 × 6, 1): a 1-pixel tile has two accumulators,
        // waits on the multiply-add latency and costs nearly as much as a full one.
        const int left = pixel_end - p;
        n = left > size && left < size + size / 2 + 1 ? left / 2 : (left < size ? left : size);
        const float *origins[MAX_TILE];
        tile_origins(s, input, oy, ox, n, origins);
        for (ox += n; ox >= s->output_width; ox -= s->output_width) oy++;
        float *out = output + (size_t)p * s->outputs + (size_t)b * BLOCK;
        t.residual = residual ? residual + (size_t)p * s->outputs + (size_t)b * BLOCK : NULL;
        prefetch_tile_ends(&t, out, n, pixel_end - p - n, size);
        shape->tile(&t, origins, n, out);
    }
}

/// Runs one pass of blocks `[block_begin, block_end)` over pixels `[pixel_begin, pixel_end)`, in
/// groups of the shape's `groups` neighbouring blocks, each group one tile wide: an input value
/// is broadcast once for all the group's channels. (AVX2: a pair of blocks in 3 pixels × 4 ymm,
/// half the broadcasts of the 6 × 16 tile on 1×1 layers, where the broadcasts compete with the
/// multiply-adds for the FP pipes. AVX-512: up to 4 blocks in 6 pixels × 4 zmm, see its
/// body.) The last group takes the blocks left over; when that would be a lone block of at most
/// 8 channels, the group before it leaves it its last block. Alone, such a block's tile (6
/// pixels × 8 channels in AVX2) has 6 accumulators and waits on the multiply-add latency;
/// paired, its 24-channel tile broadcasts each input once for 24 channels (as in ShuffleNet's
/// first layer, 3 → 24). Each channel's sum is made in the same order in any group, so the
/// output does not depend on how a split of the blocks (threads) grouped them. With
/// `fetch_next` (the walk of weights past the L2), each group's tiles request the next group's
/// weights (see `run_block`).
ANVIL_INLINE void run_blocks(const anvil_conv_shape *s, const float *input, const float *packed, const float *bias,
                             const float *residual, const int *window, int window_length, float *output,
                             int pixel_begin, int pixel_end, int block_begin, int block_end, int c0, int c1,
                             int fetch_next, const tile_shape *shape) {
    const int last = s->outputs - (block_end - 1) * BLOCK; // channels of the range's last block, if it is the layer's
    const int count = block_end - block_begin, g = shape->groups;
    const int narrow_rest = count > g && count % g == 1 && last <= BLOCK / 2;
    for (int b = block_begin, blocks; b < block_end; b += blocks) {
        const int left = block_end - b;
        blocks = narrow_rest && left == g + 1 ? g - 1 : (left < g ? left : g);
        const int after = left - blocks;
        run_block(s, input, packed, bias, residual, window, window_length, output, pixel_begin, pixel_end, b, blocks,
                  c0, c1, fetch_next ? (after < g ? after : g) : 0, shape);
    }
}

/// Cache budgets (bytes). A pass's weights up to `CACHED_WEIGHTS` stay in L2: the kernel then
/// walks all blocks for a chunk of pixels at a time whose input rows take about `CHUNK_INPUT`
/// bytes, so they are read from L1 (`MIN_CHUNK_TILES` … `MAX_CHUNK_TILES` times the shape's
/// `chunk` pixels: fixed chunks of 24 pixels would make layers of few channels, such as
/// MobileNet v2's 16 → 96 at 112 × 112, pay a block's set-up every 4 tiles). Larger weights go
/// block by block (each block's slice of a pass fits L1) over `INPUT_SPAN` bytes of input pixels
/// at a time, which stay in L2. Layers with more than `MAX_PASS_CHANNELS` input channels are split
/// into passes of `PASS_CHANNELS`; windows of several taps whose weights go that way, into passes
/// of at most `GROUP_PASS_WEIGHTS` per group of `MAX_GROUP` blocks (see `direct_convolution`).
enum {
    CACHED_WEIGHTS = 256 * 1024, INPUT_SPAN = 96 * 1024, CHUNK_INPUT = 16 * 1024, MIN_CHUNK_TILES = 4,
    MAX_CHUNK_TILES = 32, MAX_PASS_CHANNELS = 512, PASS_CHANNELS = 256, MAX_WINDOW = 1024,
    GROUP_PASS_WEIGHTS = 320 * 1024
};

/// Pixels per chunk of the cached-weights walk: a multiple of `unit` (the shape's `chunk`)
/// whose input rows (each pixel's `pass_channels` in each of the window's rows) fit `CHUNK_INPUT`.
static inline int pixel_chunk(const anvil_conv_shape *s, int pass_channels, int unit) {
    int chunk = (int)(CHUNK_INPUT / ((size_t)pass_channels * s->kernel_height * sizeof(float))) / unit * unit;
    return chunk < MIN_CHUNK_TILES * unit ? MIN_CHUNK_TILES * unit
         : chunk > MAX_CHUNK_TILES * unit ? MAX_CHUNK_TILES * unit : chunk;
}

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

/// The whole of `anvil_conv_direct` but the tile, which each body brings with its size and
/// pairing (a constant at each call site, so the tile's call is direct).
ANVIL_INLINE void direct_convolution(const anvil_conv_shape *s, const float *input, const float *packed,
                                     const float *bias, const float *residual, float *output, int pixel_begin,
                                     int pixel_end, int block_begin, int block_end, const tile_shape *shape) {
    const int taps = s->kernel_height * s->kernel_width;
    int pass_channels = s->channels <= MAX_PASS_CHANNELS ? s->channels : PASS_CHANNELS;
    size_t pass_weights = (size_t)(block_end - block_begin) * taps * pass_channels * BLOCK * sizeof(float);
    // A window of several taps whose weights are past the L2 walk: passes small enough that a
    // group's share of one and the next group's, which its tiles request meanwhile (see
    // run_block), fit the L2 together. Decided from the layer alone (all its blocks, groups of
    // `MAX_GROUP`), not the body or the blocks of this call: the passes set the order of each
    // sum, which must not depend on either.
    const size_t layer_blocks = ((size_t)s->outputs + BLOCK - 1) / BLOCK;
    const size_t group_channel_bytes = (size_t)taps * MAX_GROUP * BLOCK * sizeof(float);
    if (taps > 1 && layer_blocks * taps * pass_channels * BLOCK * sizeof(float) > CACHED_WEIGHTS &&
        (size_t)pass_channels * group_channel_bytes > GROUP_PASS_WEIGHTS) {
        const size_t passes = ((size_t)s->channels * group_channel_bytes + GROUP_PASS_WEIGHTS - 1) / GROUP_PASS_WEIGHTS;
        pass_channels = (int)(((size_t)s->channels + passes - 1) / passes + BLOCK - 1) / BLOCK * BLOCK;
        pass_weights = (size_t)(block_end - block_begin) * taps * pass_channels * BLOCK * sizeof(float);
    }
    int window_storage[MAX_WINDOW];
    const int window_length = window_offsets(s, pass_channels, window_storage);
    const int *window = window_length ? window_storage : NULL;
    const int chunk = pixel_chunk(s, pass_channels, shape->chunk);
    int span = (int)(INPUT_SPAN / ((size_t)pass_channels * sizeof(float))) / shape->chunk * shape->chunk;
    if (span < chunk) span = chunk;
    // A span or chunk of pixels is never followed by less than a chunk or a tile: that rest joins it.
    const int tile = shape->chunk;
    for (int p0 = pixel_begin, p1; p0 < pixel_end; p0 = p1) {
        p1 = pixel_end - p0 < span + chunk ? pixel_end : p0 + span;
        for (int c0 = 0; c0 < s->channels; c0 += pass_channels) {
            int c1 = s->channels - c0 < pass_channels ? s->channels : c0 + pass_channels;
            if (pass_weights <= CACHED_WEIGHTS) {
                for (int p = p0, end; p < p1; p = end) {
                    end = p1 - p < chunk + tile ? p1 : p + chunk;
                    run_blocks(s, input, packed, bias, residual, window, window_length, output, p, end, block_begin,
                               block_end, c0, c1, 0, shape);
                }
            } else {
                run_blocks(s, input, packed, bias, residual, window, window_length, output, p0, p1, block_begin,
                           block_end, c0, c1, 1, shape);
            }
        }
    }
}

#endif
