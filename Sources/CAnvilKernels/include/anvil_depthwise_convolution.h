#ifndef ANVIL_DEPTHWISE_CONVOLUTION_H
#define ANVIL_DEPTHWISE_CONVOLUTION_H

// Depthwise convolution: declarations to come.

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif
