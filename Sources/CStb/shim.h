#ifndef ANVIL_CSTB_SHIM_H
#define ANVIL_CSTB_SHIM_H
#include <stb_image.h>
#endif
