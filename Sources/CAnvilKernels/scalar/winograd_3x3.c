#include "../internal/winograd_3x3.h"

// Winograd F(2×2) and F(4×4) transforms in plain C (the 8-lane vectors become SSE pairs).

ANVIL_WINOGRAD3_BODIES(scalar)
