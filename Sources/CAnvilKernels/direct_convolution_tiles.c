#include "internal/common.h"

// The direct convolution's tile facts for callers: the constants the bodies' tile shapes are
// made of, by instruction set. Built on every architecture, for any `isa`: a plan may be made
// for a set this CPU lacks (tests of the work split do), as no body runs.

int anvil_conv_tile_blocks(anvil_isa isa) {
    switch (isa) {
    case ANVIL_ISA_AVX512: return ANVIL_CONV_TILE_BLOCKS_AVX512;
    case ANVIL_ISA_AVX2: return ANVIL_CONV_TILE_BLOCKS_AVX2;
    case ANVIL_ISA_SCALAR: return ANVIL_CONV_TILE_BLOCKS_SCALAR;
    }
    return ANVIL_CONV_TILE_BLOCKS_SCALAR;
}
