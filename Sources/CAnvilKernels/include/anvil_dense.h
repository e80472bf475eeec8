#ifndef ANVIL_DENSE_H
#define ANVIL_DENSE_H

// Fully connected layers: declarations to come.

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif
