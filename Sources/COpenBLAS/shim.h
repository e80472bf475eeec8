#ifndef ANVIL_COPENBLAS_SHIM_H
#define ANVIL_COPENBLAS_SHIM_H
// OpenBLAS's cblas.h also declares openblas_set_num_threads / openblas_get_num_threads.
#include <cblas.h>
#endif
