#ifndef ANVIL_NORMALIZATION_H
#define ANVIL_NORMALIZATION_H

// Normalisations of NHWC images: group normalisation (instance normalisation is its case of
// one channel per group) as per-channel moments summed in double then a per-channel scale and
// shift, and layer normalisation over runs of contiguous values (each pixel's channels, or the
// trailing 2 or 3 axes). Local response
// normalisation across channels (ONNX/Caffe LRN) and Lp pooling live here too.

#include "anvil_isa.h"
#include "anvil_pooling.h"

#ifdef __cplusplus
extern "C" {
#endif

/// For one image (`pixels × channels`): the scale and shift per channel that normalise each of
/// `groups` groups of channels to mean 0 and variance 1 (over the group's pixels and channels,
/// `epsilon` added to the variance), then apply `gamma` and `beta` (per channel, or NULL for 1
/// and 0). `work` holds at least 4 · channels + 2 floats.
void anvil_group_norm_coefficients(anvil_isa isa, const float *image, int pixels, int channels, int groups,
                                   float epsilon, const float *gamma, const float *beta, float *scale, float *shift,
                                   float *work);

/// `output[p][c] = input[p][c] · scale[c] + shift[c]` for pixels `[pixel_begin, pixel_end)`.
void anvil_scale_shift_pixels(anvil_isa isa, const float *input, const float *scale, const float *shift,
                              float *output, int channels, long pixel_begin, long pixel_end);

/// Layer normalisation over runs of `size` contiguous values (a pixel's channels, or the last 2 or
/// 3 axes of an NHWC tensor): each run normalised to mean 0, variance 1 (`epsilon` added; moments
/// summed in double), then `· gamma[i] + beta[i]` per value of the run (NULL: 1 and 0), for runs
/// `[run_begin, run_end)`.
void anvil_layer_norm_pixels(anvil_isa isa, const float *input, const float *gamma, const float *beta, float *output,
                             int size, float epsilon, long run_begin, long run_end);

/// Local response normalisation across channels: `y = x / (bias + alpha/size · Σ x²)^beta`, the
/// sum over channels `c − ⌊(size−1)/2⌋ … c + ⌈(size−1)/2⌉` inside the image.
void anvil_lrn_pixels(anvil_isa isa, const float *input, float *output, int channels, int size, float alpha,
                      float beta, float bias, long pixel_begin, long pixel_end);

/// Lp pooling `(Σ |x|^p)^(1/p)` over each window (padded cells count as 0) for output lines
/// `[line_begin, line_end)` (line = image · output_height + row).
void anvil_lp_pool_lines(anvil_isa isa, const anvil_pool_shape *shape, float p, const float *input, float *output,
                         int line_begin, int line_end);

#ifdef __cplusplus
}
#endif

#endif
