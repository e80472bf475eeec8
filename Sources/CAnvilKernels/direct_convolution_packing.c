#include "internal/direct_convolution.h"

// The packed weight layout every direct-convolution body reads: blocks of 16 output channels.

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
