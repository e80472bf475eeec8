// stb_image compiled from Debian's header with the fuzzer's coverage and AddressSanitizer
// instrumentation, so the image fuzz target explores (and checks) the decoder itself and not
// only Anvil's wrapper. Linked ahead of libstb.so, whose definitions it replaces.
#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>
