#ifndef ANVIL_DISPATCH_H
#define ANVIL_DISPATCH_H

// One table of kernel bodies per instruction set. The entry points of the op headers
// (`anvil_conv_direct`, …) look the body up here from their `isa` argument; callers that want
// the pointers themselves (benchmarks of one body) can take a table directly.

#include "anvil_isa.h"
#include "anvil_direct_convolution.h"
#include "anvil_depthwise_convolution.h"
#include "anvil_dense.h"
#include "anvil_pooling.h"
#include "anvil_winograd_5x5.h"
#include "anvil_winograd_products.h"
#include "anvil_winograd_3x3.h"
#include "anvil_elementwise.h"
#include "anvil_transposed_convolution.h"
#include "anvil_resample.h"
#include "anvil_pad.h"
#include "anvil_normalization.h"
#include "anvil_strided_copy.h"
#include "anvil_activation.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The bodies of one instruction set, one function per op, each the op's entry point without
/// the `isa` argument. An ISA without its own body for an op holds the next best one (the
/// AVX-512 table: AVX2's direct convolution, depthwise, dense and Winograd bodies).
typedef struct {
    anvil_isa isa; ///< The instruction set this table is for.
    void (*direct_convolution)(const anvil_conv_shape *shape, const float *input, const float *packed,
                               const float *bias, const float *residual, float *output, int pixel_begin,
                               int pixel_end, int block_begin, int block_end);
    void (*depthwise_convolution)(const anvil_depthwise_shape *shape, const float *input, const float *weights,
                                  const float *bias, float *output, int row_begin, int row_end);
    void (*dense)(const float *w, const float *x, const float *bias, float *y, int inputs, int outputs, int batch,
                  int output_begin, int output_end, float clamp_min, float clamp_max);
    void (*max_pooling)(const anvil_pool_shape *shape, const float *input, float *output, int line_begin,
                        int line_end);
    void (*average_pooling)(const anvil_pool_shape *shape, anvil_pool_divisor divisor, const float *input,
                            float *output, int line_begin, int line_end);
    void (*winograd_5x5)(const anvil_winograd5_shape *shape, const float *input, const float *u, const float *bias,
                         float *output, long tile_begin, long tile_end, float *scratch);
    void (*winograd_products)(const anvil_winograd_products_shape *shape, const float *v, const float *u, float *m,
                              int block_begin, int block_end);
    void (*winograd3_input)(const anvil_winograd3_shape *shape, const float *input, float *v, long first_tile,
                            long tile_begin, long tile_end);
    void (*winograd3_output)(const anvil_winograd3_shape *shape, const float *m, const float *bias, float *output,
                             long first_tile, long tile_begin, long tile_end);
    void (*winograd3_filters)(int tile, const float *weights, anvil_winograd3_filter_strides strides,
                              const float *scale, int outputs, int inputs, float *u, int input_begin, int input_end);
    void (*winograd3_taps)(int tile, const float *taps, anvil_winograd3_tap_strides strides, int width, int input_begin,
                           int input_end, float *u, long position_stride);
    void (*binary)(anvil_binary_op op, const anvil_binary_shape *shape, const float *a, const float *b, float *out,
                   long begin, long end);
    void (*col2im)(const anvil_col2im_shape *shape, const float *columns, const float *bias, float *output,
                   int line_begin, int line_end);
    void (*resample)(const anvil_resample_shape *shape, const float *input, float *output, int line_begin,
                     int line_end);
    void (*pad)(const anvil_pad_shape *shape, const float *input, float *output, int line_begin, int line_end);
    void (*group_norm_coefficients)(const float *image, int pixels, int channels, int groups, float epsilon,
                                    const float *gamma, const float *beta, float *scale, float *shift, float *work);
    void (*scale_shift_pixels)(const float *input, const float *scale, const float *shift, float *output,
                               int channels, long pixel_begin, long pixel_end);
    void (*layer_norm_pixels)(const float *input, const float *gamma, const float *beta, float *output,
                              int size, float epsilon, long run_begin, long run_end);
    void (*lrn_pixels)(const float *input, float *output, int channels, int size, float alpha, float beta,
                       float bias, long pixel_begin, long pixel_end);
    void (*lp_pool)(const anvil_pool_shape *shape, float p, const float *input, float *output, int line_begin,
                    int line_end);
    void (*strided_copy)(const anvil_copy_shape *shape, const float *input, float *output, long row_begin,
                         long row_end);
    void (*activation)(const anvil_activation_function *f, float *values, long count);
} anvil_kernel_table;

/// The table of `isa`, or NULL when this CPU (or this build's architecture) cannot run it.
const anvil_kernel_table *anvil_kernel_table_for(anvil_isa isa);

/// The table of `anvil_isa_detected()`, chosen once per process.
const anvil_kernel_table *anvil_kernel_table_detected(void);

#ifdef __cplusplus
}
#endif

#endif
